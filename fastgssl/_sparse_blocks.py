"""Numba kernels for block Krylov methods on CSR matrices: many right-hand sides per pass.

A block ``X`` of shape (n, r) is stored C-contiguous, so row i of every column is one
contiguous run: a sparse-times-block product reads each matrix entry once for all r
columns.  Column reductions use per-chunk partial sums (deterministic for a fixed
thread count; no atomics).
"""

from __future__ import annotations

import contextlib
import os

import numpy as np
from numba import njit, prange, uint64

from fastgssl._threads import numba_threads

N_CHUNKS = 64

# Gathers index with unsigned integers (``uint64(indices[jj])``, loops over
# ``range(uint64(indptr[i]), uint64(indptr[i + 1]))``): a signed index makes Numba wrap
# negative values around (a test and a conditional move on every access), which doubled
# the time of a one-column product on a 5,000-point 10-NN Laplacian (417 against 186 us,
# one thread; scipy's 150-185 us) and cost 40 % at 10 columns. The values are the same.


@njit(inline="always")
def row_product(indptr, indices, data, row, X, out, i):
    """``out[i] = A[row] @ X``: one CSR row of ``A`` times the block ``X`` (each entry of
    the result summed in the order of the row's stored entries)."""
    r = X.shape[1]
    if r == 1:  # one column: the sum in a register (half the time of the loop below)
        s = 0.0
        for jj in range(uint64(indptr[row]), uint64(indptr[row + 1])):
            s += data[jj] * X[uint64(indices[jj]), 0]
        out[i, 0] = s
        return
    for c in range(r):
        out[i, c] = 0.0
    for jj in range(uint64(indptr[row]), uint64(indptr[row + 1])):
        a = data[jj]
        j = uint64(indices[jj])
        for c in range(r):
            out[i, c] += a * X[j, c]


@njit(inline="always")
def _chunk_rows(t, n):
    """Rows ``[lo, hi)`` of chunk ``t`` when ``n`` rows are cut into ``N_CHUNKS`` fixed
    chunks: the rows of one per-chunk partial sum of a column reduction."""
    size = (n + N_CHUNKS - 1) // N_CHUNKS
    return t * size, min(n, (t + 1) * size)


@njit(cache=True, parallel=True)
def _spmm_rows_any(indptr, indices, data, rows, X, out):
    for i in prange(rows.shape[0]):
        row_product(indptr, indices, data, rows[i], X, out, i)


@njit(cache=True, parallel=True)
def _affine_steps_any(indptr, indices, data, U, drive, steps):
    n, r = U.shape
    cur = U.copy()
    nxt = np.empty_like(U)
    for _ in range(steps):
        for i in prange(n):
            row_product(indptr, indices, data, i, cur, nxt, i)
            for c in range(r):
                nxt[i, c] += drive[i, c]
        cur, nxt = nxt, cur
    return cur


@njit(cache=True, parallel=True)
def _spmm_dot_any(indptr, indices, data, P, AP):
    n, r = P.shape
    partial = np.zeros((N_CHUNKS, r))
    for t in prange(N_CHUNKS):
        lo, hi = _chunk_rows(t, n)
        for i in range(lo, hi):
            row_product(indptr, indices, data, i, P, AP, i)
            for c in range(r):
                partial[t, c] += P[i, c] * AP[i, c]
    return partial.sum(axis=0)


# -- the block kernels above compiled for one block width -----------------------------------
#
# A block's width r is known only at run time, so the loops over its r columns above stay
# scalar: LLVM's loop vectorizer does not take a loop of 10 iterations, and Numba leaves
# LLVM's SLP (straight-line) vectorizer off by default (numba#8852, miscompilations it saw in
# other code). Compiled for one width R (a closure constant), the column loops unroll, the R
# sums of a row stay in registers, and with SLP they become packed multiplies and adds (no
# fused multiply-add: each sum is the same sum in the same order, bit for bit; tested
# against scipy for every width in tests/test_first_fit_kernels.py). Measured on a 10-NN
# Laplacian (docs/scripts/first_fit_round5_widths.txt): 10 columns, 2x10^4 rows, one
# thread, 1.37 against 2.79 ms; 10^5 rows, two threads, 8.6 against 18.4 ms; 3 to 50
# columns 1.6-2.4x. Each width compiles on its first use (1-3 s per kernel, then loaded
# from Numba's disk cache); widths above WIDTH_MAX, one column (a register sum already),
# non-contiguous blocks and FASTGSSL_WIDTH_KERNELS=0 take the kernels above.

WIDTH_MAX = 64
_WIDTH_ON = os.environ.get("FASTGSSL_WIDTH_KERNELS", "1") != "0"
_WIDTH_KERNELS: dict = {}
_WIDTH_COMPILED: set = set()


@njit(inline="always")
def _row_sums_into(indptr, indices, data, row, X, acc, R):
    """``acc[:R] = A[row] @ X`` (R a compile-time constant where this is inlined)."""
    for c in range(R):
        acc[c] = 0.0
    for jj in range(uint64(indptr[row]), uint64(indptr[row + 1])):
        a = data[jj]
        j = uint64(indices[jj])
        for c in range(R):
            acc[c] += a * X[j, c]


@njit(inline="always")
def _rows_product(indptr, indices, data, lo, hi, X, out, R):
    """``out[lo:hi] = A[lo:hi] @ X`` for R columns (a compile-time constant where inlined)."""
    acc = np.empty(R)
    for i in range(lo, hi):
        _row_sums_into(indptr, indices, data, i, X, acc, R)
        for c in range(R):
            out[i, c] = acc[c]


def _width_kernels(R):
    """``{name: kernel}`` of the three kernels for blocks of exactly R columns: closures
    over R alone, each named after its width, so that each width has a disk-cache index
    of its own (under one name, all widths share one index file, and two processes
    compiling two new widths at once could both write their entry under one number: a
    later load then found another width's code, and failed)."""

    def spmm_rows_r(indptr, indices, data, rows, X, out):
        m = rows.shape[0]
        for t in prange(N_CHUNKS):
            lo, hi = _chunk_rows(t, m)
            acc = np.empty(R)
            for i in range(lo, hi):
                _row_sums_into(indptr, indices, data, rows[i], X, acc, R)
                for c in range(R):
                    out[i, c] = acc[c]

    def spmm_dot_r(indptr, indices, data, P, AP):
        n = P.shape[0]
        partial = np.zeros((N_CHUNKS, R))
        for t in prange(N_CHUNKS):
            lo, hi = _chunk_rows(t, n)
            acc = np.empty(R)
            for i in range(lo, hi):  # (the dots from the registers: 50 columns 10-15 %
                # faster than a second loop over the chunk, as _rows_product would need)
                _row_sums_into(indptr, indices, data, i, P, acc, R)
                for c in range(R):
                    AP[i, c] = acc[c]
                    partial[t, c] += P[i, c] * acc[c]
        return partial.sum(axis=0)

    def affine_steps_r(indptr, indices, data, U, drive, steps):
        n = U.shape[0]
        cur = U.copy()
        nxt = np.empty_like(U)
        for _ in range(steps):
            for t in prange(N_CHUNKS):
                lo, hi = _chunk_rows(t, n)
                _rows_product(indptr, indices, data, lo, hi, cur, nxt, R)
                for i in range(lo, hi):
                    for c in range(R):
                        nxt[i, c] += drive[i, c]
            cur, nxt = nxt, cur
        return cur

    kernels = {}
    for name, fn in (("spmm_rows", spmm_rows_r), ("spmm_dot", spmm_dot_r),
                     ("affine_steps", affine_steps_r)):
        fn.__name__ = fn.__qualname__ = f"{name}_width_{R}"
        kernels[name] = njit(cache=True, parallel=True)(fn)
    return kernels


@contextlib.contextmanager
def _slp_vectorizer():
    """LLVM's SLP vectorizer on for the compilations inside (Numba's global compiler lock
    held, so that no other thread compiles with it)."""
    from numba.core import config
    from numba.core.compiler_lock import global_compiler_lock

    with global_compiler_lock:
        config.reload_config()  # (the compiler reloads too: the environment read first)
        before = config.SLP_VECTORIZE
        config.SLP_VECTORIZE = 1
        try:
            yield
        finally:
            config.SLP_VECTORIZE = before


def _width_call(name, generic, indptr, indices, X, args, factory=None):
    """Run kernel ``name`` compiled for X's width when there is one, else ``generic``;
    ``factory(R)`` makes the kernels of one width (:func:`_width_kernels` by default)."""
    r = X.shape[1]
    if r < 2 or r > WIDTH_MAX or not X.flags.c_contiguous or not _WIDTH_ON:
        return generic(*args)
    factory = factory or _width_kernels
    kernels = _WIDTH_KERNELS.get((factory, r))
    if kernels is None:
        kernels = _WIDTH_KERNELS[(factory, r)] = factory(r)
    key = (name, r, indptr.dtype.char, indices.dtype.char)
    if key in _WIDTH_COMPILED:
        return kernels[name](*args)
    with _slp_vectorizer():
        out = kernels[name](*args)
    _WIDTH_COMPILED.add(key)
    return out


def spmm_rows(indptr, indices, data, rows, X, out):
    """``out = A[rows] @ X`` for CSR ``A``, row indices ``rows`` and a C-contiguous block
    ``X`` (the rows of a symmetrically permuted product without permuting ``A``)."""
    _width_call("spmm_rows", _spmm_rows_any, indptr, indices, X,
                (indptr, indices, data, rows, X, out))


def affine_steps(indptr, indices, data, U, drive, steps):
    """``steps`` explicit steps ``U <- A U + drive`` (CSR ``A``, C-contiguous blocks) in two
    buffers: each row summed in the order of its stored entries, as scipy's ``A @ U +
    drive``, without two new arrays per step."""
    return _width_call("affine_steps", _affine_steps_any, indptr, indices, U,
                       (indptr, indices, data, U, drive, steps))


def spmm(indptr, indices, data, X, out):
    """``out = A @ X`` for CSR ``A`` and a C-contiguous block ``X``."""
    spmm_rows(indptr, indices, data, np.arange(out.shape[0]), X, out)


def spmm_dot(indptr, indices, data, P, AP):
    """``AP = A @ P`` and return the column inner products ``diag(P^T A P)``."""
    return _width_call("spmm_dot", _spmm_dot_any, indptr, indices, P,
                       (indptr, indices, data, P, AP))


@njit(cache=True, parallel=True)
def cg_update(X, R, P, AP, alpha):
    """``X += alpha P``, ``R -= alpha AP``; return the squared column norms of ``R``.
    A column with ``alpha = 0`` (a finished one carried in the block) is left as it is,
    whatever ``P`` holds."""
    n, r = X.shape
    partial = np.zeros((N_CHUNKS, r))
    for t in prange(N_CHUNKS):
        lo, hi = _chunk_rows(t, n)
        for i in range(lo, hi):
            for c in range(r):
                a = alpha[c]
                if a != 0.0:
                    X[i, c] += a * P[i, c]
                    R[i, c] -= a * AP[i, c]
                partial[t, c] += R[i, c] * R[i, c]
    return partial.sum(axis=0)


@njit(cache=True, parallel=True)
def diag_scale_dot(dinv, R, Z):
    """Jacobi preconditioner ``Z = diag(dinv) R``; return the column products ``R^T Z``."""
    n, r = R.shape
    partial = np.zeros((N_CHUNKS, r))
    for t in prange(N_CHUNKS):
        lo, hi = _chunk_rows(t, n)
        for i in range(lo, hi):
            di = dinv[i]
            for c in range(r):
                z = di * R[i, c]
                Z[i, c] = z
                partial[t, c] += R[i, c] * z
    return partial.sum(axis=0)


@njit(cache=True, parallel=True)
def column_dot(A, B):
    """Column inner products ``diag(A^T B)``."""
    n, r = A.shape
    partial = np.zeros((N_CHUNKS, r))
    for t in prange(N_CHUNKS):
        lo, hi = _chunk_rows(t, n)
        for i in range(lo, hi):
            for c in range(r):
                partial[t, c] += A[i, c] * B[i, c]
    return partial.sum(axis=0)


@njit(cache=True, parallel=True)
def residual_norms(B, AX, n_groups):
    """``(||B - AX||, ||B||)`` column-wise without the ``n x r`` temporaries: the numbers of
    ``numpy.linalg.norm(B - AX, axis=0)`` and ``numpy.linalg.norm(B, axis=0)`` bit for bit
    for ``r >= 2`` columns (each column's squares added row after row, as numpy's reduction
    along the non-contiguous axis 0; one column numpy sums pairwise), the columns split into
    ``n_groups`` parallel groups. Each group sums into arrays of its own, copied out at its
    end: groups adding into one shared array wrote to the same cache lines on every row
    (5,000 x 10 on two threads: 850 us against 66 us on one)."""
    n, r = B.shape
    rn2 = np.zeros(r)
    bn2 = np.zeros(r)
    n_groups = max(1, min(n_groups, r))
    for g in prange(n_groups):
        c0 = g * r // n_groups
        c1 = (g + 1) * r // n_groups
        rg = np.zeros(c1 - c0)
        bg = np.zeros(c1 - c0)
        for i in range(n):
            for c in range(c0, c1):
                b = B[i, c]
                d = b - AX[i, c]
                rg[c - c0] += d * d
                bg[c - c0] += b * b
        for c in range(c0, c1):
            rn2[c] = rg[c - c0]
            bn2[c] = bg[c - c0]
    return np.sqrt(rn2), np.sqrt(bn2)


@njit(cache=True, parallel=True)
def direction_update(P, Z, beta):
    """``P = Z + beta P`` column-wise."""
    n, r = P.shape
    for i in prange(n):
        for c in range(r):
            P[i, c] = Z[i, c] + beta[c] * P[i, c]


@njit(cache=True, parallel=True, error_model="numpy")
def jacobi_cg_steps(indptr, indices, data, dinv, X, R, P, Z, AP, rz, target, steps,
                    log):  # pragma: no cover - compiled
    """Steps of Jacobi-preconditioned CG on one column in one compiled call.

    The steps of :func:`fastgssl.solvers._block_pcg.block_pcg` with the preconditioner
    ``Z = diag(dinv) R``, each sum in the order of :func:`spmm_dot`, :func:`cg_update`,
    :func:`diag_scale_dot` and :func:`direction_update` (the same numbers bit for bit), for
    a block ``X, R, P, Z, AP`` of shape (n, 1) and ``rz = R^T Z``. A one-column solve on a
    5,000-vertex graph spent more in the Python steps between those four kernels and in
    their thread pool's four starts per step than in the products: a step took 135 us
    there, 57-81 us here (two threads).

    Runs until step ``steps`` or the first step at which the column meets ``target``
    (``||R|| <= target``) or ``P^T A P <= 0``, and stops there after its update of X and R:
    the caller finishes that last step (the counts, the projection, the preconditioner and
    the new direction). Row s of ``log`` (at least ``steps`` rows) receives step s's
    ``alpha``, ``beta`` and ``||R|| / target`` (no beta for the last). Returns the steps
    taken (the last included), and ``||R||^2``, ``P^T A P`` and ``R^T Z`` as the last step
    left them (``rz`` from before that step: it has no preconditioning yet).
    """
    n = X.shape[0]
    rn2 = 0.0
    pap = 0.0
    for s in range(steps):
        partial = np.zeros((N_CHUNKS, 1))
        for t in prange(N_CHUNKS):
            lo, hi = _chunk_rows(t, n)
            for i in range(lo, hi):
                row_product(indptr, indices, data, i, P, AP, i)
                partial[t, 0] += P[i, 0] * AP[i, 0]
        pap = partial.sum(axis=0)[0]
        alpha = rz / (pap if pap > 0 else np.inf)
        partial = np.zeros((N_CHUNKS, 1))
        z_partial = np.zeros((N_CHUNKS, 1))
        for t in prange(N_CHUNKS):
            lo, hi = _chunk_rows(t, n)
            for i in range(lo, hi):
                if alpha != 0.0:
                    X[i, 0] += alpha * P[i, 0]
                    R[i, 0] -= alpha * AP[i, 0]
                partial[t, 0] += R[i, 0] * R[i, 0]
                z = dinv[i] * R[i, 0]
                Z[i, 0] = z
                z_partial[t, 0] += R[i, 0] * z
        rn2 = partial.sum(axis=0)[0]
        log[s, 0] = alpha
        log[s, 2] = np.sqrt(rn2) / target
        if s == steps - 1 or np.sqrt(rn2) <= target or pap <= 0:
            return s + 1, rn2, pap, rz
        rz_new = z_partial.sum(axis=0)[0]
        beta = rz_new / (rz if rz > 0 else np.inf)
        log[s, 1] = beta
        for i in prange(n):
            P[i, 0] = Z[i, 0] + beta * P[i, 0]
        rz = rz_new
    return steps, rn2, pap, rz


@njit(cache=True, parallel=True)
def jacobi_sweep(indptr, indices, data, omega_dinv, B, X, out):
    """One damped-Jacobi sweep ``out = X + omega D^{-1} (B - A X)`` (block)."""
    n, r = X.shape
    for i in prange(n):
        w = omega_dinv[i]
        for c in range(r):
            out[i, c] = B[i, c]
        for jj in range(uint64(indptr[i]), uint64(indptr[i + 1])):
            a = data[jj]
            j = uint64(indices[jj])
            for c in range(r):
                out[i, c] -= a * X[j, c]
        for c in range(r):
            out[i, c] = X[i, c] + w * out[i, c]


@njit(cache=True, parallel=True)
def residual(indptr, indices, data, B, X, out):
    """``out = B - A X`` (block)."""
    n, r = X.shape
    for i in prange(n):
        for c in range(r):
            out[i, c] = B[i, c]
        for jj in range(uint64(indptr[i]), uint64(indptr[i + 1])):
            a = data[jj]
            j = uint64(indices[jj])
            for c in range(r):
                out[i, c] -= a * X[j, c]


# Below this many multiply-adds (nnz(A) times the columns of X) scipy's product, a few
# milliseconds, replaces the parallel kernel: a small job's first run does not compile it.
_SCIPY_WORK = 1 << 21


def sparse_dense_product(A, X, rows=None, out=None):
    """``A @ X`` (``A[rows] @ X`` with ``rows``) for a sparse, dense or LinearOperator ``A``
    and a dense 2-D ``X``, as a float64 array (into ``out``, C-contiguous, when given); a CSR
    ``A`` goes through the parallel :func:`spmm_rows` kernel (scipy's product is
    single-threaded and slow for many columns)."""
    import scipy.sparse as sp

    if sp.issparse(A):
        A = A.tocsr()
        X = np.ascontiguousarray(X, dtype=np.float64)
        subset = rows is not None
        rows = (np.arange(A.shape[0]) if rows is None
                else np.asarray(rows, dtype=np.int64))
        if out is None:
            out = np.empty((rows.shape[0], X.shape[1]))
        if A.nnz * X.shape[1] <= _SCIPY_WORK:  # (same sums, same order, no compilation)
            out[...] = (A[rows] if subset else A) @ X
            return out

        with numba_threads(None):  # the cores other jobs leave free
            spmm_rows(A.indptr, A.indices.astype(np.int64, copy=False),
                      np.asarray(A.data, dtype=np.float64), rows, X, out)
        return out
    product = A @ X if rows is None else (A @ X)[rows]
    if out is None:
        return np.asarray(product, dtype=np.float64)
    out[...] = product
    return out


# -- locality order and the aggregation coarse space of the block solvers -------------------


@njit(cache=True)
def permuted_row_arrays(indptr, indices, perm):
    """Row pointers (int64) of the rows ``perm`` of a CSR matrix, and uninitialized index
    (``indices``' type) and value arrays of their size: what a permutation fills."""
    n = perm.shape[0]
    new_indptr = np.zeros(n + 1, dtype=np.int64)
    for i in range(n):
        new_indptr[i + 1] = new_indptr[i] + indptr[perm[i] + 1] - indptr[perm[i]]
    return new_indptr, np.empty(new_indptr[n], dtype=indices.dtype), np.empty(new_indptr[n])


@njit(cache=True, parallel=True)
def permute_symmetric(indptr, indices, data, perm, inv, sort_rows=True):
    """CSR arrays of ``P A P^T`` (row i of the result is row ``perm[i]`` of ``A``, column
    j maps to ``inv[j]``), in ``indices``' integer type (no int64 copy of a 10^6-row
    matrix's 18 million int32 indices on the way). Each row's indices sorted, or with
    ``sort_rows=False`` in the stored order of the source row (a row product then sums the
    same terms in the same order as on ``A``: the same values bit for bit)."""
    n = perm.shape[0]
    new_indptr, new_indices, new_data = permuted_row_arrays(indptr, indices, perm)
    for i in prange(n):
        lo = new_indptr[i]
        src = indptr[perm[i]]
        m = new_indptr[i + 1] - lo
        for t in range(m):  # insertion sort of a short row
            j = inv[indices[src + t]]
            a = data[src + t]
            s = lo + t
            while sort_rows and s > lo and new_indices[s - 1] > j:
                new_indices[s] = new_indices[s - 1]
                new_data[s] = new_data[s - 1]
                s -= 1
            new_indices[s] = j
            new_data[s] = a
    return new_indptr, new_indices, new_data


def permuted(A, order, inverse, sort_rows=True):
    """``A[order][:, order]`` as a CSR matrix (``inverse`` the inverse permutation) in one
    parallel pass (:func:`permute_symmetric`): each row's indices sorted, or with
    ``sort_rows=False`` in the stored order of its source row, so that a row product sums
    as on ``A``, bit for bit. The inverse is read as int32 where it fits (its random reads
    stay in cache longer: 0.44 against 0.58 s at 10^6 vertices)."""
    import scipy.sparse as sp

    if A.shape[0] <= np.iinfo(np.int32).max:
        inverse = inverse.astype(np.int32)
    indptr, indices, data = permute_symmetric(A.indptr, A.indices, A.data, order, inverse,
                                              sort_rows)
    # A's index types: the product kernels already compiled for A serve P
    P = sp.csr_matrix((data, indices, indptr.astype(A.indptr.dtype)), shape=A.shape)
    P.has_sorted_indices = sort_rows
    return P


@njit(cache=True, parallel=True)
def aggregate_sums(agg, m, R):
    """``S = Z^T R`` for the aggregate indicator ``Z`` (row i in aggregate ``agg[i]``, none
    where ``agg[i] < 0``): per-chunk partial sums, shape (m, r)."""
    n, r = R.shape
    partial = np.zeros((N_CHUNKS, m, r))
    for t in prange(N_CHUNKS):
        lo, hi = _chunk_rows(t, n)
        for i in range(lo, hi):
            a = agg[i]
            if a >= 0:
                for c in range(r):
                    partial[t, a, c] += R[i, c]
    return partial.sum(axis=0)


@njit(cache=True, parallel=True)
def grouped_sums(ptr, members, R):
    """``S = Z^T R`` for aggregates given by their members (``members[ptr[a]:ptr[a + 1]]``
    the rows of aggregate a): one task per aggregate, no per-chunk (m, r) partial arrays,
    whose zeroing and summing cost more than the sums themselves once m is in the hundreds.
    Deterministic (each sum runs in member order)."""
    m = ptr.shape[0] - 1
    r = R.shape[1]
    S = np.zeros((m, r))
    for a in prange(m):
        for k in range(uint64(ptr[a]), uint64(ptr[a + 1])):
            i = uint64(members[k])
            for c in range(r):
                S[a, c] += R[i, c]
    return S


@njit(cache=True, parallel=True)
def jacobi_coarse_dot(dinv, agg, C, R, Z):
    """Two-level additive preconditioner ``Z = D^-1 R + Z_agg C`` (``C`` the coarse
    correction per aggregate); return the column products ``R^T Z``."""
    n, r = R.shape
    partial = np.zeros((N_CHUNKS, r))
    for t in prange(N_CHUNKS):
        lo, hi = _chunk_rows(t, n)
        for i in range(lo, hi):
            di = dinv[i]
            a = agg[i]
            for c in range(r):
                z = di * R[i, c]
                if a >= 0:
                    z += C[a, c]
                Z[i, c] = z
                partial[t, c] += R[i, c] * z
    return partial.sum(axis=0)


@njit(cache=True, parallel=True)
def row_summary(indptr, indices, data):
    """Row sums of a CSR matrix and of its absolute values, its diagonal (scipy's
    ``diagonal()``: the sum of a row's entries in column i), and the counts of nonzero and
    of positive entries off the diagonal, in one pass (at 2x10^5 points scipy's diagonal
    alone took 6 ms of a solver's setup, the coarse space's two tests 7 ms more)."""
    n = indptr.shape[0] - 1
    s = np.zeros(n)
    a = np.zeros(n)
    d = np.zeros(n)
    off_nonzero = 0
    off_positive = 0
    for i in prange(n):
        nonzero = 0
        positive = 0
        for k in range(indptr[i], indptr[i + 1]):
            v = data[k]
            s[i] += v
            a[i] += abs(v)
            if indices[k] == i:
                d[i] += v
            elif v != 0.0:
                nonzero += 1
                if v > 0.0:
                    positive += 1
        off_nonzero += nonzero
        off_positive += positive
    return s, a, d, off_nonzero, off_positive


# -- a principal submatrix -----------------------------------------------------------------


@njit(cache=True, parallel=True)
def _principal_rows(indptr, indices, data, rows, position, scale):
    """The rows of ``A[rows][:, cols]`` (``position``: each column's place in ``cols``, -1
    for the others), each entry ``(scale_i a_ij) scale_p`` when ``scale`` is not empty."""
    m = rows.shape[0]
    scaled = scale.shape[0] > 0
    new_indptr = np.zeros(m + 1, dtype=np.int64)
    for i in prange(m):
        c = 0
        for jj in range(uint64(indptr[rows[i]]), uint64(indptr[rows[i] + 1])):
            if position[uint64(indices[jj])] >= 0:
                c += 1
        new_indptr[i + 1] = c
    for i in range(m):
        new_indptr[i + 1] += new_indptr[i]
    new_indices = np.empty(new_indptr[m], dtype=indices.dtype)
    new_data = np.empty(new_indptr[m], dtype=data.dtype)
    for i in prange(m):
        s = new_indptr[i]
        for jj in range(uint64(indptr[rows[i]]), uint64(indptr[rows[i] + 1])):
            p = position[uint64(indices[jj])]
            if p >= 0:
                new_indices[s] = p
                new_data[s] = (scale[i] * data[jj]) * scale[p] if scaled else data[jj]
                s += 1
    return new_indptr, new_indices, new_data


def submatrix(A, rows, cols, scale=None):
    """``A[rows][:, cols]`` (CSR) in one parallel pass, without scipy's intermediate row
    slice: for increasing ``cols`` the same entries in the same order as scipy's two
    fancy-indexing passes (each row's entries keep their order); other column orders get
    sorted rows; a column asked for twice goes to scipy's indexing. ``scale`` (principal
    submatrices, ``rows`` = ``cols``): ``diag(scale) A[rows][:, rows] diag(scale)`` in the
    same pass, the entries of :func:`diagonal_scaled` of the submatrix bit for bit."""
    import scipy.sparse as sp

    A = sp.csr_matrix(A)
    rows = np.asarray(rows, dtype=np.int64)
    cols = np.asarray(cols, dtype=np.int64)
    position = np.full(A.shape[1], -1, dtype=np.int64)
    position[cols] = np.arange(cols.size)
    if np.count_nonzero(position >= 0) < cols.size:  # a column asked for twice: scipy's
        S = A[rows][:, cols]
        return S if scale is None else diagonal_scaled(S, scale)
    scale = np.empty(0) if scale is None else np.asarray(scale, dtype=np.float64)
    indptr, indices, data = _principal_rows(A.indptr, A.indices, A.data, rows, position,
                                            scale)
    S = sp.csr_matrix((data, indices.astype(A.indices.dtype, copy=False), indptr),
                      shape=(rows.size, cols.size))
    if cols.size > 1 and not (cols[1:] > cols[:-1]).all():
        S.sort_indices()  # (other column orders leave each row's columns out of order)
    else:
        S.has_sorted_indices = A.has_sorted_indices
    if scale.size and not data.all():
        S.eliminate_zeros()  # (as diagonal_scaled: scipy's products drop exact zeros)
    return S


def principal_submatrix(A, rows, scale=None):
    """``A[rows][:, rows]`` (CSR), :func:`submatrix`'s: for increasing ``rows`` the same
    entries in the same order as scipy's two fancy-indexing passes (sorted rows stay
    sorted); other orders get sorted rows. ``scale``: ``diag(scale) A[rows][:, rows]
    diag(scale)`` in the same pass (:func:`submatrix`)."""
    return submatrix(A, rows, rows, scale)


@njit(cache=True, parallel=True)
def _scaled_entries(indptr, indices, data, w, sum_of_sides):
    """Entry k = (i, j) of ``diag(w) A diag(w)``, ``(w_i a_ij) w_j``, or of ``diag(w) A + A
    diag(w)``, ``w_i a_ij + a_ij w_j``: each rounded as scipy's diagonal products (and their
    sum) round it."""
    out = np.empty_like(data)
    for i in prange(indptr.shape[0] - 1):
        wi = w[i]
        for k in range(indptr[i], indptr[i + 1]):
            d = data[k]
            if sum_of_sides:
                out[k] = wi * d + d * w[indices[k]]
            else:
                out[k] = (wi * d) * w[indices[k]]
    return out


def diagonal_scaled(A, w, sum_of_sides=False):
    """``diag(w) A diag(w)`` (or ``diag(w) A + A diag(w)``) of a square sparse ``A``, entry
    by entry on its pattern (one pass, no sparse-sparse products: 0.6 against 12 ms at
    2x10^4 rows): the same entries in the same order as scipy's products on a matrix with
    sorted rows, whose exact zeros are dropped as theirs are."""
    import scipy.sparse as sp

    A = sp.csr_matrix(A)
    data = _scaled_entries(A.indptr, A.indices, np.asarray(A.data, dtype=np.float64),
                           np.asarray(w, dtype=np.float64), sum_of_sides)
    out = sp.csr_matrix((data, A.indices.copy(), A.indptr.copy()), shape=A.shape)
    if not data.all():
        out.eliminate_zeros()
    return out
