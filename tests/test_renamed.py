"""Renamed arguments (issue 44): ``optimizer`` of the kernel machines (formerly ``solver``),
``solver`` of :class:`fastgssl.solvers.LaplacianSolver` / ``reused_solver`` (formerly
``method``); the old names give the same results with a DeprecationWarning naming the new."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone

from fastgssl.graphs import knn_graph
from fastgssl.models import KRR, SVM, LapRLS, LapSVM
from fastgssl.regularizers import laplacian
from fastgssl.solvers import LaplacianSolver, reused_solver


def _blobs(n=80, seed=0):
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(-2.0, 1.0, (n // 2, 3)), rng.normal(2.0, 1.0, (n // 2, 3))])
    y = np.repeat([0, 1], n // 2)
    return X, y


@pytest.mark.parametrize("cls, semi", [(SVM, False), (KRR, False), (LapSVM, True),
                                       (LapRLS, True)])
@pytest.mark.parametrize("value", ["newton", "active-set"])
def test_kernel_machine_solver_is_optimizer(cls, semi, value):
    X, y = _blobs()
    if semi:
        y = y.copy()
        y[1::3] = -1
    # a piecewise-quadratic loss, so that the two optimizers differ (closed forms ignore them)
    kw = {"task": "classification", "loss": "squared_hinge"} if cls in (KRR, LapRLS) else {}
    new = cls(optimizer=value, **kw).fit(X, y)
    old = cls(solver=value, **kw)
    with pytest.warns(DeprecationWarning, match=r"solver= was renamed optimizer=.*"
                                                rf"optimizer='{value}'"):
        old.fit(X, y)
    np.testing.assert_array_equal(old.decision_function(X), new.decision_function(X))
    assert old.get_params()["solver"] == value and new.get_params()["solver"] == "deprecated"
    assert clone(old).get_params()["solver"] == value


def test_kernel_machine_both_names_refused():
    X, y = _blobs()
    with pytest.raises(TypeError, match="pass optimizer only"):
        SVM(solver="newton", optimizer="active-set").fit(X, y)
    with pytest.raises(ValueError, match="solver"):
        SVM(solver="smo").fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        SVM(optimizer="newton").fit(X, y)  # the new name: no warning
        SVM(solver="deprecated").fit(X, y)


def _path_laplacian(n=60):
    X, _ = _blobs(n)
    return laplacian(knn_graph(X, 5), ridge=1e-3)


@pytest.mark.parametrize("value", ["direct", "cg", "amg"])
def test_laplacian_solver_method_is_solver(value):
    Q = _path_laplacian()
    B = np.random.default_rng(1).normal(size=(Q.shape[0], 2))
    X_new, info_new = LaplacianSolver(Q, solver=value, rtol=1e-10).solve(B)
    with pytest.warns(DeprecationWarning, match=rf"method= was renamed solver=.*"
                                                rf"solver='{value}'"):
        old = LaplacianSolver(Q, method=value, rtol=1e-10)
    X_old, info_old = old.solve(B)
    np.testing.assert_array_equal(X_old, X_new)
    with pytest.warns(DeprecationWarning, match="read solver_"):
        assert old.method_ == old.solver_ == info_new.solver
    with pytest.warns(DeprecationWarning, match="read solver"):
        assert old.method == value
    with pytest.warns(DeprecationWarning, match="SolveInfo.method"):
        assert info_old.method == info_old.solver
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        X_pos, _ = LaplacianSolver(Q, value, 1e-10).solve(B)  # positional: the new name
    np.testing.assert_array_equal(X_pos, X_new)


def test_reused_solver_method_is_solver():
    Q = sp.csr_matrix(_path_laplacian(50))
    with pytest.warns(DeprecationWarning, match="reused_solver: method= was renamed"):
        old = reused_solver(Q, method="cg", null_space=None)
    assert old is reused_solver(Q, solver="cg", null_space=None)  # one setup, one key
    assert old.solver_ == "cg"
    with pytest.raises(TypeError, match="pass solver only"):
        LaplacianSolver(Q, solver="amg", method="cg")
