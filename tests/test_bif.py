"""BIF / FBIF / exact quadratic CV on raw arrays against finite-difference refits.

The oracle is a small dense Newton solver (with an Armijo line search) for the contaminated
objective J_eps of DESIGN 3.2/3.4; each BIF column must match the central difference
(f(+eps) - f(-eps)) / (2 eps), eps = 1e-5, to a relative error below 1e-6.
"""

import numpy as np
import scipy.sparse as sp
from hypothesis import assume, given
from hypothesis import strategies as st

from fastgssl._folds import make_folds
from fastgssl.cv._bif import (
    bif_dense,
    bif_predictions,
    bif_wspace,
    fbif_dense,
    fold_epsilons,
    paper_curvature,
    woodbury_solve,
)
from fastgssl.cv._quadratic import (
    exact_quadratic_eigh,
    exact_quadratic_predictions,
)
from fastgssl.kernels._nystrom import nystrom_from_gram

# ----------------------------------------------------------------------------- reference losses


class RefLoss:
    """Loss with value and derivatives in f (test oracle, independent of fastgssl.losses)."""

    def __init__(self, name, h=0.5):
        self.name, self.h = name, h

    def value(self, y, f):
        if self.name == "square":
            return (y - f) ** 2
        if self.name == "logistic":
            return np.logaddexp(0.0, -y * f)
        z, h = y * f, self.h
        return np.where(z > 1 + h, 0.0, np.where(z < 1 - h, 1 - z, (1 + h - z) ** 2 / (4 * h)))

    def d1(self, y, f):
        if self.name == "square":
            return 2 * (f - y)
        if self.name == "logistic":
            return -y / (1.0 + np.exp(y * f))
        z, h = y * f, self.h
        return np.where(z > 1 + h, 0.0, np.where(z < 1 - h, -y, -y * (1 + h - z) / (2 * h)))

    def d2(self, y, f):
        if self.name == "square":
            return np.full_like(f, 2.0)
        if self.name == "logistic":
            p = 1.0 / (1.0 + np.exp(-y * f))
            return p * (1 - p)
        z, h = y * f, self.h
        return np.where(np.abs(1 - z) < h, 1.0 / (2 * h), 0.0)


# ----------------------------------------------------------------------------- problem builders


def rbf(X, sigma):
    d2 = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    return np.exp(-d2 / (2 * sigma))


def affinity(X):
    """Dense Gaussian affinity (no isolated vertex in any induced subgraph)."""
    d2 = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    W = np.exp(-d2 / np.median(d2))
    np.fill_diagonal(W, 0.0)
    return W


def regularizer(W, kind):
    d = W.sum(1)
    if kind == "L":
        return sp.csr_matrix(np.diag(d) - W)
    dm = 1.0 / np.sqrt(d)
    return sp.csr_matrix(np.eye(len(d)) - dm[:, None] * W * dm[None, :])


def make_problem(seed, n=28, frac=1.0, kind="L", loss="square", t=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y_cls = np.where(X[:, 0] + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)
    y = y_cls if loss != "square" else X[:, 0] + 0.3 * rng.normal(size=n)
    y_cls[:t] = 1.0  # at least t points per class
    y_cls[t : 2 * t] = -1.0
    labeled = np.full(n, frac >= 1.0)
    n_per_class = max(int(round(frac * n / 2)), t)
    for c in (-1.0, 1.0) if frac < 1.0 else ():
        members = np.flatnonzero(y_cls == c)
        labeled[rng.permutation(members)[:n_per_class]] = True
    # both classes in every fold for classification
    folds = make_folds(np.where(labeled, y_cls, -1), t, labeled=labeled, random_state=seed)
    W = affinity(X)
    Q = regularizer(W, kind)
    Qs = [regularizer(W[np.ix_(folds == i, folds == i)], kind) for i in range(t)]
    return X, y, labeled, folds, Q, Qs


def contaminated_weights(labeled, gamma_i, Q, folds, i, Qi, eps):
    """The loss weights and the graph matrix of J_eps: ``(1 - eps) / l`` on every labeled
    point plus ``eps / l_i`` on fold i's, and ``(1 - eps) gamma_i / n^2 Q`` plus
    ``eps gamma_i / n_i^2 Q_i`` on fold i's block (Qi: None leaves the fold's graph out)."""
    n = labeled.shape[0]
    c = np.where(labeled, (1 - eps) / labeled.sum(), 0.0)
    Qeps = np.zeros((n, n)) if Q is None else (1 - eps) * (gamma_i / n**2) * Q.toarray()
    if eps != 0.0:
        Li = labeled & (folds == i)
        c = c + np.where(Li, eps / Li.sum(), 0.0)
        Si = np.flatnonzero(folds == i)
        if Qi is not None:
            Qeps[np.ix_(Si, Si)] += eps * (gamma_i / len(Si) ** 2) * Qi.toarray()
    return c, Qeps


def solve_contaminated(K, y, labeled, loss, gamma_a, gamma_i, Q, folds=None, i=None,
                       Qi=None, eps=0.0, tol=1e-14, max_iter=100):
    """Newton with an Armijo line search on J_eps in alpha (f = K alpha).  Returns f."""
    n = len(y)
    c, Qeps = contaminated_weights(labeled, gamma_i, Q, folds, i, Qi, eps)

    def objective(alpha):
        f = K @ alpha
        return c @ np.where(labeled, loss.value(y, f), 0.0) + f @ Qeps @ f + gamma_a * alpha @ f

    alpha = np.zeros(n)
    for _ in range(max_iter):
        f = K @ alpha
        F = c * np.where(labeled, loss.d1(y, f), 0.0) + 2 * Qeps @ f + 2 * gamma_a * alpha
        if np.linalg.norm(F) < tol:
            break
        Jac = (np.diag(c * np.where(labeled, loss.d2(y, f), 0.0)) + 2 * Qeps) @ K
        Jac += 2 * gamma_a * np.eye(n)
        d = -np.linalg.solve(Jac, F)
        J0, step = objective(alpha), 1.0
        slope = F @ (K @ d)  # directional derivative of J (grad J = K F)
        slack = 1e-13 * (1.0 + abs(J0))  # round-off: accept full steps near the optimum
        while objective(alpha + step * d) > J0 + 1e-4 * step * slope + slack and step > 1e-12:
            step *= 0.5
        alpha = alpha + step * d
    return K @ alpha


def derivatives(loss, y, f, labeled):
    g = np.where(labeled, loss.d1(y, f), 0.0)
    h = np.where(labeled, loss.d2(y, f), 0.0)
    return g, h


def fd_bif(K, y, labeled, loss, gamma_a, gamma_i, Q, folds, Qs, t, eps=1e-5):
    cols = []
    for i in range(t):
        fp = solve_contaminated(K, y, labeled, loss, gamma_a, gamma_i, Q, folds, i, Qs[i], eps)
        fm = solve_contaminated(K, y, labeled, loss, gamma_a, gamma_i, Q, folds, i, Qs[i], -eps)
        cols.append((fp - fm) / (2 * eps))
    return np.column_stack(cols)


def margins_clear(loss, y, f, labeled, gap=1e-3):
    if loss.name != "huber_hinge":
        return True
    z = (y * f)[labeled]
    return np.all(np.abs(z - (1 + loss.h)) > gap) and np.all(np.abs(z - (1 - loss.h)) > gap)


def rel_err(a, b):
    return np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-300)


# ----------------------------------------------------------------------------- BIF vs refits

LOSSES = st.sampled_from(["square", "huber_hinge", "logistic"])


@given(
    seed=st.integers(0, 10_000),
    loss_name=LOSSES,
    semi=st.booleans(),
    kind=st.sampled_from(["L", "L_norm"]),
    t=st.integers(2, 4),
)
def test_bif_matches_finite_difference_refits(seed, loss_name, semi, kind, t):
    frac = 0.5 if semi else 1.0
    X, y, labeled, folds, Q, Qs = make_problem(seed, frac=frac, kind=kind, loss=loss_name, t=t)
    loss = RefLoss(loss_name, h=0.5)
    K = rbf(X, 1.0)
    gamma_a = 0.05
    gamma_i = 2.0 if semi else 0.0
    f = solve_contaminated(K, y, labeled, loss, gamma_a, gamma_i, Q)
    assume(margins_clear(loss, y, f, labeled))
    g, h = derivatives(loss, y, f, labeled)
    B = bif_dense(K, f, g, h, labeled, folds, t, gamma_a, gamma_i, Q, Qs)
    B_fd = fd_bif(K, y, labeled, loss, gamma_a, gamma_i, Q, folds, Qs, t)
    for i in range(t):
        assert rel_err(B[:, i], B_fd[:, i]) < 1e-6, (i, rel_err(B[:, i], B_fd[:, i]))


def test_bif_huber_uses_margin_mask_and_sign():
    """The seeds' variants (J K F order / flipped hinge sign) disagree with refits."""
    X, y, labeled, folds, Q, Qs = make_problem(3, loss="huber_hinge", t=3)
    loss = RefLoss("huber_hinge", h=0.5)
    K = rbf(X, 1.0)
    f = solve_contaminated(K, y, labeled, loss, 0.05, 0.0, Q)
    assert margins_clear(loss, y, f, labeled)
    g, h = derivatives(loss, y, f, labeled)
    assert 0 < np.count_nonzero(h) < labeled.sum()  # some, not all, points on the margin
    B_fd = fd_bif(K, y, labeled, loss, 0.05, 0.0, Q, folds, Qs, 3)
    B = bif_dense(K, f, g, h, labeled, folds, 3, 0.05)
    assert rel_err(B, B_fd) < 1e-6
    B_flipped = bif_dense(K, f, -g, h, labeled, folds, 3, 0.05)
    assert rel_err(B_flipped, B_fd) > 1e-2


# ----------------------------------------------------------------------------- FBIF / Woodbury


@given(seed=st.integers(0, 10_000), q=st.integers(1, 12), n=st.integers(13, 40))
def test_woodbury_equals_dense_solve(seed, q, n):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, q))
    Z = rng.normal(size=(q, n)) / n
    R = rng.normal(size=(n, 3))
    shift = 0.5 + rng.random()
    # keep (shift I + X Z) well conditioned: Z X has spectral radius < shift / 2
    scale = 0.5 * shift / max(np.abs(np.linalg.eigvals(Z @ X)).max(), 1e-12)
    Z = Z * min(1.0, scale)
    dense = np.linalg.solve(shift * np.eye(n) + X @ Z, R)
    assert np.allclose(woodbury_solve(shift, X, Z, R), dense, rtol=1e-10, atol=1e-12)


@given(
    seed=st.integers(0, 10_000),
    loss_name=LOSSES,
    semi=st.booleans(),
    exact_labeled=st.booleans(),
)
def test_fbif_with_all_columns_equals_bif(seed, loss_name, semi, exact_labeled):
    X, y, labeled, folds, Q, Qs = make_problem(
        seed, frac=0.5 if semi else 1.0, loss=loss_name, t=3
    )
    loss = RefLoss(loss_name, h=0.5)
    K = rbf(X, 0.5)
    gamma_a, gamma_i = 0.05, (2.0 if semi else 0.0)
    f = solve_contaminated(K, y, labeled, loss, gamma_a, gamma_i, Q)
    g, h = derivatives(loss, y, f, labeled)
    B = bif_dense(K, f, g, h, labeled, folds, 3, gamma_a, gamma_i, Q, Qs)
    V = nystrom_from_gram(K, len(y), random_state=seed).features_
    K_lab = K[:, labeled] if exact_labeled else None
    B_f = fbif_dense(V, f, g, h, labeled, folds, 3, gamma_a, gamma_i, Q, Qs, K_labeled=K_lab)
    assert rel_err(B_f, B) < 1e-8


def test_fbif_low_rank_is_close_but_not_equal():
    X, y, labeled, folds, Q, Qs = make_problem(1, n=60, loss="square", t=5)
    loss = RefLoss("square")
    K = rbf(X, 2.0)
    f = solve_contaminated(K, y, labeled, loss, 0.05, 0.0, Q)
    g, h = derivatives(loss, y, f, labeled)
    B = bif_dense(K, f, g, h, labeled, folds, 5, 0.05)
    errs = []
    for c in (10, 20, 40):
        V = nystrom_from_gram(K, c, random_state=c).features_
        errs.append(rel_err(fbif_dense(V, f, g, h, labeled, folds, 5, 0.05), B))
    assert errs[0] > errs[1] > errs[2] > 1e-12


@given(seed=st.integers(0, 10_000), c=st.integers(3, 20), t=st.sampled_from([3, 5]))
def test_paper_fbif_equals_seed_001_printed_formula(seed, c, t):
    """Seed 001, section 4, Huber hinge: B~[:, i] = L~^{-1} r_i with the printed Woodbury form
    L~^{-1} = (I - V (4 n lam h I + V^T V)^{-1} V^T) / (2 lam) (no margin mask) and
    r_i = -(1/m) K[:, S_i] V'[S_i] - 2 lam f with the exact kernel (Theorem 1's sign)."""
    from fastgssl.losses import get_loss

    h, lam = 0.5, 0.05
    X, y, labeled, folds, _, _ = make_problem(seed, n=30, loss="huber_hinge", t=t)
    loss = RefLoss("huber_hinge", h=h)
    K = rbf(X, 0.5)
    n = len(y)
    f = solve_contaminated(K, y, labeled, loss, lam, 0.0, None)
    g, hh = derivatives(loss, y, f, labeled)
    V = nystrom_from_gram(K, c, random_state=seed).features_
    curv = paper_curvature(get_loss("huber_hinge", h=h), hh, labeled)
    assert np.all(curv == 1.0 / (2 * h))
    B = fbif_dense(V, f, g, curv, labeled, folds, t, lam, K_rhs=K)
    Linv = (np.eye(n) - V @ np.linalg.solve(4 * n * lam * h * np.eye(c) + V.T @ V, V.T)) / (
        2 * lam)
    for i in range(t):
        Si = folds == i
        r = -K[:, Si] @ g[Si] / Si.sum() - 2 * lam * f
        assert rel_err(B[:, i], Linv @ r) < 1e-9


def test_paper_curvature_drops_the_margin_mask_of_piecewise_losses_only():
    from fastgssl.losses import get_loss

    labeled = np.array([True, True, False])
    h = np.array([0.0, 0.3, 0.0])
    assert paper_curvature(get_loss("huber_hinge", h=0.1), h, labeled).tolist() == [5.0, 5.0,
                                                                                    0.0]
    assert paper_curvature(get_loss("squared_hinge"), h, labeled).tolist() == [2.0, 2.0, 0.0]
    for smooth in ("square", "logistic"):
        assert paper_curvature(get_loss(smooth), h, labeled) is h


@given(seed=st.integers(0, 10_000))
def test_paper_fbif_with_all_columns_is_the_bif_for_the_square_loss(seed):
    X, y, labeled, folds, _, _ = make_problem(seed, n=30, loss="square", t=3)
    loss = RefLoss("square")
    K = rbf(X, 0.5)
    f = solve_contaminated(K, y, labeled, loss, 0.05, 0.0, None)
    g, h = derivatives(loss, y, f, labeled)
    V = nystrom_from_gram(K, len(y), random_state=seed).features_
    B = bif_dense(K, f, g, h, labeled, folds, 3, 0.05)
    assert rel_err(fbif_dense(V, f, g, h, labeled, folds, 3, 0.05, K_rhs=K), B) < 1e-8


# ----------------------------------------------------------------------------- w-space BIF


def solve_w(V, y, labeled, loss, gamma_a, gamma_i, Q, folds=None, i=None, Qi=None, eps=0.0):
    """Newton on J_eps in w for the Nystrom model f = V w (test oracle)."""
    n, c = V.shape
    cw, Qeps = contaminated_weights(labeled, gamma_i, Q, folds, i, Qi, eps)

    def objective(w):
        f = V @ w
        return cw @ np.where(labeled, loss.value(y, f), 0.0) + f @ Qeps @ f + gamma_a * w @ w

    w = np.zeros(c)
    for _ in range(100):
        f = V @ w
        grad = V.T @ (cw * np.where(labeled, loss.d1(y, f), 0.0) + 2 * Qeps @ f) + 2 * gamma_a * w
        if np.linalg.norm(grad) < 1e-14:
            break
        Hs = V.T @ ((cw * np.where(labeled, loss.d2(y, f), 0.0))[:, None] * V + 2 * Qeps @ V)
        Hs += 2 * gamma_a * np.eye(c)
        d = -np.linalg.solve(Hs, grad)
        J0, step = objective(w), 1.0
        slack = 1e-13 * (1.0 + abs(J0))
        while objective(w + step * d) > J0 + 1e-4 * step * (grad @ d) + slack and step > 1e-12:
            step *= 0.5
        w = w + step * d
    return w


@given(seed=st.integers(0, 10_000), loss_name=LOSSES, semi=st.booleans(),
       kind=st.sampled_from(["L", "L_norm"]))
def test_wspace_bif_matches_finite_difference_refits(seed, loss_name, semi, kind):
    t = 3
    X, y, labeled, folds, Q, Qs = make_problem(
        seed, frac=0.5 if semi else 1.0, kind=kind, loss=loss_name, t=t
    )
    loss = RefLoss(loss_name, h=0.5)
    K = rbf(X, 1.0)
    V = nystrom_from_gram(K, 10, random_state=seed).features_
    gamma_a, gamma_i = 0.05, (2.0 if semi else 0.0)
    w = solve_w(V, y, labeled, loss, gamma_a, gamma_i, Q)
    f = V @ w
    assume(margins_clear(loss, y, f, labeled))
    g, h = derivatives(loss, y, f, labeled)
    B = bif_wspace(V, w, g, h, labeled, folds, t, gamma_a, gamma_i, Q, Qs)
    for i in range(t):
        wp = solve_w(V, y, labeled, loss, gamma_a, gamma_i, Q, folds, i, Qs[i], 1e-5)
        wm = solve_w(V, y, labeled, loss, gamma_a, gamma_i, Q, folds, i, Qs[i], -1e-5)
        fd = V @ (wp - wm) / 2e-5
        assert rel_err(B[:, i], fd) < 1e-6


# ----------------------------------------------------------------------------- predictions


def test_bif_predictions_use_unequal_fold_epsilons():
    labeled = np.array([True] * 7 + [False] * 3)
    folds = np.array([0, 0, 0, 1, 1, 1, 1, 0, 1, 1])
    eps = fold_epsilons(labeled, folds, 2)
    assert np.allclose(eps, [-3 / 4, -4 / 3])
    f = np.arange(10.0)
    B = np.arange(20.0).reshape(10, 2)
    pred = bif_predictions(f, B, labeled, folds, 2)
    expect = [f[j] + eps[folds[j]] * B[j, folds[j]] for j in range(7)]
    assert np.allclose(pred, expect)


def test_square_loss_bif_of_krr_is_exact_at_eps_minus_one_over_t_minus_one():
    """For the square loss f_eps is linear-fractional in eps; BIF predictions are an
    approximation, exact quadratic CV is exact: both agree to first order on small folds."""
    X, y, labeled, folds, Q, Qs = make_problem(5, n=60, loss="square", t=10)
    K = rbf(X, 1.0)
    loss = RefLoss("square")
    f = solve_contaminated(K, y, labeled, loss, 0.05, 0.0, Q)
    g, h = derivatives(loss, y, f, labeled)
    B = bif_dense(K, f, g, h, labeled, folds, 10, 0.05)
    pred = bif_predictions(f, B, labeled, folds, 10)
    # exact mean-form refits (fold models use the same gamma_a on fewer points)
    exact = np.empty(60)
    for i in range(10):
        tr = folds != i
        sub = solve_contaminated(K[np.ix_(tr, tr)], y[tr], labeled[tr], loss, 0.05, 0.0,
                                 Q[tr][:, tr])
        alpha = np.linalg.lstsq(K[np.ix_(tr, tr)], sub, rcond=None)[0]
        exact[~tr] = K[np.ix_(~tr, tr)] @ alpha
    assert np.mean((pred - exact) ** 2) < 0.1 * np.mean((f - exact) ** 2)


# ----------------------------------------------------------------------------- exact quadratic


def brute_force_sum_form(K, y, labeled, folds, t, mu_a, mu_i=0.0, Q=None):
    """Refit min sum_{L minus L_i} (y - f)^2 + mu_a f^T K^-1 f + mu_i f^T Q f per fold."""
    n = len(y)
    lab = np.flatnonzero(labeled)
    out = np.empty(len(lab))
    for i in range(t):
        Jd = labeled & (folds != i)
        A = np.diag(Jd.astype(float)) @ K + mu_a * np.eye(n)
        if mu_i:
            A += mu_i * Q.toarray() @ K
        alpha = np.linalg.solve(A, np.where(Jd, y, 0.0))
        held = labeled & (folds == i)
        out[np.isin(lab, np.flatnonzero(held))] = (K @ alpha)[held]
    return out


@given(seed=st.integers(0, 10_000), semi=st.booleans(), t=st.integers(2, 6))
def test_exact_quadratic_equals_brute_force(seed, semi, t):
    X, y, labeled, folds, Q, _ = make_problem(seed, n=36, frac=0.6 if semi else 1.0, t=t)
    K = rbf(X, 1.0)
    mu_a, mu_i = 0.3, (0.5 if semi else 0.0)
    pred = exact_quadratic_predictions(K, y, labeled, folds, t, mu_a, mu_i, Q)
    ref = brute_force_sum_form(K, y, labeled, folds, t, mu_a, mu_i, Q)
    assert np.max(np.abs(pred - ref)) < 1e-10 * max(1.0, np.max(np.abs(ref)))


def test_exact_quadratic_eigh_path_equals_cholesky_path():
    X, y, labeled, folds, Q, _ = make_problem(11, n=50, t=5)
    K = rbf(X, 1.0)
    evals, evecs = np.linalg.eigh(K)
    for mu in [1e-3, 0.1, 10.0]:
        pred, f = exact_quadratic_eigh(evals, evecs, y, folds, 5, mu)
        ref = exact_quadratic_predictions(K, y, labeled, folds, 5, mu)
        assert np.allclose(pred, ref, rtol=1e-9, atol=1e-10)
        assert np.allclose(f, K @ np.linalg.solve(K + mu * np.eye(50), y), atol=1e-10)


def test_exact_quadratic_multi_output():
    X, y, labeled, folds, Q, _ = make_problem(2, n=30, t=3)
    K = rbf(X, 1.0)
    Y = np.column_stack([y, -2 * y + 1])
    pred = exact_quadratic_predictions(K, Y, labeled, folds, 3, 0.2)
    for k in range(2):
        ref = exact_quadratic_predictions(K, Y[:, k], labeled, folds, 3, 0.2)
        assert np.allclose(pred[:, k], ref, atol=1e-12)


@given(seed=st.integers(0, 10_000), semi=st.booleans())
def test_exact_quadratic_wspace_equals_brute_force(seed, semi):
    t = 4
    X, y, labeled, folds, Q, _ = make_problem(seed, n=40, frac=0.6 if semi else 1.0, t=t)
    V = nystrom_from_gram(rbf(X, 1.0), 12, random_state=seed).features_
    mu_a, mu_i = 0.2, (0.7 if semi else 0.0)
    from fastgssl.cv._quadratic import exact_quadratic_wspace

    pred = exact_quadratic_wspace(V, y, labeled, folds, t, mu_a, mu_i, Q)
    lab = np.flatnonzero(labeled)
    ref = np.empty(len(lab))
    P = V.T @ (Q @ V)
    for i in range(t):
        keep = labeled & (folds != i)
        M = V[keep].T @ V[keep] + mu_a * np.eye(V.shape[1]) + mu_i * P
        w = np.linalg.solve(M, V[keep].T @ y[keep])
        held = labeled & (folds == i)
        ref[np.isin(lab, np.flatnonzero(held))] = V[held] @ w
    assert np.max(np.abs(pred - ref)) < 1e-10 * max(1.0, np.max(np.abs(ref)))
