"""Candidate lists of the exact kNN search from a kd-tree (low-dimensional dense data).

:class:`scipy.spatial.cKDTree` (compiled, parallel over queries) gives each query its
``k_c`` nearest reference points; :mod:`fastgssl.graphs._knn` refines and certifies them as
it does the GEMM filter's (module docstring there).  The tree sums ``(x_l - y_l)^2``
directly, so its error is relative to the distance itself: ``delta_i = 8 (d + 8) u a_i``
with ``u`` the float64 unit round-off and ``a_i`` the largest kept squared distance.
Uncertified rows (ties at the ``k``-th distance) are re-queried with longer lists, then
examined by a ball query of the provisional ``k``-th radius, a superset of the answer.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial import cKDTree

from fastgssl.graphs._knn_kernels import _dense_sqdist, _refine_dense

__all__ = []

_U64 = float(np.finfo(np.float64).eps) / 2


def _candidates_kdtree(Xq, Xr, kc, exclude_self, n_jobs, tree=None, query_ids=None):
    """Candidate lists from a kd-tree: the kc nearest (self removed), their squared
    distances and the kc-th one.

    ``query_ids`` are the indices of the query rows among the reference points (self
    search on a subset of rows); default ``arange``.
    """
    workers = -1 if n_jobs is None else int(n_jobs)
    if tree is None:
        tree = cKDTree(Xr)
    extra = 1 if exclude_self else 0
    dist, idx = tree.query(Xq, k=kc + extra, workers=workers)
    idx = np.asarray(idx, dtype=np.int64).reshape(Xq.shape[0], kc + extra)
    dist = np.asarray(dist, dtype=np.float64).reshape(Xq.shape[0], kc + extra)
    nr = Xr.shape[0]
    idx[idx >= nr] = -1  # cKDTree pads missing neighbours with index n
    if exclude_self:
        rows = np.arange(Xq.shape[0])
        ids = rows if query_ids is None else query_ids
        is_self = idx == ids[:, None]
        # drop self if present, else the farthest candidate: a stable argsort puts the
        # dropped entry last
        drop = np.where(is_self.any(axis=1), is_self.argmax(axis=1), kc)
        keep = np.ones_like(is_self)
        keep[rows, drop] = False
        idx = idx[keep].reshape(-1, kc)
        dist = dist[keep].reshape(-1, kc)
    # tree distances are Euclidean (not squared); the largest kept one bounds the rest
    worst = np.where(idx[:, -1] >= 0, dist[:, -1], np.inf) ** 2
    # the tree sums (x_l - y_l)^2 directly: its error is relative to the distance itself
    delta = 8.0 * (Xq.shape[1] + 8) * _U64 * worst
    return idx, dist * dist, worst, delta, tree


def _tree_retry(tree, X, R, failed, kc, k, exclude_self, complete, threads, out_i, out_d):
    """Re-query uncertified rows with 4x longer candidate lists, then ball queries."""
    rows = np.flatnonzero(failed)
    n_avail = R.shape[0] - (1 if exclude_self else 0)
    while rows.size and kc < min(n_avail, 256):
        kc = min(n_avail, 4 * kc)
        still = []
        step = max(1, (1 << 22) // kc)  # bound the candidate arrays to ~4M entries
        for s0 in range(0, rows.size, step):
            part = rows[s0:s0 + step]
            Xs = X[part]
            cand_i, approx, worst, delta, _ = _candidates_kdtree(Xs, R, kc, exclude_self,
                                                                 threads, tree, part)
            sub_i = np.empty((part.size, k), dtype=np.int64)
            sub_d = np.empty((part.size, k))
            sub_failed = np.zeros(part.size, dtype=np.bool_)
            _refine_dense(Xs, R, cand_i, approx, 1.0, worst, delta, 0, exclude_self,
                          kc == n_avail, k, False, sub_i, sub_d, sub_failed)
            out_i[part] = sub_i
            out_d[part] = sub_d
            still.append(part[sub_failed])
        rows = np.concatenate(still)
    if rows.size:
        _tree_fallback(tree, X, R, rows, k, exclude_self, out_i, out_d)


def _tree_fallback(tree, Xq, Xr, rows, k, exclude_self, out_i, out_d):
    """Exact lexicographic kNN of the given query rows from a ball query of the k-th radius.

    Used for rows whose candidate list could not be certified (ties at the k-th distance,
    typically duplicated points): every point within the provisional k-th distance (a
    superset of the answer, the provisional list having k points within it) is examined.
    """
    for a in rows:
        radius = np.sqrt(out_d[a, k - 1]) * (1.0 + 1e-9) + 1e-300
        cand = np.asarray(tree.query_ball_point(Xq[a], radius), dtype=np.int64)
        if exclude_self:
            cand = cand[cand != a]
        diff = Xr[cand] - Xq[a]
        sq = np.einsum("ij,ij->i", diff, diff)
        order = np.lexsort((cand, sq))[:k]
        out_i[a] = cand[order]
        out_d[a] = np.array([_dense_sqdist(Xq[a], Xr[j]) for j in cand[order]])
