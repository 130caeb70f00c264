"""Solvers for manifold-regularized kernel machines (DESIGN 3.1; seed papers 000 and 001).

The problem, for one output column (multi-class one-vs-rest solves one per column and shares
every factorization that does not depend on the targets)::

    min_f  (1/l) sum_{j in L} ell(y_j, f_j) + gamma_a ||f||_K^2 + s f^T Q f,
    s = gamma_i / n^2,

with f the function values at the n = l + u training points and Q the graph regularizer
(``L``, ``L_norm``, ``L^p``) over all of them. Two parametrizations:

* **dense**: ``f = K alpha``, ``||f||_K^2 = alpha^T K alpha``;
* **nystrom**: ``f = V w`` with ``V V^T ~ K`` (n x c), ``||f||_K^2 = ||w||^2``.

Square loss: closed forms. Dense: ``alpha = (J K + gamma_a l I + s l Q K)^{-1} J y``
(DESIGN 3.1), which without a graph reduces to ``alpha_U = 0`` and the symmetric system
``(K_LL + gamma_a l I) alpha_L = y_L`` solved by Cholesky (KRR: ``(K + n lam I) alpha = y``).
Nystrom: ``((2/l) V_L^T V_L + 2 gamma_a I + 2 s V^T Q V) w = (2/l) V_L^T y_L``.

Other losses: Newton's method **with a line search** (plain Newton cycles on the
piecewise-quadratic Huber hinge). The dense Newton direction solves
``(2 gamma_a I + (D + 2 s Q) K) d = -r`` with ``D = diag(h)/l`` on L,
``r = 2 gamma_a alpha + (1/l) J g + 2 s Q f`` (the gradient ``K r`` preconditioned by
``K^{-1}``: a descent direction whenever K is positive semi-definite; Chapelle, 2007). Without a
graph the rows where ``ell'' = 0`` decouple and the step needs only a Cholesky factorization of
``2 gamma_a I + S K_MM S`` (``S = D^{1/2}``, M = points with positive curvature: the margin
points of the Huber hinge), by the identity
``(2 gamma_a I + D K)^{-1} b = (b - S (2 gamma_a I + S K S)^{-1} S K b) / (2 gamma_a)``.
With a graph, ``B = 2 gamma_a I + 2 s Q K`` is factorized once (LU) and each step is a
rank-m update of it by Woodbury's identity, ``H = B + E_M S S K_M``::

    H^{-1} b = x - B^{-1} E_M S (I + S G_MM S)^{-1} S K_M x,   x = B^{-1} b,

where ``G = K B^{-1} = (2 gamma_a K^{-1} + 2 s Q)^{-1}`` is symmetric positive semi-definite
(so the m x m system is solved by Cholesky); ``B^{-1} E_L`` and ``G_LL`` are computed once, so
a step costs O(n^2 + m^3) after an O(n^3 + n^2 l) setup shared by all output columns.

The nystrom Newton step solves with the c x c Hessian
``H_w = (1/l) V_L^T diag(h) V_L + 2 gamma_a I + 2 s V^T Q V``: O(l c^2 + c^3) per step after
one O(nnz(Q) c + n c^2) product ``V^T Q V``.

Newton starts from the square-loss solution unless a warm start is given. The line search
minimizes the convex ``phi(t)`` along the Newton direction exactly (a
safeguarded one-dimensional Newton iteration on ``phi'``, bracketed in (0, 1]; the quadratic
terms are precomputed, so each trial costs O(l)); the full step is taken when ``phi'(1) <= 0``.
"""

from __future__ import annotations

import warnings

import numba
import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

from fastgssl.kernels._nystrom import small_blas

__all__ = ["fit_dense", "fit_nystrom", "objective_dense", "objective_nystrom"]


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
        theta = problem.direction(zero, np.zeros(l), -2.0 * y_L, np.full(l, 2.0))[0]
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


def _objective(f, ambient, y_enc, labeled, Q, loss, gamma_a, gamma_i):
    """DESIGN 3.1: mean labeled loss + gamma_A ||f||_K^2 (given) + gamma_I / n^2 f^T Q f."""
    n = f.shape[0]
    labeled = np.asarray(labeled, dtype=bool)
    val = loss.value(y_enc[labeled], f[labeled]).mean() + gamma_a * ambient
    if Q is not None and gamma_i > 0:
        val += gamma_i / n**2 * (f @ (Q @ f))
    return float(val)


def objective_dense(K, alpha, y_enc, labeled, Q, loss, gamma_a, gamma_i):
    """Objective of DESIGN 3.1 at ``f = K alpha`` (one column), for tests and diagnostics."""
    f = K @ alpha
    return _objective(f, alpha @ f, y_enc, labeled, Q, loss, gamma_a, gamma_i)


SOLVERS = ("auto", "newton")


def fit_dense(K, y_enc, labeled, Q, loss, gamma_a, gamma_i, *, tol=1e-10, max_iter=100,
              init=None, return_info=False, solver="auto"):
    """Expansion coefficients ``alpha`` of the dense manifold-regularized kernel machine.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Kernel matrix over all n training points (labeled and unlabeled).
    y_enc : ndarray of shape (n,) or (n, k)
        Encoded targets (+-1 or real); entries at unlabeled points are ignored.
    labeled : ndarray of bool, shape (n,)
    Q : sparse matrix of shape (n, n) or None
        Graph regularizer; ignored when ``gamma_i == 0``.
    loss : fastgssl.losses.Loss
    gamma_a : float > 0
    gamma_i : float >= 0
    tol : float
        Newton stops when the largest coefficient change is below ``tol`` times the largest
        coefficient (ignored by the square loss's closed form).
    max_iter : int
        Newton iterations per output column (a ConvergenceWarning with the numbers otherwise).
    init : ndarray, optional
        Warm start for Newton (same shape as the result); default: the square-loss solution
        (one Newton step from 0), which halves the iterations of the Huber hinge.
    return_info : bool
        Also return a list with one Newton report per column (empty for the closed form).
    solver : {"auto", "newton"}
        Optimizer of the losses without a closed form; ``"newton"`` is the reference
        (damped Newton with an exact line search), ``"auto"`` picks the fastest available.

    Returns
    -------
    alpha : ndarray of shape (n,) or (n, k)
    info : list of dict, only if ``return_info``

    Notes
    -----
    See the module docstring for the closed forms and the Newton step. ``f = K alpha`` at the
    training points; ``f(x) = k(x, X) alpha`` elsewhere.
    """
    if solver not in SOLVERS:
        raise ValueError(f"solver must be one of {list(SOLVERS)}, got {solver!r}.")
    K = np.asarray(K, dtype=np.float64)
    n = K.shape[0]
    if K.shape != (n, n):
        raise ValueError(f"K must be square, got shape {K.shape}.")
    Y, one_d = _as_columns(y_enc)
    labeled, Q, s = _check_common(n, Y, labeled, Q, gamma_a, gamma_i)
    L = np.flatnonzero(labeled)
    l = L.size
    infos = []
    if _is_square(loss):
        alpha = np.zeros_like(Y)
        if Q is None:
            A = K[np.ix_(L, L)] if l < n else K.copy()
            A.flat[:: l + 1] += gamma_a * l
            with small_blas(l**3 / 3):
                alpha[L] = sla.cho_solve(sla.cho_factor(A, lower=True, overwrite_a=True,
                                                        check_finite=False),
                                         Y[L], check_finite=False)
        else:
            A = np.asarray(Q @ K)
            A *= s * l
            A[L] += K[L]
            A.flat[:: n + 1] += gamma_a * l
            rhs = np.zeros_like(Y)
            rhs[L] = Y[L]
            with small_blas(2 * n**3 / 3):
                alpha = sla.solve(A, rhs, overwrite_a=True, check_finite=False)
    else:
        with small_blas(n**3 if Q is not None else 0.0):
            problem = _DenseProblem(K, labeled, Q, gamma_a, s)
        init = None if init is None else _as_columns(init)[0]
        alpha = np.empty_like(Y)
        for k in range(Y.shape[1]):
            theta0 = None if init is None else init[:, k].copy()
            alpha[:, k], info = _newton(problem, loss, Y[L, k], gamma_a, s, theta0, tol,
                                        max_iter)
            if not info["converged"]:
                _warn_not_converged(info, max_iter, k)
            infos.append(info)
    alpha = alpha[:, 0] if one_d else alpha
    return (alpha, infos) if return_info else alpha


# ---------------------------------------------------------------------------------------------
# Nystrom parametrization f = V w.
# ---------------------------------------------------------------------------------------------
@numba.njit(parallel=True, cache=True)
def _csr_matmat(indptr, indices, data, V, out):
    """out = A @ V for a CSR matrix A (rows in parallel; scipy's product is serial)."""
    for i in numba.prange(out.shape[0]):
        row = out[i]
        row[:] = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            a = data[p]
            src = V[indices[p]]
            for j in range(row.shape[0]):
                row[j] += a * src[j]


def _sparse_times_dense(Q, V):
    if sp.issparse(Q) and Q.format == "csr" and V.flags.c_contiguous:
        out = np.empty((Q.shape[0], V.shape[1]))
        _csr_matmat(Q.indptr, Q.indices, np.asarray(Q.data, dtype=np.float64), V, out)
        return out
    return np.asarray(Q @ V)


def _laplacian_gram(V, Q):
    """``V^T Q V`` (c x c, symmetrized): O(nnz(Q) c + n c^2)."""
    P = V.T @ _sparse_times_dense(Q, V)
    return 0.5 * (P + P.T)


class _NystromProblem:
    def __init__(self, V, labeled, Q, gamma_a, s, P=None):
        self.V_L = np.ascontiguousarray(V[labeled])
        self.l = self.V_L.shape[0]
        self.c = self.n_coef = V.shape[1]
        self.gamma_a = gamma_a
        self.s = s
        self.P = None if Q is None else (_laplacian_gram(V, Q) if P is None else P)

    def labeled_predictions(self, w):
        return self.V_L @ w

    def direction(self, w, f_L, g, h):
        V_L, l, ga, s, P = self.V_L, self.l, self.gamma_a, self.s, self.P
        grad = V_L.T @ g / l + 2 * ga * w
        M = h > 0
        VM = V_L[M]
        c = self.c
        with small_blas(VM.shape[0] * c**2 + c**3 / 3):
            H = (VM.T * (h[M] / l)) @ VM
            H.flat[:: c + 1] += 2 * ga
            if P is not None:
                Pw = P @ w
                grad += 2 * s * Pw
                H += 2 * s * P
            d = -sla.cho_solve(sla.cho_factor(H, lower=True, overwrite_a=True,
                                              check_finite=False), grad, check_finite=False)
        a = (w @ w, w @ d, d @ d)
        if P is None:
            q = (0.0, 0.0, 0.0)
        else:
            Pd = P @ d
            q = (w @ Pw, w @ Pd, d @ Pd)
        return d, V_L @ d, a, q


def objective_nystrom(V, w, y_enc, labeled, Q, loss, gamma_a, gamma_i):
    """Objective of DESIGN 3.1 at ``f = V w`` (one column), for tests and diagnostics."""
    return _objective(V @ w, w @ w, y_enc, labeled, Q, loss, gamma_a, gamma_i)


def fit_nystrom(V, y_enc, labeled, Q, loss, gamma_a, gamma_i, *, tol=1e-10, max_iter=100,
                init=None, return_info=False, laplacian_gram=None):
    """Weights ``w`` of the manifold-regularized machine linear in Nystrom features ``V``.

    Parameters
    ----------
    V : ndarray of shape (n, c)
        Nystrom features of all n training points (``V V^T ~ K``).
    y_enc, labeled, Q, loss, gamma_a, gamma_i, tol, max_iter, init, return_info
        As in :func:`fit_dense` (``init`` and the result have c rows).
    laplacian_gram : ndarray of shape (c, c), optional
        Precomputed ``V^T Q V`` (reused across a grid of gamma values).

    Returns
    -------
    w : ndarray of shape (c,) or (c, k)
    info : list of dict, only if ``return_info``

    Notes
    -----
    ``f = V w`` at the training points and ``f(x) = v(x)^T w`` elsewhere. Never forms an
    n x n matrix: one product ``V^T Q V`` (O(nnz(Q) c + n c^2)), then c x c Cholesky solves;
    a Newton step costs O(l c^2 + c^3).
    """
    V = np.asarray(V, dtype=np.float64)
    n, c = V.shape
    Y, one_d = _as_columns(y_enc)
    labeled, Q, s = _check_common(n, Y, labeled, Q, gamma_a, gamma_i)
    P = None
    if Q is not None:
        P = _laplacian_gram(V, Q) if laplacian_gram is None else laplacian_gram
    infos = []
    if _is_square(loss):
        V_L = V[labeled]
        l = V_L.shape[0]
        H = (2.0 / l) * (V_L.T @ V_L)
        H.flat[:: c + 1] += 2 * gamma_a
        if P is not None:
            H += 2 * s * P
        with small_blas(c**3 / 3):
            w = sla.cho_solve(sla.cho_factor(H, lower=True, overwrite_a=True,
                                             check_finite=False),
                              (2.0 / l) * (V_L.T @ Y[labeled]), check_finite=False)
    else:
        problem = _NystromProblem(V, labeled, Q, gamma_a, s, P)
        init = None if init is None else _as_columns(init)[0]
        L = np.flatnonzero(labeled)
        w = np.empty((c, Y.shape[1]))
        for k in range(Y.shape[1]):
            theta0 = None if init is None else init[:, k].copy()
            w[:, k], info = _newton(problem, loss, Y[L, k], gamma_a, s, theta0, tol, max_iter)
            if not info["converged"]:
                _warn_not_converged(info, max_iter, k)
            infos.append(info)
    w = w[:, 0] if one_d else w
    return (w, infos) if return_info else w
