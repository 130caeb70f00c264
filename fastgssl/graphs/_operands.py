"""The float32 operands of the exact and inverted-file searches, and their rounding bound.

With ``c`` the mean of the reference rows and ``s`` a power of two that brings every
centred norm below 1, the rows ``x' = (x - c) / s`` are rounded once to float32 and
augmented as ``A = [x', ||x'||^2, 1]`` (queries) and ``B = [-2 y', 1, ||y'||^2]``
(references), so that one GEMM ``A B^T`` gives approximate squared distances;
:func:`filter_bound` is how far those can be from the exact ones.  The pieces are public to
the package so that the in-memory search (:func:`_gemm_operands`) and the Dask search
(:mod:`fastgssl.graphs._ivf_dask`, chunk by chunk) build the same rows with the same code.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from fastgssl._threads import run_tasks

__all__ = ["augmented_rows", "centre_fold", "filter_bound", "operand_step",
           "power_of_two_unit", "reference_rows"]

_U32 = float(np.finfo(np.float32).eps) / 2


def filter_bound(d, q_norms, r_max, unit2=1.0):
    """The float32 filter's rounding bound ``delta = 8 (d + 9) u (||x'||^2 + max ||y'||^2)
    s^2`` (``u = 2^-24``) of the operands of :func:`_gemm_operands`: an approximate
    squared distance differs from the exact one of the original rows by at most this (the
    derivation is in :func:`._knn._candidates_gemm`).  ``q_norms`` are the queries' squared norms
    of the rounded scaled rows, ``r_max`` the largest of the references', ``unit2 = s^2``
    (1: the bound in scaled units).  The exact search's certificate and retry and the
    inverted-file search's certificate (:mod:`fastgssl.graphs._ivf_driver`) all use it."""
    return 8.0 * (d + 9) * _U32 * (q_norms + r_max) * unit2


def operand_step(d):
    """Rows per block of the operands' float64 temporaries (~8 MB) and of the centre's
    summation (:func:`centre_fold`)."""
    return max(1, (1 << 20) // max(d, 1))


def centre_fold(state, X, offset, step, pivot):
    """Continue the reference mean's sum ``total += (X[s0:s0 + step] - pivot).sum(0)``
    (blocks of ``step`` rows counted from row 0 of the whole array) over the rows ``X``
    starting at row ``offset``; ``state = (total, partial sum of the open block or
    None)``.  A NumPy sum along axis 0 adds rows in order, so a block cut by a chunk border
    continues from its partial sum with the same result: one fold over the whole array or
    one per row chunk (:mod:`fastgssl.graphs._ivf_dask`) give the same float64 centre.
    The centre is ``pivot + (total + partial) / n``."""
    total, partial = state
    n = X.shape[0]
    pos = 0
    while pos < n:
        g = offset + pos
        end = (g // step + 1) * step
        take = min(n - pos, end - g)
        block = X[pos:pos + take] - pivot
        if partial is not None:
            block = np.concatenate([partial[None, :], block])
        s = block.sum(axis=0)
        pos += take
        if offset + pos == end:
            total = total + s
            partial = None
        else:
            partial = s
    return total, partial


def power_of_two_unit(sq_spread):
    """The scale ``s``: the power of two with ``s^2 >= sq_spread`` (1 for no spread)."""
    return 2.0 ** np.ceil(0.5 * np.log2(sq_spread)) if sq_spread > 0 else 1.0


@njit(cache=True, nogil=True)
def _augmented_block(X, centre, inv, query, out, norms):
    """Rows of :func:`augmented_rows` in one pass: ``x' = float32((x - centre) * inv)``
    (the float64 difference and product of numpy's ``(X - centre) * inv``, rounded once),
    their float64 squared norms (four interleaved partial sums) and the two extra
    columns."""
    n, d = X.shape
    scale = np.float32(1.0) if query else np.float32(-2.0)  # -2: exact
    for i in range(n):
        p0 = 0.0
        p1 = 0.0
        p2 = 0.0
        p3 = 0.0
        row = out[i]
        t = 0
        while t + 4 <= d:
            v0 = np.float32((np.float64(X[i, t]) - centre[t]) * inv)
            v1 = np.float32((np.float64(X[i, t + 1]) - centre[t + 1]) * inv)
            v2 = np.float32((np.float64(X[i, t + 2]) - centre[t + 2]) * inv)
            v3 = np.float32((np.float64(X[i, t + 3]) - centre[t + 3]) * inv)
            p0 += np.float64(v0) * np.float64(v0)
            p1 += np.float64(v1) * np.float64(v1)
            p2 += np.float64(v2) * np.float64(v2)
            p3 += np.float64(v3) * np.float64(v3)
            row[t] = v0 * scale
            row[t + 1] = v1 * scale
            row[t + 2] = v2 * scale
            row[t + 3] = v3 * scale
            t += 4
        while t < d:
            v = np.float32((np.float64(X[i, t]) - centre[t]) * inv)
            p0 += np.float64(v) * np.float64(v)
            row[t] = v * scale
            t += 1
        s = (p0 + p1) + (p2 + p3)
        norms[i] = s
        if query:
            row[d] = np.float32(s)
            row[d + 1] = np.float32(1.0)
        else:
            row[d] = np.float32(1.0)
            row[d + 1] = np.float32(s)


def augmented_rows(X, centre, inv, step, query=True, threads=1):
    """The float32 rows ``[x', ||x'||^2, 1]`` (``query``) or ``[-2 x', 1, ||x'||^2]`` of
    ``x' = (x - centre) * inv`` rounded once, and their float64 squared norms; in blocks of
    ``step`` rows (each row's values do not depend on the blocking), on ``threads`` threads
    (one compiled pass per block, no float64 temporary)."""
    n, d = X.shape
    out = np.empty((n, d + 2), dtype=np.float32)
    norms = np.empty(n)
    centre = np.ascontiguousarray(centre, dtype=np.float64)
    if n == 0:
        return out, norms

    def block(s0):
        _augmented_block(X[s0:s0 + step], centre, float(inv), bool(query),
                         out[s0:s0 + step], norms[s0:s0 + step])

    run_tasks(block, range(0, n, step), threads)
    return out, norms


def _gemm_operands(Xq, Xr, sq_spread, references=True, threads=1):
    """Float32 operands of the augmented product, built in row chunks (no n x d float64).

    With ``c`` the mean of the reference rows and ``s`` a power of two that brings every
    centred norm below 1 (``s^2 >= sq_spread``, exact scaling), ``x' = (x - c) / s`` and
    ``y' = (y - c) / s`` are rounded once to float32 and the operands are

        ``A = [x', ||x'||^2, 1]`` (queries)  and  ``B = [-2 y', 1, ||y'||^2]`` (references),

    so that one GEMM ``A B^T`` gives ``||x'||^2 + ||y'||^2 - 2 <x', y'>``, the squared
    distance of the scaled rows (symmetric when ``Xq is Xr``, which the self-search uses).
    Returns ``(A, B, q_norms, r_norms, s^2)``, the norms in float64 of the rounded rows
    (``B`` is None with ``references=False`` when ``Xq is Xr``: a caller that reorders the
    rows first builds it from ``A``).  The pieces (:func:`centre_fold`,
    :func:`power_of_two_unit`, :func:`augmented_rows`) are shared with the Dask search,
    which builds the same rows chunk by chunk.
    """
    same = Xq is Xr
    nr, d = Xr.shape
    step = operand_step(d)
    pivot = np.asarray(Xr[0], dtype=np.float64)
    total, partial = centre_fold((np.zeros(d), None), Xr, 0, step, pivot)
    if partial is not None:
        total = total + partial
    centre = pivot + total / nr
    unit = power_of_two_unit(sq_spread)
    inv = 1.0 / unit
    A, q_norms = augmented_rows(Xq, centre, inv, step, True, threads)
    if same and not references:
        B, r_norms = None, q_norms
    elif same:
        B, r_norms = reference_rows(A), q_norms
    else:
        B, r_norms = augmented_rows(Xr, centre, inv, step, False, threads)
    return A, B, q_norms, r_norms, unit * unit


def reference_rows(A):
    """The reference operand ``[-2 x', 1, ||x'||^2]`` of the points whose query rows are
    ``A = [x', ||x'||^2, 1]`` (:func:`_gemm_operands`; exact: a power-of-two scaling)."""
    d = A.shape[1] - 2
    B = np.empty_like(A)
    B[:, :d] = A[:, :d] * np.float32(-2.0)
    B[:, d] = 1.0
    B[:, d + 1] = A[:, d]
    return B
