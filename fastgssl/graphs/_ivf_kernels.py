"""The Numba kernels of the inverted-file kNN graph (:mod:`fastgssl.graphs._ivf`).

The fused top-``k_c`` selection of one GEMM block whose rows are gathered queries (their
heaps scattered over the heap arrays), the row gather that feeds the GEMM, the inversion of
the per-point probe lists into per-list query lists, k-means centroid sums, the merge of
per-thread heaps and the exact float64 scan of the probed lists for rows whose certificate
failed.  Module level and disk-cached, compiled once per process; the selection reuses the
vectorized chunk test and heap push of the exact search (:mod:`._knn_kernels`).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ._knn_kernels import (
    _count_below,
    _dense_sqdist,
    _dense_sqdists,
    _insert_sorted,
    _near_candidates,
    _sift_down,
)


@njit(cache=True, nogil=True)
def _gather_rows(A, ids, out):
    """``out[a] = A[ids[a]]`` (the query rows of one GEMM block, made contiguous)."""
    for a in range(ids.shape[0]):
        src = A[ids[a]]
        dst = out[a]
        for t in range(src.shape[0]):
            dst[t] = src[t]


@njit(cache=True, nogil=True, inline="never")
def _compact_below(row, threshold, vals, idx):
    """The entries of ``row`` below ``threshold`` and their columns, in column order, into
    ``vals`` / ``idx`` (a branch-free pass: every entry is written, the count advances
    only past those below); returns their number."""
    c = 0
    for b in range(row.shape[0]):
        v = row[b]
        vals[c] = v
        idx[c] = b
        c += v < threshold
    return c


@njit(cache=True, nogil=True)
def _push_below(row, threshold, hd, hi, r_offset, r_ids, skip, vals, idx):
    """Push the entries of ``row`` below the running ``threshold`` (column ``skip`` aside;
    -1: none) into the max-heap ``hd`` / ``hi`` (column ``b`` is the point ``r_offset + b``,
    or ``r_ids[b]`` when ``r_ids`` is not empty), in column order.  The starting threshold
    is a bound shared by the threads (:func:`_select_gathered`) and stays one: the running
    threshold is the smaller of it and the heap's root, so a thread whose own heap of the
    point is not yet full (its root is ``inf``) pushes only entries below the bound, not the
    rest of the row.  The entries below the starting threshold are first compacted
    (:func:`_compact_below`; a row that passes the row test holds a few dozen of its
    hundreds), then walked.  Returns the final threshold."""
    size = hd.shape[0]
    bound = threshold
    for t in range(_compact_below(row, threshold, vals, idx)):
        v = vals[t]
        b = idx[t]
        if v < threshold and b != skip:
            hd[0] = v
            hi[0] = r_ids[b] if r_ids.shape[0] else r_offset + b
            _sift_down(hd, hi, 0, size)
            # the heap's root, or the shared bound while this thread's heap is not full
            # (its root is inf then: every later entry would be pushed)
            threshold = min(hd[0], bound)
    return threshold


@njit(cache=True, nogil=True)
def _select_gathered(part, q_ids, r_offset, heap_d, heap_i, roots):
    """Merge one block of approximate squared distances into the heaps of gathered queries.

    ``part[a, b]`` approximates the squared distance of point ``q_ids[a]`` and point
    ``r_offset + b`` (float32, straight out of one augmented GEMM; both in the list order of
    the search); the heap of query ``q`` is ``heap_d[q]`` / ``heap_i[q]`` (max-heaps of the
    ``k_c`` smallest entries seen by this thread).  ``roots[q]`` is shared by the threads:
    the smallest root any thread's heap of ``q`` has had.  An entry not below it cannot be
    among the ``k_c`` smallest of the union of the threads' heaps (one heap already holds
    ``k_c`` entries at most that large), so it is skipped; a row whose entries all lose
    (almost every row, once the heaps have filled) reads 4 bytes of a small array instead
    of its heap.  A lost update between threads only leaves a larger (still valid) bound.
    A point is never its own candidate.  A row with an entry below the bound (about half
    of them in a search at recall 0.9, a few dozen entries each) is compacted and walked
    (:func:`_push_below`; measured at 2x10^5 x 50: 78 heap pushes per point).  Serial and
    GIL-free.
    """
    nq, nr = part.shape
    vals = np.empty(nr, dtype=part.dtype)
    idx = np.empty(nr, dtype=np.int64)
    contiguous = np.empty(0, dtype=q_ids.dtype)
    for a in range(nq):
        q = q_ids[a]
        row = part[a]
        threshold = roots[q]
        skip = q - r_offset
        if skip >= nr:
            skip = nr - nr - 1  # (-1 not as a constant: one compilation of the callee)
        if not _count_below(row, threshold):  # lists are short: test the row first
            continue
        threshold = _push_below(row, threshold, heap_d[q], heap_i[q], r_offset, contiguous,
                                skip, vals, idx)
        if threshold < roots[q]:  # (another thread may have lowered it meanwhile)
            roots[q] = threshold


@njit(cache=True, nogil=True, inline="never")
def _count_at_most(values, value):
    """Number of entries ``<= value`` (a loop LLVM vectorizes, as ``_count_below``)."""
    count = 0
    for b in range(values.shape[0]):
        count += values[b] <= value
    return count


@njit(cache=True, nogil=True)
def _kth_value(vals, kth):
    """The ``kth`` smallest entry of ``vals`` (0-based), by bisection of the value range
    with vectorized counts (:func:`_count_at_most`): no data-dependent branch per entry
    (a quickselect of a few hundred entries mispredicts about every other comparison).
    Each step halves ``[lo, hi]`` with ``count(<= lo) <= kth < count(<= hi)``; it ends
    when a midpoint has exactly ``kth + 1`` entries at most equal to it (the answer is the
    largest of them) or when no float lies between ``lo`` and ``hi`` (the answer is
    ``hi``), about ``log2(len)`` steps for spread values."""
    lo = vals[0]
    hi = vals[0]
    for t in range(1, vals.shape[0]):
        v = vals[t]
        lo = min(lo, v)
        hi = max(hi, v)
    if _count_at_most(vals, lo) > kth:
        return lo
    while True:  # count(<= lo) <= kth < count(<= hi)
        mid = lo + (hi - lo) * np.float32(0.5)  # float32 rows: float32 steps
        if not lo < mid < hi:
            return hi
        c = _count_at_most(vals, mid)
        if c == kth + 1:
            best = lo
            for t in range(vals.shape[0]):
                v = vals[t]
                if v <= mid and v > best:
                    best = v
            return best
        if c > kth:
            hi = mid
        else:
            lo = mid


@njit(cache=True, nogil=True)
def _nearest_lists(part, probe, labels, names):
    """Per row of ``part`` (approximate squared distances to every centroid): the nearest
    centroid (``labels``, the first of equal ones) and the ``p = probe.shape[1]`` nearest
    (``probe``, unordered; equal distances by index), as columns of ``part`` or, when
    ``names`` is not empty, as ``names[column]``.

    Selection with few branches: a cut ``t`` from the first 64 entries of the row (the
    centroids are in random order: the sample's ``2 p / n_lists`` quantile, a little above
    the row's ``p``-th value in expectation), a branch-free compaction of the entries
    ``<= t`` (values and indices, in index order; all of them when fewer than ``p`` pass),
    and the ``p``-th value among those few by :func:`_kth_value`.  Measured at ``10^6``
    points' share of 2,000 centroids and 68 probes: 1.1 ns per entry against 3.7 with a
    strided sample and quickselects.
    """
    nq, m = part.shape
    p = probe.shape[1]
    vals = np.empty(m, dtype=part.dtype)
    idx = np.empty(m, dtype=np.int32)
    n_samp = min(m, 64)
    r = min(n_samp - 1, (2 * p * n_samp) // m + 1)
    for a in range(nq):
        row = part[a]
        if p == 1 or p >= m:
            best = 0
            low = row[0]
            for b in range(1, m):
                v = row[b]
                if v < low:
                    low = v
                    best = b
            for b in range(p):
                probe[a, b] = best if p == 1 else b
        else:
            best = _nearest_of_row(row, probe[a], vals, idx, n_samp, r)
        if names.shape[0]:
            best = names[best]
            for t in range(p):
                probe[a, t] = names[probe[a, t]]
        labels[a] = best


@njit(cache=True, nogil=True)
def _nearest_of_row(row, out, vals, idx, n_samp, r):
    """The selection of :func:`_nearest_lists` for one row with ``1 < p < m``: the ``p =
    out.shape[0]`` smallest columns into ``out``; returns the first smallest column."""
    m = row.shape[0]
    p = out.shape[0]
    cut = _kth_value(row[:n_samp], r)
    c = 0
    for b in range(m):  # branch-free compaction of the entries <= cut
        v = row[b]
        vals[c] = v
        idx[c] = b
        c += v <= cut
    if c < p:  # the cut was too low: every entry is a candidate
        for b in range(m):
            vals[b] = row[b]
            idx[b] = b
        c = m
    # the nearest centroid is a candidate (it is <= cut): the first of the smallest
    best = 0
    for t in range(1, c):
        if vals[t] < vals[best]:
            best = t
    kth = _kth_value(vals[:c], p - 1)
    got = 0
    for t in range(c):
        if vals[t] < kth:
            out[got] = idx[t]
            got += 1
    for t in range(c):
        if got >= p:
            break
        if vals[t] == kth:
            out[got] = idx[t]
            got += 1
    return idx[best]


# position ranges of the parallel inversion of the probe lists (a few per thread)
_INVERT_CHUNKS = 8


@njit(cache=True, nogil=True)
def _count_probes(probe, order, lo, hi, counts):
    """``counts[L]`` += the number of positions ``lo <= p < hi`` probing list ``L``."""
    for p in range(lo, hi):
        row = probe[order[p]]
        for r in range(row.shape[0]):
            counts[row[r]] += 1


@njit(cache=True, nogil=True)
def _probe_offsets(counts):
    """``(ptr, fill)`` of the counts per range and list: list ``L`` holds
    ``queries[ptr[L]:ptr[L + 1]]``, range ``c`` writes its part from ``fill[c, L]``."""
    n_chunks, n_lists = counts.shape
    ptr = np.zeros(n_lists + 1, dtype=np.int64)
    fill = np.empty((n_chunks, n_lists), dtype=np.int64)
    for L in range(n_lists):
        at = ptr[L]
        for c in range(n_chunks):
            fill[c, L] = at
            at += counts[c, L]
        ptr[L + 1] = at
    return ptr, fill


@njit(cache=True, nogil=True)
def _fill_probes(probe, order, lo, hi, fill, queries):
    """Write the positions ``lo <= p < hi`` into the query lists of the lists they probe
    (``fill[L]``: the next slot of list ``L``; ascending positions stay ascending)."""
    for p in range(lo, hi):
        row = probe[order[p]]
        for r in range(row.shape[0]):
            L = row[r]
            queries[fill[L]] = p
            fill[L] += 1


@njit(cache=True, parallel=True)
def _invert_probes(probe, n_lists, order):
    """Per-list query lists from per-point probe lists.

    ``probe[order[p]]`` holds the lists probed by the point at position ``p`` of the list
    order (``order``: the permutation into list order, so that the probe lists need not be
    copied into it).  Returns ``(ptr, queries)``: the positions probing list ``L`` are
    ``queries[ptr[L]:ptr[L + 1]]``, ascending (so the members of one list, which probe
    alike, are neighbours in every batch).  A counting sort in parallel over
    ``_INVERT_CHUNKS`` ranges of positions: counts per range and list, then every range
    fills its own slots (measured at ``10^6`` points and 66 probes: 0.6 s on one thread).
    """
    n = probe.shape[0]
    n_chunks = min(_INVERT_CHUNKS, max(1, n))
    step = (n + n_chunks - 1) // n_chunks
    counts = np.zeros((n_chunks, n_lists), dtype=np.int64)
    for c in prange(n_chunks):
        _count_probes(probe, order, c * step, min(n, (c + 1) * step), counts[c])
    ptr, fill = _probe_offsets(counts)
    queries = np.empty(n * probe.shape[1], dtype=np.int32)
    for c in prange(n_chunks):
        _fill_probes(probe, order, c * step, min(n, (c + 1) * step), fill[c], queries)
    return ptr, queries


def _invert_probes_here(probe, n_lists, order):
    """:func:`_invert_probes` in the calling thread (a Dask task: no Numba thread pool)."""
    counts = np.zeros((1, n_lists), dtype=np.int64)
    _count_probes(probe, order, 0, probe.shape[0], counts[0])
    ptr, fill = _probe_offsets(counts)
    queries = np.empty(probe.size, dtype=np.int32)
    _fill_probes(probe, order, 0, probe.shape[0], fill[0], queries)
    return ptr, queries


@njit(cache=True, parallel=True)
def _take_rows(X, perm):
    """``X[perm]`` in parallel (the refinement's copy of the data in list order)."""
    n, d = perm.shape[0], X.shape[1]
    out = np.empty((n, d), dtype=X.dtype)
    for p in prange(n):
        src = X[perm[p]]
        dst = out[p]
        for c in range(d):
            dst[c] = src[c]
    return out


@njit(cache=True, parallel=True)
def _list_order_operands(A, perm):
    """The search's operands in list order: ``A[perm]`` (rows ``[x', ||x'||^2, 1]``) and
    the reference rows ``[-2 x', 1, ||x'||^2]`` of the same points: ``_knn.reference_rows``
    of ``A[perm]``, fused with the gather in one parallel pass."""
    n, w = A.shape
    d = w - 2
    Ap = np.empty_like(A)
    Bp = np.empty_like(A)
    two = np.float32(-2.0)
    for p in prange(n):
        src = A[perm[p]]
        for c in range(d):
            Ap[p, c] = src[c]
            Bp[p, c] = src[c] * two
        Ap[p, d] = src[d]
        Ap[p, d + 1] = src[d + 1]
        Bp[p, d] = 1.0
        Bp[p, d + 1] = src[d]
    return Ap, Bp


@njit(cache=True, nogil=True)
def _centroid_sums(S, labels, n_lists, d):
    """Float64 sums of the first ``d`` coordinates of the rows of ``S`` per label, and the
    counts (one Lloyd step's means, without a float32 accumulation)."""
    sums = np.zeros((n_lists, d))
    counts = np.zeros(n_lists, dtype=np.int64)
    for a in range(S.shape[0]):
        L = labels[a]
        counts[L] += 1
        for t in range(d):
            sums[L, t] += S[a, t]
    return sums, counts


@njit(cache=True, parallel=True)
def _merge_heaps(dst_d, dst_i, src_d, src_i):
    """Push the entries of the heaps ``src`` into the heaps ``dst`` (same rows; the two hold
    disjoint reference sets of each row, scanned by different threads)."""
    n, size = dst_d.shape
    for p in prange(n):
        hd = dst_d[p]
        hi = dst_i[p]
        for c in range(size):
            v = src_d[p, c]
            if src_i[p, c] >= 0 and v < hd[0]:
                hd[0] = v
                hi[0] = src_i[p, c]
                _sift_down(hd, hi, 0, size)


@njit(cache=True, parallel=True)
def _scan_probed(X, rows, probe_rows, starts, perm, k, out_i, out_d):
    """Exact lexicographic k nearest among the probed lists, for rows whose certificate failed.

    ``rows[t]`` is a point (original index), ``probe_rows[t]`` its probed lists; the members
    of list ``L`` are the points ``perm[starts[L]:starts[L + 1]]``.  Float64 sums of
    ``(x_l - y_l)^2`` sorted by ``(distance, index)``, as the exact search's fallback.  A
    row whose probed lists hold fewer than ``k`` other points is scanned against all points
    (it can only happen when lists are tiny, e.g. ``n_lists`` close to ``n``).  Returns the
    number of such rows.
    """
    n = X.shape[0]
    n_full = 0
    for t in prange(rows.shape[0]):
        a = rows[t]
        best_d = np.full(k, np.inf)
        best_i = np.full(k, -1, dtype=np.int64)
        count = 0
        for r in range(probe_rows.shape[1]):
            L = probe_rows[t, r]
            for pos in range(starts[L], starts[L + 1]):
                j = np.int64(perm[pos])
                if j != a:
                    count = _insert_sorted(best_d, best_i, count, k,
                                           _dense_sqdist(X[a], X[j]), j)
        if count < k:
            n_full += 1
            count = 0
            for j in range(n):
                if j != a:
                    count = _insert_sorted(best_d, best_i, count, k,
                                           _dense_sqdist(X[a], X[j]), j)
        for c in range(k):
            out_i[a, c] = best_i[c]
            out_d[a, c] = best_d[c]
    return n_full


@njit(cache=True, nogil=True)
def _best_candidates(X, p, cand_row, ids, best_d, best_i, dists):
    """Row ``p``'s candidates ``X[cand_row]`` (``-1``: none) sorted by ``(float64 squared
    distance, ids[j])`` into ``best_d`` / ``best_i`` (``inf`` / ``-1`` padding); returns how
    many there were (``dists``: scratch of the row's length). The refinement of
    :func:`_refine_lists` and :func:`_refine_task`."""
    best_d[:] = np.inf
    best_i[:] = -1
    _dense_sqdists(X[p], X, cand_row, dists)
    count = 0
    for c in range(cand_row.shape[0]):
        j = cand_row[c]
        if j < 0:
            continue
        count = _insert_sorted(best_d, best_i, count, best_d.shape[0], dists[c],
                               np.int64(ids[j]))
    return count


@njit(cache=True, parallel=True)
def _refine_lists(Xp, perm, cand, cand_d, unit2, delta, k, out_i, out_d, failed):
    """Exact distances of the candidates, lexicographic sort and certificate, in list order.

    ``Xp`` holds the rows in list order (``Xp[p] = X[perm[p]]``), ``cand[p]`` the
    candidate positions of position ``p`` (so the rows read are near each other in
    memory) and ``cand_d[p]`` their float32 squared distances from the search (a max-heap:
    ``cand_d[p, 0]`` the largest; times ``unit2`` in the data's units, within ``delta[p]``
    of the exact ones).  A candidate whose float32 distance exceeds the ``k``-th smallest
    by more than ``2 delta[p]`` is exactly farther than the exact ``k``-th of the others,
    so only the rest are refined (about ``k`` rows read instead of ``k_c``).  Distances are
    the float64 sums of ``(x_l - y_l)^2`` of the exact search
    (:func:`._knn_kernels._refine_dense`), sorted by ``(distance, original index)``; the
    certificate is that of the exact search, ``cand_d[p, 0] unit2 - delta[p] > d_k``.
    Results go to row ``perm[p]`` of ``out_i`` / ``out_d`` (original indices); uncertified
    rows are marked in ``failed``.
    """
    n = Xp.shape[0]
    kc = cand.shape[1]
    step = 4096  # rows per task: one set of scratch rows each
    for t in prange((n + step - 1) // step):
        best_d = np.empty(kc)
        best_i = np.empty(kc, dtype=np.int64)
        near = np.empty(kc, dtype=cand.dtype)
        low = np.empty(kc, dtype=np.float64)
        for p in range(t * step, min(n, (t + 1) * step)):
            _refine_row(Xp, p, perm, perm[p], cand, cand_d, unit2, delta, k, out_i, out_d,
                        failed, best_d, best_i, near, low)


@njit(inline="always")
def _refine_row(X, p, ids, a, cand, cand_d, unit2, delta, k, out_i, out_d, failed, best_d,
                best_i, near, low):
    """Row ``p`` of :func:`_refine_lists` / :func:`_refine_task`, written to row ``a``:
    the candidates within ``2 delta[p]`` of the ``k``-th smallest float32 distance refined
    in float64 and sorted, the certificate checked."""
    _near_candidates(cand[p], cand_d[p], unit2, delta[p], k, X.shape[0], low, best_i, near)
    count = _best_candidates(X, p, near, ids, best_d, best_i, low)
    for c in range(k):
        out_i[a, c] = best_i[c]
        out_d[a, c] = best_d[c]
    worst = cand_d[p, 0] * unit2
    if not (count >= k and worst - delta[p] > best_d[k - 1]):
        failed[a] = True


@njit(cache=True, nogil=True)
def _refine_task(Xt, orig, cand, cand_d, unit2, delta, k, out_i, out_d, failed):
    """:func:`_refine_lists` for one task of the Dask search (serial, GIL-free).

    ``Xt`` holds the task's rows (its lists' members in list order, then the other points
    probing them), ``orig`` their indices in ``X``, ``cand[p]`` the candidate positions of
    row ``p`` among the members and ``cand_d[p]`` their float32 distances (a max-heap).
    Row ``p`` gets the ``k`` best candidates by ``(float64 distance, original index)`` in
    ``out_i[p]`` / ``out_d[p]``, the same pruned refinement and certificate as in memory
    (:func:`_refine_row`); rows it cannot certify, or with fewer than ``k`` candidates, are
    marked in ``failed`` (the task scans their probed lists).
    """
    n = Xt.shape[0]
    kc = cand.shape[1]
    best_d = np.empty(kc)
    best_i = np.empty(kc, dtype=np.int64)
    near = np.empty(kc, dtype=cand.dtype)
    low = np.empty(kc, dtype=np.float64)
    for p in range(n):
        _refine_row(Xt, p, orig, p, cand, cand_d, unit2, delta, k, out_i, out_d, failed,
                    best_d, best_i, near, low)


@njit(cache=True, nogil=True)
def _scan_task(Xt, orig, rows, probe_rows, starts, k, out_i, out_d):
    """Exact lexicographic ``k`` nearest of the task rows ``rows`` among the members of
    their probed lists of the task (``probe_rows[t]``, local list ids; ids without members
    are skipped), as :func:`_scan_probed` within one task; written to ``out_*[rows[t]]``.
    """
    best_d = np.empty(k)
    best_i = np.empty(k, dtype=np.int64)
    for t in range(rows.shape[0]):
        p = rows[t]
        best_d[:] = np.inf
        best_i[:] = -1
        count = 0
        for r in range(probe_rows.shape[1]):
            L = probe_rows[t, r]
            if L + 1 >= starts.shape[0]:
                continue
            for j in range(starts[L], starts[L + 1]):
                if j != p:
                    count = _insert_sorted(best_d, best_i, count, k,
                                           _dense_sqdist(Xt[p], Xt[j]), np.int64(orig[j]))
        for c in range(k):
            out_i[p, c] = best_i[c]
            out_d[p, c] = best_d[c]


@njit(cache=True, nogil=True)
def _merge_rows(rows, idx, dist, k, out_i, out_d, counts):
    """Per-row top-``k`` merge of candidate lists: ``(idx[t, c], dist[t, c])`` are
    candidates of row ``rows[t]``, inserted into the lexicographic ``(distance, index)``
    lists ``out_i`` / ``out_d`` (``counts`` entries filled; ``-1`` entries skipped)."""
    for t in range(rows.shape[0]):
        a = rows[t]
        for c in range(idx.shape[1]):
            j = idx[t, c]
            if j < 0:
                break
            counts[a] = _insert_sorted(out_d[a], out_i[a], counts[a], k, dist[t, c], j)
