"""Lazy front doors: a subpackage lists where its public names live; nothing is imported
(and no Numba kernel compiled, no pyamg loaded) until a name is first used (PEP 562).

Every front door of fastgssl (the package and each subpackage) is lazy, and each has an
``__init__.pyi`` stub beside it that lists the same names with their real locations, so that
editors and type checkers follow ``from fastgssl.models import PoissonLearning`` (as
scikit-image pairs its lazy ``__init__.py`` files with stubs); a test checks every stub
against the front door's ``__all__`` and the objects it serves.
"""

import importlib


def lazy_exports(package, locations, internal=None):
    """Return ``(__getattr__, __dir__, __all__)`` for a package with lazily imported names.

    Parameters
    ----------
    package : str
        The package's ``__name__`` (for error messages).
    locations : dict
        Public name -> the module that defines it, or ``"module:attribute"`` when the
        attribute has another name there (an alias kept for a former name).
    internal : dict, optional
        Name -> location of names served to fastgssl's own modules that still import them
        from this front door; importable like the public names, not in ``__all__``,
        ``dir()`` or the stub.
    """
    names = sorted(locations)
    everything = {**(internal or {}), **locations}

    def __getattr__(name):
        location = everything.get(name)
        if location is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, _, attribute = location.partition(":")
        return getattr(importlib.import_module(module), attribute or name)

    def __dir__():
        return names

    return __getattr__, __dir__, names
