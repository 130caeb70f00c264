"""Damped Newton with an exact line search for the kernel machines' objective, the loss
weights and the dense parametrization ``f = K alpha`` (the reference solver of
:mod:`fastgssl.solvers._kernel_fits`).
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg as sla
from sklearn.exceptions import ConvergenceWarning

from fastgssl._threads import small_blas

__all__ = ['objective_dense']


def _as_columns(y_enc):
    y = np.asarray(y_enc, dtype=np.float64)
    if y.ndim == 1:
        return y[:, None], True
    if y.ndim != 2:
        raise ValueError(f"y_enc must be 1-D or 2-D, got shape {y.shape}.")
    return y, False


def _check_common(n, y_enc, labeled, Q, gamma_a, gamma_i):
    labeled = np.asarray(labeled, dtype=bool)
    if labeled.shape != (n,):
        raise ValueError(f"labeled must be a boolean mask of shape ({n},), got {labeled.shape}.")
    if not labeled.any():
        raise ValueError("labeled marks no point; at least one labeled point is needed.")
    if y_enc.shape[0] != n:
        raise ValueError(f"y_enc has {y_enc.shape[0]} rows, expected {n}.")
    if not gamma_a > 0:
        raise ValueError(f"gamma_a must be > 0, got {gamma_a}.")
    if not gamma_i >= 0:
        raise ValueError(f"gamma_i must be >= 0, got {gamma_i}.")
    if Q is not None and Q.shape != (n, n):
        raise ValueError(f"Q has shape {Q.shape}, expected ({n}, {n}).")
    use_graph = Q is not None and gamma_i > 0
    s = gamma_i / float(n) ** 2 if use_graph else 0.0
    return labeled, (Q if use_graph else None), s


def _is_square(loss):
    return getattr(loss, "name", None) == "square"


def _loss_weights(sample_weight, labeled):
    """The loss weights of the labeled points, scaled to mean 1, or None (all equal).

    The weighted problem minimizes the weighted mean ``sum_j w_j ell_j / sum_j w_j`` over the
    labeled points: weights rescaled by ``l / sum w`` enter the solvers' ``(1/l) sum`` form.
    Integer weights then equal repeating the points, weight 0 equals leaving them out, and
    multiplying every weight by a constant changes nothing.
    """
    if sample_weight is None:
        return None
    w = np.asarray(sample_weight, dtype=np.float64)
    if w.shape != labeled.shape:
        raise ValueError(f"sample_weight has shape {w.shape}, expected {labeled.shape}.")
    w = w[labeled]
    if not (np.isfinite(w).all() and (w >= 0).all()):
        raise ValueError("sample_weight must be finite and non-negative.")
    total = w.sum()
    if not total > 0:
        raise ValueError("sample_weight is zero on every labeled point; at least one labeled "
                         "point needs a positive weight.")
    if np.all(w == w[0]):
        return None
    w = w / w.max()  # (tiny or huge weights: no overflow in the sum or the ratio)
    return w * (w.size / w.sum())


class _WeightedLoss:
    """A loss with one weight per labeled point (1-D columns): ``w ell``, ``w ell'``,
    ``w ell''``. The Newton step, its line search and the objective read it like a loss."""

    def __init__(self, loss, w):
        self.loss, self.w = loss, w
        self.name = getattr(loss, "name", None)

    def value(self, y, f):
        return self.w * self.loss.value(y, f)

    def d1(self, y, f):
        return self.w * self.loss.d1(y, f)

    def d2(self, y, f):
        return self.w * self.loss.d2(y, f)


def _warn_not_converged(info, max_iter, column):
    warnings.warn(
        f"Newton's method did not converge in max_iter={max_iter} iterations (output column "
        f"{column}): last relative step {info['step']:.3g}, last step length {info['t']:.3g}, "
        f"directional derivative {info['slope']:.3g}. Increase max_iter or gamma_a, or "
        f"loosen tol.",
        ConvergenceWarning,
        stacklevel=3,
    )


# ---------------------------------------------------------------------------------------------
# Line search and the Newton loop shared by both parametrizations.
# ---------------------------------------------------------------------------------------------
def _line_search(loss, y_L, f_L, u_L, l, gamma_a, s, a, q, slope0):
    """Minimize phi(t) over (0, 1] along a descent direction (phi convex)."""

    def dphi(t):
        ft = f_L + t * u_L
        return (loss.d1(y_L, ft) @ u_L) / l + 2 * gamma_a * (a[1] + t * a[2]) + \
            2 * s * (q[1] + t * q[2]), ft

    d1, ft = dphi(1.0)
    if d1 <= 0.0:
        return 1.0
    lo, hi, t, dt = 0.0, 1.0, 1.0, d1
    for _ in range(100):
        if abs(dt) <= 1e-12 * abs(slope0) or hi - lo <= 1e-15:
            break
        if dt > 0:
            hi = t
        else:
            lo = t
        curv = (loss.d2(y_L, ft) @ (u_L * u_L)) / l + 2 * gamma_a * a[2] + 2 * s * q[2]
        t_new = t - dt / curv if curv > 0 else np.nan
        if not (lo < t_new < hi):
            t_new = 0.5 * (lo + hi)
        t = t_new
        dt, ft = dphi(t)
    return t if t > 0 else hi


def _newton(problem, loss, y_L, gamma_a, s, theta, tol, max_iter):
    """Damped Newton iteration; returns (theta, info).

    ``theta=None`` starts from the square-loss solution (one Newton step from 0 with the
    square loss's derivatives ``-2 y`` and ``2``): on the Huber hinge with a small ``h`` it
    roughly halves the iterations needed from 0, where no point has curvature yet.
    """
    l = y_L.shape[0]
    if theta is None:
        zero = np.zeros(problem.n_coef)
        w = getattr(loss, "w", np.ones(l))  # the (weighted) square loss's derivatives at 0
        theta = problem.direction(zero, np.zeros(l), -2.0 * w * y_L, 2.0 * w)[0]
    f_L = problem.labeled_predictions(theta)
    info = {"n_iter": 0, "converged": False, "step": np.inf, "t": 1.0, "slope": np.nan}
    for it in range(1, max_iter + 1):
        g = loss.d1(y_L, f_L)
        h = loss.d2(y_L, f_L)
        d, u_L, a, q = problem.direction(theta, f_L, g, h)
        slope = (g @ u_L) / l + 2 * gamma_a * a[1] + 2 * s * q[1]
        scale = np.abs(theta).max()
        step = np.abs(d).max() / scale if scale > 0 else np.inf
        info.update(n_iter=it, step=step, slope=slope)
        if not slope < 0:  # no descent left: stationary to round-off
            info["converged"] = True
            break
        t = _line_search(loss, y_L, f_L, u_L, l, gamma_a, s, a, q, slope)
        info["t"] = t
        theta = theta + t * d
        f_L = f_L + t * u_L
        if step <= tol:
            info["converged"] = True
            break
    return theta, info


# ---------------------------------------------------------------------------------------------
# Dense parametrization f = K alpha.
# ---------------------------------------------------------------------------------------------
class _DenseProblem:
    def __init__(self, K, labeled, Q, gamma_a, s):
        self.K = K
        self.L = np.flatnonzero(labeled)
        self.l = self.L.size
        self.K_L = K if self.l == K.shape[0] else K[self.L]
        self.n_coef = K.shape[0]
        self.Q = Q
        self.gamma_a = gamma_a
        self.s = s
        if Q is not None:
            # B = 2 gamma_a I + 2 s Q K is the same for every step and every output column:
            # factorize it once; each step is then a rank-m update (Woodbury), m = points
            # with positive curvature.
            B = np.asarray(Q @ K)
            B *= 2 * s
            B.flat[:: B.shape[0] + 1] += 2 * gamma_a
            self.lu = sla.lu_factor(B, overwrite_a=True, check_finite=False)
            E_L = np.zeros((K.shape[0], self.l))
            E_L[self.L, np.arange(self.l)] = 1.0
            self.Binv_L = sla.lu_solve(self.lu, E_L, check_finite=False)
            G = self.K_L @ self.Binv_L  # (K B^{-1})[L, L]: symmetric PSD in exact arithmetic
            self.G_LL = 0.5 * (G + G.T)

    def labeled_predictions(self, alpha):
        return self.K_L @ alpha

    def direction(self, alpha, f_L, g, h):
        K, L, l, ga, s = self.K, self.L, self.l, self.gamma_a, self.s
        r = 2 * ga * alpha
        if self.Q is None:
            r[L] += g / l
            b = -r
            M = h > 0
            d = b / (2 * ga)
            if M.any():
                LM = L[M]
                S = np.sqrt(h[M] / l)
                C = S[:, None] * K[np.ix_(LM, LM)] * S[None, :]
                C.flat[:: C.shape[0] + 1] += 2 * ga
                with small_blas(C.shape[0] ** 3 / 3):
                    z = sla.cho_solve(sla.cho_factor(C, lower=True, check_finite=False),
                                      S * (self.K_L[M] @ b), check_finite=False)
                d[LM] -= S * z / (2 * ga)
            f = K @ alpha
            u = K @ d
            return d, u[L], (alpha @ f, f @ d, d @ u), (0.0, 0.0, 0.0)
        f = K @ alpha
        Qf = self.Q @ f
        r += 2 * s * Qf
        r[L] += g / l
        d = sla.lu_solve(self.lu, -r, check_finite=False)
        M = h > 0
        if M.any():
            S = np.sqrt(h[M] / l)
            C = S[:, None] * self.G_LL[np.ix_(M, M)] * S[None, :]
            C.flat[:: C.shape[0] + 1] += 1.0
            with small_blas(C.shape[0] ** 3 / 3):
                z = sla.cho_solve(sla.cho_factor(C, lower=True, check_finite=False),
                                  S * (self.K_L[M] @ d), check_finite=False)
            d -= self.Binv_L[:, M] @ (S * z)
        u = K @ d
        Qu = self.Q @ u
        a = (alpha @ f, f @ d, d @ u)
        q = (f @ Qf, f @ Qu, u @ Qu)
        return d, u[L], a, q


def _objective(f, ambient, y_enc, labeled, Q, loss, gamma_a, gamma_i, sample_weight=None):
    """DESIGN 3.1: (weighted) mean labeled loss + gamma_A ||f||_K^2 (given) + gamma_I / n^2
    f^T Q f."""
    n = f.shape[0]
    labeled = np.asarray(labeled, dtype=bool)
    values = loss.value(y_enc[labeled], f[labeled])
    if sample_weight is not None:
        w = np.asarray(sample_weight, dtype=np.float64)[labeled]
        values = values * (w / w.mean())
    val = values.mean() + gamma_a * ambient
    if Q is not None and gamma_i > 0:
        val += gamma_i / n**2 * (f @ (Q @ f))
    return float(val)


def objective_dense(K, alpha, y_enc, labeled, Q, loss, gamma_a, gamma_i, sample_weight=None):
    """Objective of DESIGN 3.1 at ``f = K alpha`` (one column), for tests and diagnostics."""
    f = K @ alpha
    return _objective(f, alpha @ f, y_enc, labeled, Q, loss, gamma_a, gamma_i, sample_weight)


def newton_columns(problem, loss, weights, Y_L, gamma_a, s, init, tol, max_iter, size):
    """Newton's method on ``problem`` for each target column ``Y_L[:, k]`` (labeled rows),
    from ``init[:, k]`` when given: ``(coef (size, k), infos)``, a ConvergenceWarning with
    the numbers for a column that did not converge. ``weights``: loss weights (None: the
    plain mean)."""
    init = None if init is None else _as_columns(init)[0]
    coef = np.empty((size, Y_L.shape[1]))
    loss_w = loss if weights is None else _WeightedLoss(loss, weights)
    infos = []
    for k in range(Y_L.shape[1]):
        theta0 = None if init is None else init[:, k].copy()
        coef[:, k], info = _newton(problem, loss_w, Y_L[:, k], gamma_a, s, theta0, tol,
                                   max_iter)
        if not info["converged"]:
            _warn_not_converged(info, max_iter, k)
        infos.append(info)
    return coef, infos
