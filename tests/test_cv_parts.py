"""The package reads a learner's typed parts, never the deprecated flat aliases (issue 55:
"internal reads of the flat aliases 0", counted over the whole package; the aliases are
defined in :mod:`fastgssl._protocol` without an attribute read), and the CV's named capabilities
(:mod:`fastgssl.cv._parts`) agree with what the aliases say for every learner kind."""

import ast
import dataclasses
import pathlib
import warnings

import numpy as np
import pytest

import fastgssl
import fastgssl.cv
from fastgssl import CVObjective, KernelPart
from fastgssl.cv import _parts
from fastgssl.models import KRR, SVM, LabelPropagation, LapRLS, LapSVM, PoissonLearning

FLAT = {"kernel_key", "build_kernel", "build_factor", "precomputed", "estimator_for",
        "graph_key", "build_graph", "with_graph", "knn_k", "graph_given", "regularizer_key",
        "solve", "solve_folds", "decode", "weights_for", "relabel"}
# receivers of these names that are not a CVObjective / CVState: a part (kernel_of(o),
# graph_of(o), refit_of(s) and locals bound to them), linear algebra and solvers (a
# factorization's or a solver's ``solve``), bytes and strings (``decode``)
PART_OR_SOLVER = {"part", "refit", "graph", "solver", "self", "self._solver", "self._lu",
                  "self.lu_", "head", "raw"}
PART_CALLS = ("kernel_of(", "graph_of(", "refit_of(", "reused_solver(")


def _module_names(tree):
    """The names an import binds in ``tree`` (a module's function, ``build.build_graph``,
    or ``np.char.decode``, is not a field of an objective)."""
    return {(alias.asname or alias.name).split(".")[0] for node in ast.walk(tree)
            if isinstance(node, (ast.Import, ast.ImportFrom)) for alias in node.names}


def _flat_alias_reads(root):
    reads = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text())
        modules = _module_names(tree)
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Attribute) and node.attr in FLAT
                    and isinstance(node.ctx, ast.Load)):
                continue
            receiver = ast.unparse(node.value)
            if (receiver in PART_OR_SOLVER or receiver.startswith(PART_CALLS)
                    or receiver.split(".")[0] in modules):
                continue
            reads.append(f"{path.name}:{node.lineno} {receiver}.{node.attr}")
    return reads


def test_cv_reads_no_flat_alias():
    root = pathlib.Path(fastgssl.cv.__file__).parent
    assert _flat_alias_reads(root) == []


def test_the_package_reads_no_flat_alias():
    root = pathlib.Path(fastgssl.__file__).parent
    assert _flat_alias_reads(root) == []


def test_the_count_sees_a_flat_read(tmp_path):
    (tmp_path / "m.py").write_text("import numpy as np\n"
                                   "def f(objective, state):\n"
                                   "    np.char.decode(objective.solve)\n"
                                   "    return objective.kernel_key, state.decode\n")
    assert len(_flat_alias_reads(tmp_path)) == 3


def _objectives():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = np.full(40, -1)
    y[:12] = np.arange(12) % 3
    learners = [KRR(lam=0.1), SVM(lam=0.1), SVM(lam=0.1, multi_class="ovo"),
                LapRLS(gamma_a=0.1, gamma_i=0.1), LapRLS(gamma_a=0.1, gamma_i=0.0),
                LapSVM(gamma_a=0.1, gamma_i=0.1), LabelPropagation(), PoissonLearning()]
    out = []
    for est in learners:
        try:
            out.append((type(est).__name__, est.cv_objective(y)))
        except (TypeError, ValueError) as exc:  # a learner that declares no objective here
            pytest.fail(f"{type(est).__name__}.cv_objective: {exc}")
    return X, out


def test_capabilities_agree_with_the_aliases():
    _, objectives = _objectives()
    seen = set()
    for name, o in objectives:
        assert _parts.shares_kernel(o) == o.shares_kernel, name
        assert _parts.uses_graph(o) == o.uses_graph, name
        assert _parts.shares_graph(o) == (o.build_graph is not None
                                          and o.with_graph is not None), name
        assert _parts.dense_kernel(o) == (o.build_kernel is not None), name
        assert _parts.solves_one_vs_one(o) == (o.decode is not None), name
        for flat, part, attr in (("kernel_key", _parts.kernel_of, "key"),
                                 ("graph_key", _parts.graph_of, "key"),
                                 ("graph_given", _parts.graph_of, "given"),
                                 ("knn_k", _parts.graph_of, "knn_k"),
                                 ("solve", _parts.refit_of, "solve")):
            assert getattr(part(o), attr) is getattr(o, flat), (name, flat)
        seen.add((_parts.shares_kernel(o), _parts.uses_graph(o),
                  _parts.solves_one_vs_one(o)))
    assert len(seen) >= 3  # the learners cover several capability sets


def test_an_undeclared_part_reads_as_the_empty_part():
    o = CVObjective(task="regression", y=np.zeros(3), labeled=np.ones(3, bool))
    assert _parts.kernel_of(o) == KernelPart()
    assert not _parts.shares_kernel(o) and not _parts.uses_graph(o)
    assert not _parts.solves_one_vs_one(o)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # declaring the part whole: no deprecation
        declared = dataclasses.replace(o, kernel_part=KernelPart(key=1, build_factor=len))
    assert _parts.shares_kernel(declared) and not _parts.dense_kernel(declared)


def test_search_options_are_declared_by_the_method_class():
    """GridSearchCV passes its Nystrom options to the methods whose class declares them
    (``takes_search_options``), not to a list of names."""
    from fastgssl.cv import GridSearchCV, _search
    from fastgssl.cv._base import CVMethod
    from fastgssl.cv._influence import FBIFMethod, MarginFBIFMethod

    assert not hasattr(_search, "FBIF_METHODS")
    assert CVMethod.takes_search_options is False
    assert FBIFMethod.takes_search_options and MarginFBIFMethod.takes_search_options
    search = GridSearchCV(KRR(), {"lam": [0.1]}, n_components=7, random_state=None)
    for name in ("fbif", "fbif-margin"):
        assert search._method_options(name) == {"n_components": 7, "random_state": 0}
    for name in ("exact", "bif", "newton"):
        assert search._method_options(name) == {}
