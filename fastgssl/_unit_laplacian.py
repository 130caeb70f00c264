"""Block products with a unit Laplacian: every entry off the diagonal is -1.

The Laplacian ``D - W`` of a graph with unit weights (a binary kNN graph, fastgssl's
default), possibly shifted, has -1 off its diagonal. Its products need neither the entries
off the diagonal (8 of the 12 bytes per entry that a product reads) nor a multiply there:
the row's entries before its diagonal are subtracted, the diagonal term added, the rest
subtracted, in the stored order. ``a + (-1) x`` and ``a - x`` are the same IEEE number, so
the products are those of :func:`fastgssl._sparse_blocks.spmm_dot` bit for bit. Measured on
the 10^6-vertex 10-NN Laplacian of ``bench/bench_million.py`` (18.9 M entries, 10 columns,
two threads, interleaved): 7-18 % faster per product
(``docs/scripts/first_fit_round15_kernels.txt``); no gain where the matrix nearly fits a
cache (``LaplacianSolver`` uses them from ``UNIT_MIN_NNZ`` entries).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange, uint64

from fastgssl._sparse_blocks import (
    N_CHUNKS,
    _chunk_rows,
    _width_call,
    permuted_row_arrays,
    spmm_dot,
)

__all__ = ["UNIT_MIN_NNZ", "asymmetric_pattern", "permuted_unit", "spmm_dot_unit", "unit_form"]

# LaplacianSolver uses them from 2^20 entries (12 MB of CSR; about 6x10^4 vertices of a
# 10-NN graph): the 10^6-vertex 10-NN Laplacian's 10-column product 7-18 % faster (two
# threads); at 10^5 vertices (1.8 M entries) on the sixteenth round's machine (an Intel
# Xeon whose shared L3 is slow beside its 2 MB L2) 6.0 against 6.7 ms on one thread (6.7
# against 10.2 in a slow phase), 4.9 against 5.7 in RCM order, equal on two threads in the
# input order (docs/scripts/first_fit_round16_products.txt); 0.91-1.16x on the fifteenth
# round's machine (an AMD EPYC); at 2x10^4 vertices (0.36 M entries) 0.9-1.0x
UNIT_MIN_NNZ = 1 << 20


@njit(cache=True, parallel=True)
def unit_form(indptr, indices, data):
    """``(diag, dpos)`` of a CSR matrix whose entries off the diagonal are all -1 and whose
    every row stores its diagonal once: the diagonal and its entries' positions (in
    ``indptr``'s integer type); empty arrays when the matrix is not of that form."""
    n = indptr.shape[0] - 1
    diag = np.empty(n)
    dpos = np.empty(n, dtype=indptr.dtype)
    good = np.empty(n, dtype=np.bool_)
    for i in prange(n):
        found = 0
        others = True
        for jj in range(indptr[i], indptr[i + 1]):
            if indices[jj] == i:
                found += 1
                dpos[i] = jj
                diag[i] = data[jj]
            elif data[jj] != -1.0:
                others = False
        good[i] = others and found == 1
    if not good.all():
        return diag[:0], dpos[:0]
    return diag, dpos


@njit(inline="always")
def _unit_row_sums_into(indptr, indices, diag, dpos, row, X, acc, R):
    """``acc[:R] = A[row] @ X`` for a unit Laplacian ``A`` (see :func:`unit_form`), each
    sum in the order of the row's stored entries."""
    for c in range(R):
        acc[c] = 0.0
    d = uint64(dpos[row])
    for jj in range(uint64(indptr[row]), d):
        j = uint64(indices[jj])
        for c in range(R):
            acc[c] -= X[j, c]
    a = diag[row]
    for c in range(R):
        acc[c] += a * X[row, c]
    for jj in range(d + uint64(1), uint64(indptr[row + 1])):
        j = uint64(indices[jj])
        for c in range(R):
            acc[c] -= X[j, c]


def _unit_width_kernels(R):
    """``{"spmm_dot_unit": kernel}`` for blocks of exactly R columns (a closure over R
    named after its width, as :func:`fastgssl._sparse_blocks._width_kernels`)."""

    def spmm_dot_unit_r(indptr, indices, diag, dpos, P, AP):
        n = P.shape[0]
        partial = np.zeros((N_CHUNKS, R))
        for t in prange(N_CHUNKS):
            lo, hi = _chunk_rows(t, n)
            acc = np.empty(R)
            for i in range(lo, hi):
                _unit_row_sums_into(indptr, indices, diag, dpos, i, P, acc, R)
                for c in range(R):
                    AP[i, c] = acc[c]
                    partial[t, c] += P[i, c] * acc[c]
        return partial.sum(axis=0)

    spmm_dot_unit_r.__name__ = spmm_dot_unit_r.__qualname__ = f"spmm_dot_unit_width_{R}"
    return {"spmm_dot_unit": njit(cache=True, parallel=True)(spmm_dot_unit_r)}


def spmm_dot_unit(indptr, indices, data, diag, dpos, P, AP):
    """``AP = A @ P`` and the column inner products ``diag(P^T A P)`` for a unit Laplacian
    ``A`` (CSR arrays) given also by its :func:`unit_form` ``(diag, dpos)``: the numbers of
    :func:`fastgssl._sparse_blocks.spmm_dot`, without reading the entries off the diagonal
    where a kernel is compiled for P's width (else that general product, which reads
    them)."""
    def general(*_):
        return spmm_dot(indptr, indices, data, P, AP)

    return _width_call("spmm_dot_unit", general, indptr, indices, P,
                       (indptr, indices, diag, dpos, P, AP), factory=_unit_width_kernels)


@njit(cache=True, parallel=True)
def _permute_unit_rows(indptr, indices, diag, perm, inv):  # pragma: no cover - compiled
    """CSR arrays of ``P A P^T`` for a unit Laplacian ``A`` (row i is row ``perm[i]`` of
    ``A``, in its stored order; column j maps to ``inv[j]``) and the result's unit form:
    the arrays of :func:`fastgssl._sparse_blocks.permute_symmetric` with ``sort_rows=False``
    bit for bit, the entries written (-1 off the diagonal, the diagonal from ``diag``)
    instead of gathered from the source rows."""
    n = perm.shape[0]
    new_indptr, new_indices, new_data = permuted_row_arrays(indptr, indices, perm)
    new_diag = np.empty(n)
    new_dpos = np.empty(n, dtype=indptr.dtype)
    for i in prange(n):
        lo = new_indptr[i]
        src = indptr[perm[i]]
        a = diag[perm[i]]
        new_diag[i] = a
        for t in range(new_indptr[i + 1] - lo):
            j = inv[indices[src + t]]
            new_indices[lo + t] = j
            if j == i:
                new_data[lo + t] = a
                new_dpos[i] = lo + t
            else:
                new_data[lo + t] = -1.0
    return new_indptr, new_indices, new_data, new_diag, new_dpos


def permuted_unit(A, unit, order, inverse):
    """``A[order][:, order]`` of a unit Laplacian ``A`` given with its :func:`unit_form`
    ``unit``, as :func:`fastgssl._sparse_blocks.permuted` with ``sort_rows=False`` forms it
    (the same arrays), and the unit form of the result: ``(P, (diag, dpos))``. The source
    rows' entries are not read (12 of a permuted entry's 16 bytes read at random places):
    the locality order of a first solve pays from fewer vertices (the eighteenth round)."""
    import scipy.sparse as sp

    if A.shape[0] <= np.iinfo(np.int32).max:
        inverse = inverse.astype(np.int32)
    indptr, indices, data, diag, dpos = _permute_unit_rows(A.indptr, A.indices, unit[0],
                                                           order, inverse)
    P = sp.csr_matrix((data, indices, indptr.astype(A.indptr.dtype)), shape=A.shape)
    P.has_sorted_indices = False
    return P, (diag, dpos.astype(A.indptr.dtype))


@njit(cache=True)
def asymmetric_pattern(indptr, indices):  # pragma: no cover - compiled
    """Whether the pattern of a CSR matrix with sorted, unique indices is not symmetric: the
    symmetry check of a unit Laplacian (-1 off its diagonal), whose ``max |Q - Q^T|``
    (:func:`fastgssl.solvers._laplacian_matrix._max_asymmetry`) is 1 or 0, from the indices
    alone (the random reads of row j's values were half of that scan's: 5.9 against 14.3
    ms at 10^5 vertices of a 10-NN graph, one thread, the eighteenth round). The cursor of
    row j meets its entries left of the diagonal in row order: on a symmetric pattern entry
    ``(i, j)``, ``i < j``, finds ``(j, i)`` there; the first entry that does not, or one
    left over, answers."""
    n = indptr.shape[0] - 1
    cursor = indptr[:-1].copy()
    for i in range(n):
        for jj in range(indptr[i], indptr[i + 1]):
            j = indices[jj]
            if j <= i:
                continue
            c = cursor[j]
            if c < indptr[j + 1] and indices[c] == i:
                cursor[j] = c + 1
            else:
                return True
    for j in range(n):
        c = cursor[j]
        if c < indptr[j + 1] and indices[c] < j:
            return True
    return False
