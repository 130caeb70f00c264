"""Tests of label propagation (seed 004, DESIGN 3.7) against dense closed forms.

Oracles: the harmonic function L_uu^-1 W_ul Y_l, (lambda Delta_L + L)^-1 lambda Delta_L y,
Zhou's (I - alpha S)^-1 Y, finite-difference gradients of the subset cost written as double
sums, and re-solves with a new point included (the induction experiment of seed 004).
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.utils.estimator_checks import parametrize_with_checks

from fastgssl.models import LabelPropagation, LabelPropagationRegressor, LocalGlobalConsistency
from fastgssl.models._induction import induction_operator, kernel_weights, subset_smoothness
from fastgssl.models._label_propagation import DisconnectedGraphWarning, _solve_subset

EXACT = dict(solver="direct", rtol=1e-12)


# ---------------------------------------------------------------------------------------------
# helpers: data and dense references
# ---------------------------------------------------------------------------------------------


def random_graph(n, density, rng, connected=True):
    """Symmetric nonnegative W with empty diagonal (a ring keeps it connected)."""
    A = np.where(rng.uniform(size=(n, n)) < density, rng.uniform(0.1, 1.0, size=(n, n)), 0.0)
    W = np.maximum(A, A.T)
    np.fill_diagonal(W, 0.0)
    if connected:
        ring = np.roll(np.eye(n), 1, axis=1) * 0.5
        W = np.maximum(W, np.maximum(ring, ring.T))
    return W


def one_hot(y, classes):
    Y = np.zeros((y.size, classes.size))
    lab = y != -1
    Y[np.flatnonzero(lab), np.searchsorted(classes, y[lab])] = 1.0
    return Y


def dense_harmonic(W, labeled, Y):
    L = np.diag(W.sum(1)) - W
    u, l = ~labeled, labeled
    F = Y.astype(float).copy()
    F[u] = np.linalg.solve(L[np.ix_(u, u)], W[np.ix_(u, l)] @ Y[l])
    return F


def dense_ss(W, labeled, Y, lam):
    L = np.diag(W.sum(1)) - W
    Delta = np.diag(lam * labeled.astype(float))
    return np.linalg.solve(Delta + L, Delta @ Y)


def dense_lgc(W, Y, alpha):
    d = W.sum(1)
    S = W / np.sqrt(np.outer(d, d))
    return np.linalg.solve(np.eye(len(d)) - alpha * S, Y)


def normalize(F):
    return F / F.sum(1, keepdims=True)


def two_blobs(n_per, rng, gap=6.0, d=2):
    X = np.r_[rng.normal(0, 1, (n_per, d)), rng.normal(gap, 1, (n_per, d))]
    truth = np.r_[np.zeros(n_per, int), np.ones(n_per, int)]
    return X, truth


def knn_W(X, k, sigma):
    """Gaussian symmetric kNN graph, dense numpy reference (max-symmetrized)."""
    d2 = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    np.fill_diagonal(d2, np.inf)
    nbr = np.argsort(d2, axis=1)[:, :k]
    A = np.zeros_like(d2)
    rows = np.repeat(np.arange(len(X)), k)
    A[rows, nbr.ravel()] = np.exp(-d2[rows, nbr.ravel()] / (2 * sigma))
    return np.maximum(A, A.T)


# ---------------------------------------------------------------------------------------------
# full solves vs closed forms
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("as_param", [True, False], ids=["graph=W", "precomputed"])
def test_harmonic_equals_dense_closed_form(as_param):
    rng = np.random.default_rng(0)
    n = 40
    W = random_graph(n, 0.1, rng)
    y = np.full(n, -1)
    y[[0, 5, 9, 20, 33]] = [0, 1, 2, 1, 0]
    classes = np.array([0, 1, 2])
    X = rng.normal(size=(n, 3))
    if as_param:
        model = LabelPropagation(graph=sp.csr_matrix(W), **EXACT).fit(X, y)
    else:
        model = LabelPropagation(graph="precomputed", **EXACT).fit(sp.csr_matrix(W), y)
    F = dense_harmonic(W, y != -1, one_hot(y, classes))
    np.testing.assert_allclose(model.label_distributions_, normalize(F), atol=1e-10)
    np.testing.assert_array_equal(model.transduction_, classes[F.argmax(1)])
    np.testing.assert_array_equal(model.transduction_[y != -1], y[y != -1])
    np.testing.assert_array_equal(model.classes_, classes)


def test_ss_lambda_matches_dense_and_tends_to_harmonic():
    rng = np.random.default_rng(1)
    n = 30
    W = random_graph(n, 0.15, rng)
    y = np.full(n, np.nan)
    lab = rng.choice(n, 6, replace=False)
    y[lab] = rng.normal(size=6)
    labeled = ~np.isnan(y)
    Y = np.where(labeled, y, 0.0)[:, None]
    harmonic = dense_harmonic(W, labeled, Y)[:, 0]
    gaps = []
    for lam in [0.1, 1.0, 10.0, 1e3, 1e5]:
        model = LabelPropagationRegressor(lam=lam, graph="precomputed", **EXACT)
        model.fit(sp.csr_matrix(W), y)
        np.testing.assert_allclose(model.transduction_, dense_ss(W, labeled, Y, lam)[:, 0],
                                   rtol=1e-9, atol=1e-12)
        gaps.append(np.abs(model.transduction_ - harmonic).max())
    assert all(a > b for a, b in zip(gaps, gaps[1:]))
    assert gaps[-1] < 1e-3 * gaps[0]
    inf_model = LabelPropagationRegressor(graph="precomputed", **EXACT).fit(sp.csr_matrix(W), y)
    np.testing.assert_allclose(inf_model.transduction_, harmonic, atol=1e-10)


@pytest.mark.parametrize("alpha", [0.2, 0.9, 0.99])
def test_lgc_equals_dense_inverse(alpha):
    rng = np.random.default_rng(2)
    n = 35
    W = random_graph(n, 0.12, rng)
    y = np.full(n, -1)
    y[[1, 2, 17, 30]] = [3, 7, 7, 3]
    classes = np.array([3, 7])
    model = LocalGlobalConsistency(alpha=alpha, graph="precomputed", **EXACT)
    model.fit(sp.csr_matrix(W), y)
    F = dense_lgc(W, one_hot(y, classes), alpha)
    np.testing.assert_allclose(model.label_distributions_, normalize(F), atol=1e-10)
    np.testing.assert_array_equal(model.transduction_, classes[F.argmax(1)])


def test_multiclass_string_labels_one_batched_solve():
    rng = np.random.default_rng(3)
    n = 30
    W = random_graph(n, 0.2, rng)
    y = np.array(["-1"] * n, dtype=object)
    y[[0, 1, 2, 3]] = ["cat", "dog", "emu", "dog"]
    model = LabelPropagation(graph="precomputed", **EXACT).fit(sp.csr_matrix(W), y)
    assert list(model.classes_) == ["cat", "dog", "emu"]
    assert model.label_distributions_.shape == (n, 3)
    assert set(model.transduction_) <= {"cat", "dog", "emu"}


# ---------------------------------------------------------------------------------------------
# induction formula
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("Est", [LabelPropagation, LocalGlobalConsistency])
def test_induction_on_training_point_with_its_graph_row_is_transductive(Est):
    """DESIGN 5: the induction formula on an unlabeled training point equals its value."""
    rng = np.random.default_rng(4)
    n = 40
    W = random_graph(n, 0.1, rng)
    y = np.full(n, -1)
    y[[0, 10, 20]] = [0, 1, 2]
    model = Est(graph="precomputed", **EXACT).fit(sp.csr_matrix(W), y)
    unl = np.flatnonzero(y == -1)
    proba = model.predict_proba(sp.csr_matrix(W[unl]))
    np.testing.assert_allclose(proba, model.label_distributions_[unl], atol=1e-10)
    np.testing.assert_array_equal(model.predict(W[unl]), model.transduction_[unl])


def test_induction_regression_labeled_point_is_smoothed():
    """Seed 004: f~(x_i) = f(x_i) - lambda (y_i - f(x_i)) / d_i on a labeled point."""
    rng = np.random.default_rng(5)
    n = 25
    W = random_graph(n, 0.2, rng)
    y = np.full(n, np.nan)
    y[[0, 3, 8]] = [1.0, -2.0, 0.5]
    lam = 2.0
    model = LabelPropagationRegressor(lam=lam, graph="precomputed", **EXACT)
    model.fit(sp.csr_matrix(W), y)
    f = model.transduction_
    induced = model.predict(W)
    d = W.sum(1)
    expected = f - np.where(np.isnan(y), 0.0, lam * (np.nan_to_num(y) - f) / d)
    np.testing.assert_allclose(induced, expected, atol=1e-10)


def test_predict_new_points_uses_knn_parzen_formula():
    rng = np.random.default_rng(6)
    X, truth = two_blobs(40, rng)
    y = np.full(80, -1)
    y[[0, 40]] = [0, 1]
    k, sigma = 6, 1.5
    W = knn_W(X, k, sigma)
    model = LabelPropagation(graph=sp.csr_matrix(W), n_neighbors=k, sigma_w=sigma,
                             graph_weight="gaussian", **EXACT)
    model.fit(X, y)
    Xn = rng.normal(3.0, 2.0, size=(15, 2))
    d2 = ((Xn[:, None] - X[None]) ** 2).sum(-1)
    nbr = np.argsort(d2, axis=1)[:, :k]
    w = np.exp(-np.take_along_axis(d2, nbr, 1) / (2 * sigma))
    F = model.label_distributions_  # harmonic rows already sum to 1
    expected = (w[:, :, None] * F[nbr]).sum(1) / w.sum(1, keepdims=True)
    np.testing.assert_allclose(model.predict_proba(Xn), expected, atol=1e-10)
    assert (model.transduction_ == truth).mean() == 1.0


def test_induction_close_to_resolving_with_the_point_included():
    """Seed 004, section 4.2.1 (eq. 9) on a small experiment.

    Train on V u V1, predict held-out points x by the induction formula, and compare with
    f1*(x) (re-solve with x added to V u V1) and f2*(x) (re-solve on V u V2 u {x}): the
    induction error must be of the order of the sensitivity to substituting V1 by V2.
    """
    rng = np.random.default_rng(7)
    n_v, n_sub, n_test = 180, 20, 25
    X_all, truth = two_blobs((n_v + 2 * n_sub + n_test) // 2 + 1, rng, gap=2.5, d=3)
    perm = rng.permutation(len(X_all))
    X_all, truth = X_all[perm], truth[perm]
    V, V1 = np.arange(n_v), np.arange(n_v, n_v + n_sub)
    V2 = np.arange(n_v + n_sub, n_v + 2 * n_sub)
    T = np.arange(n_v + 2 * n_sub, n_v + 2 * n_sub + n_test)
    target = np.where(truth == 1, 1.0, -1.0)
    y_V = np.full(n_v, np.nan)
    y_V[: n_v // 10] = target[: n_v // 10]
    k, sigma, lam = 8, 1.0, 1.0

    def fit(idx):
        Xi = X_all[idx]
        yi = np.full(idx.size, np.nan)
        yi[:n_v] = y_V
        W = sp.csr_matrix(knn_W(Xi, k, sigma))
        return LabelPropagationRegressor(lam=lam, graph=W, n_neighbors=k, sigma_w=sigma,
                                         graph_weight="gaussian", **EXACT).fit(Xi, yi)

    model = fit(np.r_[V, V1])
    induced = model.predict(X_all[T])
    f1 = np.array([fit(np.r_[V, V1, t]).transduction_[-1] for t in T])
    f2 = np.array([fit(np.r_[V, V2, t]).transduction_[-1] for t in T])
    induction_gap = np.mean((induced - f1) ** 2)
    resampling_gap = np.mean((f1 - f2) ** 2)
    assert induction_gap < resampling_gap, (induction_gap, resampling_gap)
    assert np.mean(np.sign(induced) == target[T]) > 0.8


# ---------------------------------------------------------------------------------------------
# subset approximation (DESIGN 3.7)
# ---------------------------------------------------------------------------------------------


def subset_cost(f_S, W, S, R, P, labeled, y, *, lam=None, alpha=None, drop_rr=False):
    """Training criterion at f = Pi f_S, written as double sums (the oracle)."""
    n = W.shape[0]
    f = np.zeros(n)
    f[S] = f_S
    f[R] = P @ f_S
    in_R = np.zeros(n, bool)
    in_R[R] = True
    d = W.sum(1)
    g = f / np.sqrt(d) if alpha is not None else f
    smooth = 0.0
    for i in range(n):
        for j in range(n):
            if drop_rr and in_R[i] and in_R[j]:
                continue
            smooth += 0.5 * W[i, j] * (g[i] - g[j]) ** 2
    if alpha is not None:
        mu = (1 - alpha) / alpha
        return smooth + mu * np.sum((f - np.where(labeled, y, 0.0)) ** 2)
    if lam is None:  # harmonic: labels clamped, cost of the smoothness only
        return smooth
    return smooth + lam * np.sum((f[labeled] - y[labeled]) ** 2)


def fd_gradient(fun, x, free, h=1e-6):
    g = np.zeros(free.size)
    for a, i in enumerate(free):
        e = np.zeros_like(x)
        e[i] = h
        g[a] = (fun(x + e) - fun(x - e)) / (2 * h)
    return g


def random_parzen(r, m, k, rng):
    ind = np.array([rng.choice(m, k, replace=False) for _ in range(r)])
    w = rng.uniform(0.1, 1.0, size=(r, k))
    return induction_operator(ind, w, m)[0]


@pytest.mark.parametrize("drop_rr", [False, True])
@pytest.mark.parametrize("criterion", ["harmonic", "ss", "lgc"])
@pytest.mark.parametrize("operator", ["design", "knn"])
def test_subset_solution_has_zero_cost_gradient(criterion, drop_rr, operator):
    rng = np.random.default_rng(8)
    n, m = 24, 9
    W = random_graph(n, 0.25, rng)
    labeled = np.zeros(n, bool)
    labeled[[0, 3, 7]] = True
    y = np.where(labeled, rng.normal(size=n), 0.0)
    S = np.r_[np.flatnonzero(labeled), [1, 2, 10, 15, 19, 22]]
    S.sort()
    R = np.setdiff1d(np.arange(n), S)
    lam = 3.0 if criterion == "ss" else np.inf
    alpha = 0.7 if criterion == "lgc" else None
    if operator == "design":  # DESIGN 3.7: W_RS row-normalized
        W_RS = W[np.ix_(R, S)] + 1e-3  # keep every row supported
        if alpha is None:
            P = sp.csr_matrix(W_RS / W_RS.sum(1, keepdims=True))
        else:
            P = sp.csr_matrix(alpha * W_RS / np.sqrt(W_RS.sum(1, keepdims=True) * W.sum(1)[S]))
    else:
        P = random_parzen(R.size, m, 3, rng)
    F, reached = _solve_subset(W, labeled, y[:, None], S, P,
                               criterion="lgc" if alpha else "ss", lam=lam, alpha=alpha,
                               drop_rr=drop_rr)
    assert reached.all()
    f_S = F[S, 0]
    np.testing.assert_allclose(F[R, 0], P @ f_S, atol=1e-12)

    def cost(v):
        return subset_cost(v, W, S, R, P.toarray(), labeled, y,
                           lam=None if np.isinf(lam) else lam, alpha=alpha, drop_rr=drop_rr)

    free = np.flatnonzero(~labeled[S]) if np.isinf(lam) and alpha is None else np.arange(m)
    grad = fd_gradient(cost, f_S, free)
    assert np.abs(grad).max() < 1e-6 * max(1.0, np.abs(f_S).max()), grad
    if np.isinf(lam) and alpha is None:
        np.testing.assert_allclose(f_S[labeled[S]], y[S][labeled[S]])
    # a perturbation of the free values increases the cost (it is the minimum)
    bumped = f_S.copy()
    bumped[free] += 1e-2 * rng.normal(size=free.size)
    assert cost(bumped) > cost(f_S)


def test_subset_matrix_matches_design_formula():
    """Pi^T L Pi with W_bar_RS equals the four blocks written in DESIGN 3.7."""
    rng = np.random.default_rng(9)
    n = 20
    W = random_graph(n, 0.3, rng) + 0.01 * (1 - np.eye(n))
    S = np.array([0, 2, 5, 8, 13])
    R = np.setdiff1d(np.arange(n), S)
    Wb = W[np.ix_(R, S)] / W[np.ix_(R, S)].sum(1, keepdims=True)
    W_RR, W_SS, W_RS = W[np.ix_(R, R)], W[np.ix_(S, S)], W[np.ix_(R, S)]
    C_RR = Wb.T @ (np.diag(W_RR.sum(1)) - W_RR) @ Wb
    rest = np.diag(W_RS.sum(0)) - Wb.T @ W_RS + np.diag(W_SS.sum(1)) - W_SS
    A = subset_smoothness(sp.csr_matrix(W), S, R, sp.csr_matrix(Wb)).toarray()
    np.testing.assert_allclose(A, C_RR + rest, atol=1e-12)
    A_hat = subset_smoothness(sp.csr_matrix(W), S, R, sp.csr_matrix(Wb), drop_rr=True)
    np.testing.assert_allclose(A_hat.toarray(), rest, atol=1e-12)


@pytest.mark.parametrize("Est,kw", [(LabelPropagation, {}), (LabelPropagation, {"lam": 5.0}),
                                    (LocalGlobalConsistency, {"alpha": 0.8})])
def test_subset_with_all_points_equals_full_method(Est, kw):
    rng = np.random.default_rng(10)
    n = 30
    W = sp.csr_matrix(random_graph(n, 0.15, rng))
    y = np.full(n, -1)
    y[[0, 4, 11]] = [0, 1, 1]
    full = Est(graph="precomputed", **kw, **EXACT).fit(W, y)
    sub = Est(graph="precomputed", n_landmarks=n, random_state=0, **kw, **EXACT).fit(W, y)
    np.testing.assert_allclose(sub.label_distributions_, full.label_distributions_, atol=1e-9)


def test_subset_ensemble_is_the_average_of_its_members():
    rng = np.random.default_rng(11)
    X, truth = two_blobs(60, rng, gap=4.0)
    y = np.full(120, np.nan)
    y[[0, 1, 60, 61]] = [-1.0, -1.0, 1.0, 1.0]
    k, sigma = 6, 1.0
    W = sp.csr_matrix(knn_W(X, k, sigma))
    common = dict(graph=W, n_neighbors=k, sigma_w=sigma, graph_weight="gaussian",
                  n_landmarks=24, random_state=3,
                  drop_rr=True)
    ens = LabelPropagationRegressor(n_subsets=4, **common).fit(X, y)
    members = []
    perm = np.random.RandomState(3).permutation(np.flatnonzero(np.isnan(y)))
    for j in range(4):
        model = LabelPropagationRegressor(**common)
        lab = np.flatnonzero(~np.isnan(y))
        S = np.sort(np.r_[lab, perm[j * 20:(j + 1) * 20]])
        model._subsets = lambda labeled, n, S=S: [S]
        members.append(model.fit(X, y).transduction_)
    np.testing.assert_allclose(ens.transduction_, np.mean(members, axis=0), atol=1e-12)
    assert np.mean(np.sign(ens.transduction_) == np.where(truth == 1, 1, -1)) > 0.95


@pytest.mark.parametrize("drop_rr", [False, True])
def test_subset_approximation_accuracy_on_blobs(drop_rr):
    rng = np.random.default_rng(12)
    X, truth = two_blobs(150, rng, gap=4.0, d=3)
    y = np.full(300, -1)
    y[[0, 1, 150, 151]] = [0, 0, 1, 1]
    k, sigma = 8, 1.0
    W = sp.csr_matrix(knn_W(X, k, sigma))
    model = LabelPropagation(graph=W, n_neighbors=k, sigma_w=sigma, graph_weight="gaussian",
                             n_landmarks=40,
                             drop_rr=drop_rr, n_subsets=3, random_state=0, n_jobs=2).fit(X, y)
    assert (model.transduction_ == truth).mean() > 0.95
    assert np.isfinite(model.label_distributions_).all()


# ---------------------------------------------------------------------------------------------
# components without labels
# ---------------------------------------------------------------------------------------------


def disconnected_problem():
    rng = np.random.default_rng(13)
    X = np.r_[rng.normal(0, 0.5, (20, 2)), rng.normal(5, 0.5, (20, 2)),
              rng.normal(50, 0.5, (10, 2))]
    W = sp.csr_matrix(knn_W(X, 6, 1.0))
    assert sp.csgraph.connected_components(W)[0] == 3
    y = np.full(50, -1)
    y[[0, 1, 20, 21]] = [0, 0, 1, 1]
    return X, W, y


@pytest.mark.parametrize("Est", [LabelPropagation, LocalGlobalConsistency])
@pytest.mark.parametrize("n_landmarks", [None, 30])
def test_disconnected_components_follow_the_policy(Est, n_landmarks):
    X, W, y = disconnected_problem()
    common = dict(graph=W, n_neighbors=4, sigma_w=1.0, graph_weight="gaussian",
                  n_landmarks=n_landmarks,
                  random_state=0)
    orphans = np.arange(40, 50)
    with pytest.warns(DisconnectedGraphWarning, match="not connected to any labeled point"):
        ab = Est(unlabeled_policy="abstain", **common).fit(X, y)
    assert np.isfinite(ab.label_distributions_).all()
    if n_landmarks is None:
        assert (ab.transduction_[orphans] == -1).all()
        np.testing.assert_allclose(ab.label_distributions_[orphans], 0.5)
        assert (ab.predict(X[orphans] + 0.01) == -1).all()
        assert ab.n_unreached_ == 10
    assert (ab.transduction_[:20] == 0).all() and (ab.transduction_[20:40] == 1).all()

    with pytest.warns(DisconnectedGraphWarning):
        un = Est(unlabeled_policy="uniform", **common).fit(X, y)
    assert np.isfinite(un.label_distributions_).all()
    if n_landmarks is None:
        np.testing.assert_allclose(un.label_distributions_[orphans], 0.5)
        np.testing.assert_allclose(un.predict_proba(X[orphans]), 0.5)
    with pytest.warns(DisconnectedGraphWarning):
        ne = Est(unlabeled_policy="nearest", **common).fit(X, y)
    # the far cluster is closest to the class-1 blob at 5
    assert (ne.transduction_[orphans] == 1).all()
    assert (ne.predict(X[orphans]) == 1).all()
    # the default "auto" is "nearest" here (coordinates known): every point gets a class
    with pytest.warns(DisconnectedGraphWarning, match=r"'auto' \(here 'nearest'\)"):
        auto = Est(**common).fit(X, y)
    np.testing.assert_array_equal(auto.transduction_, ne.transduction_)
    np.testing.assert_allclose(auto.label_distributions_, ne.label_distributions_)


def test_regressor_policies_never_nan():
    X, W, _ = disconnected_problem()
    y = np.full(50, np.nan)
    y[[0, 20]] = [2.0, 4.0]
    with pytest.warns(DisconnectedGraphWarning):
        model = LabelPropagationRegressor(graph=W, sigma_w=1.0, graph_weight="gaussian",
                                          n_neighbors=4).fit(X, y)
    np.testing.assert_allclose(model.transduction_[40:], 3.0)
    with pytest.warns(DisconnectedGraphWarning):
        near = LabelPropagationRegressor(graph=W, sigma_w=1.0, graph_weight="gaussian",
                                         n_neighbors=4,
                                         unlabeled_policy="nearest").fit(X, y)
    np.testing.assert_allclose(near.transduction_[40:], 4.0)
    assert np.isfinite(near.predict(X + 0.1)).all()


def test_connected_graph_emits_no_warning():
    rng = np.random.default_rng(14)
    W = random_graph(20, 0.2, rng)
    y = np.full(20, -1)
    y[[0, 1]] = [0, 1]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        LabelPropagation(graph="precomputed", **EXACT).fit(sp.csr_matrix(W), y)


# ---------------------------------------------------------------------------------------------
# hypothesis: random graphs
# ---------------------------------------------------------------------------------------------


@given(
    n=st.integers(6, 25),
    density=st.floats(0.05, 0.5),
    n_labeled=st.integers(2, 5),
    seed=st.integers(0, 2**31 - 1),
    lam=st.sampled_from([np.inf, 0.5, 20.0]),
)
def test_random_graphs_match_dense_reference_on_labeled_components(n, density, n_labeled,
                                                                    seed, lam):
    rng = np.random.default_rng(seed)
    W = random_graph(n, density, rng, connected=False)
    lab = rng.choice(n, min(n_labeled, n - 1), replace=False)
    y = np.full(n, -1)
    y[lab] = np.arange(lab.size) % 2
    y[lab[0]], y[lab[1]] = 0, 1
    classes = np.array([0, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DisconnectedGraphWarning)
        model = LabelPropagation(lam=lam, graph="precomputed", unlabeled_policy="abstain",
                                 **EXACT).fit(sp.csr_matrix(W), y)
    _, comp = sp.csgraph.connected_components(W)
    reached = np.isin(comp, comp[lab])
    assert np.isfinite(model.label_distributions_).all()
    np.testing.assert_allclose(model.label_distributions_.sum(1), 1.0)
    assert (model.transduction_[~reached] == -1).all()
    idx = np.flatnonzero(reached)
    Wr = W[np.ix_(idx, idx)]
    labeled = y[idx] != -1
    Y = one_hot(y[idx], classes)
    F = dense_harmonic(Wr, labeled, Y) if np.isinf(lam) else dense_ss(Wr, labeled, Y, lam)
    np.testing.assert_allclose(model.label_distributions_[idx], normalize(F), atol=1e-8)


# ---------------------------------------------------------------------------------------------
# conventions and bad inputs
# ---------------------------------------------------------------------------------------------


def test_sklearn_conventions():
    model = LabelPropagation(lam=3.0, n_neighbors=7, n_landmarks=50, drop_rr=True, n_subsets=2)
    params = model.get_params()
    assert params["lam"] == 3.0 and params["n_landmarks"] == 50 and params["drop_rr"] is True
    assert clone(model).get_params() == params
    assert LabelPropagation().lam == np.inf
    assert LocalGlobalConsistency().get_params()["graph"] == "knn"
    for name in ["graph", "n_neighbors", "sigma_w", "graph_weight", "n_landmarks", "drop_rr",
                 "n_subsets", "unlabeled_policy", "random_state", "n_jobs", "rtol", "solver"]:
        assert name in params and name in LocalGlobalConsistency().get_params()


def test_unfitted_predict_raises():
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        LabelPropagation().predict(np.zeros((2, 2)))


@pytest.mark.parametrize("Est,kw,match", [
    (LabelPropagation, {"lam": -1.0}, "lam"),
    (LabelPropagation, {"lam": np.nan}, "lam"),
    (LocalGlobalConsistency, {"alpha": 1.0}, "alpha"),
    (LocalGlobalConsistency, {"alpha": 0.0}, "alpha"),
    (LabelPropagation, {"unlabeled_policy": "guess"}, "unlabeled_policy"),
    (LabelPropagationRegressor, {"unlabeled_policy": "abstain"}, "unlabeled_policy"),
    (LabelPropagation, {"n_subsets": 3}, "n_landmarks"),
    (LabelPropagation, {"n_subsets": 0, "n_landmarks": 10}, "n_subsets"),
    (LabelPropagation, {"n_landmarks": 2}, "n_landmarks"),
    (LabelPropagation, {"n_landmarks": 15, "n_subsets": 5}, "n_subsets"),
    (LabelPropagation, {"graph_weight": "cosine"}, "graph_weight"),
    (LabelPropagation, {"sigma_w": -2.0}, "sigma_w"),
    (LabelPropagation, {"drop_rr": "yes"}, "drop_rr"),
    (LabelPropagation, {"solver": "jacobi"}, "solver"),
    (LabelPropagation, {"graph": 3.5}, "graph"),
])
def test_bad_parameters(Est, kw, match):
    rng = np.random.default_rng(15)
    X = rng.normal(size=(20, 2))
    W = sp.csr_matrix(random_graph(20, 0.3, rng))
    if Est is LabelPropagationRegressor:
        y = np.full(20, np.nan)
        y[:3] = 1.0
    else:
        y = np.full(20, -1)
        y[:3] = [0, 1, 0]
    kw = {"graph": W, "sigma_w": 1.0, "graph_weight": "gaussian", **kw}
    with pytest.raises(ValueError, match=match):
        Est(**kw).fit(X, y)


def test_bad_graphs_and_targets():
    rng = np.random.default_rng(16)
    X = rng.normal(size=(10, 2))
    W = random_graph(10, 0.3, rng)
    y = np.full(10, -1)
    y[:2] = [0, 1]
    A = W.copy()
    A[0, 5] += 1.0
    with pytest.raises(ValueError, match="not symmetric"):
        LabelPropagation(graph=sp.csr_matrix(A)).fit(X, y)
    with pytest.raises(ValueError, match="negative"):
        LabelPropagation(graph=sp.csr_matrix(-W)).fit(X, y)
    with pytest.raises(ValueError, match="shape"):
        LabelPropagation(graph=sp.csr_matrix(W[:9, :9])).fit(X, y)
    with pytest.raises(ValueError, match="no labeled point"):
        LabelPropagation(graph=sp.csr_matrix(W)).fit(X, np.full(10, -1))
    with pytest.raises(ValueError, match="NaN"):
        LabelPropagation(graph=sp.csr_matrix(W)).fit(X, np.r_[0.0, 1.0, [np.nan] * 8])
    with pytest.raises(ValueError, match="nearest"):
        LabelPropagation(graph="precomputed", unlabeled_policy="nearest").fit(W, y)
    with pytest.raises(ValueError, match="rows"):
        LabelPropagation(graph=sp.csr_matrix(W)).fit(X, y[:5])
    model = LabelPropagation(graph=sp.csr_matrix(W), sigma_w=1.0, graph_weight="gaussian",
                             n_neighbors=3).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        model.predict(np.zeros((2, 3)))
    pre = LabelPropagation(graph="precomputed").fit(sp.csr_matrix(W), y)
    with pytest.raises(ValueError, match="affinities"):
        pre.predict(np.zeros((2, 4)))


# ---------------------------------------------------------------------------------------------
# end to end with the registered kNN graph builder
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("Est", [LabelPropagation, LocalGlobalConsistency])
def test_registered_knn_graph_end_to_end(Est):
    rng = np.random.default_rng(17)
    X, truth = two_blobs(100, rng, gap=5.0, d=4)
    y = np.full(200, -1)
    y[[0, 100]] = [0, 1]
    model = Est(n_neighbors=8).fit(X, y)
    assert (model.transduction_ == truth).mean() == 1.0
    Xn, tn = two_blobs(20, rng, gap=5.0, d=4)
    assert (model.predict(Xn) == tn).mean() >= 0.95
    assert model.graph_.shape == (200, 200)


def test_kernel_weights_definitions():
    d2 = np.array([[0.5, 2.0], [1.0, 4.0]])
    np.testing.assert_allclose(kernel_weights(d2, "gaussian", 2.0), np.exp(-d2 / 4.0))
    np.testing.assert_allclose(kernel_weights(d2, "binary"), 1.0)
    np.testing.assert_allclose(kernel_weights(d2, "distance"), np.sqrt(d2))
    shifted = kernel_weights(d2 + 1e4, "gaussian", 2.0, shift=True)
    np.testing.assert_allclose(shifted / shifted.sum(1, keepdims=True),
                               np.exp(-d2 / 4) / np.exp(-d2 / 4).sum(1, keepdims=True))
    with pytest.raises(ValueError, match="sigma_w"):
        kernel_weights(d2, "gaussian", None)


def test_induction_kernel_uses_the_bandwidth_the_graph_builder_chose():
    from fastgssl.graphs import knn_search

    rng = np.random.default_rng(18)
    X, _ = two_blobs(60, rng, gap=3.0, d=5)
    y = np.full(120, -1)
    y[[0, 60]] = [0, 1]
    model = LabelPropagation(n_neighbors=5, graph_weight="gaussian").fit(X, y)
    _, sq = knn_search(X, 5)
    np.testing.assert_allclose(model._sigma_induction, sq.mean(), rtol=1e-10)
    fixed = LabelPropagation(n_neighbors=5, sigma_w=0.7, graph_weight="gaussian").fit(X, y)
    assert fixed._sigma_induction == 0.7
    with pytest.raises(ValueError, match="sigma_w"):  # the self-tuned default has no sigma_w
        LabelPropagation(n_neighbors=5, sigma_w=0.7).fit(X, y)


def _expected_failed_checks(estimator):
    # The check trains on labels {-1, 1}: every "-1" point is read as unlabeled. The harmonic
    # solution of LabelPropagation happens to reproduce the labels of that toy set anyway
    # (so only LocalGlobalConsistency is expected to fail).
    if not isinstance(estimator, LocalGlobalConsistency):
        return {}
    return {
        "check_classifiers_classes": "the check uses -1 as a class label; -1 marks unlabeled "
        "points (scikit-learn's semi-supervised convention)",
    }


@parametrize_with_checks(
    [LabelPropagation(n_neighbors=3), LocalGlobalConsistency(n_neighbors=3),
     LabelPropagationRegressor(n_neighbors=3)],
    expected_failed_checks=_expected_failed_checks,
)
def test_sklearn_check_estimator(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DisconnectedGraphWarning)
        check(estimator)


def test_configured_builder_object_as_graph_defines_the_induction_kernel():
    from fastgssl.graphs import EpsilonGraph, knn_search

    rng = np.random.default_rng(19)
    X, truth = two_blobs(50, rng, gap=6.0)
    y = np.full(100, -1)
    y[[0, 50]] = [0, 1]
    builder = EpsilonGraph(eps=2.0, weight="gaussian", sigma_w=0.8)
    model = LabelPropagation(graph=builder, n_neighbors=4, graph_weight="binary").fit(X, y)
    assert model._weight_induction == "gaussian" and model._sigma_induction == 0.8
    Xn = X[:5] + 0.05
    idx, sq = knn_search(Xn, 4, X_ref=X)
    w = np.exp(-sq / 1.6)
    expected = (w[:, :, None] * model.label_distributions_[idx]).sum(1) / w.sum(1)[:, None]
    np.testing.assert_allclose(model.predict_proba(Xn), expected, atol=1e-12)


@given(
    n=st.integers(6, 25),
    density=st.floats(0.05, 0.5),
    seed=st.integers(0, 2**31 - 1),
    alpha=st.floats(0.05, 0.995),
    subset=st.booleans(),
)
def test_random_graphs_lgc_matches_dense_inverse(n, density, seed, alpha, subset):
    rng = np.random.default_rng(seed)
    W = random_graph(n, density, rng, connected=False)
    lab = rng.choice(n, 3, replace=False)
    y = np.full(n, -1)
    y[lab] = [0, 1, 1]
    kw = dict(n_landmarks=n, random_state=0) if subset else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DisconnectedGraphWarning)
        model = LocalGlobalConsistency(alpha=alpha, graph="precomputed",
                                       unlabeled_policy="abstain", **EXACT, **kw)
        model.fit(sp.csr_matrix(W), y)
    d = W.sum(1)
    F = np.zeros((n, 2))
    active = d > 0
    idx = np.flatnonzero(active)
    Y = one_hot(y, np.array([0, 1]))
    F[idx] = dense_lgc(W[np.ix_(idx, idx)], Y[idx], alpha)
    F[~active] = Y[~active]
    reached = F.sum(1) > 0
    np.testing.assert_allclose(model.label_distributions_[reached], normalize(F[reached]),
                               atol=1e-8)
    np.testing.assert_allclose(model.label_distributions_[~reached], 0.5)
    assert (model.transduction_[~reached] == -1).all()
