"""Block preconditioned conjugate gradients: r independent CG recurrences in lock-step.

Each column runs the textbook PCG recurrence (Hestenes & Stiefel 1952) with its own
``alpha`` and ``beta``; the columns share every pass over the matrix and the
preconditioner, so the cost of r right-hand sides is one sparse-times-block product per
iteration, not r Python-level solver loops.  Converged columns (``||r_j|| <= rtol
||b_j||``) are frozen and dropped from the active block.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from fastgssl import _sparse_blocks as K
from fastgssl._sparse_blocks import N_CHUNKS, _chunk_rows
from fastgssl._unit_laplacian import spmm_dot_unit

# bytes of a cache line: a gathered block row of 8 (16) columns is one (two) line(s) when
# the block starts on one, else two (three)
CACHE_LINE = 64


def aligned_copy(A):
    """A C-contiguous float64 copy of the 2-d array ``A`` starting on a cache line.

    The block products gather row ``j`` of the block for every entry ``(i, j)``: a row of
    8 columns (64 bytes) spans one line when the block starts on one and two otherwise,
    and numpy's large arrays start 16 or 32 bytes into a line. Measured at 10^5 vertices
    (the 10-NN Laplacian's unit product, one thread): 8 columns 4.5 against 5.9-6.6 ms,
    16 columns 9.4 against 15.3-16.6 ms; 10 columns (80 bytes: two lines wherever they
    start) 6.7-7.0 ms either way (docs/scripts/first_fit_round17_alignment.txt). The same
    numbers, wherever the block starts."""
    size = A.size
    buf = np.empty(size + CACHE_LINE // 8)
    start = (-buf.ctypes.data) % CACHE_LINE // 8
    out = buf[start:start + size].reshape(A.shape)
    out[...] = A
    return out


@njit(cache=True, error_model="numpy")
def _step_ratio(num, den, frozen, out):  # pragma: no cover - compiled
    """``out = where(frozen, 0, num / where(den > 0, den, inf))``, numpy's numbers: CG's
    ``alpha = r^T z / p^T A p`` and ``beta = r_new^T z_new / r^T z`` per column in one call
    instead of four array operations (their Python overhead is as large as a one-column
    product with a 5,000-vertex Laplacian)."""
    for j in range(num.shape[0]):
        d = den[j] if den[j] > 0 else np.inf
        out[j] = 0.0 if frozen[j] else num[j] / d


@njit(cache=True, error_model="numpy")
def _count_and_finish(frozen, rn2, target, pap, active, iterations, done):  # pragma: no cover
    """After a step: count it for every column not frozen; mark in ``done`` the columns
    that now meet their target (``sqrt(rn2) <= target``) or lost positive curvature
    (``p^T A p <= 0``). Returns whether any did, and the largest ``sqrt(rn2) / target``
    of the columns still running (numpy's ``max``: NaN when one is NaN; -inf when none)."""
    found = False
    worst = -np.inf
    nan = False
    for j in range(frozen.shape[0]):
        if frozen[j]:
            done[j] = False
            continue
        iterations[active[j]] += 1
        norm = np.sqrt(rn2[j])
        done[j] = norm <= target[j] or pap[j] <= 0
        if done[j]:
            found = True
        else:
            v = norm / target[j]
            if v != v:
                nan = True
            elif v > worst:
                worst = v
    return found, (np.nan if nan else worst)


@njit(cache=True, parallel=True)
def _update_jacobi(X, R, P, AP, alpha, dinv):
    """:func:`fastgssl._sparse_blocks.cg_update`, then the column products of Jacobi's
    ``diag_scale_dot`` of the new ``R``, in one pass over the rows: returns ``(||R||^2,
    R^T Z)`` column-wise for ``Z = diag(dinv) R``, the numbers of the two calls bit for bit
    (each product formed as there, each partial sum in the same order). The block's arrays
    are read once instead of twice: 1.40 against 1.73 ms at 10^5 x 10, one thread
    (docs/scripts/first_fit_round16_products.txt). ``Z`` itself is not stored:
    :func:`_direction_jacobi` forms it again where the direction needs it (one n x r array
    written and read less per step: 1.91 against 2.19 ms with the direction's update, the
    eighteenth round)."""
    n, r = X.shape
    rr = np.zeros((N_CHUNKS, r))
    rz = np.zeros((N_CHUNKS, r))
    for t in prange(N_CHUNKS):
        lo, hi = _chunk_rows(t, n)
        for i in range(lo, hi):
            di = dinv[i]
            for c in range(r):
                a = alpha[c]
                if a != 0.0:
                    X[i, c] += a * P[i, c]
                    R[i, c] -= a * AP[i, c]
                v = R[i, c]
                rr[t, c] += v * v
                rz[t, c] += v * (di * v)
    return rr.sum(axis=0), rz.sum(axis=0)


@njit(cache=True, parallel=True)
def _direction_jacobi(P, R, dinv, beta):
    """``P = diag(dinv) R + beta P`` column-wise: :func:`fastgssl._sparse_blocks.
    direction_update` of Jacobi's ``Z = diag(dinv) R``, the same numbers bit for bit."""
    n, r = P.shape
    for i in prange(n):
        di = dinv[i]
        for c in range(r):
            P[i, c] = di * R[i, c] + beta[c] * P[i, c]


def block_pcg(A, B, precond, *, X0=None, rtol=1e-8, max_iter=1000, project=None,
              iterations_done=None, checkpoint=None, coefficients=None, unit=None):
    """Solve ``A X = B`` column-wise by PCG.

    Parameters
    ----------
    A : csr_matrix (n, n), symmetric positive (semi-)definite
    B : ndarray (n, r), C-contiguous; consistent with ``A`` when ``A`` is singular
    precond : callable ``(R_block, Z_out) -> column products diag(R^T Z)``, or ndarray (n,)
        An array is ``dinv``, the inverse diagonal of Jacobi's preconditioner
        ``Z = diag(dinv) R``: a block of one column then runs its steps in compiled calls
        (:func:`fastgssl._sparse_blocks.jacobi_cg_steps`, the same numbers).
    X0 : ndarray (n, r) or None
    rtol : float
        Stop column j when ``||b_j - A x_j|| <= rtol ||b_j||`` (recurrence residual).
    max_iter : int
    project : callable or None
        Applied to the residual block every 50 iterations to remove round-off drift into
        the null space of a singular ``A``.
    checkpoint : (int, callable) or None
        ``(k, stop)``: after iterations k, 2k, 4k, ..., with columns still active,
        ``stop(history)`` is called with the largest ``||r_j|| / ||b_j||`` of the active
        columns after each iteration so far, from 0 (recurrence residuals); a true result
        stops the iteration there (the active columns keep their iterates, not converged).
    coefficients : list or None
        Receives ``("alpha", alpha)`` and ``("beta", beta)`` (arrays over the active
        columns) as each iteration computes them, or in (s, 1) blocks of s steps of a
        one-column run (for :func:`smallest_ritz_values`).
    unit : tuple or None
        ``(diag, dpos)`` of :func:`fastgssl._unit_laplacian.unit_form` when every entry of
        ``A`` off its diagonal is -1: the block products skip those entries (the same
        numbers).

    A converged column is frozen (step 0, its iterate copied out) and carried in the block
    until half of the block is done, then the block is compacted: the other columns' numbers
    do not depend on it either way.

    Returns
    -------
    X : ndarray (n, r)
    iterations : ndarray (r,) int
    converged : ndarray (r,) bool
    """
    n, r = B.shape
    dinv = None
    if isinstance(precond, np.ndarray):
        dinv = precond
        precond = lambda R, Z: K.diag_scale_dot(dinv, R, Z)  # noqa: E731
    bnorm = np.sqrt(K.column_dot(B, B))
    target = rtol * bnorm
    X = np.zeros((n, r)) if X0 is None else np.array(X0, dtype=np.float64, order="C")
    iterations = np.zeros(r, dtype=np.int64) if iterations_done is None else iterations_done
    converged = bnorm == 0
    if X0 is None:  # (the projection makes a new array; B itself is never written)
        R = B.copy() if project is None else project(B)
    else:
        R = np.empty_like(B)
        K.residual(A.indptr, A.indices, A.data, B, X, R)
        if project is not None:
            R = project(R)
    rnorm2 = K.column_dot(R, R)
    converged |= np.sqrt(rnorm2) <= target
    active = np.flatnonzero(~converged)
    if active.size == 0:
        return X, iterations, converged
    history = [float(np.max(np.sqrt(rnorm2[active]) / bnorm[active]))]
    # the whole block active: the iterates are X's own columns (no copy of n x r arrays)
    Xa = X if active.size == r else np.ascontiguousarray(X[:, active])
    Ra = R if active.size == r else np.ascontiguousarray(R[:, active])
    ta = target[active]
    Za = np.empty_like(Ra)
    rz = precond(Ra, Za)
    Pa = aligned_copy(Za)  # (gathered by every product: see aligned_copy)
    APa = np.empty_like(Ra)
    frozen = np.zeros(active.size, dtype=bool)  # done, still carried in the block
    done = np.zeros(active.size, dtype=bool)
    check = None if checkpoint is None else checkpoint[0]
    it = 0
    while it < max_iter:
        it += 1
        rz_next = None  # R^T Z of the new R when the update formed Jacobi's Z
        if dinv is not None and Pa.shape[1] == 1:
            # one column, Jacobi: the steps up to the next event in one compiled call
            last = max_iter if project is None else min(max_iter, -(-it // 50) * 50)
            if check is not None:
                last = min(last, check)
            it, alpha, rn2, pap, rz = _one_column_steps(
                A, dinv, Xa, Ra, Pa, Za, APa, rz, ta, it, last, rtol, iterations, active,
                coefficients, None if checkpoint is None else history)
        else:
            pap = (K.spmm_dot(A.indptr, A.indices, A.data, Pa, APa) if unit is None
                   else spmm_dot_unit(A.indptr, A.indices, A.data, *unit, Pa, APa))
            alpha = np.empty(active.size)
            _step_ratio(rz, pap, frozen, alpha)
            if dinv is None:
                rn2 = K.cg_update(Xa, Ra, Pa, APa, alpha)
            else:  # Jacobi's R^T Z in the same pass (below unless R changes first)
                rn2, rz_next = _update_jacobi(Xa, Ra, Pa, APa, alpha, dinv)
        if coefficients is not None:
            coefficients.append(("alpha", alpha))
        if project is not None and it % 50 == 0:
            Ra = project(Ra)
            rn2 = K.column_dot(Ra, Ra)
            rz_next = None
        found, worst = _count_and_finish(frozen, rn2, ta, pap, active, iterations, done)
        if found:
            if Xa is not X:
                X[:, active[done]] = Xa[:, done]
            converged[active[done]] = np.sqrt(rn2[done]) <= ta[done]
            frozen |= done
            if frozen.all():
                break
            if 2 * frozen.sum() >= frozen.size:
                # compact the block once half of it is done: a copy of every block costs
                # more than carrying a few finished columns through the products
                keep = ~frozen
                active, frozen = active[keep], frozen[keep]
                Xa = np.ascontiguousarray(Xa[:, keep])
                Ra = np.ascontiguousarray(Ra[:, keep])
                Pa = aligned_copy(Pa[:, keep])
                ta, rz, rn2 = ta[keep], rz[keep], rn2[keep]
                done = done[keep]
                Za = np.empty_like(Ra)  # (written before it is read: the preconditioner)
                if rz_next is not None:
                    rz_next = rz_next[keep]
                APa = np.empty_like(Ra)
        if checkpoint is not None:
            history.append(worst * rtol)  # (the columns still running, as after the compaction)
            if it == check:
                if checkpoint[1](np.asarray(history)):
                    break
                check *= 2
        rz_new = precond(Ra, Za) if rz_next is None else rz_next
        beta = np.empty(active.size)
        _step_ratio(rz_new, rz, frozen, beta)
        if coefficients is not None:
            coefficients.append(("beta", beta))
        if dinv is None:
            K.direction_update(Pa, Za, beta)
        else:  # (Z = diag(dinv) R formed again: _update_jacobi does not store it)
            _direction_jacobi(Pa, Ra, dinv, beta)
        rz = rz_new
    if Xa is not X and (~frozen).any():
        X[:, active[~frozen]] = Xa[:, ~frozen]
    return X, iterations, converged


def _one_column_steps(A, dinv, X, R, P, Z, AP, rz, target, it, last, rtol, iterations,
                      active, coefficients, history):
    """Steps ``it`` to at most ``last`` of a one-column block in one compiled call
    (:func:`fastgssl._sparse_blocks.jacobi_cg_steps`: the numbers of :func:`block_pcg`'s
    loop), each but the last counted and recorded as that loop does. Returns the last
    step's number and its ``alpha``, ``||R||^2``, ``P^T A P`` and ``rz`` (arrays of one
    entry), for the loop to finish that step."""
    log = np.empty((last - it + 1, 3))
    k, rn2, pap, rz = K.jacobi_cg_steps(A.indptr, A.indices, A.data, dinv, X, R, P, Z, AP,
                                        float(rz[0]), float(target[0]), last - it + 1, log)
    if k > 1:
        iterations[active[0]] += k - 1
        if coefficients is not None:  # (the k - 1 steps in one (k - 1, 1) block each)
            coefficients.append(("alpha", log[:k - 1, 0:1]))
            coefficients.append(("beta", log[:k - 1, 1:2]))
        if history is not None:
            history.extend((log[:k - 1, 2] * rtol).tolist())
    return (it + k - 1, log[k - 1:k, 0].copy(), np.array([rn2]), np.array([pap]),
            np.array([rz]))


def smallest_ritz_values(coefficients):
    """The smallest Ritz value of the preconditioned operator ``M^-1 A`` on each column's
    Krylov space, from the ``coefficients`` that :func:`block_pcg` recorded.

    CG's coefficients are Lanczos' (Saad 2003, *Iterative Methods for Sparse Linear
    Systems*, section 6.7.3): with alpha_i, beta_i of steps i = 0..k-1, the tridiagonal

        T_ii = 1 / alpha_i + beta_{i-1} / alpha_{i-1},   T_i,i+1 = sqrt(beta_i) / alpha_i

    has as eigenvalues the Ritz values of ``M^-1 A`` on the Krylov space of the column. The
    smallest is at least the smallest eigenvalue the column excites and falls fast toward
    an isolated small one (the slow modes of near-separate clusters). Returns an array over
    the block's columns, NaN for a column frozen (converged) within the k steps; empty when
    the block was compacted or fewer than two steps ran.
    """
    alpha = [v for name, v in coefficients if name == "alpha"]
    beta = [v for name, v in coefficients if name == "beta"]
    if not beta or len({v.shape[-1] for v in alpha + beta}) != 1:
        return np.empty(0)  # (fewer than two steps, or a compaction)
    alpha, beta = _steps(alpha), _steps(beta)
    k = min(alpha.shape[0], beta.shape[0] + 1)  # (T's order: steps with their beta)
    if k < 2:
        return np.empty(0)
    alpha, beta = np.ascontiguousarray(alpha[:k]), np.ascontiguousarray(beta[:k - 1])
    return _smallest_tridiagonal_eigenvalues(alpha, beta)


def _steps(arrays):
    """The recorded arrays, one (r,) per step or (s, r) per s steps, as one (steps, r)."""
    if all(v.ndim == 1 for v in arrays):
        return np.array(arrays)
    return np.vstack(arrays)


@njit(cache=True, error_model="numpy")
def _smallest_tridiagonal_eigenvalues(alpha, beta):  # pragma: no cover - compiled
    """Per column j: the smallest eigenvalue of the Lanczos tridiagonal T of
    :func:`smallest_ritz_values` (NaN where some ``alpha_ij <= 0``: a frozen column), by
    bisection on Sylvester's inertia count (the pivots of ``T - x I = L D L^T``: the number
    of negative ones is the number of eigenvalues below x; Golub & Van Loan 2013, section
    8.4.1) from Gershgorin's interval down to a relative width of 1e-10 (the pricing
    compares it with thresholds): LAPACK's ``dstebz`` for the smallest eigenvalue (the same
    method), every column in one compiled call (a later look of a 10-column solve called
    it ten times, 0.1-0.2 ms)."""
    k, r = alpha.shape
    out = np.full(r, np.nan)
    diag = np.empty((k, r))
    off2 = np.zeros((k, r))
    live = np.ones(r, dtype=np.bool_)
    lo = np.full(r, np.inf)
    hi = np.full(r, -np.inf)
    for j in range(r):
        for i in range(k):
            if not alpha[i, j] > 0:
                live[j] = False
                break
            diag[i, j] = 1.0 / alpha[i, j]
            if i > 0:
                diag[i, j] += beta[i - 1, j] / alpha[i - 1, j]
            if i < k - 1:
                off2[i, j] = beta[i, j] / alpha[i, j] ** 2
            if not (np.isfinite(diag[i, j]) and np.isfinite(off2[i, j]) and off2[i, j] >= 0.0):
                live[j] = False
                break
        if live[j]:
            for i in range(k):  # Gershgorin's discs
                radius = np.sqrt(off2[i, j]) + (np.sqrt(off2[i - 1, j]) if i > 0 else 0.0)
                lo[j] = min(lo[j], diag[i, j] - radius)
                hi[j] = max(hi[j], diag[i, j] + radius)
    # the columns' bisections side by side: their pivot recurrences are independent chains
    # of divisions (a column alone waits on each division's latency)
    mid = np.empty(r)
    d = np.empty(r)
    below = np.empty(r, dtype=np.int64)
    running = live.copy()
    for _ in range(2000):
        any_running = False
        for j in range(r):
            if running[j]:
                mid[j] = 0.5 * (lo[j] + hi[j])
                if (mid[j] <= lo[j] or mid[j] >= hi[j]
                        or hi[j] - lo[j] <= 1e-10 * max(abs(lo[j]), abs(hi[j]))):
                    running[j] = False
                else:
                    any_running = True
        if not any_running:
            break
        for j in range(r):
            d[j] = 1.0
            below[j] = 0
        for i in range(k):
            for j in range(r):
                if running[j]:
                    dj = diag[i, j] - mid[j] - (off2[i - 1, j] / d[j] if i > 0 else 0.0)
                    if dj == 0.0:
                        dj = -1e-300  # (a zero pivot: counted below, as LAPACK's pivmin)
                    if dj < 0.0:
                        below[j] += 1
                    d[j] = dj
        for j in range(r):
            if running[j]:
                if below[j] >= 1:
                    hi[j] = mid[j]
                else:
                    lo[j] = mid[j]
    for j in range(r):
        if live[j]:
            out[j] = 0.5 * (lo[j] + hi[j])
    return out
