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

import contextlib
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import scipy.linalg as sla
from sklearn.exceptions import ConvergenceWarning

from fastgssl._indexing import take_block
from fastgssl._sparse_blocks import sparse_dense_product
from fastgssl._threads import (
    default_numba_threads,
    factorization_blas,
    fold_threads,
    small_blas,
)
from fastgssl.solvers._active_set import (
    _BLOCK,
    _GROW,
    _NOT_PSD,
    _TRIALS,
    _add_rows,
    _binary_targets,
    _box_qp_constants,
    _box_qp_kernel,
    _fit_active_set,
    _piecewise_kind,
)
from fastgssl.solvers._newton import (
    _as_columns,
    _check_common,
    _DenseProblem,
    _is_square,
    _loss_weights,
    _objective,
    newton_columns,
    objective_dense,
)

__all__ = ["SOLVERS", "fit_dense", "fit_nystrom", "fold_refits", "has_fold_refits",
           "objective_dense", "objective_nystrom"]


def _refit_fold(K, Y, fl, i, kind, h, gamma_a, max_outer, pred, n_iter, ok):
    """Cold active-set refits of fold i, every column: the box QP on ``K[R, R]`` (``R``:
    rows not in i) from ``a = 0`` with the certificate pass of :func:`_fit_active_set`,
    then the held-out values ``pred[V, j] = K[V, R] (y_R a)``. ``ok[i, j]`` is False where
    the QP did not converge (the caller refits those with the fallback). Writes only the
    rows of fold i and row i of ``n_iter`` / ``ok`` (folds may run concurrently)."""
    R, V = np.flatnonzero(fl != i), np.flatnonzero(fl == i)
    nR = R.shape[0]
    KR = take_block(K, R)
    KVR = take_block(K, V, R)
    c, b, U = _box_qp_constants(kind, h, gamma_a, nR)
    bvec = np.full(nR, b)
    Uvec = np.full(nR, U)
    for j in range(Y.shape[1]):
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


def _fold_refits_loop(K, Y, fl, n_folds, kind, h, gamma_a, max_outer, pred, n_iter, ok):
    """:func:`_refit_fold` for every fold, on :func:`fastgssl._threads.fold_threads` threads.

    The loop over folds is Python around the compiled :func:`_box_qp_kernel` (a few
    microseconds per call; compiled as one kernel it re-optimized the whole active-set
    solver linked into it, about 5 s more of a cold start's compilation). The QP kernel,
    the gathers and the held-out products release the GIL, so the folds' refits run
    concurrently, each on one BLAS thread; the results do not depend on the number of fold
    threads (at one BLAS thread per refit, the sequential loop's are the same bit for bit).
    """
    args = (K, Y, fl)
    rest = (kind, h, gamma_a, max_outer, pred, n_iter, ok)
    workers = fold_threads(K.shape[0], n_folds)
    if workers == 1:
        # one core left free by other jobs (or refits too small to share): the BLAS calls
        # of the compiled QP run on one BLAS thread too. OpenBLAS's worker threads spin
        # while they wait, and on cores other jobs hold every spin costs a time slice: the
        # a1a.t --quick job took 400+ s beside two busy processes with the default BLAS
        # pool, 75 s with OPENBLAS_NUM_THREADS=1 (issue 40)
        one = K.shape[0] < 4096 or default_numba_threads() == 1
        with small_blas(0.0) if one else contextlib.nullcontext():
            for i in range(n_folds):
                _refit_fold(*args, i, *rest)
        return
    with small_blas(0.0), ThreadPoolExecutor(workers) as pool:
        # list(): wait for every fold, re-raise the first exception
        list(pool.map(lambda i: _refit_fold(*args, i, *rest), range(n_folds)))


def has_fold_refits(loss, solver="auto"):
    """Whether :func:`fold_refits` has a batched path for ``loss`` and ``solver`` (the
    active-set hinges; it still returns None for targets other than +-1)."""
    return solver != "newton" and _piecewise_kind(loss)[0] is not None


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
    Y = np.asarray(Y, dtype=np.float64)
    if not has_fold_refits(loss, solver) or not _binary_targets(Y):
        return None
    kind, h = _piecewise_kind(loss)
    K = np.ascontiguousarray(K, dtype=np.float64)
    fl = np.ascontiguousarray(fold_of_rows, dtype=np.int64)
    l, k = Y.shape
    pred = np.zeros((l, k))
    n_iter = np.zeros((n_folds, k), dtype=np.int64)
    ok = np.zeros((n_folds, k), dtype=np.bool_)
    try:
        _fold_refits_loop(K, np.ascontiguousarray(Y), fl, int(n_folds),
                          kind, float(h), float(gamma_a), int(max_iter),
                          pred, n_iter, ok)
    except np.linalg.LinAlgError:
        raise ValueError(_NOT_PSD) from None
    for i, j in zip(*np.nonzero(~ok)):  # the fallback of fit_dense, with its warning
        R, V = np.flatnonzero(fl != i), np.flatnonzero(fl == i)
        beta = fit_dense(take_block(K, R), Y[R, j], np.ones(R.size, dtype=bool), None, loss,
                         gamma_a, 0.0, tol=tol, max_iter=max_iter, solver=solver)
        pred[V, j] = take_block(K, V, R) @ beta
    return pred, n_iter.max(axis=1)


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
        alpha, column_infos = newton_columns(problem, loss, w, Y[L], gamma_a, s, init, tol,
                                             max_iter, Y.shape[0])
        infos.extend(column_infos)
    alpha = alpha[:, 0] if one_d else alpha
    return (alpha, infos) if return_info else alpha


# ---------------------------------------------------------------------------------------------
# Nystrom parametrization f = V w.
# ---------------------------------------------------------------------------------------------
def _laplacian_gram(V, Q):
    """``V^T Q V`` (c x c, symmetrized): O(nnz(Q) c + n c^2)."""
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
        w, column_infos = newton_columns(problem, loss, weights, Y[labeled], gamma_a, s, init,
                                         tol, max_iter, c)
        infos.extend(column_infos)
    w = w[:, 0] if one_d else w
    return (w, infos) if return_info else w
