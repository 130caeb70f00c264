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


# ------------------------------------------------------------------ issue 55


def test_laplacian_solver_maxiter_is_max_iter():
    Q = _path_laplacian()
    B = np.random.default_rng(2).normal(size=(Q.shape[0], 2))
    new = LaplacianSolver(Q, solver="cg", rtol=1e-12, max_iter=3)
    with pytest.warns(DeprecationWarning, match=r"maxiter= was renamed max_iter=.*max_iter=3"):
        old = LaplacianSolver(Q, solver="cg", rtol=1e-12, maxiter=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # three iterations do not converge: a warning says so
        (X_new, info_new), (X_old, info_old) = new.solve(B), old.solve(B)
    np.testing.assert_array_equal(X_old, X_new)
    assert new.max_iter == old.max_iter == 3
    np.testing.assert_array_equal(info_old.iterations, info_new.iterations)
    assert np.max(info_new.iterations) <= 3  # the cap applies
    with pytest.warns(DeprecationWarning, match="read max_iter"):
        assert old.maxiter == 3
    with pytest.raises(TypeError, match="pass max_iter only"):
        LaplacianSolver(Q, max_iter=5, maxiter=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        assert LaplacianSolver(Q, "cg", 1e-8, 7).max_iter == 7  # positional: the new name


def _semi(n=60):
    X, y = _blobs(n)
    y = y.copy()
    y[np.arange(n) % 4 != 0] = -1
    return X, y


@pytest.mark.parametrize("value", [0, 1, 4])
def test_poisson_mbo_n_mbo_iter_is_max_iter(value):
    from fastgssl.models import PoissonMBO

    X, y = _semi()
    new = PoissonMBO(n_neighbors=6, max_iter=value).fit(X, y)
    old = PoissonMBO(n_neighbors=6, n_mbo_iter=value)
    with pytest.warns(DeprecationWarning, match=rf"PoissonMBO: n_mbo_iter= was renamed "
                                                rf"max_iter=.*max_iter={value}"):
        old.fit(X, y)
    np.testing.assert_array_equal(old.label_distributions_, new.label_distributions_)
    assert old.n_changed_ == new.n_changed_ and len(new.n_changed_) == value
    assert clone(old).get_params()["n_mbo_iter"] == value
    with pytest.raises(TypeError, match="pass max_iter only"):
        PoissonMBO(max_iter=3, n_mbo_iter=5).fit(X, y)
    with pytest.raises(ValueError, match="n_mbo_iter"):
        PoissonMBO(n_mbo_iter=-1).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        PoissonMBO(n_neighbors=6, max_iter=value).fit(X, y)  # the new name: no warning


@pytest.mark.parametrize("value", ["uncertainty", "vopt"])
def test_active_learner_method_is_criterion(value):
    from fastgssl.active import ActiveLearner
    from fastgssl.models import PoissonLearning

    X, y = _semi()
    new = ActiveLearner(PoissonLearning(n_neighbors=6), criterion=value, batch_size=3,
                        random_state=0)
    old = ActiveLearner(PoissonLearning(n_neighbors=6), method=value, batch_size=3,
                        random_state=0)
    with pytest.warns(DeprecationWarning, match=rf"ActiveLearner: method= was renamed "
                                                rf"criterion=.*criterion='{value}'"):
        picked = old.query(X, y)
    np.testing.assert_array_equal(picked, new.query(X, y))
    np.testing.assert_array_equal(old.query_scores_, new.query_scores_)
    with pytest.raises(TypeError, match="pass criterion only"):
        ActiveLearner(PoissonLearning(), criterion="vopt", method="uncertainty").query(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        # positional: the new name (the criterion is the second argument, as before)
        ActiveLearner(PoissonLearning(n_neighbors=6), value, 3).query(X, y)
