"""The Numba kernels of the exact kNN search (:mod:`fastgssl.graphs._knn`): heap updates and
the fused top-k selection of a block of partial distances, exact pair distances, and the
float64 refinement that certifies the candidates. Module level and disk-cached, compiled
once per process."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit, prange


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


# Width of the vectorized pre-test of the selection kernel: a chunk of this many entries of
# a distance row is scanned by the scalar heap update only if one of them beats the row's
# current k_c-th candidate (an integer count of comparisons, which LLVM vectorizes without
# fast-math flags; a float minimum would need them).
_CHUNK = 32


@njit(cache=True, nogil=True, inline="never")
def _count_below(values, threshold):
    """Number of ``values`` below ``threshold`` (a loop LLVM vectorizes: kept out of line,
    on a slice, as measured; inlined into the selection loop it stays scalar)."""
    below = 0
    for b in range(values.shape[0]):
        below += values[b] < threshold
    return below


@njit(cache=True, nogil=True)
def _push_chunk(row, b0, b1, threshold, hd, hi, r_offset, skip, size):
    """Push the entries of ``row[b0:b1]`` below ``threshold`` (column ``skip`` aside; -1:
    none) into the max-heap ``hd`` / ``hi`` of reference ids offset by ``r_offset``, as
    each lowers the heap's root; returns the new threshold (the root)."""
    for b in range(b0, b1):
        v = row[b]
        if v < threshold and b != skip:
            hd[0] = v
            hi[0] = r_offset + b
            _sift_down(hd, hi, 0, size)
            threshold = hd[0]
    return threshold


@njit(cache=True, nogil=True)
def _push_row(row, threshold, hd, hi, r_offset, skip):
    """Push the entries of ``row`` below the running ``threshold`` (column ``skip`` aside;
    -1: none) into the max-heap ``hd`` / ``hi`` (reference ids offset by ``r_offset``),
    ``_CHUNK`` entries at a time: a chunk is walked (:func:`_push_chunk`) only when the
    vectorized :func:`_count_below` finds an entry below the threshold.  Returns the final
    threshold (the heap's root, or the smaller bound given)."""
    nr = row.shape[0]
    size = hd.shape[0]
    n_full = nr - nr % _CHUNK
    b0 = nr - nr
    while b0 < nr:
        b1 = b0 + _CHUNK if b0 < n_full else nr
        if _count_below(row[b0:b1], threshold):
            threshold = _push_chunk(row, b0, b1, threshold, hd, hi, r_offset, skip, size)
        b0 = b1
    return threshold


@njit(cache=True, nogil=True)
def _select_block(part, q_offset, r_offset, exclude_self, heap_d, heap_i):
    """Merge one block of approximate squared distances into the per-query max-heaps.

    ``part[a, b]`` approximates the squared distance of query ``q_offset + a`` and
    reference ``r_offset + b`` (float32, straight out of one augmented GEMM, see
    ``_candidates_gemm``).  ``heap_d`` / ``heap_i`` hold the ``k_c`` smallest entries seen
    so far for the rows of this query block, as max-heaps (``heap_d[a, 0]`` the largest
    kept).

    Almost every entry loses against the heap's root once the heap has filled (a row keeps
    ``O(k_c log(n / k_c))`` of its ``n`` entries in expectation), so each chunk of
    ``_CHUNK`` entries is first tested as a whole by a branch-free count of the entries
    below the root (vectorized), and only a chunk that holds one is walked entry by entry.
    Serial and GIL-free: the driver runs one call per worker thread on disjoint heaps.
    """
    nq, nr = part.shape
    for a in range(nq):
        # (-1 not as a constant: a constant argument compiles a callee once per value)
        skip = q_offset + a - r_offset if exclude_self else nr - nr - 1
        _push_row(part[a], heap_d[a, 0], heap_d[a], heap_i[a], r_offset, skip)


@njit(cache=True, nogil=True, inline="never")
def _count_below_each(values, thresholds):
    """Number of ``t`` with ``values[t] < thresholds[t]`` (vectorized, as
    :func:`_count_below`)."""
    below = 0
    for b in range(values.shape[0]):
        below += values[b] < thresholds[b]
    return below


@njit(cache=True, nogil=True)
def _select_block_sym(block, q_offset, r_offset, row_d, row_i, col_d, col_i):
    """Merge an off-diagonal block of a symmetric distance matrix along rows and columns.

    ``block[a, b]`` approximates the squared distance of points ``q_offset + a`` and
    ``r_offset + b`` (disjoint ranges); it is a candidate for the heap of row ``a``
    (``row_d`` / ``row_i``, as :func:`_select_block`) and for the heap of column ``b``
    (``col_d`` / ``col_i``).  One pass over the rows: per chunk, a vectorized count
    against the row's threshold and an element-wise count against the columns' thresholds
    (the roots of their heaps) decide whether the chunk is walked.
    """
    nq, nr = block.shape
    size = row_d.shape[1]
    n_full = nr - nr % _CHUNK
    col_thr = col_d[:, 0].copy()
    # (-1 and 0 not as constants: a constant argument compiles a callee once per value)
    no_skip = nr - nr - 1
    for a in range(nq):
        hd = row_d[a]
        hi = row_i[a]
        row = block[a]
        threshold = hd[0]
        b0 = nr - nr
        while b0 < nr:
            b1 = b0 + _CHUNK if b0 < n_full else nr
            if _count_below(row[b0:b1], threshold):
                threshold = _push_chunk(row, b0, b1, threshold, hd, hi, r_offset, no_skip,
                                        size)
            if _count_below_each(row[b0:b1], col_thr[b0:b1]):
                for b in range(b0, b1):
                    v = row[b]
                    if v < col_thr[b]:
                        cd = col_d[b]
                        ci = col_i[b]
                        cd[0] = v
                        ci[0] = q_offset + a
                        _sift_down(cd, ci, 0, size)
                        col_thr[b] = cd[0]
            b0 = b1


@njit(cache=True, nogil=True)
def _dense_sqdist(x, y):
    """``sum_l (x_l - y_l)^2`` accumulated in float64 (float32 rows are widened first, so
    the result is the float64 distance of the float32 values)."""
    s = 0.0
    for t in range(x.shape[0]):
        diff = np.float64(x[t]) - np.float64(y[t])
        s += diff * diff
    return s


@njit(cache=True, nogil=True)
def _dense_sqdists(x, Y, rows, out):
    """``out[c] = _dense_sqdist(x, Y[rows[c]])`` for every ``rows[c]`` in ``[0, len(Y))``
    (``inf`` for the others), bit for bit: the rows are taken four at a time, each with its
    own sum in the same order, so four independent additions are in flight instead of one
    chain (1.5-1.8x on 784 features)."""
    nr = Y.shape[0]
    d = x.shape[0]
    m = rows.shape[0]
    take = np.empty(4, dtype=np.int64)
    c = 0
    while c < m:
        # the next four valid rows (fewer at the end)
        got = 0
        while c < m and got < 4:
            j = rows[c]
            if 0 <= j < nr:
                take[got] = c
                got += 1
            else:
                out[c] = np.inf
            c += 1
        if got == 4:
            y0 = Y[rows[take[0]]]
            y1 = Y[rows[take[1]]]
            y2 = Y[rows[take[2]]]
            y3 = Y[rows[take[3]]]
            s0 = 0.0
            s1 = 0.0
            s2 = 0.0
            s3 = 0.0
            for t in range(d):
                xt = np.float64(x[t])
                d0 = xt - np.float64(y0[t])
                d1 = xt - np.float64(y1[t])
                d2 = xt - np.float64(y2[t])
                d3 = xt - np.float64(y3[t])
                s0 += d0 * d0
                s1 += d1 * d1
                s2 += d2 * d2
                s3 += d3 * d3
            out[take[0]] = s0
            out[take[1]] = s1
            out[take[2]] = s2
            out[take[3]] = s3
        else:
            for g in range(got):
                out[take[g]] = _dense_sqdist(x, Y[rows[take[g]]])


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
        # float32 stays float32 (the kernel widens each entry): no float64 copy of X
        dtype = np.float32 if getattr(X, "dtype", None) == np.float32 else np.float64
        _pair_sqdist_dense(np.ascontiguousarray(X, dtype=dtype), rows, cols, out)
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


def _refine_dense_numpy(Xq, Xr, cand_i, cand_approx, unit2, cand_worst, delta, q_offset,
                        exclude_self, complete, k, scan, out_i, out_d, failed):
    """:func:`_refine_dense` in numpy, with the same results: the squared distances are
    summed feature by feature in the same order (the same float64 sums) and sorted by
    (distance, index) as its insertion sort does.  Every candidate is refined (small
    problems), so ``cand_approx`` and ``unit2`` are not read."""
    nq, kc = cand_i.shape
    nr = Xr.shape[0]
    valid = (cand_i >= 0) & (cand_i < nr)
    ci = np.where(valid, cand_i, 0)
    dist = np.zeros((nq, kc))
    for t in range(Xq.shape[1]):  # float64 entries, as the kernel widens float32 input
        diff = Xq[:, t, None].astype(np.float64) - Xr[:, t][ci].astype(np.float64)
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
                diff = np.float64(Xq[a, t]) - Xr[:, t].astype(np.float64)
                diff *= diff
                d += diff
            keep = refs != q_offset + a if exclude_self else np.ones(nr, dtype=bool)
            o = np.lexsort((refs[keep], d[keep]))[:k]
            m = o.shape[0]
            out_i[a, :m] = refs[keep][o]
            out_d[a, :m] = d[keep][o]
    return int(bad.size)


@njit(cache=True, nogil=True)
def _bounded_block(part, r_offset, bound, Xq, Xr, self_ids, best_d, best_i, counts):
    """Exact distances of the references whose approximate distance is within a bound.

    ``part[a, b]`` approximates the (scaled) squared distance of query row ``a`` and
    reference ``r_offset + b`` as in :func:`_select_block`; every reference with
    ``part[a, b] <= bound[a]`` (except ``self_ids[a]``) gets its exact distance
    (:func:`_dense_sqdist`, as the exact scan of :func:`_refine_dense`) inserted into the
    row's lexicographic list ``best_d[a], best_i[a]`` of ``counts[a]`` entries (capacity
    ``best_d.shape[1]``). Serial and GIL-free: the driver runs one call per worker thread on
    disjoint rows.
    """
    nq, nr = part.shape
    k = best_d.shape[1]
    for a in range(nq):
        limit = bound[a]
        for b in range(nr):
            if part[a, b] <= limit and r_offset + b != self_ids[a]:
                j = r_offset + b
                counts[a] = _insert_sorted(best_d[a], best_i[a], counts[a], k,
                                           _dense_sqdist(Xq[a], Xr[j]), j)


@njit(cache=True, nogil=True)
def _near_candidates(cand_row, approx_row, unit2, delta_a, k, nr, low, low_i, near):
    """The candidates that can be among the ``k`` nearest: ``near[c] = cand_row[c]``, or
    ``-1`` for an invalid one (outside ``[0, nr)``) and for one whose approximate squared
    distance ``approx_row[c] * unit2`` exceeds the ``k``-th smallest by more than
    ``2 delta_a``.  With every approximate distance within ``delta_a`` of the exact one,
    such a candidate is exactly farther than the ``k`` candidates of smallest approximate
    distance, so the exact ``k`` nearest of the candidates are among the rest (about ``k``
    rows read instead of ``k_c``).  ``low`` / ``low_i`` are scratch of length ``>= k``."""
    kc = cand_row.shape[0]
    n_low = 0
    for c in range(kc):
        if 0 <= cand_row[c] < nr:
            n_low = _insert_sorted(low, low_i, n_low, k, np.float64(approx_row[c]),
                                   np.int64(c))
    limit = low[k - 1] * unit2 + 2.0 * delta_a if n_low >= k else np.inf
    for c in range(kc):
        j = cand_row[c]
        near[c] = j if (0 <= j < nr and approx_row[c] * unit2 <= limit) else -1


@njit(cache=True, parallel=True)
def _refine_dense(Xq, Xr, cand_i, cand_approx, unit2, cand_worst, delta, q_offset,
                  exclude_self, complete, k, scan, out_i, out_d, failed):
    """Exact distances of the candidates, lexicographic sort, certificate, fallback scan.

    ``cand_approx[a, c] * unit2`` is the filter's approximate squared distance of candidate
    ``cand_i[a, c]``, within ``delta[a]`` of the exact one: only the candidates
    :func:`_near_candidates` keeps are refined, which changes no result (a pruned one is
    exactly farther than the ``k``-th).  Rows whose certificate fails are marked in
    ``failed``; with ``scan`` they are recomputed here by an exact scan of all reference
    points.  Returns their number.
    """
    nq = Xq.shape[0]
    nr = Xr.shape[0]
    kc = cand_i.shape[1]
    step = 256  # rows per task: one set of scratch rows each
    fallbacks = np.zeros((nq + step - 1) // step, dtype=np.int64)
    for t in prange(fallbacks.shape[0]):
        best_d = np.empty(max(kc, k))
        best_i = np.empty(max(kc, k), dtype=np.int64)
        dists = np.empty(kc)
        near = np.empty(kc, dtype=np.int64)
        for a in range(t * step, min(nq, (t + 1) * step)):
            # (best_d / best_i as the pruning's scratch: it reads only what it wrote)
            _near_candidates(cand_i[a], cand_approx[a], unit2, delta[a], k, nr, best_d,
                             best_i, near)
            # initialised: a row with fewer than k valid candidates must never expose garbage
            best_d[:] = np.inf
            best_i[:] = -1
            _dense_sqdists(Xq[a], Xr, near, dists)
            count = 0
            for c in range(kc):
                if near[c] >= 0:
                    count = _insert_sorted(best_d, best_i, count, kc, dists[c], near[c])
            certified = complete or (count >= k and cand_worst[a] - delta[a] > best_d[k - 1])
            if certified or not scan:
                for c in range(k):
                    out_i[a, c] = best_i[c]
                    out_d[a, c] = best_d[c]
            if not certified:
                failed[a] = True
                fallbacks[t] += 1
            if not certified and scan:
                count = 0
                self_idx = q_offset + a
                for j in range(nr):
                    if exclude_self and j == self_idx:
                        continue
                    count = _insert_sorted(best_d, best_i, count, k,
                                           _dense_sqdist(Xq[a], Xr[j]), j)
                for c in range(k):
                    out_i[a, c] = best_i[c]
                    out_d[a, c] = best_d[c]
    return int(fallbacks.sum())


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
