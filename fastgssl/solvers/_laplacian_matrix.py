"""The matrix of a :class:`fastgssl.solvers.LaplacianSolver`: checked (finite, symmetric,
nonnegative diagonal), in CSR with sorted indices, put in a locality order (reverse
Cuthill-McKee, so that neighbours sit close in index order and a block of right-hand sides
stays in cache) and given a null space to project out (a caller's, checked against ``Q``
and orthonormalized).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from numba import njit
from scipy.sparse.csgraph import reverse_cuthill_mckee

from fastgssl import _sparse_blocks as K
from fastgssl._unit_laplacian import asymmetric_pattern
from fastgssl._validation import check_no_complex

from ._null_space import is_null

__all__ = []


def _as_csr(Q):
    check_no_complex(Q, "Q")
    if sp.issparse(Q):
        Q = sp.csr_matrix(Q, dtype=np.float64)
    else:
        Q = sp.csr_matrix(np.asarray(Q, dtype=np.float64))
    Q.sum_duplicates()
    Q.sort_indices()
    return Q


class RowSummary(NamedTuple):
    """What one pass over a CSR matrix's rows tells (:func:`row_summary`): read by the
    solver's setup (the Jacobi diagonal, the null-space and dominance tests) and the
    coarse space's first level (its edge test and the sign test of its next pass)."""

    sums: np.ndarray  # row sums
    abs_sums: np.ndarray  # row sums of |Q|
    diagonal: np.ndarray
    has_edges: bool  # a nonzero entry off the diagonal
    positive_coupling: bool  # a positive entry off the diagonal


def row_summary(Q):
    """:class:`RowSummary` of a CSR matrix (one compiled pass)."""
    s, a, d, nonzero, positive = K.row_summary(Q.indptr, Q.indices, Q.data)
    return RowSummary(s, a, d, nonzero > 0, positive > 0)


def _check_matrix(Q, diag, abs_sums=None, unit=None):
    # finite row sums of |Q| (``abs_sums``, when known) hold finite entries only: the entries
    # are read again only when a sum is not finite (a non-finite entry, or an overflow);
    # ``unit``: Q's unit form (fastgssl._unit_laplacian.unit_form) when known: then -1 off
    # the diagonal, and its pattern's symmetry is its values' (asymmetric_pattern)
    if not (abs_sums is not None and np.isfinite(abs_sums).all()) \
            and not np.isfinite(Q.data).all():
        raise ValueError("Q contains NaN or infinite entries.")
    if (diag < 0).any():
        raise ValueError(
            f"Q has {int((diag < 0).sum())} negative diagonal entries; it must be "
            f"positive semi-definite (a Laplacian, possibly shifted)."
        )
    if not Q.nnz:
        asym = 0.0
    elif unit is not None:
        asym = float(asymmetric_pattern(Q.indptr, Q.indices))
    else:
        asym = _max_asymmetry(Q.indptr, Q.indices, Q.data)
    if asym > 0 and asym > 1e-10 * np.abs(Q.data).max(initial=0.0):
        raise ValueError(f"Q is not symmetric (max |Q - Q^T| = {asym:.3g}).")


@njit(cache=True)
def _max_asymmetry(indptr, indices, data):  # pragma: no cover - compiled
    """``max |Q - Q^T|`` over the entries of a CSR matrix with sorted, unique indices, in
    one pass and no transpose: the differences scipy's ``abs(Q - Q.T).max()`` forms (15 of
    the 135 ms of a 2x10^4-point, 10-column solve). Rows run in increasing order, so the
    entries ``(i, j)``, ``i < j``, meet row j's entries left of its diagonal in their
    stored order (a cursor per row): the partner ``q_ji`` is at the cursor, or absent
    (counted as 0); entries a cursor skips, or never reaches, have no partner."""
    n = indptr.shape[0] - 1
    cursor = indptr[:-1].copy()
    worst = 0.0
    for i in range(n):
        for jj in range(indptr[i], indptr[i + 1]):
            j = indices[jj]
            if j <= i:
                continue
            c, end = cursor[j], indptr[j + 1]
            while c < end and indices[c] < i:  # (j, k), k < i: no (k, j) was stored
                worst = max(worst, abs(data[c]))
                c += 1
            other = 0.0
            if c < end and indices[c] == i:
                other = data[c]
                c += 1
            cursor[j] = c
            worst = max(worst, abs(data[jj] - other))
    for j in range(n):  # the rest left of each diagonal: no partner above it
        for c in range(cursor[j], indptr[j + 1]):
            if indices[c] >= j:
                break
            worst = max(worst, abs(data[c]))
    return worst


def _locality_order(Q, B=None, aggregation=None):
    """The sources' order of right-hand sides ``B`` nonzero on few rows; else the order of
    ``aggregation``'s aggregates when given (a coarse space's, or one strictly refused as a
    coarse space, too fine: paid for already, it serves as well as RCM); else reverse
    Cuthill-McKee (neighbours close in index order)."""
    order = None if B is None else _sources_order(Q, B)
    if order is None and aggregation is not None:
        order = aggregation.locality_order()
    if order is None:
        order = np.asarray(reverse_cuthill_mckee(Q, symmetric_mode=True), dtype=np.int64)
    return order


# the sources' order needs right-hand sides nonzero on at most 1 / SOURCES_MAX_SHARE rows
SOURCES_MAX_SHARE = 16


@njit(cache=True)
def _sources_bfs(indptr, indices, seeds, n):  # pragma: no cover - compiled
    """Breadth-first search from all ``seeds`` at once: the seed (index into ``seeds``) that
    reached each vertex first (-1: none), and the reached vertices in discovery order."""
    owner = np.full(n, -1, dtype=np.int64)
    seen = np.zeros(n, dtype=np.uint8)  # (the marks a search reads at random: 1 byte each)
    queue = np.empty(n, dtype=np.int64)
    tail = 0
    for s in range(seeds.shape[0]):
        owner[seeds[s]] = s
        seen[seeds[s]] = 1
        queue[tail] = seeds[s]
        tail += 1
    head = 0
    while head < tail:
        v = queue[head]
        head += 1
        o = owner[v]
        for jj in range(indptr[v], indptr[v + 1]):
            u = indices[jj]
            if seen[u] == 0:
                seen[u] = 1
                owner[u] = o
                queue[tail] = u
                tail += 1
    return owner, queue[:tail]


def _sources_order(Q, B):
    """The order of the graph's cells around the sources of ``B`` (its nonzero rows), or
    None when more than ``1 / SOURCES_MAX_SHARE`` of the rows are nonzero.

    Every vertex joins the source that a breadth-first search from all sources reaches it
    from first (a graph Voronoi cell); the cells follow their source's largest column of
    ``|B|`` (a class: Poisson learning's and label propagation's sources are labeled points
    and their neighbours), then the source's row, each cell contiguous in discovery order;
    unreached vertices come last in the input order. On the kNN graph of high-dimensional
    data, where reverse Cuthill-McKee and the aggregates leave a vertex's neighbours
    scattered, most of them then share its class's window of the block: a product of the
    10^6-vertex 10-NN graph of a 10-class mixture (sep 0.5) with 10 columns took 190 ms
    against 237 ms in the aggregates' order and 253 ms in the input order; Poisson
    learning's first solve 11.6 against 13.8 s (docs/scripts/first_fit_round4_*.txt).
    """
    seeds = np.flatnonzero(np.any(B != 0, axis=1))
    n = Q.shape[0]
    if seeds.size == 0 or seeds.size * SOURCES_MAX_SHARE > n:
        return None
    owner, found = _sources_bfs(Q.indptr, Q.indices, seeds.astype(np.int64), n)
    cell_rank = np.empty(seeds.size, dtype=np.int64)
    cell_rank[np.argsort(np.argmax(np.abs(B[seeds]), axis=1), kind="stable")] = \
        np.arange(seeds.size)
    # the cells in rank order, discovery order inside each (a stable sort), then the rest
    cells = found[np.argsort(cell_rank[owner[found]], kind="stable")]
    return np.concatenate([cells, np.flatnonzero(owner < 0)]).astype(np.int64)


# ``Q[order][:, order]`` with sorted indices, in one parallel pass
_permuted = K.permuted


def _checked_null_space(Q, null_space):
    """A given null space, validated and orthonormalized (n, m)."""
    check_no_complex(null_space, "null_space")
    n = Q.shape[0]
    try:
        N = np.asarray(null_space, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"null_space must be 'auto', None or a numeric array of shape (n, m): {exc}"
        ) from None
    if N.ndim == 1:
        N = N[:, None]
    if N.ndim != 2 or N.shape[0] != n or N.shape[1] == 0:
        raise ValueError(
            f"null_space must be 'auto', None or an array of shape ({n},) or ({n}, m) "
            f"with m >= 1; got shape {N.shape}."
        )
    if not np.isfinite(N).all():
        raise ValueError("null_space contains NaN or infinite values.")
    Nq, _ = np.linalg.qr(N)
    if not is_null(Q, Nq, slack=1e3).all():
        worst = float(np.max(np.linalg.norm(Q @ Nq, axis=0)))
        raise ValueError(
            f"null_space is not a null space of Q (max ||Q n|| = {worst:.3g} for its "
            f"orthonormalized columns); pass null_space='auto' or None for a "
            f"nonsingular (e.g. ridged) Q."
        )
    return Nq
