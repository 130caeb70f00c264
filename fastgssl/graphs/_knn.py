"""Exact k-nearest-neighbour search: a BLAS filter with a certified exact refinement.

Algorithm (one concept: exact Euclidean kNN; no paper, standard numerical linear algebra)
------------------------------------------------------------------------------------------
1. *Filter.* Squared distances of a block of queries to a block of reference points are
   formed as ``||x||^2 + ||y||^2 - 2 x.y`` with one matrix product (BLAS ``sgemm`` on centred
   float32 copies, scaled by a power of two, for dense data; a sparse product in float64 of
   the centred CSR data, see :mod:`fastgssl.graphs._geometry`).  Data whose squared
   distances overflow or underflow float64 are refused first (``ValueError``: rescale).
   A Numba kernel (``prange`` over query rows) keeps, for every query, a max-heap of the
   ``k_c > k`` smallest approximate distances seen so far.
2. *Refine.* The exact squared distances of the ``k_c`` candidates are recomputed from the
   original float64 data (sequential sum of ``(x_l - y_l)^2``) and sorted by
   ``(distance, index)``: ties are broken by the smaller index.
3. *Certify.* With ``u`` the unit round-off of the filter, every approximate distance is
   within ``delta_i = 8 (d + 8) u (||x_i||^2 + max_j ||y_j||^2)`` of the exact one
   (Higham's bound for dot products, plus the rounding of the inputs).  A reference point
   outside the candidate set has approximate distance at least the largest kept one,
   ``a_i``, hence exact distance ``>= a_i - delta_i``.  If ``a_i - delta_i`` is strictly
   larger than the exact ``k``-th candidate distance, the result is provably the exact
   lexicographic ``k`` nearest neighbours.  Rows that fail the test (heavy ties, e.g.
   many duplicated points) are recomputed by an exact scan in float64.

The result is therefore exact (recall 1.0) with ties broken by index, while almost all the
work is a float32 matrix product.  For low-dimensional dense data a kd-tree
(:class:`scipy.spatial.cKDTree`, compiled, parallel over queries) produces the candidate
lists instead, and the same refinement and certificate apply, so ``10^6`` points in 2-D cost
``O(n log n)`` rather than ``O(n^2)``.
"""

from __future__ import annotations

import contextlib

import numpy as np
import scipy.sparse as sp
from numba import njit, prange

from fastgssl._threads import numba_threads  # noqa: F401 (used here and re-exported)

__all__ = ["knn_search", "reuse_neighbors"]

# Dense data with at most this many features uses the kd-tree candidate generator.
# Measured (n = 20,000, k = 10, shared 2-core machine): d = 3 tree 0.07 s / blocked 0.52 s,
# d = 5 0.15 / 0.42 s, d = 8 0.96 / 0.75 s.  The tree's advantage grows with n (n log n
# against n^2), so 5 is on the safe side of the crossing.
KDTREE_MAX_DIM = 5
_QUERY_BLOCK = 512
_REF_BLOCK = 2048  # measured: 512 x 2048 float32 blocks (4 MB) beat 512 x 8192
_U32 = float(np.finfo(np.float32).eps) / 2
_U64 = float(np.finfo(np.float64).eps) / 2


# ----------------------------------------------------------------------------------------
# Numba kernels (module level, cached; compiled once per process)
# ----------------------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def _sift_down(heap_d, heap_i, pos, size):
    """Restore the max-heap property of ``heap_d[:size]`` below ``pos``."""
    while True:
        left = 2 * pos + 1
        if left >= size:
            return
        child = left
        right = left + 1
        if right < size and heap_d[right] > heap_d[left]:
            child = right
        if heap_d[child] > heap_d[pos]:
            td = heap_d[pos]
            heap_d[pos] = heap_d[child]
            heap_d[child] = td
            ti = heap_i[pos]
            heap_i[pos] = heap_i[child]
            heap_i[child] = ti
            pos = child
        else:
            return


@njit(cache=True, nogil=True)
def _heap_update_block(gram, q_norms, r_norms, q_offset, r_offset, exclude_self,
                       heap_d, heap_i):
    """Merge one block of approximate squared distances into the per-query max-heaps.

    ``gram[a, b]`` is the inner product of query ``q_offset + a`` with reference
    ``r_offset + b``; ``heap_d``/``heap_i`` are the heaps of this query block only.
    Serial and GIL-free: the driver runs one such kernel per worker thread on disjoint
    query blocks (see ``_candidates_blocked``).
    """
    nq, nr = gram.shape
    size = heap_d.shape[1]
    for a in range(nq):
        hd = heap_d[a]
        hi = heap_i[a]
        # compare r_norms[b] - 2 g against worst - q_norms[a]: one subtraction per entry
        threshold = hd[0] - q_norms[a]
        self_col = q_offset + a - r_offset
        for b in range(nr):
            partial = r_norms[b] - 2.0 * gram[a, b]
            if partial < threshold:
                if exclude_self and b == self_col:
                    continue
                hd[0] = partial + q_norms[a]
                hi[0] = r_offset + b
                _sift_down(hd, hi, 0, size)
                threshold = hd[0] - q_norms[a]


@njit(cache=True, nogil=True)
def _dense_sqdist(x, y):
    s = 0.0
    for t in range(x.shape[0]):
        diff = x[t] - y[t]
        s += diff * diff
    return s


@njit(cache=True, nogil=True)
def _sparse_sqdist(ind_x, val_x, ind_y, val_y):
    """Exact squared distance of two sparse rows with sorted indices (merge, index order)."""
    s = 0.0
    p = 0
    q = 0
    nx = ind_x.shape[0]
    ny = ind_y.shape[0]
    while p < nx or q < ny:
        if q >= ny or (p < nx and ind_x[p] < ind_y[q]):
            diff = val_x[p]
            p += 1
        elif p >= nx or ind_y[q] < ind_x[p]:
            diff = -val_y[q]
            q += 1
        else:
            diff = val_x[p] - val_y[q]
            p += 1
            q += 1
        s += diff * diff
    return s


@njit(cache=True, parallel=True)
def _pair_sqdist_dense(X, rows, cols, out):
    for t in prange(rows.shape[0]):
        out[t] = _dense_sqdist(X[rows[t]], X[cols[t]])


@njit(cache=True, parallel=True)
def _pair_sqdist_sparse(ptr, ind, val, rows, cols, out):
    for t in prange(rows.shape[0]):
        a = rows[t]
        b = cols[t]
        out[t] = _sparse_sqdist(ind[ptr[a]:ptr[a + 1]], val[ptr[a]:ptr[a + 1]],
                                ind[ptr[b]:ptr[b + 1]], val[ptr[b]:ptr[b + 1]])


def pair_sqdist(X, rows, cols):
    """Exact float64 squared distances ``||x_rows[t] - x_cols[t]||^2`` of index pairs.

    One parallel pass, no (pairs x features) temporary; CSR input is merged row by row
    (canonical form: sorted, duplicates summed), so the sums are the same as for the dense
    rows.  Indices are bounds-checked here (the kernels do not check).
    """
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    cols = np.ascontiguousarray(cols, dtype=np.int64)
    n = X.shape[0]
    for name, idx in (("rows", rows), ("cols", cols)):
        if idx.size and (idx.min() < 0 or idx.max() >= n):
            raise IndexError(f"pair_sqdist: {name} holds indices outside [0, {n}).")
    out = np.empty(rows.shape[0])
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64)
        if not X.has_canonical_format:  # the merge needs sorted, duplicate-free rows
            X = X.copy()
            X.sum_duplicates()
        _pair_sqdist_sparse(X.indptr.astype(np.int64), X.indices.astype(np.int64), X.data,
                            rows, cols, out)
    else:
        _pair_sqdist_dense(np.ascontiguousarray(X, dtype=np.float64), rows, cols, out)
    return out


@njit(cache=True, nogil=True)
def _insert_sorted(best_d, best_i, count, k, dist, idx):
    """Insert (dist, idx) into the ascending lexicographic list ``best[:count]`` (cap k)."""
    if count == k:
        last = k - 1
        if dist > best_d[last] or (dist == best_d[last] and idx > best_i[last]):
            return count
        pos = last
    else:
        pos = count
        count += 1
    while pos > 0 and (best_d[pos - 1] > dist or
                       (best_d[pos - 1] == dist and best_i[pos - 1] > idx)):
        best_d[pos] = best_d[pos - 1]
        best_i[pos] = best_i[pos - 1]
        pos -= 1
    best_d[pos] = dist
    best_i[pos] = idx
    return count


@njit(cache=True, parallel=True)
def _refine_dense(Xq, Xr, cand_i, cand_worst, delta, q_offset, exclude_self, complete,
                  k, scan, out_i, out_d, failed):
    """Exact distances of the candidates, lexicographic sort, certificate, fallback scan.

    Rows whose certificate fails are marked in ``failed``; with ``scan`` they are
    recomputed here by an exact scan of all reference points.  Returns their number.
    """
    nq = Xq.shape[0]
    nr = Xr.shape[0]
    kc = cand_i.shape[1]
    n_fallback = 0
    for a in prange(nq):
        # initialised: a row with fewer than k valid candidates must never expose garbage
        best_d = np.full(kc, np.inf)
        best_i = np.full(kc, -1, dtype=np.int64)
        count = 0
        for c in range(kc):
            j = cand_i[a, c]
            if j < 0 or j >= nr:
                continue
            count = _insert_sorted(best_d, best_i, count, kc, _dense_sqdist(Xq[a], Xr[j]), j)
        certified = complete or (count >= k and cand_worst[a] - delta[a] > best_d[k - 1])
        if certified or not scan:
            for c in range(k):
                out_i[a, c] = best_i[c]
                out_d[a, c] = best_d[c]
        if not certified:
            failed[a] = True
            n_fallback += 1
        if not certified and scan:
            count = 0
            self_idx = q_offset + a
            for j in range(nr):
                if exclude_self and j == self_idx:
                    continue
                count = _insert_sorted(best_d, best_i, count, k, _dense_sqdist(Xq[a], Xr[j]), j)
            for c in range(k):
                out_i[a, c] = best_i[c]
                out_d[a, c] = best_d[c]
    return n_fallback


# Below this many candidate coordinates (queries x candidates x features) the refinement is
# numpy's (:func:`_refine_dense_numpy`, the same numbers): milliseconds at this size, and a
# small job's first run does not compile the parallel kernel (about 2 s on the 2-core
# project machine).
_NUMPY_REFINE = 1 << 23


def _refine_dense_numpy(Xq, Xr, cand_i, cand_worst, delta, q_offset, exclude_self,
                        complete, k, scan, out_i, out_d, failed):
    """:func:`_refine_dense` in numpy, with the same results: the squared distances are
    summed feature by feature in the same order (the same float64 sums) and sorted by
    (distance, index) as its insertion sort does."""
    nq, kc = cand_i.shape
    nr = Xr.shape[0]
    valid = (cand_i >= 0) & (cand_i < nr)
    ci = np.where(valid, cand_i, 0)
    dist = np.zeros((nq, kc))
    for t in range(Xq.shape[1]):
        diff = Xq[:, t, None] - Xr[:, t][ci]
        diff *= diff
        dist += diff
    dist[~valid] = np.inf
    ci[~valid] = -1
    order = np.lexsort((ci, dist), axis=1)
    best_d = np.take_along_axis(dist, order, axis=1)
    best_i = np.take_along_axis(ci, order, axis=1)
    count = valid.sum(axis=1)
    certified = np.full(nq, bool(complete))
    if not complete:
        certified = (count >= k) & (cand_worst - delta > best_d[:, min(k, kc) - 1])
    rows = np.flatnonzero(certified) if scan else np.arange(nq)
    out_i[rows] = best_i[rows, :k]
    out_d[rows] = best_d[rows, :k]
    bad = np.flatnonzero(~certified)
    failed[bad] = True
    if scan:
        refs = np.arange(nr)
        for a in bad:  # an exact scan of all reference points
            d = np.zeros(nr)
            for t in range(Xq.shape[1]):
                diff = Xq[a, t] - Xr[:, t]
                diff *= diff
                d += diff
            keep = refs != q_offset + a if exclude_self else np.ones(nr, dtype=bool)
            o = np.lexsort((refs[keep], d[keep]))[:k]
            m = o.shape[0]
            out_i[a, :m] = refs[keep][o]
            out_d[a, :m] = d[keep][o]
    return int(bad.size)


def _refine_dense_auto(Xq, Xr, cand_i, *args):
    """:func:`_refine_dense_numpy` for small problems, else the parallel kernel."""
    small = Xq.shape[0] * cand_i.shape[1] * Xq.shape[1] <= _NUMPY_REFINE
    return (_refine_dense_numpy if small else _refine_dense)(Xq, Xr, cand_i, *args)


@njit(cache=True, parallel=True)
def _refine_sparse(q_ptr, q_ind, q_val, r_ptr, r_ind, r_val, cand_i, cand_worst, delta,
                   q_offset, exclude_self, complete, k, out_i, out_d):
    """Sparse (CSR, sorted indices) twin of :func:`_refine_dense`."""
    nq = q_ptr.shape[0] - 1
    nr = r_ptr.shape[0] - 1
    kc = cand_i.shape[1]
    n_fallback = 0
    for a in prange(nq):
        best_d = np.full(max(kc, k), np.inf)
        best_i = np.full(max(kc, k), -1, dtype=np.int64)
        xi = q_ind[q_ptr[a]:q_ptr[a + 1]]
        xv = q_val[q_ptr[a]:q_ptr[a + 1]]
        count = 0
        for c in range(kc):
            j = cand_i[a, c]
            if j < 0 or j >= nr:
                continue
            dist = _sparse_sqdist(xi, xv, r_ind[r_ptr[j]:r_ptr[j + 1]],
                                  r_val[r_ptr[j]:r_ptr[j + 1]])
            count = _insert_sorted(best_d, best_i, count, kc, dist, j)
        certified = complete or (count >= k and cand_worst[a] - delta[a] > best_d[k - 1])
        if not certified:
            n_fallback += 1
            count = 0
            self_idx = q_offset + a
            for j in range(nr):
                if exclude_self and j == self_idx:
                    continue
                dist = _sparse_sqdist(xi, xv, r_ind[r_ptr[j]:r_ptr[j + 1]],
                                      r_val[r_ptr[j]:r_ptr[j + 1]])
                count = _insert_sorted(best_d, best_i, count, k, dist, j)
        for c in range(k):
            out_i[a, c] = best_i[c]
            out_d[a, c] = best_d[c]
    return n_fallback


# ----------------------------------------------------------------------------------------
# Python drivers
# ----------------------------------------------------------------------------------------
def _candidates_blocked(Xq, Xr, kc, exclude_self, n_threads, sq_spread=None):
    """Candidate heaps from blocked products. Returns (cand_i, cand_worst, delta).

    ``n_threads`` Python worker threads each own whole query blocks: a worker computes the
    product of its block with a block of reference points (single-threaded BLAS, the GIL
    released) and merges it into its own heaps with a GIL-free Numba kernel.  Owning
    blocks needs no locks, and keeping BLAS single-threaded avoids its spinning threads
    competing with the selection kernel (measured: 2-thread BLAS + 2-thread Numba phases
    were 2x slower than this on a loaded 2-core machine).

    Both operands are centred on the reference mean first (:mod:`._geometry`): the
    product's cancellation error scales with the squared norms, which centring makes as
    small as the data's spread allows, whatever its offset.  Dense data are also scaled by
    a power of two (exact) so that the float32 copies neither overflow nor underflow;
    ``sq_spread`` (the bound of :func:`._geometry.squared_spread`) sets that scale, and the
    returned ``cand_worst`` / ``delta`` are in the original units.
    """
    from concurrent.futures import ThreadPoolExecutor

    from fastgssl._threads import small_blas

    from ._geometry import centred_pair, squared_spread

    nq = Xq.shape[0]
    nr = Xr.shape[0]
    d = Xq.shape[1]
    cand_i = np.full((nq, kc), -1, dtype=np.int64)
    cand_d = np.full((nq, kc), np.inf)
    same = Xq is Xr
    Cq, Cr = centred_pair(Xq, None if same else Xr)
    if sp.issparse(Xq):
        Fq = Cq
        q_norms = np.asarray(Cq.multiply(Cq).sum(axis=1)).ravel()
        r_norms = q_norms if same else np.asarray(Cr.multiply(Cr).sum(axis=1)).ravel()
        u = _U64
        FrT = Cr.T.tocsc()
        unit2 = 1.0
    else:
        if sq_spread is None:
            sq_spread = squared_spread(Xq, None if same else Xr)
        # centred norms are at most sqrt(sq_spread): scale them to <= 1 by a power of two
        unit = 2.0 ** np.ceil(0.5 * np.log2(sq_spread)) if sq_spread > 0 else 1.0
        unit2 = unit * unit
        Fq = (Cq * (1.0 / unit)).astype(np.float32)
        Fr = Fq if same else (Cr * (1.0 / unit)).astype(np.float32)
        q_norms = np.einsum("ij,ij->i", Fq, Fq, dtype=np.float64)
        r_norms = q_norms if Fr is Fq else np.einsum("ij,ij->i", Fr, Fr, dtype=np.float64)
        u = _U32
        FrT = np.ascontiguousarray(Fr.T)

    def work(q0):
        q1 = min(nq, q0 + _QUERY_BLOCK)
        Bq = Fq[q0:q1]
        hd = cand_d[q0:q1]
        hi = cand_i[q0:q1]
        for r0 in range(0, nr, _REF_BLOCK):
            r1 = min(nr, r0 + _REF_BLOCK)
            gram = Bq @ FrT[:, r0:r1]
            if sp.issparse(gram):
                gram = gram.toarray()
            _heap_update_block(gram, q_norms[q0:q1], r_norms[r0:r1], q0, r0,
                               exclude_self, hd, hi)

    starts = range(0, nq, _QUERY_BLOCK)
    # one BLAS thread per block product (the blocks run in parallel themselves); small_blas
    # keeps one threadpoolctl controller (a new limit scans the loaded libraries: 6 ms)
    with small_blas(0.0):
        if min(n_threads, len(starts)) <= 1:  # one block: no pool (its threads cost more)
            for q0 in starts:
                work(q0)
        else:
            with ThreadPoolExecutor(max_workers=n_threads) as pool:
                list(pool.map(work, starts))
    cand_worst = cand_d[:, 0] * unit2
    delta = 8.0 * (d + 8) * u * (q_norms + r_norms.max()) * unit2
    return cand_i, cand_worst, delta


def _candidates_kdtree(Xq, Xr, kc, exclude_self, n_jobs, tree=None, query_ids=None):
    """Candidate lists from a kd-tree: the kc nearest (self removed) and the kc-th distance.

    ``query_ids`` are the indices of the query rows among the reference points (self
    search on a subset of rows); default ``arange``.
    """
    from scipy.spatial import cKDTree

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
    return idx, worst, delta, tree


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
            cand_i, worst, delta, _ = _candidates_kdtree(Xs, R, kc, exclude_self, threads,
                                                         tree, part)
            sub_i = np.empty((part.size, k), dtype=np.int64)
            sub_d = np.empty((part.size, k))
            sub_failed = np.zeros(part.size, dtype=np.bool_)
            _refine_dense(Xs, R, cand_i, worst, delta, 0, exclude_self, kc == n_avail, k,
                          False, sub_i, sub_d, sub_failed)
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


# the search of reuse_neighbors(): {"X": array, "k": int, "result": (indices, distances)}
_REUSE = None


@contextlib.contextmanager
def reuse_neighbors(X, n_neighbors):
    """Serve every self-search of ``X`` with ``k <= n_neighbors`` from one search.

    Inside the block, ``knn_search(X, k)`` (``X`` the same object, no ``X_ref``,
    ``algorithm="auto"``) runs one search with ``n_neighbors`` on first use and returns its
    first ``k`` columns. The lists are sorted by ``(squared distance, index)``, so these are
    exactly the ``k``-nearest lists of a direct search: kNN graphs of one data set that
    differ only in ``k`` (a grid over ``n_neighbors``) share one ``O(n^2 d)`` search.
    Not thread-safe: for one process evaluating a grid (what
    :class:`fastgssl.cv.ApproxGridSearchCV` does around its in-process evaluation).

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_samples, n_features)
    n_neighbors : int
        The largest ``k`` served (capped at ``n_samples - 1``).

    Examples
    --------
    >>> import numpy as np
    >>> from fastgssl.graphs import knn_search, reuse_neighbors
    >>> X = np.random.default_rng(0).normal(size=(50, 3))
    >>> with reuse_neighbors(X, 10):
    ...     idx5, _ = knn_search(X, 5)
    >>> bool((idx5 == knn_search(X, 5)[0]).all())
    True
    """
    global _REUSE
    previous = _REUSE
    k_max = min(int(n_neighbors), X.shape[0] - 1)
    _REUSE = {"X": X, "k": k_max} if k_max >= 1 else None
    try:
        yield
    finally:
        _REUSE = previous


def knn_search(X, n_neighbors, X_ref=None, *, algorithm="auto", n_jobs=None,
               return_stats=False):
    """Exact k nearest neighbours (Euclidean) with ties broken by the smaller index.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_queries, n_features)
        Query points.
    n_neighbors : int
        Number of neighbours ``k`` per query.
    X_ref : array-like or sparse matrix of shape (n_ref, n_features), default=None
        Reference points.  ``None`` searches ``X`` against itself and excludes each point
        from its own list (its exact duplicates, if any, are ordinary neighbours).
    algorithm : {"auto", "brute", "kd_tree"}, default="auto"
        ``"brute"``: blocked products with a certified refinement; ``"kd_tree"``: candidate
        lists from :class:`scipy.spatial.cKDTree` (dense data only); ``"auto"``: the tree
        for dense data with at most ``KDTREE_MAX_DIM`` = 5 features, brute otherwise.
    n_jobs : int or None, default=None
        Threads for the Numba kernels (and the kd-tree queries); ``None`` or ``-1``: all.
    return_stats : bool, default=False
        Also return a dict with the algorithm used and the number of rows that needed the
        exact fallback scan.

    Returns
    -------
    indices : ndarray of shape (n_queries, n_neighbors), int64
        Neighbour indices (rows of ``X_ref``, or of ``X`` when ``X_ref`` is None), sorted by
        ``(squared distance, index)``.
    sq_distances : ndarray of shape (n_queries, n_neighbors), float64
        Exact squared Euclidean distances, computed in float64 as
        ``sum_l (x_l - y_l)^2``.

    Notes
    -----
    See the module docstring of :mod:`fastgssl.graphs._knn` for the filter / refine /
    certify algorithm.  Memory is ``O(n_queries k + block)``; no ``n x n`` matrix is formed.

    Examples
    --------
    >>> import numpy as np
    >>> from fastgssl.graphs import knn_search
    >>> X = np.array([[0.0], [1.0], [3.0], [1.0]])
    >>> idx, d2 = knn_search(X, 2)
    >>> idx.tolist()
    [[1, 3], [3, 0], [1, 3], [1, 0]]
    >>> d2[0].tolist()
    [1.0, 1.0]
    """
    global _REUSE
    from fastgssl._validation import check_n_neighbors, check_X

    from ._geometry import check_distance_scale

    shared = _REUSE
    if (shared is not None and X_ref is None and X is shared["X"] and algorithm == "auto"
            and not return_stats and isinstance(n_neighbors, (int, np.integer))
            and not isinstance(n_neighbors, bool) and 1 <= n_neighbors <= shared["k"]):
        if "result" not in shared:
            _REUSE = None  # the one search itself
            try:
                shared["result"] = knn_search(X, shared["k"], n_jobs=n_jobs)
            finally:
                _REUSE = shared
        idx, sq = shared["result"]
        return idx[:, :n_neighbors].copy(), sq[:, :n_neighbors].copy()
    X = check_X(X, "X")
    exclude_self = X_ref is None
    if exclude_self:
        R = X
    else:
        R = check_X(X_ref, "X_ref")
        if R.shape[1] != X.shape[1]:
            raise ValueError(
                f"X has {X.shape[1]} features but X_ref has {R.shape[1]}; they must match."
            )
        if sp.issparse(X) != sp.issparse(R):
            # mixed dense / sparse input: search in the sparse representation
            X, R = sp.csr_matrix(X), sp.csr_matrix(R)
    n_avail = R.shape[0] - (1 if exclude_self else 0)
    k = check_n_neighbors(n_neighbors, n_avail + 1, name="n_neighbors")
    if not isinstance(algorithm, str) or algorithm not in ("auto", "brute", "kd_tree"):
        raise ValueError(
            f"algorithm must be 'auto', 'brute' or 'kd_tree', got {algorithm!r}."
        )
    sparse = sp.issparse(X)
    if algorithm == "kd_tree" and sparse:
        raise ValueError("algorithm='kd_tree' needs dense X; use algorithm='brute' for sparse.")
    if algorithm == "auto":
        algorithm = "kd_tree" if (not sparse and X.shape[1] <= KDTREE_MAX_DIM) else "brute"
    # candidates beyond k: the float32 filter needs a margin; kd-tree distances are
    # float64-accurate, so a small margin suffices there (each extra one costs tree work)
    extra = 3 if algorithm == "kd_tree" else max(8, k)
    kc = min(n_avail, k + extra)
    complete = kc == n_avail
    # refuse data whose squared distances overflow (or underflow) float64: the exact
    # refinement would compare inf with inf and the filter would keep no candidate
    sq_spread = check_distance_scale(X, None if exclude_self else R, name="X",
                                     y_name="X_ref")
    if sparse:
        X.sort_indices()
        R.sort_indices()
    out_i = np.full((X.shape[0], k), -1, dtype=np.int64)
    out_d = np.full((X.shape[0], k), np.inf)
    with numba_threads(n_jobs) as threads:
        if algorithm == "kd_tree":
            cand_i, worst, delta, tree = _candidates_kdtree(X, R, kc, exclude_self, threads)
        else:
            cand_i, worst, delta = _candidates_blocked(X, R, kc, exclude_self, threads,
                                                       sq_spread)
        if sparse:
            n_fb = _refine_sparse(X.indptr, X.indices, X.data, R.indptr, R.indices, R.data,
                                  cand_i, worst, delta, 0, exclude_self, complete, k,
                                  out_i, out_d)
        else:
            failed = np.zeros(X.shape[0], dtype=np.bool_)
            scan = algorithm != "kd_tree"
            n_fb = _refine_dense_auto(X, R, cand_i, worst, delta, 0, exclude_self, complete,
                                      k, scan, out_i, out_d, failed)
            if not scan and n_fb:
                _tree_retry(tree, X, R, failed, kc, k, exclude_self, complete, threads,
                            out_i, out_d)
    nr = R.shape[0]
    if out_i.size and (out_i.min() < 0 or out_i.max() >= nr or not np.isfinite(out_d).all()):
        # cannot happen for checked input; never hand out indices nobody has checked
        raise RuntimeError(
            "knn_search produced an invalid neighbour list (index outside [0, "
            f"{nr}) or a non-finite distance); please report this with the data's shape "
            "and scale."
        )
    if return_stats:
        return out_i, out_d, {"algorithm": algorithm, "n_fallback_rows": int(n_fb),
                              "n_candidates": kc, "n_threads": threads}
    return out_i, out_d
