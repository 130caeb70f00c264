"""Edge weights and symmetrization shared by the kNN and epsilon graph builders.

Weights (the source papers' convention, the design notes): with ``d_ij = ||x_i - x_j||``,

* ``"binary"``:   w_ij = 1;
* ``"gaussian"``: w_ij = exp(-d_ij^2 / (2 sigma_w))   (``sigma_w``: a squared distance, as
  the kernels' ``sigma``);
* ``"distance"``: w_ij = d_ij (edges between exact duplicates get weight 0 and vanish);
* ``"self_tuned"``: w_ij = exp(-c d_ij^2 / d_k(x_i)^2), with ``d_k(x_i)`` the distance from
  x_i to its k-th nearest neighbour (self excluded) and c the ``self_tuned_constant`` (4 by
  default); kNN graphs only, symmetrized by the mean (W + W^T) / 2 by default. With c = 4 this
  is graphlearning's default ``gl.weightmatrix.knn`` weight (Calder et al., the Poisson
  learning paper's graphs), a locally scaled bandwidth in the spirit of Zelnik-Manor & Perona
  (2004), *Self-tuning spectral clustering*;
* ``"self_tuned_sym"``: w_ij = exp(-c d_ij^2 / (d_k(x_i) d_k(x_j))) (with c = 4
  graphlearning's ``symgaussian``): already symmetric, so symmetrized by the union of the
  edges (``"max"``).

Along one list the constant sets the ratio of the first neighbour's weight to the k-th's,
exp(c (1 - d_1^2 / d_k^2)): a larger c trusts the nearest neighbours more (the propagation
learners default to c = 3 joined by ``"max"``, chosen by measurement, issue 36).

A point whose k-th neighbour is at distance 0 (k exact duplicates) has ``d_k = 0``: its
weights are the limit, 1 to its duplicates and 0 to anything farther (graphlearning's 0 / 0
gives NaN there).

:func:`knn_edge_weights` evaluates any of them on kNN lists; every kNN builder uses it, so a
weight added here reaches all of them.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit, prange

from fastgssl._validation import check_positive

WEIGHTS = ("binary", "gaussian", "distance", "self_tuned", "self_tuned_sym")
# weights that need neighbour lists: the scale d_k(x_i) is the k-th neighbour's distance
SELF_TUNED = ("self_tuned", "self_tuned_sym")
SYMMETRIZE = ("max", "mean", "mutual")
# the constant c of the self-tuned weights in the builders: graphlearning's
DEFAULT_SELF_TUNED_CONSTANT = 4.0


def check_weight(weight, sigma_w, *, knn=True):
    """Validate ``weight`` / ``sigma_w``; return ``sigma_w`` as float or None.

    ``knn=False`` (a builder without neighbour lists, the epsilon graph) refuses the
    self-tuned weights, whose scale is the distance to the k-th neighbour.
    """
    allowed = WEIGHTS if knn else tuple(w for w in WEIGHTS if w not in SELF_TUNED)
    if not isinstance(weight, str) or weight not in allowed:
        if isinstance(weight, str) and weight in SELF_TUNED:
            raise ValueError(
                f"weight={weight!r} scales each point by the distance to its k-th nearest "
                f"neighbour and needs kNN lists; this builder takes weight in "
                f"{list(allowed)} (or use knn_graph)."
            )
        raise ValueError(f"weight must be one of {list(allowed)}, got {weight!r}.")
    if sigma_w is None:
        return None
    sigma_w = check_positive(sigma_w, "sigma_w")
    return sigma_w


def check_self_tuned_constant(constant, weight, *, default=DEFAULT_SELF_TUNED_CONSTANT,
                              name="self_tuned_constant", weight_name="weight"):
    """``constant`` (the c of exp(-c d^2 / d_k^2)) as a finite float > 0.

    A value other than ``default`` with a weight that is not self-tuned cannot apply and is
    refused (as ``sigma_w`` with a self-tuned weight is by the learners), naming the fix.
    """
    constant = check_positive(constant, name)
    if weight not in SELF_TUNED and constant != float(default):
        raise ValueError(
            f"{name}={constant:g} is the constant c of the self-tuned weights "
            f"exp(-c d^2 / d_k^2), but {weight_name}={weight!r} does not use it; pass "
            f"{weight_name}='self_tuned' (or 'self_tuned_sym') with it, or leave {name} at "
            f"its default {float(default):g}."
        )
    return constant


def default_symmetrize(weight):
    """The symmetrization a weight is defined with: ``"mean"`` for ``"self_tuned"``
    (graphlearning's (W + W^T) / 2), ``"max"`` (the union of the edges) otherwise."""
    return "mean" if weight == "self_tuned" else "max"


def check_symmetrize(symmetrize, weight):
    """``symmetrize`` checked; ``None`` becomes the weight's own (:func:`default_symmetrize`)."""
    if symmetrize is None:
        return default_symmetrize(weight)
    if not isinstance(symmetrize, str) or symmetrize not in SYMMETRIZE:
        raise ValueError(
            f"symmetrize must be one of {list(SYMMETRIZE)} or None, got {symmetrize!r}."
        )
    return symmetrize


def check_knn_weight(weight, sigma_w, symmetrize, constant):
    """The weight parameters of a kNN builder checked together: ``(sigma_w, constant,
    symmetrize)`` from :func:`check_weight`, :func:`check_self_tuned_constant` and
    :func:`check_symmetrize` (``symmetrize`` None becomes the weight's own)."""
    sigma_w = check_weight(weight, sigma_w)
    constant = check_self_tuned_constant(constant, weight)
    return sigma_w, constant, check_symmetrize(symmetrize, weight)


def default_sigma_w(sq_distances):
    """Bandwidth heuristic: the mean squared distance over the graph's edges.

    With ``w = exp(-d^2 / (2 sigma_w))`` an edge of average length then gets weight
    ``exp(-1/2) ~ 0.61``.  Falls back to 1.0 when every edge has length 0.
    """
    m = float(np.mean(sq_distances)) if np.size(sq_distances) else 0.0
    return m if m > 0 else 1.0


def edge_weights(sq_distances, weight, sigma_w):
    """Weights of edges with the given squared lengths (binary, gaussian, distance)."""
    if weight == "binary":
        return np.ones_like(sq_distances, dtype=np.float64)
    if weight == "gaussian":
        return np.exp(-sq_distances / (2.0 * sigma_w))
    if weight in SELF_TUNED:
        raise ValueError(
            f"weight={weight!r} needs the neighbour lists (the k-th neighbour's distance): "
            f"use knn_edge_weights(indices, sq_distances, ...)."
        )
    return np.sqrt(sq_distances)


def kth_sq_distances(sq_distances, missing=None):
    """``d_k(x_i)^2``: each row's largest listed squared distance (the k-th neighbour's, the
    lists being sorted; with ``missing`` entries, the largest present one; 0 for a row with
    none)."""
    sq = np.asarray(sq_distances, dtype=np.float64)
    if missing is not None:
        sq = np.where(missing, -np.inf, sq)
    if sq.shape[1] == 0:
        return np.zeros(sq.shape[0])
    return np.maximum(sq.max(axis=1), 0.0)


def self_tuned_weights(sq_distances, scale, *, shift=False,
                       constant=DEFAULT_SELF_TUNED_CONSTANT):
    """The self-tuned weights ``exp(-c d^2 / scale)`` elementwise, c = ``constant``.

    ``scale`` (broadcast against ``sq_distances``, rows = points i) is ``d_k(x_i)^2`` or
    ``d_k(x_i) d_k(x_j)`` (:func:`self_tuned_scale`). At ``scale = 0`` the limit: 1 where
    ``d = 0``, 0 elsewhere. ``shift`` subtracts each row's smallest exponent (a per-row
    factor, for ratios that must not underflow to 0 / 0).
    """
    d2 = np.asarray(sq_distances, dtype=np.float64)
    scale = np.broadcast_to(np.asarray(scale, dtype=np.float64), d2.shape)
    ratio = np.zeros(d2.shape)
    np.divide(d2, scale, out=ratio, where=scale > 0)
    ratio[(scale <= 0) & (d2 > 0)] = np.inf
    if shift and ratio.size and ratio.shape[-1]:
        low = ratio.min(axis=-1, keepdims=True)
        ratio = ratio - np.where(np.isfinite(low), low, 0.0)
    return np.exp(-float(constant) * ratio)


def self_tuned_scale(kth_sq, neighbor_kth_sq=None):
    """The denominator of the self-tuned exponent: ``d_k(x_i)^2``, or with the neighbours'
    scales ``d_k(x_i) d_k(x_j)`` (the symmetric form), as ``sqrt(d_k(x_i)^2) sqrt(...)``."""
    kth_sq = np.asarray(kth_sq, dtype=np.float64)
    if neighbor_kth_sq is None:
        return kth_sq[:, None]
    return np.sqrt(kth_sq)[:, None] * np.sqrt(np.asarray(neighbor_kth_sq, dtype=np.float64))


def knn_edge_weights(indices, sq_distances, weight, sigma_w=None, *, missing=None,
                     constant=DEFAULT_SELF_TUNED_CONSTANT):
    """Directed weights of kNN lists: ``A[i, t]`` is the weight of the edge
    ``i -> indices[i, t]``.

    Parameters
    ----------
    indices : ndarray of int, shape (n, k)
        Neighbour lists of the n points (self excluded), any order.
    sq_distances : ndarray of shape (n, k)
        Their squared distances.
    weight : str
        One of :data:`WEIGHTS`.
    sigma_w : float or None
        Gaussian bandwidth; ``None``: :func:`default_sigma_w` over the listed edges.
    missing : ndarray of bool, shape (n, k), optional
        Entries that hold no neighbour (approximate builders); their weight is 0.
    constant : float
        c of the self-tuned weights exp(-c d^2 / d_k^2) (checked by the caller).

    Returns
    -------
    weights : ndarray of shape (n, k)
    sigma_w : float or None
        The Gaussian bandwidth used (None for other weights).
    kth_sq : ndarray of shape (n,)
        ``d_k(x_i)^2`` of every point (:func:`kth_sq_distances`), the self-tuned scale, which
        the induction formula of the propagation learners needs at new points.
    """
    sq = np.asarray(sq_distances, dtype=np.float64)
    present = ~missing if missing is not None else np.ones(sq.shape, dtype=bool)
    sq = np.where(present, sq, 0.0)
    kth = kth_sq_distances(sq, None if missing is None else ~present)
    if weight == "gaussian" and sigma_w is None:
        sigma_w = default_sigma_w(sq[present])
    if weight == "self_tuned":
        w = self_tuned_weights(sq, self_tuned_scale(kth), constant=constant)
    elif weight == "self_tuned_sym":
        idx = np.where(present, np.asarray(indices, dtype=np.int64), 0)
        w = self_tuned_weights(sq, self_tuned_scale(kth, kth[idx]), constant=constant)
    else:
        w = edge_weights(sq, weight, sigma_w)
    w = np.where(present, w, 0.0)
    return w, (sigma_w if weight == "gaussian" else None), kth


def symmetrize(A, how):
    """Symmetric graph from a directed one.

    ``"max"``: W = max(A, A^T) (an edge if either point lists the other);
    ``"mean"``: W = (A + A^T) / 2 (one-sided edges keep half their weight);
    ``"mutual"``: W = min(A, A^T) (only mutual neighbours).
    """
    if how == "max":
        W = A.maximum(A.T)
    elif how == "mean":
        W = (A + A.T) * 0.5
    elif how == "mutual":
        W = A.minimum(A.T)
    else:
        raise ValueError(f"symmetrize must be one of {list(SYMMETRIZE)}, got {how!r}.")
    W = drop_diagonal(sp.csr_matrix(W, dtype=np.float64))
    W.eliminate_zeros()
    W.sort_indices()
    return W


_SYMMETRIZE_CODE = {"max": 0, "mean": 1, "mutual": 2}


def symmetrize_lists(indices, weights, how):
    """:func:`symmetrize` of the directed graph of neighbour lists, compiled.

    ``A[i, indices[i, t]] = weights[i, t]`` (entries of weight 0 are not edges; repeated
    columns of a row add, as in a CSR matrix); the result equals ``symmetrize(A, how)``
    entry for entry (the same float64 operations: ``max(a, b)``, ``(a + b) * 0.5``,
    ``min(a, b)`` with ``0`` for the missing side), in canonical CSR form: sorted indices,
    no diagonal, no stored zeros.  The transpose is a parallel counting sort; the rows are
    merged in parallel (two passes: sizes, then entries).  Measured on random lists of
    ``10^6`` points (k = 10, two threads): 0.7 s against 1.5 s for the sparse-matrix route
    (1.0 s against 1.8 s in the inverted-file graph's weights stage).
    """
    idx = np.ascontiguousarray(indices, dtype=np.int64)
    w = np.ascontiguousarray(weights, dtype=np.float64)
    n = idx.shape[0]
    if how not in _SYMMETRIZE_CODE:
        raise ValueError(f"symmetrize must be one of {list(SYMMETRIZE)}, got {how!r}.")
    code = _SYMMETRIZE_CODE[how]
    tptr, tind, tdat = _transpose_lists(idx, w)
    sizes = np.zeros(n, dtype=np.int64)
    empty_i = np.empty(0, dtype=np.int32)
    empty_d = np.empty(0, dtype=np.float64)
    _merge_lists(idx, w, tptr, tind, tdat, code, sizes, sizes, empty_i, empty_d, True)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(sizes, out=indptr[1:])
    nnz = int(indptr[-1])
    index_dtype = np.int32 if max(nnz, n) < np.iinfo(np.int32).max else np.int64
    out_i = np.empty(nnz, dtype=index_dtype)
    out_d = np.empty(nnz, dtype=np.float64)
    _merge_lists(idx, w, tptr, tind, tdat, code, sizes, indptr, out_i, out_d, False)
    W = sp.csr_matrix((out_d, out_i, indptr.astype(index_dtype)), shape=(n, n))
    W.has_sorted_indices = True
    return W


# row ranges of the parallel transpose (the counts take n int64 per range)
_TRANSPOSE_CHUNKS = 4


@njit(cache=True, parallel=True)
def _transpose_lists(idx, w):
    """Rows of the transpose of the list graph: ``tind[tptr[j]:tptr[j + 1]]`` the rows
    ``i`` (ascending, repeated as often as ``j`` is listed) with ``w[i, t] != 0`` and
    ``idx[i, t] == j``, their weights in ``tdat``.  A counting sort in parallel over
    ``_TRANSPOSE_CHUNKS`` ranges of rows (each fills its own slots, in row order)."""
    n, k = idx.shape
    n_chunks = min(_TRANSPOSE_CHUNKS, max(1, n))
    step = (n + n_chunks - 1) // n_chunks
    counts = np.zeros((n_chunks, n), dtype=np.int64)
    for c in prange(n_chunks):
        for i in range(c * step, min(n, (c + 1) * step)):
            for t in range(k):
                if w[i, t] != 0.0:
                    counts[c, idx[i, t]] += 1
    tptr = np.zeros(n + 1, dtype=np.int64)
    for j in range(n):  # counts[c, j] becomes range c's first slot in row j
        at = tptr[j]
        for c in range(n_chunks):
            got = counts[c, j]
            counts[c, j] = at
            at += got
        tptr[j + 1] = at
    tind = np.empty(tptr[n], dtype=np.int64)
    tdat = np.empty(tptr[n], dtype=np.float64)
    for c in prange(n_chunks):
        pos = counts[c]
        for i in range(c * step, min(n, (c + 1) * step)):
            for t in range(k):
                if w[i, t] != 0.0:
                    j = idx[i, t]
                    tind[pos[j]] = i
                    tdat[pos[j]] = w[i, t]
                    pos[j] += 1
    return tptr, tind, tdat


@njit(cache=True, parallel=True)
def _merge_lists(idx, w, tptr, tind, tdat, code, sizes, indptr, out_i, out_d, count):
    """Row ``i`` of the symmetrized graph: the row's own entries (sorted by column,
    repeated columns added) merged with row ``i`` of the transpose; ``count``: only the
    number of entries of every row into ``sizes``, else the entries from ``indptr[i]``."""
    n, k = idx.shape
    step = 4096
    for task in prange((n + step - 1) // step):
        cols = np.empty(k, dtype=np.int64)
        vals = np.empty(k, dtype=np.float64)
        for i in range(task * step, min(n, (task + 1) * step)):
            m = 0
            for t in range(k):  # insertion by column; a repeated column adds
                v = w[i, t]
                if v == 0.0:
                    continue
                c = idx[i, t]
                at = m
                while at > 0 and cols[at - 1] > c:
                    at -= 1
                if at > 0 and cols[at - 1] == c:
                    vals[at - 1] += v
                    continue
                for u in range(m, at, -1):
                    cols[u] = cols[u - 1]
                    vals[u] = vals[u - 1]
                cols[at] = c
                vals[at] = v
                m += 1
            a = 0
            b = tptr[i]
            b_end = tptr[i + 1]
            got = 0
            out = indptr[i]
            while a < m or b < b_end:
                if b >= b_end or (a < m and cols[a] < tind[b]):
                    c = cols[a]
                elif a >= m or tind[b] < cols[a]:
                    c = tind[b]
                else:
                    c = cols[a]
                x = 0.0
                if a < m and cols[a] == c:
                    x = vals[a]
                    a += 1
                y = 0.0
                first = True
                while b < b_end and tind[b] == c:
                    y = tdat[b] if first else y + tdat[b]
                    first = False
                    b += 1
                if code == 0:
                    v = max(x, y)
                elif code == 1:
                    v = (x + y) * 0.5
                else:
                    v = min(x, y)
                if c == i or v == 0.0:
                    continue
                if not count:
                    out_i[out + got] = c
                    out_d[out + got] = v
                got += 1
            if count:
                sizes[i] = got


def drop_diagonal(W):
    """CSR ``W`` without stored diagonal entries (in place when there are none).

    ``setdiag(0)`` on a CSR matrix without a stored diagonal inserts n explicit zeros
    through a COO round trip; a mask over the stored entries costs one pass.
    """
    rows = np.repeat(np.arange(W.shape[0]), np.diff(W.indptr))
    keep = W.indices != rows
    if keep.all():
        return W
    indptr = np.concatenate(([0], np.cumsum(np.bincount(rows[keep], minlength=W.shape[0]))))
    return sp.csr_matrix((W.data[keep], W.indices[keep], indptr), shape=W.shape)


def isolated_count(W):
    """Number of vertices without any edge."""
    return int(np.count_nonzero(np.diff(W.indptr) == 0))
