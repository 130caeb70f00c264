"""Lazy front doors read from their stubs: nothing is imported (no Numba kernel compiled, no
pyamg loaded) until a name is first used (PEP 562).

Every front door of fastgssl (the package and each subpackage) is lazy. Its public names and
where they live are written once, in the ``__init__.pyi`` stub beside its ``__init__.py``;
the front door reads that stub (as ``lazy_loader.attach_stub`` does for scikit-image), and
editors and type checkers read the same file, so the two cannot disagree.

A stub holds only

* ``from module import name as name``: a public name, defined in ``module``;
* ``from . import sub as sub``: a public subpackage or module;
* ``Old = New``: a former name served beside the new one (not in ``__all__``);
* ``name: type``: a name the ``__init__.py`` defines itself (``__version__``).
"""

import ast
import importlib
import pathlib


def _read_stub(package, init_file):
    """``(public, aliases)``: name -> location for the stub beside ``init_file``."""
    stub = pathlib.Path(init_file).with_suffix(".pyi")
    public, aliases = {}, {}
    for node in ast.parse(stub.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if node.level:  # "from . import sub as sub"
                    public[alias.name] = f"{package}.{alias.name}:"
                else:
                    public[alias.name] = f"{node.module}:{alias.name}"
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Name):
            aliases[node.targets[0].id] = public[node.value.id]
        elif isinstance(node, ast.AnnAssign):
            public[node.target.id] = None  # defined by the __init__.py itself
    return public, aliases


def attach_stub(package, init_file, internal=None):
    """Return ``(__getattr__, __dir__, __all__)`` of a lazy front door from its stub.

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    init_file : str
        The package's ``__file__``; the stub is the ``.pyi`` beside it.
    internal : dict, optional
        Name -> module of names served to fastgssl's own modules that still import them from
        this front door (the same name in that module); importable like the public names,
        not in ``__all__``, ``dir()`` or the stub.
    """
    public, aliases = _read_stub(package, init_file)
    names = sorted(public)
    everything = {**{k: f"{v}:{k}" for k, v in (internal or {}).items()}, **aliases,
                  **{k: v for k, v in public.items() if v is not None}}

    def __getattr__(name):
        location = everything.get(name)
        if location is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, _, attribute = location.partition(":")
        module = importlib.import_module(module)
        return getattr(module, attribute) if attribute else module

    def __dir__():
        return names

    return __getattr__, __dir__, names
