"""The in-memory search of the inverted file by pairs of lists, with the symmetric saving.

For lists ``S != T`` let ``Q_ST`` be the members of ``S`` that probe ``T`` (the rows of list
``S``'s segment in the batch of ``T``).  The search of :func:`._ivf_search._search_lists`
forms ``|Q_ST| |T| + |Q_TS| |S|`` distance pairs for the two lists; the pairs of
``Q_ST x Q_TS`` are formed twice (once per direction).  Here a pair of lists probed both
ways is searched once, as two GEMM blocks:

- ``Q_ST x T`` (gathered rows, the contiguous members of ``T``): every entry is a candidate
  for its row's heap, and the entries of the columns in ``Q_TS`` for their columns' heaps
  (a per-column threshold, ``-inf`` for columns that do not probe ``S``);
- ``Q_TS x (S \\ Q_ST)`` (gathered rows and gathered references): the rest of ``S`` for the
  members of ``T`` that probe it.

That forms ``|Q_ST| |T| + |Q_TS| |S| - |Q_ST| |Q_TS|`` pairs and gives every point the same
candidates (its probed lists' members) as the one-way search.  Measured on the Gaussian
mixture, ``2 10^5 x 50`` (894 lists, 40 probes): 60 % of the pairs are probed both ways,
and 29 % fewer pairs are formed (4.13 % of ``n^2`` against 5.85 %); search CPU seconds
(one thread, load 8-11) 4.77 / 4.46 against 5.17 / 5.66.  ``10^6 x 50`` (2,000 lists, 68
probes, two threads, load 8-10): 3.51 % against 4.66 % of the pairs, search 80.0 CPU
seconds against 94.8 (0.84x; the selection's heap pushes do not shrink with the pairs).

A task is one list ``T``: its own block (first, for every list, so that heaps fill with near
points), then its batch by source list, a symmetric pair taken by the larger list id.  The
GEMMs are scipy's single-threaded ``sgemm`` called from the compiled task (no Python per
block), the selection that of the one-way search (:func:`._ivf_kernels._select_gathered`)
plus a column pass (:func:`._knn_kernels._count_below_each` per chunk).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._blas_symbols import external as _external
from ._ivf_kernels import _push_below, _select_gathered
from ._ivf_search import _heap_tasks
from ._knn_kernels import _CHUNK, _count_below, _count_below_each, _sift_down

_xsgemm = _external("cython_blas", "sgemm", 13)

_ROWS = 1024  # query rows of one GEMM block
_COLS = 2048  # reference rows of one GEMM block


@njit(cache=True, nogil=True)
def _sgemm_nt(a, b, out, args, scal):
    """``a @ b.T`` for C-order float32 ``a`` (m rows) and ``b`` (r rows) of equal width, into
    the scratch ``out`` (at least ``m * r`` entries), returned as its C-order ``m x r`` view:
    Fortran ``C^T = B A^T``, one ``sgemm('T', 'N')`` call."""
    m, w = a.shape
    r = b.shape[0]
    args[2] = r
    args[3] = m
    args[4] = w
    args[5] = w
    args[6] = r
    p = args.ctypes.data
    s = scal.ctypes.data
    _xsgemm(p, p + np.uint64(4), p + np.uint64(8), p + np.uint64(12), p + np.uint64(16),
            s, b.ctypes.data, p + np.uint64(20), a.ctypes.data, p + np.uint64(20),
            s + np.uint64(4), out.ctypes.data, p + np.uint64(24))
    return out[:m * r].reshape(m, r)


@njit(cache=True, nogil=True)
def _gather(src, ids, lo, hi, out):
    """``out[t] = src[ids[lo + t]]`` for ``t < hi - lo``."""
    for t in range(hi - lo):
        s = src[ids[lo + t]]
        d = out[t]
        for c in range(s.shape[0]):
            d[c] = s[c]


@njit(cache=True, nogil=True)
def _select_refs(part, q_ids, r_ids, heap_d, heap_i, roots):
    """:func:`._ivf_kernels._select_gathered` for gathered references: column ``b`` is the
    point ``r_ids[b]`` (never a row's own point here)."""
    nq, nr = part.shape
    vals = np.empty(nr, dtype=part.dtype)
    idx = np.empty(nr, dtype=np.int64)
    for a in range(nq):
        q = q_ids[a]
        row = part[a]
        threshold = roots[q]
        if not _count_below(row, threshold):
            continue
        # (0 and -1 not as constants: one compilation of the callee for all its callers)
        threshold = _push_below(row, threshold, heap_d[q], heap_i[q], nr - nr, r_ids,
                                nr - nr - 1, vals, idx)
        if threshold < roots[q]:
            roots[q] = threshold


@njit(cache=True, nogil=True)
def _select_columns(part, q_ids, c_offset, col_thr, heap_d, heap_i, roots):
    """Column pass of a shared block: ``part[a, b]`` is a candidate of point ``c_offset +
    b`` (reference id ``q_ids[a]``) when below ``col_thr[b]`` (its heap's bound; ``-inf``
    for a column that does not probe the rows' list), which follows the heap's root, or the
    shared bound ``roots`` of the column's point while this thread's heap of it is not
    full."""
    nq, nr = part.shape
    size = heap_d.shape[1]
    for a in range(nq):
        row = part[a]
        if not _count_below_each(row, col_thr[:nr]):  # most rows: one vectorized pass
            continue
        qa = q_ids[a]
        for b0 in range(0, nr, _CHUNK):
            b1 = min(nr, b0 + _CHUNK)
            if _count_below_each(row[b0:b1], col_thr[b0:b1]):
                for b in range(b0, b1):
                    v = row[b]
                    if v < col_thr[b]:
                        hd = heap_d[c_offset + b]
                        hi = heap_i[c_offset + b]
                        hd[0] = v
                        hi[0] = qa
                        _sift_down(hd, hi, 0, size)
                        # (the shared bound while this thread's heap is not full)
                        col_thr[b] = min(hd[0], roots[c_offset + b])


@njit(cache=True, nogil=True)
def _segment(queries, lo, hi, p0, p1):
    """``[i, j)``: the entries of the ascending ``queries[lo:hi]`` in ``[p0, p1)``."""
    i = lo + np.searchsorted(queries[lo:hi], p0)
    j = lo + np.searchsorted(queries[lo:hi], p1)
    return i, j


@njit(cache=True, nogil=True)
def _block(A, B, rows, r_lo, r_hi, c0, c1, bufs, heap_d, heap_i, roots, skip_self):
    """Rows ``rows[r_lo:r_hi]`` against the contiguous references ``c0 .. c1``: row
    selection (and the own point skipped when ``skip_self``); returns the pairs formed."""
    qbuf, bbuf, flat, ct, comp, args, scal = bufs
    for s0 in range(r_lo, r_hi, _ROWS):
        s1 = min(r_hi, s0 + _ROWS)
        _gather(A, rows, s0, s1, qbuf)
        for b0 in range(c0, c1, _COLS):
            part = _sgemm_nt(qbuf[:s1 - s0], B[b0:min(c1, b0 + _COLS)], flat, args, scal)
            _select_gathered(part, rows[s0:s1], b0, heap_d, heap_i, roots)
    return (r_hi - r_lo) * (c1 - c0)


@njit(cache=True, nogil=True)
def _list_task(T, own, A, B, starts, ptr, queries, list_of, heap_d, heap_i, roots, bufs,
               dry):
    """Search list ``T``: its own block (``own``), or its batch from the other lists (see
    the module docstring).  ``dry``: only count the pairs (the task's cost).  Returns the
    number of distance pairs formed.

    The rows of every source list searched here (one way, or both ways with the smaller
    list id) form one batch against the members of ``T``, in GEMM blocks of up to
    ``_ROWS`` rows (one packing of ``T``'s rows serves many source lists); the column pass
    runs on the rows of each two-way source, then the rest of each such source is searched
    for the members of ``T`` that probe it."""
    qbuf, bbuf, flat, ct, comp, args, scal = bufs
    t0, t1 = starts[T], starts[T + 1]
    q_lo, q_hi = ptr[T], ptr[T + 1]
    if own:
        i, j = _segment(queries, q_lo, q_hi, t0, t1)
        if dry:
            return (j - i) * (t1 - t0)
        return _block(A, B, queries, i, j, t0, t1, bufs, heap_d, heap_i, roots, True)
    # the segments searched here: rows queries[seg_i:seg_j] (Q_ST), at batch offset
    # seg_at; for a two-way source, its members probed by T are queries[seg_u:seg_v]
    n_seg = 0
    n_rows = 0
    seg = np.empty((min(q_hi - q_lo, starts.shape[0]), 6), dtype=np.int64)
    i = q_lo
    while i < q_hi:
        S = list_of[queries[i]]
        j = i + np.searchsorted(queries[i:q_hi], starts[S + 1])
        if S != T:
            u, v = _segment(queries, ptr[S], ptr[S + 1], t0, t1)  # Q_TS
            if v == u or S < T:  # (both ways with S > T: the task of S takes it)
                seg[n_seg, 0] = i
                seg[n_seg, 1] = j
                seg[n_seg, 2] = u
                seg[n_seg, 3] = v
                seg[n_seg, 4] = n_rows
                seg[n_seg, 5] = S
                n_seg += 1
                n_rows += j - i
        i = j
    pairs = n_rows * (t1 - t0)
    rows = np.empty(n_rows, dtype=queries.dtype)
    for g in range(n_seg):
        rows[seg[g, 4]:seg[g, 4] + seg[g, 1] - seg[g, 0]] = queries[seg[g, 0]:seg[g, 1]]
    for g in range(n_seg):  # the rest of two-way sources: |Q_TS| |S \ Q_ST| pairs
        if seg[g, 3] > seg[g, 2]:
            S = seg[g, 5]
            pairs += (seg[g, 3] - seg[g, 2]) * (starts[S + 1] - starts[S]
                                               - (seg[g, 1] - seg[g, 0]))
    if dry:
        return pairs
    ct[:] = -np.inf
    for r0 in range(0, n_rows, _ROWS):
        r1 = min(n_rows, r0 + _ROWS)
        _gather(A, rows, r0, r1, qbuf)
        for b0 in range(t0, t1, _COLS):
            b1 = min(t1, b0 + _COLS)
            part = _sgemm_nt(qbuf[:r1 - r0], B[b0:b1], flat, args, scal)
            _select_gathered(part, rows[r0:r1], b0, heap_d, heap_i, roots)
            for g in range(n_seg):  # column pass on the rows of two-way sources
                u, v = seg[g, 2], seg[g, 3]
                a0 = max(seg[g, 4], r0)
                a1 = min(seg[g, 4] + seg[g, 1] - seg[g, 0], r1)
                if v == u or a1 <= a0:
                    continue
                for t in range(u, v):
                    pos = queries[t]
                    if b0 <= pos < b1:
                        ct[pos - b0] = roots[pos]
                _select_columns(part[a0 - r0:a1 - r0], rows[a0:a1], b0, ct, heap_d, heap_i,
                                roots)
                for t in range(u, v):
                    pos = queries[t]
                    if b0 <= pos < b1:
                        if ct[pos - b0] < roots[pos]:
                            roots[pos] = ct[pos - b0]
                        ct[pos - b0] = -np.inf
    for g in range(n_seg):
        u, v = seg[g, 2], seg[g, 3]
        if v == u:
            continue
        i, j, S = seg[g, 0], seg[g, 1], seg[g, 5]
        n_comp = 0  # S \ Q_ST: the members of S not in the ascending Q_ST
        c = i
        for pos in range(starts[S], starts[S + 1]):
            if c < j and queries[c] == pos:
                c += 1
            else:
                comp[n_comp] = pos
                n_comp += 1
        for c0 in range(0, n_comp, _COLS):
            c1 = min(n_comp, c0 + _COLS)
            _gather(B, comp, c0, c1, bbuf)
            for r0 in range(u, v, _ROWS):
                r1 = min(v, r0 + _ROWS)
                _gather(A, queries, r0, r1, qbuf)
                part = _sgemm_nt(qbuf[:r1 - r0], bbuf[:c1 - c0], flat, args, scal)
                _select_refs(part, queries[r0:r1], comp[c0:c1], heap_d, heap_i, roots)
    return pairs


def _buffers(width, max_list):
    args = np.array([84, 78, 0, 0, 0, 0, 0], dtype=np.int32)  # 'T', 'N', m, n, k, ld, ldc
    scal = np.array([1.0, 0.0], dtype=np.float32)  # alpha, beta
    return (np.empty((_ROWS, width), dtype=np.float32),
            np.empty((_COLS, width), dtype=np.float32),
            np.empty(_ROWS * _COLS, dtype=np.float32),
            np.empty(_COLS, dtype=np.float32),
            np.empty(max(max_list, 1), dtype=np.int32), args, scal)


def _search_pairs(A, B, starts, ptr, queries, kc, threads):
    """Candidate heaps (positions in list order) of every point over its probed lists, as
    :func:`._ivf_search._search_lists`, with the symmetric saving; also returns the number
    of distance pairs formed.  ``A`` / ``B`` are the float32 operands in list order,
    ``queries[ptr[L]:ptr[L + 1]]`` the ascending positions probing list ``L``."""
    n, width = A.shape
    n_lists = starts.shape[0] - 1
    sizes = np.diff(starts)
    list_of = np.repeat(np.arange(n_lists, dtype=np.int32), sizes)
    empty = (np.empty((0, kc), np.float32), np.empty((0, kc), np.int32))
    bufs = _buffers(width, int(sizes.max()))
    cost = np.array([[_list_task(T, own, A, B, starts, ptr, queries, list_of, *empty,
                                 np.empty(0, np.float32), bufs, True)
                      for T in range(n_lists)] for own in (True, False)], dtype=np.float64)
    tasks = [(T, True) for T in np.argsort(-cost[0], kind="stable")]
    tasks += [(T, False) for T in np.argsort(-cost[1], kind="stable") if cost[1, T] > 0]

    def scratch():
        return _buffers(width, int(sizes.max()))

    def search(task, hd, hi, roots, bufs):
        T, own = task
        _list_task(int(T), own, A, B, starts, ptr, queries, list_of, hd, hi, roots, bufs,
                   False)

    hd, hi = _heap_tasks(tasks, n, kc, threads, scratch, search)
    return hd, hi, float(cost.sum())
