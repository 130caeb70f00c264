"""The front doors: every package of fastgssl is lazy and has a stub that matches it.

Policy (issue 44): every front door (``fastgssl`` and each subpackage) is lazy. Importing a
package runs only its ``__init__`` (the registry declarations of its group, a table of
locations); a name's module is imported when the name is first used, so ``import
fastgssl.cv`` to read a :class:`fastgssl.cv.CVResult` compiles no kernel and imports no
pyamg. Each front door's public names and their locations are written once, in the
``__init__.pyi`` stub beside it: the front door reads it (``fastgssl._lazy.attach_stub``)
and so do editors and type checkers (the type-check step of ``.ci/run`` runs mypy over
``tests/typecheck_public_api.py``).
"""

from __future__ import annotations

import ast
import importlib
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1] / "fastgssl"
DOORS = ["fastgssl"] + sorted(
    f"fastgssl.{p.parent.name}" for p in ROOT.glob("*/__init__.py"))

# Names a front door still serves beyond __all__ (not in the stub or dir()): the former
# names of the CV method classes.
SERVED_BEYOND_ALL = {
    "fastgssl.cv": {"BIF", "ExactCV", "ExactQuadraticCV", "FBIF", "MarginFBIF", "NewtonCV"},
}
# the aliases among them that the stub declares too (public former names)
STUB_ALIASES = {"fastgssl.cv": SERVED_BEYOND_ALL["fastgssl.cv"]}


def _stub(door):
    """``(names, aliases)`` of a stub: public name -> (module, attribute) (None: defined by
    the ``__init__.py``), former name -> public name."""
    path = ROOT.parent.joinpath(*door.split("."), "__init__.pyi")
    assert path.exists(), f"{door} has no stub {path.relative_to(ROOT.parent)}"
    names, aliases = {}, {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                # "import X as X": a stub re-exports only names imported under their own name
                assert alias.asname == alias.name, alias.name
                module = f"{door}.{alias.name}" if node.level else node.module
                names[alias.name] = (module, None if node.level else alias.name)
        elif isinstance(node, ast.Assign):
            assert isinstance(node.value, ast.Name), ast.unparse(node)
            aliases[node.targets[0].id] = node.value.id
        elif isinstance(node, ast.AnnAssign):
            names[node.target.id] = None
        else:
            assert isinstance(node, ast.Expr), ast.unparse(node)  # the docstring
    return names, aliases


@pytest.mark.parametrize("door", DOORS)
def test_every_front_door_reads_its_stub(door):
    source = ROOT.parent.joinpath(*door.split("."), "__init__.py").read_text(encoding="utf-8")
    assert "attach_stub(__name__, __file__" in source, f"{door} is not a lazy front door"


@pytest.mark.parametrize("door", DOORS)
def test_the_stub_matches_the_front_door(door):
    """``__all__`` and ``dir()`` are the stub's names, each served as the object the stub
    says, from the module it says; a stub names its own package's modules (or the ground
    floor), never another package's private module."""
    module = importlib.import_module(door)
    names, aliases = _stub(door)
    assert list(module.__all__) == sorted(names)
    assert dir(module) == list(module.__all__)
    for name, where in names.items():
        if where is None:
            assert name in vars(module), name
            continue
        source, attribute = where
        target = importlib.import_module(source)
        expected = target if attribute is None else getattr(target, attribute)
        assert getattr(module, name) is expected, (name, source, attribute)
        unit = source.split(".")[1] if "." in source else ""
        assert source.startswith(door + ".") or unit.startswith("_") or \
            unit == "exceptions" or door == "fastgssl", (door, source)
    for old, new in aliases.items():
        assert getattr(module, old) is getattr(module, new), old
    assert set(aliases) == STUB_ALIASES.get(door, set())


@pytest.mark.parametrize("door", DOORS)
def test_front_doors_serve_no_other_name(door):
    module = importlib.import_module(door)
    extra = set(getattr(module, "_INTERNAL", {})) | set(_stub(door)[1])
    assert extra == SERVED_BEYOND_ALL.get(door, set())
    for name in extra:
        getattr(module, name)
    with pytest.raises(AttributeError, match="has no attribute"):
        module.surely_not_a_name  # noqa: B018


def test_importing_a_front_door_imports_none_of_its_modules():
    code = ("import sys; import fastgssl.{d}; "
            "print(sorted(m for m in sys.modules if m.startswith('fastgssl.{d}.')))")
    for door in DOORS[1:]:
        name = door.partition(".")[2]
        out = subprocess.run([sys.executable, "-c", code.format(d=name)], capture_output=True,
                             text=True, check=True).stdout.strip()
        assert out == "[]", f"import {door} imported {out}"


def test_the_type_check_file_imports_every_public_name():
    """``tests/typecheck_public_api.py`` (what mypy checks) imports all of every ``__all__``."""
    tree = ast.parse((ROOT.parent / "tests" / "typecheck_public_api.py").read_text("utf-8"))
    found = {(node.module, a.name) for node in tree.body if isinstance(node, ast.ImportFrom)
             for a in node.names}
    expected = {(door, name) for door in DOORS for name in importlib.import_module(door).__all__}
    assert found >= expected, sorted(expected - found)
