"""Gathers of sub-matrices, compiled.

``A[np.ix_(rows, cols)]`` in NumPy gathers one element at a time through its generic
fancy-indexing machinery; the fold refits of exact CV take one such block per fold and
candidate (for a 430-point Gram matrix 0.75 ms each, ten times the compiled gather below and
more than the refit itself). The compiled gather copies each selected row's entries in one
pass, rows in parallel for large blocks.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from fastgssl._threads import numba_threads

__all__ = ["take_block"]

# below this many elements one thread copies the block: a copy is bound by memory, and a
# parallel region costs more (a 1260 x 1260 fold block of a 1400-point kernel: 1.1 ms on
# one thread, 19 ms through the parallel kernel on the loaded 2-core project machine;
# bench/profile_caravan_shape.py spent 25 % of exact selection there)
_PARALLEL_MIN = 1 << 24


@njit(cache=True, nogil=True)
def _take_row(src, cols, dst):
    for j in range(cols.shape[0]):
        dst[j] = src[cols[j]]


@njit(cache=True, nogil=True)
def _take_block_serial(A, rows, cols, out):
    for i in range(rows.shape[0]):
        _take_row(A[rows[i]], cols, out[i])


@njit(cache=True, parallel=True, nogil=True)
def _take_block_parallel(A, rows, cols, out):
    for i in prange(rows.shape[0]):
        _take_row(A[rows[i]], cols, out[i])


def _as_index(idx, size, name):
    idx = np.asarray(idx)
    if idx.size and idx.dtype.kind not in "biu":
        raise IndexError(f"{name} must be integer indices or a boolean mask, got dtype "
                         f"{idx.dtype}.")
    if idx.dtype == np.bool_:
        if idx.shape != (size,):
            raise IndexError(f"boolean {name} mask has shape {idx.shape}, expected ({size},).")
        return np.flatnonzero(idx)
    idx = np.ascontiguousarray(idx, dtype=np.int64).ravel()
    if idx.size and (idx.min() < 0 or idx.max() >= size):
        raise IndexError(f"{name} index out of range [0, {size}).")
    return idx


def take_block(A, rows, cols=None):
    """``A[np.ix_(rows, cols)]`` as a new C-contiguous float64 array.

    ``A``: 2-D (made C-contiguous float64 if it is not); ``rows`` / ``cols``: non-negative
    integer indices or boolean masks (``cols`` defaults to ``rows``).
    """
    A = np.ascontiguousarray(A, dtype=np.float64)
    rows = _as_index(rows, A.shape[0], "rows")
    cols = _as_index(rows, A.shape[1], "cols") if cols is None else \
        _as_index(cols, A.shape[1], "cols")
    out = np.empty((rows.shape[0], cols.shape[0]))
    if out.size >= _PARALLEL_MIN:
        with numba_threads(None):
            _take_block_parallel(A, rows, cols, out)
    elif out.size:
        _take_block_serial(A, rows, cols, out)
    return out


# --- the fold loops of exact CV, compiled (callers: njit kernels of one fold's refit) -------
@njit(cache=True, nogil=True)
def fold_split(fold_of_rows, i):
    """``(R, V)``: the rows outside fold ``i`` and those in it, each in row order."""
    n_in = 0
    for f in fold_of_rows:
        if f == i:
            n_in += 1
    R = np.empty(fold_of_rows.shape[0] - n_in, dtype=np.int64)
    V = np.empty(n_in, dtype=np.int64)
    p = 0
    q = 0
    for r in range(fold_of_rows.shape[0]):
        if fold_of_rows[r] != i:
            R[p] = r
            p += 1
        else:
            V[q] = r
            q += 1
    return R, V


@njit(cache=True, nogil=True)
def fold_block(A, R):
    """``A[np.ix_(R, R)]`` inside a compiled fold loop."""
    out = np.empty((R.shape[0], R.shape[0]))
    _take_block_serial(A, R, R, out)
    return out


@njit(cache=True, nogil=True)
def held_out_values(A, V, R, coef, out, j):
    """``out[V, j] = A[V, R] @ coef``: a refit's values at the held-out rows."""
    for v in V:
        acc = 0.0
        for s in range(R.shape[0]):
            acc += A[v, R[s]] * coef[s]
        out[v, j] = acc
