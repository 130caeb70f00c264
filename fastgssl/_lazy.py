"""Lazy front doors: a subpackage lists where its public names live; nothing is imported
(and no Numba kernel compiled, no pyamg loaded) until a name is first used (PEP 562)."""

import importlib


def lazy_exports(package, locations, internal=None):
    """Return ``(__getattr__, __dir__, __all__)`` for a package with lazily imported names.

    Parameters
    ----------
    package : str
        The package's ``__name__`` (for error messages).
    locations : dict
        Public name -> module that defines it.
    internal : dict, optional
        Name -> module for what other fastgssl packages import from this one (its
        package-level interface to them, so no package imports another's private module);
        importable like the public names, not in ``__all__`` or ``dir()``.
    """
    names = sorted(locations)
    everything = {**(internal or {}), **locations}

    def __getattr__(name):
        module = everything.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module), name)

    def __dir__():
        return names

    return __getattr__, __dir__, names
