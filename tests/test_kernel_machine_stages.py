"""The kernel machine (KRR, SVM, LapRLS, LapSVM) in stages that pass values (issue 55):
check -> build -> solve -> CV, each a module of functions and small value classes, and an
estimator shell (``fastgssl.models._kernel_machine`` and the four classes' modules) that
calls them in order and stores their results.

What "pass values" means here, read off each stage module's AST (:func:`_stage_violations`):

1. **No import of an estimator**: the module imports none of the shell modules
   (:data:`SHELLS`), nor the package ``fastgssl.models`` as a module (``import
   fastgssl.models`` / ``from fastgssl import models``, which hands out the estimator
   classes), nor a name of :data:`ESTIMATOR_CLASSES` from anywhere.
2. **No method call on the estimator**: inside a function (or lambda) of the module, no
   call ``p.name(...)`` nor ``getattr(p, ...)(...)`` where ``p`` is a parameter of that
   function (or of an enclosing one) named as the estimator is named where a stage receives
   it (:data:`ESTIMATOR_PARAMETERS`: ``estimator``, ``est``, ``model``, ``machine``,
   ``learner``, ``fitted``), and no ``self.name(...)`` in a module-level function.
3. **No mixin**: every class the module defines has no base class, and none is in the
   method resolution order of KRR, SVM, LapRLS or LapSVM (checked on the imported classes:
   :func:`test_no_stage_class_is_a_base_of_an_estimator`), so the ``self`` of a stage
   class's methods is a value of that class, never an estimator.

A second test feeds the rules a snippet that breaks each of them; a third runs the stages on
a parameters value alone (no estimator) and finds the fit's attributes bit for bit.
"""

import ast
import pathlib

import numpy as np
import pytest

import fastgssl.models
from fastgssl.models import KRR, SVM, LapRLS, LapSVM
from fastgssl.models import _kernel_machine_build as build
from fastgssl.models import _kernel_machine_checks as checks
from fastgssl.models import _kernel_machine_solve as solve

MODELS = pathlib.Path(fastgssl.models.__file__).parent
# the stage modules, in the order a fit calls them (calibration after the CV it reads)
STAGES = ("_kernel_machine_checks", "_kernel_machine_build", "_kernel_machine_solve",
          "_kernel_machine_cv", "_calibration")
# the estimator shell: the base class and the four estimators' modules
SHELLS = {"fastgssl.models._kernel_machine", "fastgssl.models._laplacian_machines",
          "fastgssl.models._supervised"}
ESTIMATOR_CLASSES = {"_KernelMachine", "_LaplacianMachine", "_SupervisedMachine", "KRR",
                     "SVM", "LapRLS", "LapSVM"}
ESTIMATOR_PARAMETERS = {"estimator", "est", "model", "machine", "learner", "fitted"}


def _imports(tree):
    """(line, module imported from or None, ``module.name`` or the module, name) of every
    import of ``tree``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, None, alias.name, alias.name.rsplit(".", 1)[-1]
        elif isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                yield node.lineno, node.module, f"{node.module}.{alias.name}", alias.name


def _parameters(node):
    args = node.args
    return {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs,
                            *filter(None, (args.vararg, args.kwarg)))}


def _method_calls(tree):
    """(line, call) of the calls of rule 2: a method of an estimator parameter, or of
    ``self`` in a module-level function."""
    found = []

    def visit(node, estimators, in_class):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            params = _parameters(node)
            estimators = estimators | (params & ESTIMATOR_PARAMETERS)
            if not in_class and "self" in params:
                estimators = estimators | {"self"}
            in_class = False
        elif isinstance(node, ast.ClassDef):
            in_class = True
        if isinstance(node, ast.Call):
            func = node.func
            receiver = None
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
                receiver = func.value.id
            elif (isinstance(func, ast.Call) and isinstance(func.func, ast.Name)
                  and func.func.id == "getattr" and func.args
                  and isinstance(func.args[0], ast.Name)):
                receiver = func.args[0].id
            if receiver in estimators:
                found.append((node.lineno, ast.unparse(node)))
        for child in ast.iter_child_nodes(node):
            visit(child, estimators, in_class)

    visit(tree, frozenset(), False)
    return found


def _stage_violations(source, name):
    """The breaches of rules 1-3 (module docstring) in the source of stage ``name``."""
    tree = ast.parse(source)
    out = []
    for line, source_module, module, imported in _imports(tree):
        if (source_module in SHELLS or module in SHELLS or module == "fastgssl.models"
                or imported in ESTIMATOR_CLASSES):
            out.append(f"{name}:{line} imports {module}")
    out += [f"{name}:{line} calls a method of the estimator: {call}"
            for line, call in _method_calls(tree)]
    out += [f"{name}:{node.lineno} class {node.name} has bases "
            f"{[ast.unparse(b) for b in node.bases]}"
            for node in ast.walk(tree) if isinstance(node, ast.ClassDef) and node.bases]
    return out


@pytest.mark.parametrize("stage", STAGES)
def test_stages_import_no_estimator_and_call_no_method_of_it(stage):
    path = MODELS / f"{stage}.py"
    assert _stage_violations(path.read_text(encoding="utf-8"), stage) == []


def test_a_stage_imports_only_the_stages_before_it():
    """check -> build -> solve -> CV: a stage reads the values of the stages before it, never
    of one after it (calibration, last, reads none)."""
    order = {f"fastgssl.models.{stage}": i for i, stage in enumerate(STAGES)}
    found = []
    for i, stage in enumerate(STAGES):
        tree = ast.parse((MODELS / f"{stage}.py").read_text(encoding="utf-8"))
        for line, source_module, module, _ in _imports(tree):
            for name in (source_module, module):
                if order.get(name, -1) >= i:
                    found.append(f"{stage}:{line} imports {name}")
    assert found == []


def test_no_stage_class_is_a_base_of_an_estimator():
    stage_modules = {f"fastgssl.models.{stage}" for stage in STAGES}
    bases = {f"{c.__module__}.{c.__qualname__}" for est in (KRR, SVM, LapRLS, LapSVM)
             for c in est.__mro__ if c.__module__ in stage_modules}
    assert bases == set()


def test_the_stage_rules_see_an_estimator_import_a_method_call_and_a_mixin():
    source = (
        "from fastgssl.models._kernel_machine import _KernelMachine\n"
        "from fastgssl.models import LapRLS, _kernel_machine_build\n"
        "import fastgssl.models\n"
        "from fastgssl import models\n"
        "def check(p, estimator):\n"
        "    estimator.set_params(tol=1.0)\n"
        "    return lambda X: getattr(estimator, 'fit')(X)\n"
        "def solve(self, X):\n"
        "    return self._optimizer()\n"
        "class _Checks(object):\n"
        "    def go(self):\n"
        "        return self.values()\n"
        "def fine(p, fac, X):\n"
        "    return fac.transform(X), p.name\n"
    )
    found = _stage_violations(source, "m")
    assert [f.split(" ", 1)[0] for f in found] == [
        "m:1", "m:2", "m:3", "m:4",  # the shell module, LapRLS, the package twice
        "m:6", "m:7", "m:9",  # set_params, getattr(...)(), self in a module function
        "m:10",  # a class with a base
    ], found


def _stage_fit(est, X, y):
    """A fit by the stages alone, on the estimator's parameters as a value."""
    p = checks.MachineParams(
        cls=type(est), semi_supervised=isinstance(est, (LapRLS, LapSVM)),
        **{k: v for k, v in est.get_params().items() if k in checks.PARAM_FIELDS})
    checks.check_params(p)
    X = checks.check_train_points(p, checks.check_points(X))
    problem = checks.check_problem(p, y, X.shape[0])
    system = build.build_system(p, X, build.build_graph_term(p, X, problem))
    return problem, system, solve.solve(p, system, problem, None)


@pytest.mark.parametrize("est", [
    KRR(lam=1e-2, sigma=2.0), SVM(lam=1e-2, sigma=2.0, multi_class="ovo"),
    LapRLS(gamma_a=1e-2, gamma_i=1e-1, sigma=2.0, n_neighbors=5),
    LapSVM(gamma_a=1e-2, gamma_i=1e-1, sigma=2.0, n_neighbors=5, formulation="full"),
    LapSVM(gamma_a=1e-2, gamma_i=1e-1, sigma=2.0, n_neighbors=5, backend="nystrom",
           n_components=20, random_state=0),
], ids=repr)
def test_the_stages_alone_give_the_fit(est):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = np.arange(60) % 3
    if isinstance(est, (LapRLS, LapSVM)):
        y = np.where(np.arange(60) < 24, y, -1)
    problem, system, solution = _stage_fit(est, X, y)
    est.fit(X, y)
    coef = est.dual_coef_ if est.backend == "dense" else est.coef_
    np.testing.assert_array_equal(solution.coef, coef)
    np.testing.assert_array_equal(solution.decision, est.decision_train_)
    np.testing.assert_array_equal(problem.y, est.y_train_)
    assert (system.graph is None) == (est.graph_ is None)
    assert solution.n_iter == est.n_iter_
