"""Lazy front doors: a subpackage lists where its public names live; nothing is imported
(and no Numba kernel compiled, no pyamg loaded) until a name is first used (PEP 562)."""

import importlib


def lazy_exports(package, locations):
    """Return ``(__getattr__, __dir__, __all__)`` for a package with lazily imported names.

    Parameters
    ----------
    package : str
        The package's ``__name__`` (for error messages).
    locations : dict
        Public name -> module that defines it.
    """
    names = sorted(locations)

    def __getattr__(name):
        module = locations.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module), name)

    def __dir__():
        return names

    return __getattr__, __dir__, names
