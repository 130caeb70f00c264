"""The active-set solver of the piecewise-quadratic kernel machines (issue 13, DESIGN 3.9).

``fit_dense(..., solver="active-set")`` against the damped-Newton reference
(``solver="newton"``) to round-off: random PSD kernels (full rank and singular, with
duplicated points so that several points share a margin), widths h, gamma_a, labels of one
or both classes; warm and cold starts; several columns; through SVM / LapSVM and exact
transductive CV; the bad inputs.
"""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.exceptions import ConvergenceWarning

from fastgssl.losses import get_loss
from fastgssl.solvers._kernel_fits import SOLVERS, fit_dense, objective_dense

TOL = 1e-9


def _problem(seed, n, rank, n_dup, flip_dup, d=3, sigma=None):
    """A PSD Gram (RBF of n points, or low-rank linear), labels, duplicated rows."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X[:, 0] + 0.7 * rng.normal(size=n) > 0, 1.0, -1.0)
    if n_dup:
        # exact duplicates: equal f, so equal margins (ties) or opposite margins (flipped)
        idx = rng.choice(n, size=n_dup, replace=False)
        X = np.vstack([X, X[idx]])
        y = np.concatenate([y, -y[idx] if flip_dup else y[idx]])
    if rank is None:
        s = sigma if sigma is not None else float(d)
        sq = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
        K = np.exp(-sq / (2 * s))
    else:
        Z = X @ rng.normal(size=(d, rank))
        K = Z @ Z.T / rank
    return 0.5 * (K + K.T), y


def _loss(name, h):
    return get_loss(name, h=h) if name == "huber_hinge" else get_loss(name)


def _both(K, Y, loss, gamma_a, **kw):
    m = np.ones(K.shape[0], dtype=bool)
    a_n, i_n = fit_dense(K, Y, m, None, loss, gamma_a, 0.0, solver="newton",
                         return_info=True, **kw)
    a_s, i_s = fit_dense(K, Y, m, None, loss, gamma_a, 0.0, solver="active-set",
                         return_info=True, **kw)
    return a_n, a_s, i_n, i_s


def _assert_close(K, a_ref, a, y, loss, gamma_a, coef=True):
    """f and the objective always; alpha when K is nonsingular (else alpha is determined
    only up to the null space of K: the active-set solver returns the one with
    alpha = -ell'(f) / (2 gamma_a l), Newton may stop at another)."""
    if coef:
        scale = max(np.abs(a_ref).max(), 1e-300)
        assert np.abs(a - a_ref).max() <= TOL * scale
    f_ref, f = K @ a_ref, K @ a
    assert np.abs(f - f_ref).max() <= TOL * max(1.0, np.abs(f_ref).max())
    m = np.ones(K.shape[0], dtype=bool)
    o_ref = objective_dense(K, a_ref, y, m, None, loss, gamma_a, 0.0)
    o = objective_dense(K, a, y, m, None, loss, gamma_a, 0.0)
    assert abs(o - o_ref) <= 1e-12 * max(1.0, abs(o_ref))


def test_solvers_listed():
    assert SOLVERS == ("auto", "newton", "active-set")


@settings(derandomize=True, deadline=None, max_examples=40)
@given(seed=st.integers(0, 2**16), n=st.integers(4, 40),
       rank=st.one_of(st.none(), st.integers(1, 6)), n_dup=st.integers(0, 3),
       flip_dup=st.booleans(), h=st.sampled_from([1e-3, 0.01, 0.05, 0.3, 1.0, 2.0]),
       log_gamma=st.floats(-5.0, 0.0), name=st.sampled_from(["huber_hinge", "squared_hinge"]))
def test_active_set_equals_newton(seed, n, rank, n_dup, flip_dup, h, log_gamma, name):
    K, y = _problem(seed, n, rank, min(n_dup, n), flip_dup)
    loss = _loss(name, h)
    gamma_a = 10.0**log_gamma
    a_n, a_s, i_n, i_s = _both(K, y, loss, gamma_a)
    assert i_s[0]["solver"] == "active-set" and i_s[0]["converged"]
    _assert_close(K, a_n, a_s, y, loss, gamma_a, coef=rank is None and n_dup == 0)
    # the stationarity condition alpha = -ell'(f) / (2 gamma_a l) holds at round-off
    g = loss.d1(y, K @ a_s)
    assert np.abs(a_s + g / (2 * gamma_a * y.size)).max() <= 1e-8 * np.abs(a_s).max()


@pytest.mark.parametrize("h", [0.01, 0.05])
def test_ties_exactly_on_the_margin(h):
    # K = I: f_j = alpha_j; with gamma_a l = 1 / (2 (1 - h)) ... choose the margin points so
    # that y f lands on a kink: the solution of each point is independent (diagonal K)
    n = 12
    K = np.eye(n)
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    loss = get_loss("huber_hinge", h=h)
    # z = y f = 1 / (2 gamma_a l) on the linear piece; put it exactly at 1 - h
    gamma_a = 1.0 / (2 * (1 - h) * n)
    a_n, a_s, _, i_s = _both(K, y, loss, gamma_a)
    assert i_s[0]["converged"]
    _assert_close(K, a_n, a_s, y, loss, gamma_a)
    np.testing.assert_allclose(y * a_s, 1 - h, rtol=1e-12)


@settings(derandomize=True, deadline=None, max_examples=15)
@given(seed=st.integers(0, 2**16), n=st.integers(10, 50), h=st.sampled_from([0.01, 0.05, 0.5]),
       g1=st.floats(-4.0, -1.0), g2=st.floats(-5.0, -1.0),
       name=st.sampled_from(["huber_hinge", "squared_hinge"]))
def test_warm_start_equals_cold(seed, n, h, g1, g2, name):
    K, y = _problem(seed, n, None, 2, False)
    loss = _loss(name, h)
    m = np.ones(K.shape[0], dtype=bool)
    start = fit_dense(K, y, m, None, loss, 10.0**g1, 0.0, solver="active-set")
    warm, iw = fit_dense(K, y, m, None, loss, 10.0**g2, 0.0, solver="active-set", init=start,
                         return_info=True)
    cold = fit_dense(K, y, m, None, loss, 10.0**g2, 0.0, solver="active-set")
    ref = fit_dense(K, y, m, None, loss, 10.0**g2, 0.0, solver="newton")
    assert iw[0]["warm_start"]
    _assert_close(K, ref, cold, y, loss, 10.0**g2)
    _assert_close(K, ref, warm, y, loss, 10.0**g2)
    # any start (here: a random one, partly outside the box) reaches the same optimum
    rng = np.random.default_rng(seed)
    rand = fit_dense(K, y, m, None, loss, 10.0**g2, 0.0, solver="active-set",
                     init=rng.normal(scale=100.0, size=y.size))
    _assert_close(K, ref, rand, y, loss, 10.0**g2)


@pytest.mark.parametrize("name", ["huber_hinge", "squared_hinge"])
def test_multi_column_and_subset_labeled(name):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(90, 4))
    K = np.exp(-((X[:, None] - X[None]) ** 2).sum(-1) / 4.0)
    cls = rng.integers(0, 4, size=90)
    Y = np.where(cls[:, None] == np.arange(4)[None], 1.0, -1.0)
    loss = _loss(name, 0.01)
    a_n, a_s, _, i_s = _both(K, Y, loss, 1e-4)
    assert len(i_s) == 4 and all(i["converged"] for i in i_s)
    for k in range(4):
        _assert_close(K, a_n[:, k], a_s[:, k], Y[:, k], loss, 1e-4)
        one = fit_dense(K, Y[:, k], np.ones(90, dtype=bool), None, loss, 1e-4, 0.0,
                        solver="active-set")
        np.testing.assert_array_equal(one, a_s[:, k])
    # unlabeled points (no graph): alpha_U = 0, the labeled block is the supervised problem
    lab = rng.random(90) < 0.6
    a_n = fit_dense(K, Y, lab, None, loss, 1e-4, 0.0, solver="newton")
    a_s = fit_dense(K, Y, lab, None, loss, 1e-4, 0.0, solver="active-set")
    assert np.all(a_s[~lab] == 0)
    assert np.abs(a_s - a_n).max() <= TOL * np.abs(a_n).max()


def test_auto_picks_active_set_only_where_it_applies():
    K, y = _problem(0, 30, None, 0, False)
    m = np.ones(30, dtype=bool)
    _, info = fit_dense(K, y, m, None, get_loss("huber_hinge", h=0.05), 1e-3, 0.0,
                        return_info=True)
    assert info[0]["solver"] == "active-set"
    _, info = fit_dense(K, y, m, None, get_loss("logistic"), 1e-3, 0.0, return_info=True)
    assert info[0].get("solver", "newton") == "newton"
    # a graph term: Newton (the auto choice) and a clear error for an explicit request
    import scipy.sparse as sp

    Q = sp.identity(30, format="csr")
    _, info = fit_dense(K, y, m, Q, get_loss("huber_hinge", h=0.05), 1e-3, 1.0,
                        return_info=True)
    assert info[0].get("solver", "newton") == "newton"
    with pytest.raises(ValueError, match="active-set"):
        fit_dense(K, y, m, Q, get_loss("huber_hinge", h=0.05), 1e-3, 1.0, solver="active-set")
    with pytest.raises(ValueError, match="piecewise-quadratic"):
        fit_dense(K, y, m, None, get_loss("logistic"), 1e-3, 0.0, solver="active-set")
    # targets other than +-1: auto falls back to Newton, an explicit request is an error
    with pytest.raises(ValueError, match="-1, \\+1"):
        fit_dense(K, 0.5 * y, m, None, get_loss("huber_hinge", h=0.05), 1e-3, 0.0,
                  solver="active-set")
    _, info = fit_dense(K, 0.5 * y, m, None, get_loss("huber_hinge", h=0.05), 1e-3, 0.0,
                        return_info=True)
    assert info[0].get("solver", "newton") == "newton"
    # the square loss keeps its closed form whatever the solver
    a1 = fit_dense(K, y, m, None, get_loss("square"), 1e-3, 0.0, solver="active-set")
    a2 = fit_dense(K, y, m, None, get_loss("square"), 1e-3, 0.0, solver="newton")
    np.testing.assert_array_equal(a1, a2)


def test_bad_inputs():
    K, y = _problem(1, 25, None, 0, False)
    m = np.ones(25, dtype=bool)
    # h <= 0: get_loss refuses it, and so does the solver for a loss object that has it
    with pytest.raises(ValueError, match="h"):
        get_loss("huber_hinge", h=0.0)
    bad = get_loss("huber_hinge", h=0.1)
    bad.params["h"] = -0.1
    with pytest.raises(ValueError, match="h > 0"):
        fit_dense(K, y, m, None, bad, 1e-3, 0.0, solver="active-set")
    with pytest.raises(ValueError, match="solver"):
        fit_dense(K, y, m, None, get_loss("huber_hinge", h=0.1), 1e-3, 0.0, solver="smo")
    # a kernel that is not PSD: a clear error
    rng = np.random.default_rng(0)
    B = rng.normal(size=(25, 25))
    with pytest.raises(ValueError, match="positive semi-definite"):
        fit_dense(-(B @ B.T), y, m, None, get_loss("huber_hinge", h=0.1), 1e-3, 0.0,
                  solver="active-set")


@pytest.mark.parametrize("name", ["huber_hinge", "squared_hinge"])
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_labels_of_one_class(name, sign):
    K, _ = _problem(2, 30, None, 0, False)
    y = np.full(30, sign)
    loss = _loss(name, 0.05)
    for gamma_a in (1e-4, 1e-1):
        a_n, a_s, _, i_s = _both(K, y, loss, gamma_a)
        assert i_s[0]["converged"]
        _assert_close(K, a_n, a_s, y, loss, gamma_a)


def test_convergence_warning_names_the_partition():
    K, y = _problem(4, 60, None, 0, False)
    with pytest.warns(ConvergenceWarning, match=r"objective .*\|M\| = \d+.*\|E\| = \d+"):
        fit_dense(K, y, np.ones(60, dtype=bool), None, get_loss("huber_hinge", h=0.01), 1e-5,
                  0.0, solver="active-set", max_iter=1)


# --- through the learners and exact transductive CV ------------------------------------------
def _blobs(seed=0, n=120, classes=3):
    rng = np.random.default_rng(seed)
    means = rng.normal(scale=2.0, size=(classes, 4))
    y = rng.integers(0, classes, size=n)
    return means[y] + rng.normal(size=(n, 4)), y


@pytest.mark.parametrize("loss", ["huber_hinge", "squared_hinge"])
@pytest.mark.parametrize("lam", [1e-5, 1e-2])
def test_svm_solvers_agree(loss, lam):
    from fastgssl.models import SVM

    X, y = _blobs()
    ref = SVM(lam=lam, sigma=4.0, loss=loss, optimizer="newton").fit(X, y)
    act = SVM(lam=lam, sigma=4.0, loss=loss, optimizer="active-set").fit(X, y)
    auto = SVM(lam=lam, sigma=4.0, loss=loss).fit(X, y)
    scale = np.abs(ref.dual_coef_).max()
    assert np.abs(act.dual_coef_ - ref.dual_coef_).max() <= TOL * scale
    np.testing.assert_array_equal(auto.dual_coef_, act.dual_coef_)
    d_ref, d_act = ref.decision_function(X), act.decision_function(X)
    assert np.abs(d_act - d_ref).max() <= TOL * max(1.0, np.abs(d_ref).max())


@pytest.mark.parametrize("gamma_a", [1e-5, 1e-2])
def test_lapsvm_solvers_agree(gamma_a):
    from fastgssl.models import LapSVM

    X, y = _blobs(1, n=150)
    ys = y.copy()
    ys[np.random.default_rng(1).random(150) < 0.6] = -1
    ref = LapSVM(gamma_a=gamma_a, gamma_i=1.0, sigma=4.0, n_neighbors=6,
                 optimizer="newton").fit(X, ys)
    act = LapSVM(gamma_a=gamma_a, gamma_i=1.0, sigma=4.0, n_neighbors=6,
                 optimizer="active-set").fit(X, ys)
    d_ref, d_act = ref.decision_function(X), act.decision_function(X)
    assert np.abs(d_act - d_ref).max() <= TOL * max(1.0, np.abs(d_ref).max())
    np.testing.assert_array_equal(ref.predict(X), act.predict(X))


@pytest.mark.parametrize("make", ["svm", "lapsvm"])
def test_exact_transductive_cv_solvers_agree(make):
    from fastgssl.cv import cv_result
    from fastgssl.models import SVM, LapSVM

    X, y = _blobs(2, n=140)
    if make == "svm":
        est = {s: SVM(lam=1e-4, sigma=4.0, optimizer=s) for s in ("newton", "active-set")}
        yy = y
    else:
        yy = y.copy()
        yy[np.random.default_rng(2).random(140) < 0.5] = -1
        est = {s: LapSVM(gamma_a=1e-4, gamma_i=1.0, sigma=4.0, n_neighbors=6, optimizer=s)
               for s in ("newton", "active-set")}
    res = {s: cv_result(e, X, yy, 5, method="exact", protocol="transductive", random_state=0)
           for s, e in est.items()}
    p_ref, p_act = res["newton"].predictions, res["active-set"].predictions
    assert np.abs(p_act - p_ref).max() <= TOL * max(1.0, np.abs(p_ref).max())
    assert res["newton"].score == pytest.approx(res["active-set"].score, abs=1e-12)


def test_fold_refits_from_the_full_fit_equal_cold_refits():
    # exact CV's warm start: the full fit's alpha rescaled by l / (l - m) on the kept points
    K, y = _problem(5, 80, None, 0, False)
    loss = get_loss("huber_hinge", h=0.01)
    m = np.ones(80, dtype=bool)
    full = fit_dense(K, y, m, None, loss, 1e-4, 0.0, solver="active-set")
    folds = np.arange(80) % 5
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        for i in range(5):
            R = np.flatnonzero(folds != i)
            KR = K[np.ix_(R, R)]
            mR = np.ones(R.size, dtype=bool)
            warm = fit_dense(KR, y[R], mR, None, loss, 1e-4, 0.0, solver="active-set",
                             init=full[R] * (80 / R.size))
            cold = fit_dense(KR, y[R], mR, None, loss, 1e-4, 0.0, solver="newton")
            _assert_close(KR, cold, warm, y[R], loss, 1e-4)


@settings(derandomize=True, deadline=None, max_examples=25)
@given(seed=st.integers(0, 2**16), n=st.integers(6, 60), n_dup=st.integers(0, 6),
       flip_dup=st.booleans(), n_folds=st.integers(2, 6), k=st.integers(1, 3),
       h=st.sampled_from([0.01, 0.05, 0.5]), log_gamma=st.floats(-6, 0),
       name=st.sampled_from(["huber_hinge", "squared_hinge"]))
def test_fold_refits_in_one_call_equal_refits_one_by_one(seed, n, n_dup, flip_dup, n_folds, k,
                                                        h, log_gamma, name):
    """``fold_refits`` (every cold fold refit in one compiled call) against fit_dense per
    fold and column, and against Newton: the held-out values to round-off (ties too)."""
    from fastgssl.solvers._kernel_fits import fold_refits

    K, y = _problem(seed, n, None, n_dup, flip_dup)
    rng = np.random.default_rng(seed + 1)
    Y = np.column_stack([y] + [np.where(rng.random(y.size) < 0.5, 1.0, -1.0)
                               for _ in range(k - 1)])
    loss, gamma_a = _loss(name, h), 10.0**log_gamma
    fl = rng.integers(0, n_folds, size=y.size)
    pred, n_iter = fold_refits(K, Y, fl, n_folds, loss, gamma_a)
    assert n_iter.shape == (n_folds,)
    scale = max(1.0, np.abs(pred).max())
    for i in range(n_folds):
        R, V = np.flatnonzero(fl != i), np.flatnonzero(fl == i)
        if R.size == 0 or V.size == 0:
            continue
        KR = K[np.ix_(R, R)]
        for solver, tol in (("active-set", 1e-12), ("newton", TOL)):
            beta = fit_dense(KR, Y[R], np.ones(R.size, dtype=bool), None, loss, gamma_a, 0.0,
                             solver=solver)
            # round-off of the held-out values K_VR beta scales with |K_VR| |beta| (duplicate
            # points make beta large: ~1e5 at round-off 1e-11)
            KVR = K[np.ix_(V, R)]
            size = (max(scale, float((np.abs(KVR) @ np.abs(beta)).max()))
                    if solver == "active-set" else scale)
            assert np.abs(KVR @ beta - pred[V]).max() <= tol * size


@pytest.mark.parametrize("n, workers", [(300, 2), (300, 3), (90, 2)])
def test_fold_refits_on_threads_equal_the_sequential_loop(monkeypatch, n, workers):
    """The folds' refits on several threads: the same held-out values and iteration counts,
    bit for bit, as one after the other (each fold writes only its own rows), both on one
    BLAS thread per refit (OpenBLAS's threaded kernels may sum in another order)."""
    import fastgssl.solvers._kernel_fits as kernel_fits
    from fastgssl._threads import fold_threads, small_blas

    assert fold_threads(100, 10) == 1 and fold_threads(5000, 10) == 1
    K, y = _problem(7, n, None, 2, True)
    rng = np.random.default_rng(8)
    Y = np.column_stack([y, np.where(rng.random(y.size) < 0.3, 1.0, -1.0)])
    fl = rng.integers(0, 5, size=y.size)
    loss = get_loss("huber_hinge", h=0.05)
    out = {}
    for w in (1, workers):
        monkeypatch.setattr(kernel_fits, "fold_threads", lambda rows, t, w=w: w)
        with small_blas(0.0):
            out[w] = kernel_fits.fold_refits(K, Y, fl, 5, loss, 1e-3)
    assert np.array_equal(out[1][0], out[workers][0])
    assert np.array_equal(out[1][1], out[workers][1])


def test_fold_refits_fall_back_where_the_qp_stops_early():
    """max_iter too small for the compiled loop: those columns are refitted by fit_dense
    (its fallback and ConvergenceWarning), the others are kept."""
    from fastgssl.solvers._kernel_fits import fold_refits

    K, y = _problem(3, 60, None, 0, False)
    loss = get_loss("huber_hinge", h=0.01)
    fl = np.arange(60) % 3
    Y = y[:, None]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        pred, _ = fold_refits(K, Y, fl, 3, loss, 1e-5, max_iter=1)
        for i in range(3):
            R, V = np.flatnonzero(fl != i), np.flatnonzero(fl == i)
            beta = fit_dense(K[np.ix_(R, R)], y[R], np.ones(R.size, dtype=bool), None, loss,
                             1e-5, 0.0, max_iter=1)
            assert np.allclose(K[np.ix_(V, R)] @ beta, pred[V, 0], rtol=1e-12, atol=1e-12)
    assert fold_refits(K, Y, fl, 3, get_loss("logistic"), 1e-3) is None
    assert fold_refits(K, Y, fl, 3, loss, 1e-3, solver="newton") is None


# --- the factor updates, warm starts, large lam (the compiled active-set loop) ----------------
def _tied_problem(seed, n_base, copies, flip):
    """RBF Gram with every point repeated ``copies`` times (equal rows: ties at the margin),
    labels flipped on some copies."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_base, 2))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=n_base) > 0, 1.0, -1.0)
    X = np.repeat(X, copies, axis=0)
    y = np.repeat(y, copies)
    if flip:
        y[rng.random(y.size) < 0.15] *= -1.0
    K = np.exp(-((X[:, None] - X[None]) ** 2).sum(-1) / 2.0)
    return 0.5 * (K + K.T), y


@settings(derandomize=True, deadline=None, max_examples=30)
@given(seed=st.integers(0, 2**16), n=st.integers(2, 40), copies=st.integers(1, 3),
       log_c=st.floats(-6.0, 1.0), mode=st.sampled_from([0, 1, 2]),
       steps=st.integers(1, 6))
def test_factor_updates_match_a_fresh_factorization(seed, n, copies, log_c, mode, steps):
    # bordering by blocks and deletions (rotations, trailing refactor, or the cost model's
    # choice) keep R^T R = Y_F K_FF Y_F + c I over the current free set, duplicates included
    from fastgssl.solvers._active_set import _fac_append, _fac_delete

    K, y = _tied_problem(seed, n, copies, True)
    rng = np.random.default_rng(seed + 1)
    c = 10.0**log_c
    R, idx, m = np.zeros((0, 0)), np.empty(0, dtype=np.int64), 0
    out = np.ones(K.shape[0], dtype=bool)
    for _ in range(steps):
        pool = np.flatnonzero(out)
        if pool.size:
            V = np.sort(rng.choice(pool, size=rng.integers(1, pool.size + 1), replace=False))
            R, idx, m = _fac_append(K, y, c, R, idx, m, V.astype(np.int64))
            out[V] = False
        keep = rng.random(m) < 0.6
        m = _fac_delete(K, y, c, R, idx, m, keep, mode)
        out[:] = True
        out[idx[:m]] = False
        F = idx[:m]
        H = K[np.ix_(F, F)] * np.outer(y[F], y[F]) + c * np.eye(m)
        Rm = R[:m, :m]
        assert not np.tril(Rm, -1).any() and (np.diag(Rm) > 0).all()
        assert not R[m:].any() and not R[:, m:].any()
        if m:
            assert np.abs(Rm.T @ Rm - H).max() <= 1e-10 * max(1.0, np.abs(H).max())


@pytest.mark.parametrize("name", ["huber_hinge", "squared_hinge"])
@pytest.mark.parametrize("flip", [False, True])
def test_many_ties_at_the_margin(name, flip):
    # every point three times: equal rows of K, so tied margins and nearly singular K_MM
    K, y = _tied_problem(7, 40, 3, flip)
    loss = _loss(name, 0.05)
    for gamma_a in (1e-6, 1e-3, 1e-1):
        a_n, a_s, _, i_s = _both(K, y, loss, gamma_a)
        assert i_s[0]["converged"]
        _assert_close(K, a_n, a_s, y, loss, gamma_a, coef=False)


@pytest.mark.parametrize("gamma_a", [0.3, 1.0, 10.0])
def test_large_lam_linear_piece(gamma_a):
    # at large gamma_a every point sits on the linear piece (alpha = y / (2 gamma_a l)): the
    # solver moves the violators to U in blocks without any |M| x |M| solve
    K, y = _problem(8, 200, None, 0, False)
    loss = get_loss("huber_hinge", h=0.05)
    a_n, a_s, _, i_s = _both(K, y, loss, gamma_a)
    assert i_s[0]["converged"] and i_s[0]["linear"] == 200 and i_s[0]["n_iter"] == 0
    _assert_close(K, a_n, a_s, y, loss, gamma_a)
    np.testing.assert_allclose(a_s, y / (2 * gamma_a * 200), rtol=1e-12)


@settings(derandomize=True, deadline=None, max_examples=10)
@given(seed=st.integers(0, 2**16), n=st.integers(60, 120),
       path=st.lists(st.floats(-6.0, 0.0), min_size=2, max_size=4))
def test_regularization_path_warm_starts(seed, n, path):
    # each fit starts from the previous lam's solution (what a lam path does): a start with
    # most points strictly inside the new box is replaced by a cold start (reported), any
    # other is used; every fit equals the reference
    K, y = _problem(seed, n, None, 2, True)
    loss = get_loss("huber_hinge", h=0.05)
    m = np.ones(K.shape[0], dtype=bool)
    prev = None
    for log_g in path:
        g = 10.0**log_g
        with warnings.catch_warnings():
            warnings.simplefilter("error", ConvergenceWarning)
            a, info = fit_dense(K, y, m, None, loss, g, 0.0, solver="active-set", init=prev,
                                return_info=True)
        ref = fit_dense(K, y, m, None, loss, g, 0.0, solver="newton")
        _assert_close(K, ref, a, y, loss, g)
        if prev is not None:
            assert info[0]["warm_start"] == ("warm_start_rejected" not in info[0])
        prev = a


def test_warm_start_with_most_points_free_restarts_cold():
    K, y = _problem(9, 300, None, 0, False)
    loss = get_loss("huber_hinge", h=0.05)
    m = np.ones(300, dtype=bool)
    start = fit_dense(K, y, m, None, loss, 1.0, 0.0)  # all on the linear piece at lam = 1
    a, info = fit_dense(K, y, m, None, loss, 1e-3, 0.0, init=start, return_info=True)
    assert info[0]["warm_start_rejected"] == 300 and not info[0]["warm_start"]
    ref = fit_dense(K, y, m, None, loss, 1e-3, 0.0, solver="newton")
    _assert_close(K, ref, a, y, loss, 1e-3)


def test_convergence_warning_reports_objective_step_and_sizes():
    K, y = _problem(4, 80, None, 0, False)
    with pytest.warns(ConvergenceWarning) as rec:
        _, info = fit_dense(K, y, np.ones(80, dtype=bool), None,
                            get_loss("huber_hinge", h=0.01), 1e-6, 0.0, solver="active-set",
                            max_iter=1, return_info=True)
    msg = str(rec[0].message)
    assert f"objective {info[0]['objective']:.6g}" in msg
    assert "relative step" in msg and f"|M| = {info[0]['margin']}" in msg
    assert f"|E| = {info[0]['linear']}" in msg


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**16), n=st.integers(1, 60), distinct=st.integers(1, 8),
       data=st.data())
def test_top_violators_equal_a_sort(seed, n, distinct, data):
    """The quickselect that picks the block of violators equals the sort it replaced: the
    k largest |g| (ties at the k-th value resolved to the first entries), in V's order."""
    from fastgssl.solvers._active_set import _top_violators

    rng = np.random.default_rng(seed)
    k = data.draw(st.integers(1, n))
    g = rng.integers(-distinct, distinct + 1, size=3 * n).astype(float)  # many ties
    V = np.sort(rng.choice(3 * n, size=n, replace=False)).astype(np.int64)
    got = _top_violators(V, g, k)
    order = np.argsort(-np.abs(g[V]), kind="stable")  # stable: ties keep V's order
    assert got.tolist() == np.sort(V[order[:k]]).tolist()
