"""The front doors: every package of fastgssl is lazy and has a stub that matches it.

Policy (issue 44): every front door (``fastgssl`` and each subpackage) is lazy. Importing a
package runs only its ``__init__`` (the registry declarations of its group, a table of
locations); a name's module is imported when the name is first used, so ``import
fastgssl.cv`` to read a :class:`fastgssl.cv.CVResult` compiles no kernel and imports no
pyamg. Each lazy ``__init__.py`` has an ``__init__.pyi`` stub beside it naming the same
public names at their real locations, which editors and type checkers read instead (the
``typecheck`` step of ``.ci/run`` runs mypy over ``tests/typecheck_public_api.py``).
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
# names of the CV method classes, and the internal names that files of issue 44's other half
# (the carve of models/_kernel_machine.py, the propagation merge) import from the front
# door until they import them from <package>.internal.
SERVED_BEYOND_ALL = {
    "fastgssl.cv": {"BIF", "ExactCV", "ExactQuadraticCV", "FBIF", "MarginFBIF", "NewtonCV"},
    "fastgssl.graphs": {"SELF_TUNED", "SYMMETRIZE", "default_symmetrize"},
    "fastgssl.kernels": {"check_kernel", "warn_if_ill_conditioned"},
    "fastgssl.solvers": {"SOLVERS", "fit_dense", "fit_nystrom"},
}
# the aliases among them that the stub declares too (public former names)
STUB_ALIASES = {"fastgssl.cv": SERVED_BEYOND_ALL["fastgssl.cv"]}


def _stub(door):
    path = ROOT.parent.joinpath(*door.split("."), "__init__.pyi")
    assert path.exists(), f"{door} has no stub {path.relative_to(ROOT.parent)}"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    imports, declared_all, annotated = {}, None, set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                # "import X as X": a stub re-exports only names imported under their own name
                assert alias.asname == alias.name, alias.name
                imports[alias.name] = (node.module, alias.name)
        elif isinstance(node, ast.Assign) and [t.id for t in node.targets] == ["__all__"]:
            declared_all = ast.literal_eval(node.value)
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Name):
            imports[node.targets[0].id] = imports[node.value.id]  # an alias: Old = New
        elif isinstance(node, ast.AnnAssign):
            annotated.add(node.target.id)
    return imports, declared_all, annotated


@pytest.mark.parametrize("door", DOORS)
def test_every_front_door_is_lazy(door):
    source = ROOT.parent.joinpath(*door.split("."), "__init__.py").read_text(encoding="utf-8")
    assert "__getattr__" in source, f"{door} is not a lazy front door"


@pytest.mark.parametrize("door", DOORS)
def test_the_stub_matches_the_front_door(door):
    module = importlib.import_module(door)
    imports, declared_all, annotated = _stub(door)
    assert declared_all == list(module.__all__), "the stub's __all__ differs"
    assert sorted(dir(module)) == sorted(module.__all__)
    expected = set(module.__all__) | STUB_ALIASES.get(door, set())
    assert set(imports) | annotated == expected
    for name, (source, attribute) in imports.items():
        stub_object = getattr(importlib.import_module(source), attribute)
        assert getattr(module, name) is stub_object, (name, source, attribute)


@pytest.mark.parametrize("door", DOORS)
def test_front_doors_serve_no_other_name(door):
    module = importlib.import_module(door)
    extra = set()
    for table in ("_INTERNAL", "_FORMER_NAMES"):
        extra |= set(getattr(module, table, {}))
    assert extra == SERVED_BEYOND_ALL.get(door, set())
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
