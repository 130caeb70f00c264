"""DataDependentKernel (seed 002) against dense O(n^3) references.

References, all dense numpy on small point sets:
- m_hat = n: Sindhwani et al.'s kernel K - eta K (I + eta Q K)^{-1} Q K (and its values at new
  points), with Q = (L + delta I)^p built here from the graph;
- m_hat < n: A = Q^{-1}[S, S] and its inverse = the Schur complement of Theorem 3.2;
- the two algebraic forms of DESIGN 3.5, (I + eta Q_hat K_hat)^{-1} Q_hat and
  (A + eta K_hat)^{-1}.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.datasets import make_moons
from sklearn.exceptions import NotFittedError

from fastgssl.graphs import knn_graph
from fastgssl.kernels import DataDependentKernel, rbf_kernel

ETA, SIGMA, K_NN = 0.7, 2.0, 5


def _two_blobs(seed=0, n1=40, n2=30, d=3):
    """Two far-apart blobs: the kNN graph has two components (two null vectors)."""
    rng = np.random.default_rng(seed)
    return np.vstack([rng.normal(size=(n1, d)), rng.normal(size=(n2, d)) + 10.0])


def _dense_regularizer(X, kind, power, ridge):
    """Q = (L + ridge I)^p or (L_norm + ridge I)^p from the same kNN graph, densely."""
    W = knn_graph(X, K_NN).toarray()
    d = W.sum(axis=1)
    if kind == "L":
        R = np.diag(d) - W
    else:
        s = 1.0 / np.sqrt(d)
        R = np.eye(len(d)) - s[:, None] * W * s[None, :]
    R = R + ridge * np.eye(len(d))
    return np.linalg.matrix_power(R, power)


def _sindhwani(K_ab, K_a, K_b, K, Q, eta):
    """K(a, b) - eta k_a^T (I + eta Q K)^{-1} Q k_b with k over all n training points."""
    n = K.shape[0]
    return K_ab - eta * K_a @ np.linalg.solve(np.eye(n) + eta * Q @ K, Q @ K_b.T)


def _fit(X, **params):
    base = dict(eta=ETA, n_neighbors=K_NN, sigma=SIGMA, rtol=1e-12, random_state=0)
    base.update(params)
    return DataDependentKernel(**base).fit(X)


@pytest.mark.parametrize("kind", ["L", "L_norm"])
@pytest.mark.parametrize("power", [1, 2, 3])
@pytest.mark.parametrize("ridge", [1e-2, 1e-6, 0.0])
def test_full_subsample_equals_sindhwani_kernel(kind, power, ridge):
    X = _two_blobs()
    n = X.shape[0]
    ddk = _fit(X, n_subsample=n, regularizer=kind, power=power, ridge=ridge)
    Q = _dense_regularizer(X, kind, power, ridge)
    K = rbf_kernel(X, sigma=SIGMA)
    ref = _sindhwani(K, K, K, K, Q, ETA)
    np.testing.assert_allclose(ddk.gram(X), ref, rtol=0, atol=1e-8)
    # new points: only base-kernel evaluations against the subsample
    X_new = np.random.default_rng(1).normal(size=(7, 3)) * 4.0
    K_new = rbf_kernel(X_new, X, sigma=SIGMA)
    ref_new = _sindhwani(rbf_kernel(X_new, X[:5], sigma=SIGMA), K_new, K[:5], K, Q, ETA)
    np.testing.assert_allclose(ddk.gram(X_new, X[:5]), ref_new, rtol=0, atol=1e-8)
    assert ddk.null_space_dim_ == 2


@pytest.mark.parametrize("kind", ["L", "L_norm"])
@pytest.mark.parametrize("power", [1, 2])
@pytest.mark.parametrize("solver", ["direct", "cg", "amg"])
def test_subsample_regularizer_is_restricted_inverse_and_schur_complement(kind, power, solver):
    X = _two_blobs(seed=2)
    n, ridge = X.shape[0], 1e-2
    ddk = _fit(X, n_subsample=15, regularizer=kind, power=power, ridge=ridge, rtol=1e-10,
               solver=solver)
    assert all(not info for info in ddk.solver_info_)  # every column converged
    S = ddk.subsample_indices_
    Q = _dense_regularizer(X, kind, power, ridge)
    Q_inv = np.linalg.inv(Q)
    np.testing.assert_allclose(ddk.A_, Q_inv[np.ix_(S, S)], rtol=1e-7, atol=0)
    # Theorem 3.2: (Q^{-1}[S, S])^{-1} = Q_SS - Q_SB Q_BB^{-1} Q_BS
    B = np.setdiff1d(np.arange(n), S)
    schur = Q[np.ix_(S, S)] - Q[np.ix_(S, B)] @ np.linalg.solve(Q[np.ix_(B, B)], Q[np.ix_(B, S)])
    np.testing.assert_allclose(np.linalg.inv(ddk.A_), schur, rtol=1e-6,
                               atol=1e-6 * abs(schur).max())
    assert np.all(np.linalg.eigvalsh(ddk.A_) > 0)


def test_two_algebraic_forms_agree():
    X = _two_blobs(seed=3)
    ddk = _fit(X, n_subsample=20, regularizer="L_norm", power=2, ridge=1e-2)
    S = ddk.subsample_indices_
    rng = np.random.default_rng(0)
    X1, X2 = rng.normal(size=(9, 3)) * 5, rng.normal(size=(6, 3)) * 5
    k1, k2 = rbf_kernel(X[S], X1, sigma=SIGMA), rbf_kernel(X[S], X2, sigma=SIGMA)
    K_hat = rbf_kernel(X[S], sigma=SIGMA)
    K12 = rbf_kernel(X1, X2, sigma=SIGMA)
    Q_hat = np.linalg.inv(ddk.A_)
    m = len(S)
    paper = K12 - ETA * k1.T @ np.linalg.solve(np.eye(m) + ETA * Q_hat @ K_hat, Q_hat @ k2)
    design = K12 - ETA * k1.T @ np.linalg.solve(ddk.A_ + ETA * K_hat, k2)
    scale = abs(K12).max()
    np.testing.assert_allclose(paper, design, rtol=0, atol=1e-9 * scale)
    np.testing.assert_allclose(ddk.gram(X1, X2), design, rtol=0, atol=1e-9 * scale)


def test_tiny_ridge_and_high_power_stay_exact():
    """A has entries ~ ridge^{-p} = 1e30 here; the deflated factor keeps the kernel exact."""
    X = _two_blobs(seed=4)
    tiny = _fit(X, n_subsample=25, regularizer="L", power=3, ridge=1e-10)
    limit = _fit(X, n_subsample=25, regularizer="L", power=3, ridge=0.0)
    G0 = limit.gram(X)
    np.testing.assert_allclose(tiny.gram(X), G0, rtol=0, atol=1e-7)
    # and the ridge -> 0 limit is approached continuously
    small = _fit(X, n_subsample=25, regularizer="L", power=1, ridge=1e-6)
    limit1 = _fit(X, n_subsample=25, regularizer="L", power=1, ridge=0.0)
    np.testing.assert_allclose(small.gram(X), limit1.gram(X), rtol=0, atol=1e-4)


@pytest.fixture(scope="module")
def fitted_moons():
    X, _ = make_moons(300, noise=0.05, random_state=0)
    return _fit(X, n_subsample=40, regularizer="L_norm", power=2, ridge=1e-6, sigma=0.3,
                eta=50.0)


@settings(max_examples=25)
@given(
    seed=st.integers(0, 2**31 - 1),
    n1=st.integers(1, 25),
    n2=st.integers(1, 25),
    spread=st.floats(0.1, 3.0),
)
def test_gram_symmetric_psd_and_consistent_on_random_points(fitted_moons, seed, n1, n2, spread):
    rng = np.random.default_rng(seed)
    P1 = rng.normal(scale=spread, size=(n1, 2))
    P2 = rng.normal(scale=spread, size=(n2, 2))
    G = fitted_moons.gram(np.vstack([P1, P2]))
    assert np.array_equal(G, G.T)
    lam = np.linalg.eigvalsh(G)
    assert lam.min() >= -1e-10 * max(1.0, lam.max())
    np.testing.assert_allclose(fitted_moons.gram(P1, P2), G[:n1, n1:], rtol=0, atol=1e-12)
    # a valid reproducing kernel deforms K downwards only: K_breve(x, x) <= K(x, x) = 1
    assert np.all(np.diag(G) <= 1.0 + 1e-12)


def test_sparse_input_and_single_points(fitted_moons):
    X, _ = make_moons(300, noise=0.05, random_state=0)
    dense = _fit(X, n_subsample=30, sigma=0.3)
    sparse = _fit(sp.csr_matrix(X), n_subsample=30, sigma=0.3)
    np.testing.assert_array_equal(dense.subsample_indices_, sparse.subsample_indices_)
    np.testing.assert_allclose(sparse.gram(X[:20]), dense.gram(X[:20]), atol=1e-10)
    value = dense.gram(X[3], X[7])
    assert isinstance(value, float)
    assert value == pytest.approx(dense.gram(X[[3]], X[[7]])[0, 0], abs=1e-14)
    assert dense(X[:4]).shape == (4, 4)


def test_labeled_points_are_favoured_in_the_subsample():
    X, _ = make_moons(400, noise=0.05, random_state=1)
    y = np.full(400, -1)
    y[:6] = [0, 1, 0, 1, 0, 1]
    ddk = _fit(X, n_subsample=20, sigma=0.3).fit(X, y)
    assert set(range(6)) <= set(ddk.subsample_indices_.tolist())
    assert ddk.labeled_in_subsample_ == 6
    y_many = np.where(np.arange(400) < 200, np.arange(400) % 2, -1)
    ddk = _fit(X, n_subsample=20, sigma=0.3, labeled_share=0.5).fit(X, y_many)
    assert ddk.labeled_in_subsample_ >= 10  # the labeled half, plus uniform picks
    assert len(np.unique(ddk.subsample_indices_)) == 20
    y_reg = np.full(400, np.nan)
    y_reg[:4] = [0.5, 1.0, -2.0, 3.0]
    ddk = _fit(X, n_subsample=20, sigma=0.3).fit(X, y_reg)
    assert ddk.labeled_in_subsample_ == 4


def test_scikit_learn_kernel_methods():
    from sklearn.kernel_ridge import KernelRidge
    from sklearn.svm import SVC

    X, y = make_moons(300, noise=0.05, random_state=0)
    ddk = _fit(X, n_subsample=40, sigma=0.3, eta=50.0, power=2)
    lab = np.r_[np.flatnonzero(y == 0)[:3], np.flatnonzero(y == 1)[:3]]
    svc = SVC(kernel=ddk.gram, C=10.0).fit(X[lab], y[lab])
    pre = SVC(kernel="precomputed", C=10.0).fit(ddk.gram(X[lab]), y[lab])
    np.testing.assert_array_equal(svc.predict(X), pre.predict(ddk.gram(X, X[lab])))
    # the per-pair callable convention of KernelRidge / pairwise_kernels
    kr = KernelRidge(kernel=ddk.gram, alpha=1e-3).fit(X[lab], y[lab])
    kr_pre = KernelRidge(kernel="precomputed", alpha=1e-3).fit(ddk.gram(X[lab]), y[lab])
    np.testing.assert_allclose(kr.predict(X[:30]), kr_pre.predict(ddk.gram(X[:30], X[lab])),
                               atol=1e-8)
    assert clone(ddk).get_params()["n_subsample"] == 40


def test_fastgssl_precomputed_estimator():
    from fastgssl.models import SVM

    X, y = make_moons(300, noise=0.05, random_state=0)
    sigma = 0.3
    ddk = _fit(X, n_subsample=40, sigma=sigma, eta=100.0, power=2, regularizer="L")
    lab = np.r_[np.flatnonzero(y == 0)[:5], np.flatnonzero(y == 1)[:5]]
    model = SVM(kernel="precomputed", lam=1e-3).fit(ddk.gram(X[lab]), y[lab])
    acc = np.mean(model.predict(ddk.gram(X, X[lab])) == y)
    plain = SVM(kernel="precomputed", lam=1e-3).fit(rbf_kernel(X[lab], sigma=sigma), y[lab])
    acc_rbf = np.mean(plain.predict(rbf_kernel(X, X[lab], sigma=sigma)) == y)
    assert acc >= 0.97 and acc > acc_rbf


def test_precomputed_graph_from_registry():
    X = _two_blobs(seed=5)
    W = knn_graph(X, K_NN)
    a = _fit(X, n_subsample=20, graph="precomputed", graph_params={"W": W})
    b = _fit(X, n_subsample=20)
    np.testing.assert_allclose(a.gram(X[:10]), b.gram(X[:10]), atol=1e-12)


@pytest.mark.parametrize(
    "params, match",
    [
        ({"eta": 0.0}, "eta"),
        ({"eta": -1.0}, "eta"),
        ({"n_subsample": 71}, "n_subsample"),
        ({"n_subsample": 0}, "n_subsample"),
        ({"n_subsample": 2.5}, "n_subsample"),
        ({"ridge": -1e-3}, "ridge"),
        ({"power": 0}, "power"),
        ({"power": 1.5}, "power"),
        ({"labeled_share": 1.5}, "labeled_share"),
        ({"sigma": -1.0}, "sigma"),
        ({"regularizer": "nope"}, "nope"),
        ({"graph": "nope"}, "nope"),
        ({"eta": np.inf}, "eta"),
        ({"rtol": 0.0}, "rtol"),
        ({"solver": "lu"}, "solver"),
        ({"graph_weight": "cosine"}, "graph_weight"),
        ({"sigma_w": -1.0}, "sigma_w"),
        ({"labeled_share": -0.1}, "labeled_share"),
        ({"power": 101}, "power"),
        ({"graph_params": [("W", None)]}, "graph_params"),
        ({"n_neighbors": 0}, "n_neighbors"),
    ],
)
def test_bad_parameters(params, match):
    X = _two_blobs()
    base = dict(n_subsample=10, sigma=SIGMA)
    base.update(params)
    with pytest.raises(ValueError, match=match):
        DataDependentKernel(**base).fit(X)


@pytest.mark.parametrize(
    "params, match",
    [
        ({"eta": 0.0}, r"'eta' parameter of DataDependentKernel must be a float in the range"),
        ({"n_subsample": 2.5}, r"'n_subsample' parameter of DataDependentKernel must be an int"),
        ({"power": 10**9}, r"'power' parameter of DataDependentKernel .* \[1, 100\]"),
        ({"labeled_share": 1.5}, r"'labeled_share' parameter .* range \[0.0, 1.0\]"),
        ({"solver": "lu"}, r"'solver' parameter of DataDependentKernel must be a str among"),
    ],
)
def test_bad_parameter_values_raise_scikit_learn_invalid_parameter_error(params, match):
    """Single-parameter checks are scikit-learn's (InvalidParameterError, a ValueError, naming
    the parameter, before X is looked at); n_subsample > n_samples is checked against X."""
    from sklearn.utils._param_validation import InvalidParameterError

    with pytest.raises(InvalidParameterError, match=match):
        DataDependentKernel(**params).fit(None)
    with pytest.raises(ValueError, match="n_subsample=71 exceeds the number of samples"):
        DataDependentKernel(n_subsample=71, sigma=SIGMA).fit(_two_blobs())


def test_gram_input_checks():
    X = _two_blobs()
    with pytest.raises(NotFittedError):
        DataDependentKernel().gram(X)
    ddk = _fit(X, n_subsample=10)
    with pytest.raises(ValueError, match="features"):
        ddk.gram(np.zeros((3, 5)))
    with pytest.raises(ValueError, match="NaN"):
        ddk.gram(np.full((2, 3), np.nan))


def test_numerically_singular_factor_warns_with_numbers():
    from scipy.linalg import LinAlgWarning

    X = np.random.default_rng(0).normal(size=(30, 2))
    X = np.vstack([X, X])  # duplicated points make K_hat singular; eta makes it dominate
    with pytest.warns(LinAlgWarning, match="condition number"):
        ddk = DataDependentKernel(eta=1e14, n_subsample=60, sigma=1.0, ridge=1e-2).fit(X)
    G = ddk.gram(X)
    assert np.array_equal(G, G.T) and np.isfinite(G).all()


def test_labels_without_any_labeled_point_and_bad_y():
    X = _two_blobs()
    a = _fit(X, n_subsample=10).fit(X, np.full(70, -1))
    b = _fit(X, n_subsample=10)
    np.testing.assert_array_equal(a.subsample_indices_, b.subsample_indices_)
    assert a.labeled_in_subsample_ == 0
    with pytest.raises(ValueError, match="y must be 1-D"):
        _fit(X, n_subsample=10).fit(X, np.zeros(5))


@pytest.mark.parametrize("kind", ["L", "L_norm"])
@pytest.mark.parametrize("power", [1, 2])
def test_ridge_zero_uses_the_schur_complement_regularizer(kind, power):
    """ridge=0: Q_hat = Q_SS - Q_SB Q_BB^{-1} Q_BS of the singular Q (Theorem 3.2), in the
    paper's form K - eta k^T (I + eta Q_hat K_hat)^{-1} Q_hat k."""
    X = _two_blobs(seed=6)
    n = X.shape[0]
    ddk = _fit(X, n_subsample=20, regularizer=kind, power=power, ridge=0.0)
    S = ddk.subsample_indices_
    B = np.setdiff1d(np.arange(n), S)
    Q = _dense_regularizer(X, kind, power, 0.0)
    Q_hat = Q[np.ix_(S, S)] - Q[np.ix_(S, B)] @ np.linalg.solve(Q[np.ix_(B, B)], Q[np.ix_(B, S)])
    X1 = np.random.default_rng(7).normal(size=(8, 3)) * 5
    k1 = rbf_kernel(X[S], X1, sigma=SIGMA)
    K_hat = rbf_kernel(X[S], sigma=SIGMA)
    ref = rbf_kernel(X1, sigma=SIGMA) - ETA * k1.T @ np.linalg.solve(
        np.eye(len(S)) + ETA * Q_hat @ K_hat, Q_hat @ k1)
    np.testing.assert_allclose(ddk.gram(X1), ref, rtol=0, atol=1e-8)


def test_precomputed_sparse_graph_and_regression_targets():
    from fastgssl.graphs import knn_graph
    from fastgssl.kernels import DataDependentKernel
    from fastgssl.kernels._data_dependent import _labeled_mask

    X = np.random.default_rng(3).normal(size=(60, 3))
    W = knn_graph(X, 5)
    a = DataDependentKernel(eta=1.0, n_subsample=20, graph=W, sigma=1.0, random_state=0).fit(X)
    b = DataDependentKernel(eta=1.0, n_subsample=20, sigma=1.0, graph_weight="binary",
                            n_neighbors=5, random_state=0).fit(X)
    np.testing.assert_allclose(a.gram(X[:7]), b.gram(X[:7]), atol=1e-10)
    with pytest.raises(ValueError, match="graph has shape"):
        DataDependentKernel(graph=W[:30, :30], n_subsample=10).fit(X)
    y = np.array([-1.0, 2.5, np.nan, 0.0])
    assert _labeled_mask(y, 4).tolist() == [True, True, False, True]
    assert _labeled_mask(np.array([-1.0, 1.0, 0.0]), 3).tolist() == [False, True, True]
