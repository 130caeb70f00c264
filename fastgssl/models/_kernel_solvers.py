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

Piecewise-quadratic losses without a graph (``solver="active-set"``, the ``"auto"`` choice for
``huber_hinge`` / ``squared_hinge`` with +-1 targets; DESIGN 3.9): with ``a = y * alpha`` the
stationarity condition ``alpha = -ell'(f) / (2 gamma_a l)`` is the KKT system of the box QP
``min 1/2 a^T (Y K Y + c I) a - b 1^T a`` over ``0 <= a <= U`` (Huber hinge: ``c = 4 h gamma_a
l``, ``b = 1 + h``, ``U = 1 / (2 gamma_a l)``; squared hinge: ``c = gamma_a l``, ``b = 1``, no
upper bound). The loss's pieces are the states of a point (rest: ``a = 0``; margin band M:
free; linear piece E: ``a = U``) and on a fixed partition the solution is the |M| x |M| system
``(K_MM + c I) alpha_M = b y_M - K_ME alpha_E``. A primal active-set method on the box QP
(:func:`_box_qp_column`) starts from ``a = 0`` (M empty) or from a warm start projected onto the
box (replaced by ``a = 0`` when more than a quarter of the points would start strictly inside
the box, as a start from another lam does), adds the largest KKT violators in blocks that grow
from 32 by doubling, solves on M by Cholesky and keeps the iterate feasible by a projected step
(accepted only if it lowers the QP objective) or a ratio-test step: the objective decreases
monotonically, so it terminates, and |M| stays near the final number of margin points
throughout (never the l x l system of Newton's square-loss start). The factor of the free
set is updated, not refactored: block bordering when points join, Givens rotations or a
refactor of the trailing block when they leave; violators that would pass U on their own go
to the linear piece together without it. The loop is compiled (Numba) and calls BLAS /
LAPACK on the factor in place; its only n-sized work is one pass over the free set's rows
of K per outer iteration. Each column then gets a certificate: f recomputed from scratch
(unless it was summed from scratch already) and the KKT conditions checked again (to 1e-11
of the scale of the gradient); a column that does not certify within
``max_iter`` outer iterations continues with Chapelle's partition Newton iteration with the
exact line search (the reference iteration restricted to the pieces) and warns with the
objective, the step and the partition sizes. Targets other than +-1 (``auto``: Newton), a
graph term or another loss are not handled by it.

Newton starts from the square-loss solution unless a warm start is given. The line search
minimizes the convex ``phi(t)`` along the Newton direction exactly (a
safeguarded one-dimensional Newton iteration on ``phi'``, bracketed in (0, 1]; the quadratic
terms are precomputed, so each trial costs O(l)); the full step is taken when ``phi'(1) <= 0``.
"""

from __future__ import annotations

import warnings

import llvmlite.binding as _llvm
import numba
import numpy as np
import scipy.linalg as sla
from numba import types as _nbt
from numba.extending import get_cython_function_address as _cython_address
from scipy.linalg.lapack import dpotrf as _dpotrf
from scipy.linalg.lapack import dpotrs as _dpotrs
from sklearn.exceptions import ConvergenceWarning

from fastgssl._indexing import take_block
from fastgssl._threads import factorization_blas, small_blas

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


# ---------------------------------------------------------------------------------------------
# Active-set solver for the piecewise-quadratic losses (DESIGN 3.9): no graph, f = K alpha.
# ---------------------------------------------------------------------------------------------
def _piecewise_kind(loss):
    """``(name, h)`` of the built-in piecewise-quadratic losses, else ``(None, None)``."""
    name = getattr(loss, "name", None)
    if name == "huber_hinge":
        h = float(loss.params["h"])
        if not h > 0:
            raise ValueError(f"the Huber hinge needs a width h > 0, got h={h}.")
        return name, h
    if name == "squared_hinge":
        return name, 0.0
    return None, None


def _binary_targets(Y):
    return bool(np.all(np.abs(Y) == 1.0))


def _box_qp_constants(kind, h, gamma_a, l):
    """``(c, b, U)`` of the box QP in ``a = y * alpha`` (see :func:`_box_qp_column`)."""
    gl = gamma_a * l
    if kind == "huber_hinge":
        return 4.0 * h * gl, 1.0 + h, 1.0 / (2.0 * gl)
    return gl, 1.0, np.inf


_NOT_PSD = (
    "the kernel matrix is not positive semi-definite: the Cholesky factorization of "
    "K_MM + c I failed in the active-set solver (a Gram matrix of a positive-definite kernel "
    "is needed; add a small ridge to K, raise gamma_a, or use solver='newton')."
)

# Violators added to the quadratic set per outer iteration: max(_BLOCK, current size), the
# largest KKT violations first (bench/bench_svm_solver.py measured 20-50 alike).
_BLOCK = 32
_GROW = 0.25
# A warm start whose free set exceeds this fraction of the points is replaced by a = 0.
_WARM_FREE_MAX = 0.25
# Trial steps of the projected step on the free set before the ratio-test step.
_PROJECTED_TRIALS = (1.0, 0.5, 0.25)
_TRIALS = np.array(_PROJECTED_TRIALS)


# error_model="numpy": IEEE division (no zero-division checks and their exception code to
# compile; no division below can have a zero denominator).
_njit = numba.njit(cache=True, nogil=True, error_model="numpy")


# --- numba kernels of the active-set solver: no gathers of K rows, O(|F|^2) factor updates ---
# Written for a short cold-start compilation (a first run compiles them; bench/
# bench_coldstart.py --job measures it): plain loops instead of array expressions, slices,
# fancy indexing, np.minimum / np.flatnonzero / ``@`` (each pulls in a Numba implementation
# to compile, and a slice assignment compiles Numba's shape-mismatch error formatting), and
# no constant arguments to compiled callees (a literal argument compiles a callee once per
# value: ``m = 0`` at a call site compiled the factor update and its callees twice).
@_njit
def _top_violators(V, g, k):
    """The ``k`` entries of ``V`` with the largest ``|g[V]|``, in the order of ``V`` (ties
    at the k-th value: the first ones): a quickselect of the threshold, no sort."""
    n = V.shape[0]
    v = np.empty(n)
    for t in range(n):
        v[t] = abs(g[V[t]])
    lo, hi, target = 0, n - 1, k - 1  # Hoare partition, descending
    while lo < hi:
        pivot = v[(lo + hi) // 2]
        i, j = lo, hi
        while i <= j:
            while v[i] > pivot:
                i += 1
            while v[j] < pivot:
                j -= 1
            if i <= j:
                v[i], v[j] = v[j], v[i]
                i += 1
                j -= 1
        if target <= j:
            hi = j
        elif target >= i:
            lo = i
        else:
            break
    threshold = v[target]
    ties = k
    for t in range(n):
        if abs(g[V[t]]) > threshold:
            ties -= 1
    out = np.empty(k, dtype=np.int64)
    m = 0
    for t in range(n):
        a = abs(g[V[t]])
        if a > threshold or (a == threshold and ties > 0):
            if a == threshold:
                ties -= 1
            out[m] = V[t]
            m += 1
    return out


@_njit
def _add_rows(K, idx, w, out):
    """``out += sum_t w[t] K[idx[t], :]`` (= ``K[:, idx] @ w`` for a symmetric K) in place.

    Reads the rows of the C-contiguous K where they lie (four at a time, one pass over
    ``out`` per four rows): the product with the free set costs a read of its rows, never a
    gathered copy of them.
    """
    n = out.shape[0]
    m = idx.shape[0]
    t = 0
    while t + 4 <= m:
        i0, i1, i2, i3 = idx[t], idx[t + 1], idx[t + 2], idx[t + 3]
        w0, w1, w2, w3 = w[t], w[t + 1], w[t + 2], w[t + 3]
        for j in range(n):
            out[j] += w0 * K[i0, j] + w1 * K[i1, j] + w2 * K[i2, j] + w3 * K[i3, j]
        t += 4
    while t < m:
        i0 = idx[t]
        w0 = w[t]
        for j in range(n):
            out[j] += w0 * K[i0, j]
        t += 1


# --- BLAS / LAPACK from the compiled loops ------------------------------------------------------
# scipy's Cython BLAS / LAPACK entry points, registered under fixed symbol names so that the
# Numba functions that call them stay cacheable (the address is bound when the module is
# imported, not baked into the cached code). All take Fortran pointer arguments, passed as
# addresses (``a.ctypes.data`` plus a byte offset): the factor R lives in a C-order buffer
# of leading dimension ``R.shape[1]``, which Fortran reads as the lower-triangular
# ``L = R^T``, so blocks are used in place. The character and integer arguments sit in one
# small int32 array per call (a character argument reads the first byte of its int32):
# ``_W_L``, ... are their byte offsets.
def _external(module, name, nargs):
    symbol = f"fastgssl_{module}_{name}_addr"
    _llvm.add_symbol(symbol, _cython_address(f"scipy.linalg.{module}", name))
    return _nbt.ExternalFunction(symbol, _nbt.void(*([_nbt.uintp] * nargs)))


_xdtrsm = _external("cython_blas", "dtrsm", 11)
_xdtrsv = _external("cython_blas", "dtrsv", 8)
_xdtrmv = _external("cython_blas", "dtrmv", 8)
_xdsyrk = _external("cython_blas", "dsyrk", 10)
_xdpotrf = _external("cython_lapack", "dpotrf", 5)


@_njit
def _fortran_args(n, k, ld):
    """int32 scratch: 'L', 'N', 'T', 'R', n, k, ld, info (byte offsets 0, 4, ..., 28)."""
    w = np.empty(8, dtype=np.int32)
    w[0] = 76
    w[1] = 78
    w[2] = 84
    w[3] = 82
    w[4] = n
    w[5] = k
    w[6] = ld
    w[7] = 0
    return w


@_njit
def _chol_solve_inplace(R, m, z):
    """``z <- x`` with ``R^T R x = z`` for the upper-triangular ``R[:m, :m]`` (two dtrsv)."""
    if m == 0:
        return
    w = _fortran_args(m, m, R.shape[1])
    w[5] = 1
    p = w.ctypes.data
    L, N, T = p, p + np.uint64(4), p + np.uint64(8)
    n, one, lda = p + np.uint64(16), p + np.uint64(20), p + np.uint64(24)
    _xdtrsv(L, N, N, n, R.ctypes.data, lda, z.ctypes.data, one)  # L z' = z, L = R^T
    _xdtrsv(L, T, N, n, R.ctypes.data, lda, z.ctypes.data, one)  # L^T x = z'


@_njit
def _tri_mul_inplace(R, m, v):
    """``v[:m] <- R[:m, :m] @ v[:m]`` for the upper-triangular R (dtrmv)."""
    if m == 0:
        return
    w = _fortran_args(m, m, R.shape[1])
    w[5] = 1
    p = w.ctypes.data
    L, N, T = p, p + np.uint64(4), p + np.uint64(8)
    n, one, lda = p + np.uint64(16), p + np.uint64(20), p + np.uint64(24)
    _xdtrmv(L, T, N, n, R.ctypes.data, lda, v.ctypes.data, one)


@_njit
def _solve_border(R, m, k):
    """``R[:m, m:m+k] <- R_FF^{-T} R[:m, m:m+k]`` in place (dtrsm; ``R_FF = R[:m, :m]``)."""
    if m == 0 or k == 0:
        return
    ld = R.shape[1]
    w = _fortran_args(m, k, ld)
    p = w.ctypes.data
    L, N, T, Rs = p, p + np.uint64(4), p + np.uint64(8), p + np.uint64(12)
    nm, nk, lda = p + np.uint64(16), p + np.uint64(20), p + np.uint64(24)
    d = np.ones(1)
    S = R.ctypes.data + np.uint64(8 * m)  # Fortran: S^T (k x m, leading dimension ld)
    _xdtrsm(Rs, L, T, N, nk, nm, d.ctypes.data, R.ctypes.data, lda, S, lda)  # X L^T = S^T


@_njit
def _border(R, m, k):
    """Factor the new trailing block of R in place: on entry ``S = R[:m, m:m+k]`` holds the
    factor's new columns (``R_FF^{-T} H_FV``) and the upper triangle of
    ``R[m:m+k, m:m+k]`` holds ``H_VV``; on exit that block holds ``chol(H_VV - S^T S)``
    (dsyrk, dpotrf) with zeros below the diagonal. Raises LinAlgError when the Schur
    complement is not positive definite."""
    if k == 0:
        return
    ld = R.shape[1]
    w = _fortran_args(m, k, ld)
    p = w.ctypes.data
    L, N = p, p + np.uint64(4)
    nm, nk, lda, info = p + np.uint64(16), p + np.uint64(20), p + np.uint64(24), \
        p + np.uint64(28)
    d = np.empty(2)
    d[0] = 1.0
    d[1] = -1.0
    one, minus = d.ctypes.data, d.ctypes.data + np.uint64(8)
    corner = R.ctypes.data + np.uint64(8 * (m * ld + m))
    if m:
        S = R.ctypes.data + np.uint64(8 * m)  # Fortran: S^T (k x m, leading dimension ld)
        _xdsyrk(L, N, nk, nm, minus, S, lda, one, corner, lda)  # H_VV - S^T S
    _xdpotrf(L, nk, corner, lda, info)
    if w[7] != 0:
        raise np.linalg.LinAlgError("the free-set matrix is not positive definite")
    for i in range(1, k):  # the other triangle still holds H
        row = R[m + i]
        for j in range(i):
            row[m + j] = 0.0


@_njit
def _chol_delete(R, m, keep):
    """Delete the rows and columns ``~keep`` of ``H = R^T R`` from its upper factor in place.

    ``R[:m, :m]`` is upper triangular (C order). The kept columns move left over the deleted
    ones (one pass over the rows, each contiguous), which leaves column j with as many
    entries below the diagonal as points were deleted before it; Givens rotations of
    neighbouring rows remove them, bottom up, column by column: O(d (m - p0)^2) for d points
    from position p0 on. The new factor is ``R[:m', :m']`` (m' kept points); the storage
    outside it is zeroed, so the part below the diagonal stays zero.
    """
    cols = np.empty(m, dtype=np.int64)
    mk = 0
    for j in range(m):
        if keep[j]:
            cols[mk] = j
            mk += 1
    p0 = 0
    while p0 < mk and cols[p0] == p0:
        p0 += 1
    for i in range(m):  # compaction of the columns from p0 on (rows 0..cols[j] of column j)
        row = R[i]
        for j in range(p0, mk):  # (below the diagonal the old entries are zero)
            row[j] = row[cols[j]]
        for j in range(mk, m):
            row[j] = 0.0
    for j in range(p0, mk):  # entries of column j in rows j+1 .. cols[j]
        for r in range(cols[j], j, -1):
            x2 = R[r, j]
            if x2 == 0.0:
                continue
            r1 = R[r - 1]
            r2 = R[r]
            x1 = r1[j]
            h = np.sqrt(x1 * x1 + x2 * x2)
            cs = x1 / h
            sn = x2 / h
            r1[j] = h
            r2[j] = 0.0
            for jj in range(j + 1, mk):
                t1 = r1[jj]
                t2 = r2[jj]
                r1[jj] = cs * t1 + sn * t2
                r2[jj] = cs * t2 - sn * t1
    for i in range(mk, m):
        row = R[i]
        for j in range(m):
            row[j] = 0.0
    for i in range(mk):  # the rotations keep a positive diagonal only up to sign
        if R[i, i] < 0.0:
            row = R[i]
            for j in range(i, mk):
                row[j] = -row[j]


@_njit
def _free_step(R, m, rhs, aF, U, trials):
    """One iteration on the free set: ``(kind, a_new, code)`` (``U``: the free points' upper
    bounds).

    Solves ``H_FF x = rhs`` with the factor. ``kind`` 0: x is inside the box and
    ``a_new = x``. Otherwise a step from ``aF`` that keeps the iterate in the box: kind 1,
    the projection ``clip(aF + t (x - aF), 0, U)`` for the first trial t that lowers the QP
    objective (its change is ``1/2 |R d|^2 - (R d)^T R (x - aF)`` for the move d) and puts at
    least one point on a bound; kind 2, the ratio-test step to the first bound hit. ``code``
    marks the points that leave the free set (1: to 0, 2: to U).
    """
    x = np.empty(m)
    for i in range(m):
        x[i] = rhs[i]
    _chol_solve_inplace(R, m, x)
    code = np.zeros(m, dtype=np.int8)
    inside = True
    for i in range(m):
        if x[i] < 0.0 or x[i] > U[i]:
            inside = False
            break
    if inside:
        return 0, x, code
    p = np.empty(m)
    Rp = np.empty(m)
    for i in range(m):
        p[i] = x[i] - aF[i]
        Rp[i] = p[i]
    _tri_mul_inplace(R, m, Rp)
    ap = np.empty(m)
    Rd = np.empty(m)
    for t in trials:
        hits = 0
        for i in range(m):
            v = aF[i] + t * p[i]
            if v <= 0.0:
                v = 0.0
                hits += 1
            elif v >= U[i]:
                v = U[i]
                hits += 1
            ap[i] = v
            Rd[i] = v - aF[i]
        if hits == 0:
            break
        _tri_mul_inplace(R, m, Rd)
        dq = 0.0
        for i in range(m):
            dq += Rd[i] * (0.5 * Rd[i] - Rp[i])
        if dq < 0.0:  # the QP objective decreases
            for i in range(m):
                if ap[i] <= 0.0:
                    code[i] = 1
                elif ap[i] >= U[i]:
                    code[i] = 2
            return 1, ap, code
    t = np.inf  # ratio test: the longest step towards x that stays in the box
    for i in range(m):
        if x[i] < 0.0:
            t = min(t, aF[i] / (aF[i] - x[i]))
        elif x[i] > U[i]:
            t = min(t, (U[i] - aF[i]) / (x[i] - aF[i]))
    t = max(t, 0.0)
    a_new = ap
    for i in range(m):
        a_new[i] = aF[i] + t * p[i]
        if x[i] < 0.0:
            if aF[i] / (aF[i] - x[i]) <= t:
                a_new[i] = 0.0
                code[i] = 1
        elif x[i] > U[i]:
            if (U[i] - aF[i]) / (x[i] - aF[i]) <= t:
                a_new[i] = U[i]
                code[i] = 2
    return 2, a_new, code


@_njit
def _fac_append(K, y, c, R, idx, m, V):
    """Border the factor of ``H_FF`` (F = ``idx[:m]``) with the points V: ``(R, idx, m)``.

    ``S = R^{-T} H_FV`` (dtrsm), ``R_VV = chol(H_VV - S^T S)`` (dsyrk, dpotrf), all in
    place in R (:func:`_solve_border`, :func:`_border`): O(m^2 k + m k^2 + k^3). The
    buffers double when full (up to the number of points). A Schur complement that is not
    positive definite raises LinAlgError (a kernel that is not PSD).
    """
    k = V.shape[0]
    if k == 0:
        return R, idx, m
    if m + k > R.shape[0]:
        cap = max(m + k, min(max(2 * R.shape[0], 64), y.shape[0]))
        R2 = np.zeros((cap, cap))
        for r in range(m):
            src = R[r]
            dst = R2[r]
            for j in range(r, m):
                dst[j] = src[j]
        idx2 = np.empty(cap, dtype=np.int64)
        for r in range(m):
            idx2[r] = idx[r]
        R, idx = R2, idx2
    for r in range(m):  # H_FV
        i = idx[r]
        yi = y[i]
        Ki = K[i]
        row = R[r]
        for t in range(k):
            row[m + t] = yi * y[V[t]] * Ki[V[t]]
    for s in range(k):  # H_VV, upper triangle
        vs = V[s]
        Kv = K[vs]
        row = R[m + s]
        for t in range(s, k):
            row[m + t] = y[vs] * y[V[t]] * Kv[V[t]]
        row[m + s] += c
    _solve_border(R, m, k)
    _border(R, m, k)
    for t in range(k):
        idx[m + t] = V[t]
    return R, idx, m + k


@_njit
def _fac_delete(K, y, c, R, idx, m, keep, mode=0):
    """Remove the points ``~keep[:m]`` from the factor: ``m'`` (R and idx in place).

    Batched Givens rotations (:func:`_chol_delete`, ~3 (m - p)^2 flops per point at
    position p) or, when cheaper, the trailing refactor from the first position p0 that
    changes: the leading p0 x p0 block does not depend on later points, so
    ``R_TT = chol(H_TT - B^T B)`` with ``B = R[:p0, T]`` for the kept points T after p0
    (p0 |T|^2 + |T|^3 / 3 flops, in BLAS / LAPACK at about 3x the rate). ``mode`` 1 / 2
    forces the rotations / the refactor (tests).
    """
    p0 = 0
    while p0 < m and keep[p0]:
        p0 += 1
    if p0 == m:
        return m
    givens = 0.0
    for p in range(p0, m):
        if not keep[p]:
            givens += 3.0 * (m - p) * (m - p)
    tail = float(m - p0)
    refactor = (p0 * tail * tail + tail**3 / 3.0) / 3.0 + 2.0 * tail * tail
    if mode == 1 or (mode == 0 and givens <= refactor):
        _chol_delete(R, m, keep)
        mk = 0
        for p in range(m):
            if keep[p]:
                idx[mk] = idx[p]
                mk += 1
        return mk
    nT = p0 - p0  # (0, not a constant: a constant argument compiles a callee again)
    for p in range(p0, m):  # kept points after p0: their columns move left, in order
        if keep[p]:
            for r in range(p0):
                R[r, p0 + nT] = R[r, p]
            idx[p0 + nT] = idx[p]
            nT += 1
    for r in range(p0):
        row = R[r]
        for j in range(p0 + nT, m):
            row[j] = 0.0
    for r in range(p0, m):
        row = R[r]
        for j in range(m):
            row[j] = 0.0
    for s in range(nT):  # H_TT, upper triangle
        i = idx[p0 + s]
        Ki = K[i]
        row = R[p0 + s]
        for t in range(s, nT):
            j = idx[p0 + t]
            row[p0 + t] = y[i] * y[j] * Ki[j]
        row[p0 + s] += c
    _border(R, p0, nT)
    return p0 + nT


@_njit
def _box_qp_kernel(K, y, c, b, U, a, f, max_outer, block, grow, trials):
    """The active-set loop of :func:`_box_qp_column` (in place on ``a``; returns the rest).

    ``b`` and ``U`` are per point (arrays of length l), ``c`` is one number.

    Returns ``(f, n_solve, outer, converged, margin, linear, fresh)``; ``fresh``: the
    returned f was summed from scratch (no point ever was on the linear piece, whose
    contribution ``f_E`` is kept up to date incrementally).
    """
    l = y.shape[0]
    bounded = False  # any finite upper bound (the Huber hinge's linear piece)
    for j in range(l):
        if U[j] < np.inf:
            bounded = True
    status = np.zeros(l, dtype=np.int8)  # 0: a = 0; 1: free; 2: a = U
    pending = np.empty(l, dtype=np.int64)  # a warm start's free set, factorized when needed
    n_pending = 0
    idx = np.empty(l, dtype=np.int64)  # scratch: point indices
    wts = np.empty(l)  # scratch: their weights
    nE = 0
    for j in range(l):
        if a[j] >= U[j]:
            status[j] = 2
            idx[nE] = j
            wts[nE] = y[j] * U[j]
            nE += 1
        elif a[j] > 0.0:
            status[j] = 1
            pending[n_pending] = j
            n_pending += 1
    f_E = np.zeros(l)
    touched = nE > 0
    if touched:
        _add_rows(K, idx[:nE], wts[:nE], f_E)
    m = idx.shape[0] - l  # (0, not a constant: a constant argument compiles a callee again)
    R = np.zeros((m, m))
    fidx = np.empty(m, dtype=np.int64)
    g = np.empty(l)
    cand = np.empty(l, dtype=np.int64)
    df = np.empty(l)
    n_solve = 0
    outer = 0
    converged = False
    while outer < max_outer:
        fmax = 0.0
        amax = 0.0
        bmax = 0.0
        for j in range(l):
            fmax = max(fmax, abs(f[j]))
            amax = max(amax, a[j])
            bmax = max(bmax, b[j])
        tau = 1e-11 * (bmax + fmax + c * amax)
        nV = 0
        n_upper = 0
        free_off = False
        for j in range(l):
            gj = y[j] * f[j] + c * a[j] - b[j]
            g[j] = gj
            st = status[j]
            if st == 2:
                n_upper += 1
            if (st == 0 and gj < -tau) or (st == 2 and gj > tau):
                cand[nV] = j
                nV += 1
            elif st == 1 and abs(gj) > tau:
                free_off = True
        if nV == 0 and not free_off:
            converged = True
            break
        outer += 1
        if n_pending:
            R, fidx, m = _fac_append(K, y, c, R, fidx, m, pending[:n_pending])
            n_pending = 0
        # the block: max(block, grow (|F| + |E|)), reached from block by doubling (a warm
        # start's large F needs few additions; a cold start doubles its blocks, also where
        # they all land on the linear piece, as at large lam)
        k = min(max(block, int(grow * (m + n_upper))), block << min(outer - 1, 30))
        if nV > k:  # (V may be empty: a warm start's free set is solved first)
            V = _top_violators(cand[:nV], g, k)
        else:
            V = cand[:nV]
        nV = V.shape[0]
        if bounded:
            # violators at 0 whose own 1-D minimizer -g / H_jj lies beyond U go to U
            # together, without the factor, when that lowers the QP objective (the linear
            # piece fills in blocks at large lam instead of through |V| x |V| factors)
            nS = 0
            for t in range(nV):
                v = V[t]
                if status[v] == 0 and -g[v] >= U[v] * (K[v, v] + c):
                    idx[nS] = v
                    wts[nS] = y[v] * U[v]
                    nS += 1
            if nS:
                for j in range(l):
                    df[j] = 0.0
                _add_rows(K, idx[:nS], wts[:nS], df)  # the change of f, and of the objective
                dq = 0.0
                for t in range(nS):
                    i = idx[t]
                    dq += U[i] * g[i] + 0.5 * U[i] * (y[i] * df[i] + c * U[i])
                if dq < 0.0:
                    touched = True
                    for t in range(nS):
                        i = idx[t]
                        status[i] = 2
                        a[i] = U[i]
                    for j in range(l):
                        f_E[j] += df[j]
                        f[j] += df[j]
                    nrest = 0
                    for t in range(nV):
                        v = V[t]
                        if status[v] != 2:
                            V[nrest] = v
                            nrest += 1
                    nV = nrest
                    if nrest == 0 and m == 0:
                        continue
        for t in range(nV):
            v = V[t]
            if status[v] == 2:
                touched = True
                row = K[v]
                w = y[v] * U[v]
                for j in range(l):
                    f_E[j] -= w * row[j]
            status[v] = 1
        R, fidx, m = _fac_append(K, y, c, R, fidx, m, V[:nV])
        while m:  # solve on the free set until the solution is feasible
            rhs = np.empty(m)
            aF = np.empty(m)
            UF = np.empty(m)
            for r in range(m):
                i = fidx[r]
                rhs[r] = b[i] - y[i] * f_E[i]
                aF[r] = a[i]
                UF[r] = U[i]
            kind, aF_new, code = _free_step(R, m, rhs, aF, UF, trials)
            n_solve += 1
            for r in range(m):
                a[fidx[r]] = aF_new[r]
            if kind == 0:
                break
            keep = np.ones(m, dtype=np.bool_)
            for r in range(m):
                if code[r] == 1:
                    status[fidx[r]] = 0
                    keep[r] = False
                elif code[r] == 2:
                    touched = True
                    j0 = fidx[r]
                    status[j0] = 2
                    keep[r] = False
                    row = K[j0]
                    w = y[j0] * U[j0]
                    for j in range(l):
                        f_E[j] += w * row[j]
            m = _fac_delete(K, y, c, R, fidx, m, keep)
        for j in range(l):
            f[j] = f_E[j]
        if m:
            for r in range(m):
                i = fidx[r]
                wts[r] = y[i] * a[i]
            _add_rows(K, fidx[:m], wts[:m], f)
    margin = 0
    linear = 0
    for j in range(l):
        if status[j] == 1:
            margin += 1
        elif status[j] == 2:
            linear += 1
    return f, n_solve, outer, converged, margin, linear, not touched


def _box_qp_column(K, y, c, b, U, a, f, max_outer, info):
    """Primal active-set method for the box QP dual to one column of the kernel machine.

    With ``a = y * alpha`` (``y`` in {-1, +1}) the stationarity condition of
    ``(1/l) sum ell(y_j, f_j) + gamma_a alpha^T K alpha`` (``alpha = -ell'(f) / (2 gamma_a
    l)``) is the KKT system of::

        min_a  1/2 a^T (Y K Y + c I) a - b 1^T a    subject to  0 <= a <= U,

    Huber hinge: ``c = 4 h gamma_a l``, ``b = 1 + h``, ``U = 1 / (2 gamma_a l)``; squared
    hinge: ``c = gamma_a l``, ``b = 1``, ``U = inf``. The three pieces of the loss are the
    three states of a point: ``a = 0`` (rest, ``y f > 1 + h``), ``0 < a < U`` (margin band M)
    and ``a = U`` (linear piece E). On the free set M the solution is the |M| x |M| system
    ``(K_MM + c I) alpha_M = b y_M - K_ME alpha_E`` (DESIGN 3.9).

    Each outer iteration adds the largest KKT violators (bound points whose gradient
    ``g = y f + c a - b`` points into the box; at most ``max(_BLOCK, _GROW |F|)``) to the
    free set F, bordering the Cholesky factor of ``H_FF = Y_F K_FF Y_F + c I``
    (:func:`_fac_append`), then solves on the free set until the solution is feasible: a
    projected step onto the box if it lowers the QP objective (its change is
    ``1/2 |R d|^2 - (R d)^T R p``, O(|F|^2); :func:`_free_step`), else the ratio-test step to
    the first bound hit; the points that reach a bound leave the factor (Givens rotations or
    a trailing refactor, :func:`_fac_delete`). The inner iterations touch no n-vector except
    the contribution ``f_E = K_{:,E} y_E U`` of the linear piece (one row of K per point that
    joins or leaves E); ``f = f_E + K_{:,F} (y a)_F`` is recomputed once per outer iteration
    by one pass over the free set's rows of K (:func:`_add_rows`). The QP objective decreases
    monotonically and no free set repeats, so the method terminates; it stops when no
    violator is left (the KKT conditions hold to round-off). The loop is compiled
    (:func:`_box_qp_kernel`): a small problem costs microseconds per iteration, which the
    exact CV's many refits need.
    """
    try:
        f, n_solve, outer, converged, margin, linear, fresh = _box_qp_kernel(
            K, y, float(c), b, U, a, f, int(max_outer), _BLOCK, float(_GROW), _TRIALS)
    except np.linalg.LinAlgError:
        raise ValueError(_NOT_PSD) from None
    info["n_iter"] += n_solve
    info["outer"] += outer
    info["converged"] = bool(converged)
    info["margin"] = int(margin)
    info["linear"] = int(linear)
    return a, f, bool(fresh)


def _pieces(z, kind, h):
    """Piece of each point from its margin z = y f: 0 rest, 1 quadratic piece, 2 linear."""
    if kind == "squared_hinge":
        return (z < 1.0).astype(np.int8)
    code = np.zeros(z.shape[0], dtype=np.int8)
    code[z <= 1.0 + h] = 1
    code[z < 1.0 - h] = 2
    return code


def _partition_newton(K, y, kind, h, gamma_a, alpha, f, loss, tol, max_iter, info):
    """Chapelle's primal partition iteration with an exact line search (the fallback).

    On the partition of the current ``f`` into M, E and the rest, the minimizer of the
    objective's quadratic model is ``alpha = 0`` off M u E, ``alpha_E = y_E / (2 gamma_a
    l)``, ``(K_MM + c I) alpha_M = b y_M - K_ME alpha_E``; the step towards it is the Newton
    step, taken with the exact line search of the true objective (plain partition iteration
    can cycle). Stops when a full step leaves the partition unchanged or the relative step is
    below ``tol``.
    """
    l = y.shape[0]
    c, b, _ = _box_qp_constants(kind, h, gamma_a, l)
    aE = 1.0 / (2.0 * gamma_a * l)
    code = _pieces(y * f, kind, h)
    for _ in range(max_iter):
        M = np.flatnonzero(code == 1)
        E = np.flatnonzero(code == 2)
        alpha_new = np.zeros(l)
        alpha_new[E] = y[E] * aE
        f_new = (y[E] * aE) @ K[E] if E.size else np.zeros(l)
        if M.size:
            K_M = K[M]
            H = K_M[:, M]
            H.flat[:: M.size + 1] += c
            R, err = _dpotrf(H, lower=0, overwrite_a=1, clean=0)
            if err != 0:
                raise ValueError(_NOT_PSD)
            alpha_new[M], _ = _dpotrs(R, b * y[M] - f_new[M], lower=0)
            f_new += alpha_new[M] @ K_M
        d = alpha_new - alpha
        u = f_new - f
        slope = (loss.d1(y, f) @ u) / l + 2.0 * gamma_a * (f @ d)
        scale = np.abs(alpha_new).max()
        step = np.abs(d).max() / scale if scale > 0 else 0.0
        info.update(n_iter=info["n_iter"] + 1, step=step, slope=slope, margin=int(M.size),
                    linear=int(E.size))
        if not slope < 0:  # no descent left: stationary to round-off
            info["converged"] = True
            break
        t = _line_search(loss, y, f, u, l, gamma_a, 0.0, (alpha @ f, f @ d, d @ u),
                         (0.0, 0.0, 0.0), slope)
        info["t"] = t
        alpha, f = (alpha_new, f_new) if t == 1.0 else (alpha + t * d, f + t * u)
        new_code = _pieces(y * f, kind, h)
        if (t == 1.0 and np.array_equal(new_code, code)) or step * t <= tol:
            info["converged"] = True
            break
        code = new_code
    return alpha, f


def _fit_active_set(K, Y, loss, kind, h, gamma_a, init, tol, max_iter, weights=None):
    """All points labeled (targets +-1); one active-set solve per column. (alpha, infos).

    ``weights``: the loss weights w (mean 1, see :func:`_loss_weights`) or None. With
    weights the stationarity condition is ``a_j = w_j (-ell'(f_j) y_j) / (2 gamma_a l)``: the
    box QP has ``c_j = c / w_j`` and ``U_j = U w_j``. In the variables ``a^_j = a_j / s_j``,
    ``s_j = sqrt(w_j)``, it is the unweighted QP on the kernel ``S K S`` with one ``c`` again,
    ``b_j = b s_j`` and ``U_j = U s_j`` (``f^ = S f``); points of weight 0 have ``alpha_j =
    0`` and are left out.
    """
    K = np.ascontiguousarray(K, dtype=np.float64)  # the compiled loops read rows of K
    l, k = Y.shape
    c, b, U = _box_qp_constants(kind, h, gamma_a, l)
    alpha = np.zeros_like(Y)
    keep = None
    if weights is not None:
        keep = np.flatnonzero(weights > 0)
        root = np.sqrt(weights[keep])
        K_w = take_block(K, keep)
        K_w *= root[:, None]
        K_w *= root[None, :]
        bvec, Uvec = b * root, U * root
        Y_w = Y[keep]
    else:
        root = None
        K_w, Y_w = K, Y
        bvec, Uvec = np.full(l, b), np.full(l, U)
    m = Y_w.shape[0]
    if init is not None:
        # a = y * alpha of the warm start, projected onto the box (a fold refit's start is
        # the full fit's alpha rescaled by l / (l - m): its linear piece lands on U)
        A0 = Y_w * np.asarray(init if keep is None else init[keep], dtype=np.float64)
        if root is not None:
            A0 = A0 / root[:, None]
        A0 = np.clip(A0, 0.0, Uvec[:, None])
        A0 = np.where(A0 >= Uvec[:, None] * (1.0 - 1e-12), Uvec[:, None], A0)
    infos = []
    # one BLAS thread for the column loop whatever l: its operations are gemv's and
    # factorizations of the |M| x |M| block, and on a loaded 2-core machine two threads made
    # a 3000-point fit 27x slower (4.7 s against 0.17 s for two columns of MNIST)
    with small_blas(0.0):
        for j in range(k):
            y = np.ascontiguousarray(Y_w[:, j])
            info = {"n_iter": 0, "outer": 0, "converged": False, "solver": "active-set",
                    "step": np.nan, "t": 1.0, "slope": np.nan, "margin": 0, "linear": 0,
                    "warm_start": init is not None}
            a = np.zeros(m) if init is None else np.ascontiguousarray(A0[:, j])
            if init is not None:
                n_free = int(np.count_nonzero((a > 0) & (a < Uvec)))
                if n_free > max(4 * _BLOCK, _WARM_FREE_MAX * m):
                    # a start from another lam (a regularization path) puts most of the
                    # previous support strictly inside the new box: factorizing it and
                    # removing the points one ratio test at a time cost 200x a cold start
                    # (MNIST, n = 3000, lam 1 -> 1e-2); cold is never far from the best
                    a = np.zeros(m)
                    info["warm_start"] = False
                    info["warm_start_rejected"] = n_free
            f = np.zeros(m)
            sup = np.flatnonzero(a > 0)
            if sup.size:
                _add_rows(K_w, sup, y[sup] * a[sup], f)
            a, f, fresh = _box_qp_column(K_w, y, c, bvec, Uvec, a, f, max_iter, info)
            if not (fresh and info["converged"]):
                # certificate: f from scratch (the linear piece's contribution was updated
                # incrementally and carries round-off), the KKT conditions again
                sup = np.flatnonzero(a > 0)
                f = np.zeros(m)
                _add_rows(K_w, sup, y[sup] * a[sup], f)
                a, f, _ = _box_qp_column(K_w, y, c, bvec, Uvec, a, f, max_iter, info)
            if root is None:
                a_j = y * a
            else:  # back from the scaled variables: alpha = y s a^, f on all points
                a_j = np.zeros(l)
                a_j[keep] = y * root * a
                f = np.zeros(l)
                _add_rows(K, keep, a_j[keep], f)  # K[:, keep] a_keep without copying K
            if not info["converged"]:
                if root is None:
                    info["fallback"] = "partition Newton with line search"
                    a_j, f = _partition_newton(K, y, kind, h, gamma_a, a_j, f, loss, tol,
                                               max_iter, info)
                else:
                    info["fallback"] = "weighted Newton with line search"
                    a_j, f = _weighted_newton_fallback(K, Y[:, j], loss, weights, gamma_a,
                                                       a_j, tol, max_iter, info)
            alpha[:, j] = a_j
            y_full = Y[:, j]
            w_full = 1.0 if weights is None else weights
            g = w_full * loss.d1(y_full, f)
            scale = np.abs(a_j).max()
            resid = np.abs(a_j + g / (2.0 * gamma_a * l)).max()
            info.update(objective=float((w_full * loss.value(y_full, f)).mean()
                                        + gamma_a * (a_j @ f)),
                        kkt=float(resid / scale) if scale > 0 else float(resid))
            infos.append(info)
    return alpha, infos


def _fold_refits_loop(K, Y, fl, n_folds, huber, h, gamma_a, max_outer, pred, n_iter, ok):
    """Cold active-set refits of every fold and column: for fold i, the box QP on
    ``K[R, R]`` (``R``: rows not in i) from ``a = 0`` with the certificate pass of
    :func:`_fit_active_set`, then the held-out values ``pred[V, j] = K[V, R] (y_R a)``.
    ``ok[i, j]`` is False where the QP did not converge (the caller refits those with the
    fallback).

    The loop over folds and columns is Python around the compiled :func:`_box_qp_kernel`
    (a few microseconds per call): compiled as one kernel it re-optimized the whole
    active-set solver linked into it, about 5 s more of a cold start's compilation.
    """
    l, k = Y.shape
    for i in range(n_folds):
        R, V = np.flatnonzero(fl != i), np.flatnonzero(fl == i)
        nR = R.shape[0]
        KR = take_block(K, R)
        KVR = take_block(K, V, R)
        gl = gamma_a * nR
        if huber:
            c, b, U = 4.0 * h * gl, 1.0 + h, 1.0 / (2.0 * gl)
        else:
            c, b, U = gl, 1.0, np.inf
        bvec = np.full(nR, b)
        Uvec = np.full(nR, U)
        for j in range(k):
            y = np.ascontiguousarray(Y[R, j])
            a = np.zeros(nR)
            f, n_solve, outer, conv, margin, linear, fresh = _box_qp_kernel(
                KR, y, c, bvec, Uvec, a, np.zeros(nR), max_outer, _BLOCK, _GROW, _TRIALS)
            total = n_solve
            if not (fresh and conv):  # certificate: f from scratch, the KKT test again
                sup = np.flatnonzero(a > 0)
                f = np.zeros(nR)
                _add_rows(KR, sup, y[sup] * a[sup], f)
                f, n_solve, outer, conv, margin, linear, fresh = _box_qp_kernel(
                    KR, y, c, bvec, Uvec, a, f, max_outer, _BLOCK, _GROW, _TRIALS)
                total += n_solve
            n_iter[i, j] = total
            ok[i, j] = conv
            pred[V, j] = KVR @ (y * a)


def fold_refits(K, Y, fold_of_rows, n_folds, loss, gamma_a, *, tol=1e-10, max_iter=100,
                solver="auto"):
    """Held-out values of the t cold refits ``beta_i = solve(K[R_i, R_i], Y[R_i])``, or
    None where that does not apply.

    For the piecewise-quadratic losses with +-1 targets (the active-set solver's case),
    every fold and column runs :func:`_box_qp_kernel` from ``a = 0`` exactly as
    :func:`fit_dense` does (certificate pass included), without the per-refit Python
    around it: the t refits of a small transductive CV (l = 40) cost about what one of
    them did. Columns whose QP did not converge are refitted by :func:`fit_dense` (its
    fallback and warning). Returns ``(pred, n_iter)``, ``pred[V_i] = K[V_i, R_i]
    beta_i`` in the rows' order and the |M| x |M| solves per fold (largest over
    columns), or None (other losses, targets or ``solver="newton"``).
    """
    kind, h = _piecewise_kind(loss)
    Y = np.asarray(Y, dtype=np.float64)
    if solver == "newton" or kind is None or not _binary_targets(Y):
        return None
    K = np.ascontiguousarray(K, dtype=np.float64)
    fl = np.ascontiguousarray(fold_of_rows, dtype=np.int64)
    l, k = Y.shape
    pred = np.zeros((l, k))
    n_iter = np.zeros((n_folds, k), dtype=np.int64)
    ok = np.zeros((n_folds, k), dtype=np.bool_)
    try:
        _fold_refits_loop(K, np.ascontiguousarray(Y), fl, int(n_folds),
                          kind == "huber_hinge", float(h), float(gamma_a), int(max_iter),
                          pred, n_iter, ok)
    except np.linalg.LinAlgError:
        raise ValueError(_NOT_PSD) from None
    for i, j in zip(*np.nonzero(~ok)):  # the fallback of fit_dense, with its warning
        R, V = np.flatnonzero(fl != i), np.flatnonzero(fl == i)
        beta = fit_dense(take_block(K, R), Y[R, j], np.ones(R.size, dtype=bool), None, loss,
                         gamma_a, 0.0, tol=tol, max_iter=max_iter, solver=solver)
        pred[V, j] = take_block(K, V, R) @ beta
    return pred, n_iter.max(axis=1)


def _weighted_newton_fallback(K, y, loss, weights, gamma_a, alpha, tol, max_iter, info):
    """Damped Newton on the weighted problem from ``alpha`` (the active-set fallback)."""
    problem = _DenseProblem(K, np.ones(K.shape[0], dtype=bool), None, gamma_a, 0.0)
    alpha, newton_info = _newton(problem, _WeightedLoss(loss, weights), y, gamma_a, 0.0,
                                 alpha.copy(), tol, max_iter)
    info.update(n_iter=info["n_iter"] + newton_info["n_iter"], step=newton_info["step"],
                t=newton_info["t"], slope=newton_info["slope"],
                converged=newton_info["converged"])
    return alpha, K @ alpha


SOLVERS = ("auto", "newton", "active-set")


def _use_active_set(solver, loss, Q, Y_L):
    """Whether fit_dense runs the active-set solver (and checks an explicit request)."""
    kind, _ = _piecewise_kind(loss)  # raises on h <= 0
    if solver == "newton" or _is_square(loss):
        return False
    applicable = kind is not None and Q is None and _binary_targets(Y_L)
    if solver == "active-set" and not applicable:
        raise ValueError(
            "solver='active-set' needs a piecewise-quadratic loss ('huber_hinge' or "
            "'squared_hinge'), targets in {-1, +1} and no graph term (Q None or gamma_i = 0; "
            f"formulation='deformed' reduces manifold regularization to that case); got "
            f"loss={getattr(loss, 'name', loss)!r}, graph term "
            f"{'present' if Q is not None else 'absent'}. Use solver='auto' or 'newton'."
        )
    return applicable


def _warn_active_set(info, max_iter, column):
    warnings.warn(
        f"The active-set solver did not converge in max_iter={max_iter} iterations (output "
        f"column {column}): objective {info.get('objective', float('nan')):.6g}, last relative "
        f"step {info['step']:.3g}, last step length {info['t']:.3g}, partition sizes "
        f"|M| = {info['margin']} (quadratic piece), |E| = {info['linear']} (linear piece). "
        f"Increase max_iter or gamma_a, or use solver='newton'.",
        ConvergenceWarning,
        stacklevel=3,
    )


def fit_dense(K, y_enc, labeled, Q, loss, gamma_a, gamma_i, *, tol=1e-10, max_iter=100,
              init=None, return_info=False, solver="auto", sample_weight=None):
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
        Newton iterations per output column; for the active-set solver, outer iterations
        (each adds a block of violators) per column, and again for its fallback (a
        ConvergenceWarning with the numbers otherwise).
    init : ndarray, optional
        Warm start (same shape as the result); Newton's default is the square-loss solution
        (one Newton step from 0), the active-set solver's ``alpha = 0``.
    return_info : bool
        Also return a list with one solver report per column (empty for the closed form);
        the active-set reports carry ``solver="active-set"``, ``n_iter`` (|M| x |M| solves),
        ``outer``, ``margin`` / ``linear`` (final |M| / |E|), ``objective`` and ``kkt`` (the
        relative residual of ``alpha = -ell'(f) / (2 gamma_a l)``).
    solver : {"auto", "newton", "active-set"}
        Optimizer of the losses without a closed form. ``"newton"``: the reference (damped
        Newton with an exact line search), any loss, with or without a graph.
        ``"active-set"``: the box-QP active-set method of the module docstring, for
        ``huber_hinge`` / ``squared_hinge`` with targets in {-1, +1} and no graph term (Q None
        or ``gamma_i == 0``: SVM, and LapSVM's deformed-kernel l-point problem); a
        ValueError elsewhere. ``"auto"``: active-set where it applies, else Newton. Both reach
        the same minimizer (to round-off; with a singular K the same f, and active-set
        returns the alpha with ``alpha = -ell'(f) / (2 gamma_a l)``). The square loss keeps
        its closed form whatever the choice. The kernel must be positive semi-definite: a
        failed Cholesky factorization of ``K_MM + c I`` in the active-set solver raises a
        ValueError.
    sample_weight : ndarray of shape (n,), optional
        Weights of the points' losses (read at the labeled points; finite, >= 0, not all 0):
        the data term becomes the weighted mean ``sum_L w_j ell_j / sum_L w_j``. Every
        solver takes them: the closed forms with ``W`` (``D = W^{1/2}``:
        ``alpha_L = D (D K_LL D + gamma_a l I)^{-1} D y_L`` after scaling w to mean 1),
        Newton with the weighted derivatives, the active-set solver on ``D K D``.

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
    w = _loss_weights(sample_weight, labeled)
    infos = []
    if _is_square(loss):
        alpha = np.zeros_like(Y)
        if Q is None:
            A = take_block(K, L) if l < n else K.copy()
            root = None if w is None else np.sqrt(w)
            if root is not None:  # D K_LL D, D = W^{1/2}
                A *= root[:, None]
                A *= root[None, :]
            A.flat[:: l + 1] += gamma_a * l
            with small_blas(l**3 / 3):
                alpha[L] = sla.cho_solve(sla.cho_factor(A, lower=True, overwrite_a=True,
                                                        check_finite=False),
                                         Y[L] if root is None else root[:, None] * Y[L],
                                         check_finite=False)
            if root is not None:
                alpha[L] *= root[:, None]
        else:
            A = np.asarray(Q @ K)
            A *= s * l
            A[L] += K[L] if w is None else w[:, None] * K[L]
            A.flat[:: n + 1] += gamma_a * l
            rhs = np.zeros_like(Y)
            rhs[L] = Y[L] if w is None else w[:, None] * Y[L]
            with factorization_blas(n):
                alpha = sla.solve(A, rhs, overwrite_a=True, check_finite=False)
    elif _use_active_set(solver, loss, Q, Y[L]):
        kind, h = _piecewise_kind(loss)
        init = None if init is None else _as_columns(init)[0]
        K_LL = K if l == n else take_block(K, L)
        alpha = np.zeros_like(Y)
        alpha[L], infos = _fit_active_set(K_LL, Y[L], loss, kind, h, gamma_a,
                                          None if init is None else init[L], tol, max_iter,
                                          weights=w)
        for k, info in enumerate(infos):
            if not info["converged"]:
                _warn_active_set(info, max_iter, k)
    else:
        with small_blas(n**3 if Q is not None else 0.0):
            problem = _DenseProblem(K, labeled, Q, gamma_a, s)
        init = None if init is None else _as_columns(init)[0]
        alpha = np.empty_like(Y)
        loss_w = loss if w is None else _WeightedLoss(loss, w)
        for k in range(Y.shape[1]):
            theta0 = None if init is None else init[:, k].copy()
            alpha[:, k], info = _newton(problem, loss_w, Y[L, k], gamma_a, s, theta0, tol,
                                        max_iter)
            if not info["converged"]:
                _warn_not_converged(info, max_iter, k)
            infos.append(info)
    alpha = alpha[:, 0] if one_d else alpha
    return (alpha, infos) if return_info else alpha


# ---------------------------------------------------------------------------------------------
# Nystrom parametrization f = V w.
# ---------------------------------------------------------------------------------------------
def _laplacian_gram(V, Q):
    """``V^T Q V`` (c x c, symmetrized): O(nnz(Q) c + n c^2)."""
    from fastgssl._sparse_blocks import sparse_dense_product  # the one CSR x block kernel

    P = V.T @ sparse_dense_product(Q, V)
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


def objective_nystrom(V, w, y_enc, labeled, Q, loss, gamma_a, gamma_i, sample_weight=None):
    """Objective of DESIGN 3.1 at ``f = V w`` (one column), for tests and diagnostics."""
    return _objective(V @ w, w @ w, y_enc, labeled, Q, loss, gamma_a, gamma_i, sample_weight)


def fit_nystrom(V, y_enc, labeled, Q, loss, gamma_a, gamma_i, *, tol=1e-10, max_iter=100,
                init=None, return_info=False, laplacian_gram=None, sample_weight=None):
    """Weights ``w`` of the manifold-regularized machine linear in Nystrom features ``V``.

    Parameters
    ----------
    V : ndarray of shape (n, c)
        Nystrom features of all n training points (``V V^T ~ K``).
    y_enc, labeled, Q, loss, gamma_a, gamma_i, tol, max_iter, init, return_info, sample_weight
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
    weights = _loss_weights(sample_weight, labeled)
    if _is_square(loss):
        V_L = V[labeled]
        l = V_L.shape[0]
        WV = V_L if weights is None else weights[:, None] * V_L
        H = (2.0 / l) * (WV.T @ V_L)
        H.flat[:: c + 1] += 2 * gamma_a
        if P is not None:
            H += 2 * s * P
        with small_blas(c**3 / 3):
            w = sla.cho_solve(sla.cho_factor(H, lower=True, overwrite_a=True,
                                             check_finite=False),
                              (2.0 / l) * (WV.T @ Y[labeled]), check_finite=False)
    else:
        problem = _NystromProblem(V, labeled, Q, gamma_a, s, P)
        init = None if init is None else _as_columns(init)[0]
        L = np.flatnonzero(labeled)
        w = np.empty((c, Y.shape[1]))
        loss_w = loss if weights is None else _WeightedLoss(loss, weights)
        for k in range(Y.shape[1]):
            theta0 = None if init is None else init[:, k].copy()
            w[:, k], info = _newton(problem, loss_w, Y[L, k], gamma_a, s, theta0, tol,
                                    max_iter)
            if not info["converged"]:
                _warn_not_converged(info, max_iter, k)
            infos.append(info)
    w = w[:, 0] if one_d else w
    return (w, infos) if return_info else w
