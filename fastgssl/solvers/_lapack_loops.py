"""BLAS / LAPACK called from compiled loops, and the Cholesky-factor updates of the
active-set solver built on them (:mod:`fastgssl.solvers._active_set`).
"""

from __future__ import annotations

import numba
import numpy as np

from .._blas_symbols import external as _external

__all__ = []


# error_model="numpy": IEEE division (no zero-division checks and their exception code to
# compile; no division below can have a zero denominator).
_njit = numba.njit(cache=True, nogil=True, error_model="numpy")


# --- BLAS / LAPACK from the compiled loops ------------------------------------------------------
# scipy's Cython BLAS / LAPACK entry points, registered under fixed symbol names so that the
# Numba functions that call them stay cacheable (the address is bound when the module is
# imported, not baked into the cached code). All take Fortran pointer arguments, passed as
# addresses (``a.ctypes.data`` plus a byte offset): the factor R lives in a C-order buffer
# of leading dimension ``R.shape[1]``, which Fortran reads as the lower-triangular
# ``L = R^T``, so blocks are used in place. The character and integer arguments sit in one
# small int32 array per call (a character argument reads the first byte of its int32):
# ``_W_L``, ... are their byte offsets.
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
def _triangular_inplace(R, m, z, solve):
    """On the upper-triangular ``R[:m, :m]``: ``z <- x`` with ``R^T R x = z`` (``solve``,
    two dtrsv) or ``z[:m] <- R[:m, :m] @ z[:m]`` (dtrmv)."""
    if m == 0:
        return
    w = _fortran_args(m, m, R.shape[1])
    w[5] = 1
    p = w.ctypes.data
    L, N, T = p, p + np.uint64(4), p + np.uint64(8)
    n, one, lda = p + np.uint64(16), p + np.uint64(20), p + np.uint64(24)
    if solve:
        _xdtrsv(L, N, N, n, R.ctypes.data, lda, z.ctypes.data, one)  # L z' = z, L = R^T
        _xdtrsv(L, T, N, n, R.ctypes.data, lda, z.ctypes.data, one)  # L^T x = z'
    else:
        _xdtrmv(L, T, N, n, R.ctypes.data, lda, z.ctypes.data, one)


@_njit
def _chol_solve_inplace(R, m, z):
    """``z <- x`` with ``R^T R x = z`` for the upper-triangular ``R[:m, :m]`` (two dtrsv)."""
    _triangular_inplace(R, m, z, True)


@_njit
def _tri_mul_inplace(R, m, v):
    """``v[:m] <- R[:m, :m] @ v[:m]`` for the upper-triangular R (dtrmv)."""
    _triangular_inplace(R, m, v, False)


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
