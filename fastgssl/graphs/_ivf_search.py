"""The stages of the inverted-file search (:mod:`fastgssl.graphs._ivf`) shared by the
in-memory build and the Dask build (:mod:`fastgssl.graphs._ivf_dask`): k-means lists, the
nearest centroids of rows, the choice of ``n_probe`` and the search of (list, batch) tasks.
See :mod:`fastgssl.graphs._ivf` for the algorithm and :mod:`fastgssl.graphs._ivf_driver`
for the driver that runs them.
"""

from __future__ import annotations

import threading

import numpy as np

from fastgssl._threads import run_tasks

# k-means on max(16384, 30 n_lists) points, 3 Lloyd iterations: measured at 2x10^5 x 50
# (recall 0.91, one thread), 7.6 CPU-s in total against 9.1 with 65536 points and 8
# iterations; the lists are a little worse (5.6 % of the pairs scanned against 5.3 %).
# 3 iterations instead of 5 leave the search's pairs as they were at target recall 0.92
# (2x10^5: 4.12-4.14 % against 4.11-4.13 %, two seeds; 10^6: 3.52 % against 3.51 %, n_probe
# 66 against 68) and take a third less k-means time; 2 iterations cost 1 % more pairs.
_KMEANS_ITER = 3
_KMEANS_MIN_SAMPLE = 16384
_KMEANS_PER_LIST = 30
_TUNE_SAMPLE = 1000
# entries of one GEMM output block (4 MB of float32, the exact search's block size)
_BLOCK_CELLS = 1 << 20
_REF_BLOCK = 2048
# heap memory of the per-thread candidate lists: threads beyond this budget are not used
_HEAP_BUDGET = 2 << 30


def _centroid_operand(C):
    """Float32 ``[-2 c, 1, ||c||^2]`` rows of the centroids ``C`` (scaled coordinates)."""
    Cf = np.asarray(C, dtype=np.float32)
    m, d = Cf.shape
    out = np.empty((m, d + 2), dtype=np.float32)
    out[:, :d] = Cf * np.float32(-2.0)
    out[:, d] = 1.0
    out[:, d + 1] = np.einsum("ij,ij->i", Cf, Cf, dtype=np.float64)
    return out


def _nearest_centroids(A, Cop, p, threads, labels, probe=None, names=None):
    """The nearest centroid of every row of ``A`` (to ``labels``) and its ``p`` nearest
    (to ``probe``, unordered): blocks of one GEMM of the augmented rows against the
    centroid operand, each row then selected by :func:`._ivf_kernels._nearest_lists`.
    Centroid ``j`` is called ``names[j]`` when ``names`` is given (the rows of ``Cop``
    stay in k-means' random order, which the selection's sampled cut needs)."""
    from ._ivf_kernels import _nearest_lists

    names = np.empty(0, dtype=np.int32) if names is None else names.astype(np.int32)
    n = A.shape[0]
    m = Cop.shape[0]
    qb = int(max(16, min(512, _BLOCK_CELLS // m)))
    CopT = Cop.T
    local = threading.local()  # one product buffer per worker thread

    def work(q0):
        q1 = min(n, q0 + qb)
        buf = getattr(local, "buf", None)
        if buf is None:
            buf = local.buf = np.empty((qb, m), dtype=np.float32)
        part = np.matmul(A[q0:q1], CopT, out=buf[:q1 - q0])
        out = probe[q0:q1] if probe is not None else np.empty((q1 - q0, 1), dtype=np.int32)
        _nearest_lists(part, out, labels[q0:q1], names)

    run_tasks(work, range(0, n, qb), threads)


def _centroid_order(C):
    """Names of the lists in a spatial order: ``names[j]`` is the place of centroid ``j``
    in the depth-first order of recursive median splits along each subset's principal
    axis (a few power iterations from the subset's point farthest from its mean), so that
    lists whose centroids are near get near names, and their members near positions in
    the list order of the search.  A point's probed lists then lie in a few stretches of
    memory: measured at ``10^6 x 50`` (2,000 lists, 66 probes), the float64 refinement
    1.6 s against 2.1-2.3 s and the search about 0.8 s less."""
    C = np.asarray(C, dtype=np.float64)
    m = C.shape[0]
    names = np.empty(m, dtype=np.int32)
    at = 0
    stack = [np.arange(m)]
    while stack:
        ids = stack.pop()
        if ids.size <= 2:
            names[ids] = np.arange(at, at + ids.size)
            at += ids.size
            continue
        P = C[ids] - C[ids].mean(axis=0)
        v = P[np.argmax(np.einsum("ij,ij->i", P, P))].copy()
        for _ in range(8):
            v = P.T @ (P @ v)
            v /= max(np.linalg.norm(v), np.finfo(float).tiny)
        by = ids[np.argsort(P @ v, kind="stable")]
        half = ids.size // 2
        stack.append(by[half:])
        stack.append(by[:half])  # (popped first: the lower half takes the lower names)
    return names


def _kmeans(A, n_lists, rng, threads):
    """Lloyd's k-means on a sample of the scaled rows; returns the non-empty centroids
    (float64, scaled coordinates), their GEMM operand (:func:`_centroid_operand`) and the
    number of lists that stayed empty."""
    from ._ivf_kernels import _centroid_sums

    n, d = A.shape[0], A.shape[1] - 2
    s = min(n, max(_KMEANS_MIN_SAMPLE, _KMEANS_PER_LIST * n_lists))
    ids = np.sort(rng.choice(n, s, replace=False)) if s < n else np.arange(n)
    S = A[ids]
    C = S[rng.choice(s, n_lists, replace=False), :d].astype(np.float64)
    labels = np.empty(s, dtype=np.int64)
    for it in range(_KMEANS_ITER + 1):
        _nearest_centroids(S, _centroid_operand(C), 1, threads, labels=labels)
        sums, counts = _centroid_sums(S, labels, n_lists, d)
        if it == _KMEANS_ITER:
            break
        full = counts > 0
        C[full] = sums[full] / counts[full, None]
        empty = np.flatnonzero(~full)
        if empty.size:
            # re-seed an empty list with a random member of a list chosen by its size
            # (faiss splits the same way): the next assignment shares that list's points
            order = np.argsort(labels, kind="stable")
            first = np.concatenate(([0], np.cumsum(counts)))
            weights = np.maximum(counts - 1, 0).astype(np.float64)
            for e in empty:
                if weights.sum() <= 0:
                    break
                j = rng.choice(n_lists, p=weights / weights.sum())
                member = order[first[j] + rng.randint(counts[j])]
                C[e] = S[member, :d]
                weights[j] = max(weights[j] / 2.0 - 1.0, 0.0)
    keep = counts > 0
    C = C[keep]
    return C, _centroid_operand(C), int(n_lists - keep.sum())


def _choose_n_probe(X, A, Cop, k, target, rng, threads, n_jobs, neighbors=None):
    """Smallest ``n_probe`` whose recall on a sample of points reaches ``target``.

    For a query ``q`` with exact neighbours ``N(q)`` the search finds exactly the members of
    ``N(q)`` whose list is among the ``n_probe`` nearest centroids of ``q`` (ties aside),
    so recall as a function of ``n_probe`` is the empirical distribution of the centroid
    ranks of those lists: one exact search of the sample and one GEMM against the
    centroids give the whole curve.  ``neighbors(sample, k)``, when given, replaces the
    exact search of the sample (the Dask search runs it on the workers' row chunks; ``X``
    and ``A`` then only need ``shape`` and row indexing)."""
    n = X.shape[0]
    m = min(n, _TUNE_SAMPLE)
    sample = np.sort(rng.choice(n, m, replace=False))
    if neighbors is None:
        from ._nndescent import exact_sample_lists

        nbrs = exact_sample_lists(X, sample, k, n_jobs)[0]
    else:
        nbrs = neighbors(sample, k)
    nbr_lists = np.empty(nbrs.size, dtype=np.int64)
    _nearest_centroids(A[nbrs.ravel()], Cop, 1, threads, labels=nbr_lists)
    dist = A[sample] @ Cop.T
    order = np.argsort(dist, axis=1, kind="stable")
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.arange(Cop.shape[0])[None, :], axis=1)
    ranks = np.take_along_axis(rank, nbr_lists.reshape(m, k), axis=1)
    curve = np.cumsum(np.bincount(ranks.ravel(), minlength=Cop.shape[0])) / ranks.size
    return int(np.searchsorted(curve, target - 1e-12) + 1)


def _search_lists(A, B, starts, ptr, queries, kc, threads):
    """Candidate heaps (positions in list order) of every point over its probed lists.

    Tasks are ``(list, batch of its queries)``: first every list against its own points,
    then against the points that probe it from other lists, each group largest first;
    worker threads take them in turn and merge into their own heaps (a query is in the
    batches of several lists, which different threads may search at once) under one shared
    bound per query, and the heaps are merged at the end."""
    from ._ivf_kernels import _gather_rows, _select_gathered

    n, width = A.shape
    sizes = np.diff(starts)
    first, rest = [], []  # a list against its own points first: the heaps fill with near ones
    for L in np.flatnonzero((sizes > 0) & (np.diff(ptr) > 0)):
        qb = int(max(64, min(1024, _BLOCK_CELLS // min(int(sizes[L]), _REF_BLOCK))))
        q0, q1 = int(ptr[L]), int(ptr[L + 1])
        # every point probes its own list, and the queries of a list are in ascending order
        m0 = q0 + int(np.searchsorted(queries[q0:q1], starts[L]))
        m1 = m0 + int(sizes[L])
        for lo, hi, out in ((q0, m0, rest), (m0, m1, first), (m1, q1, rest)):
            out.extend((int(L), s0, min(hi, s0 + qb)) for s0 in range(lo, hi, qb))
    tasks = []
    for part in (first, rest):
        cost = np.array([(e - s) * sizes[L] for L, s, e in part], dtype=np.float64)
        tasks.extend(part[t] for t in np.argsort(-cost, kind="stable"))

    def scratch():
        return (np.empty((1024, width), dtype=np.float32),
                np.empty(_BLOCK_CELLS, dtype=np.float32))

    def search(task, hd, hi, roots, bufs):
        L, s0, s1 = task
        qbuf, flat = bufs
        ids = queries[s0:s1]
        m = s1 - s0
        Aq = qbuf[:m]
        _gather_rows(A, ids, Aq)
        for r0 in range(int(starts[L]), int(starts[L + 1]), _REF_BLOCK):
            r1 = min(int(starts[L + 1]), r0 + _REF_BLOCK)
            part = flat[:m * (r1 - r0)].reshape(m, r1 - r0)
            np.matmul(Aq, B[r0:r1].T, out=part)
            _select_gathered(part, ids, r0, hd, hi, roots)

    return _heap_tasks(tasks, n, kc, threads, scratch, search)


def _heap_tasks(tasks, n, kc, threads, scratch, search):
    """Run ``search(task, heap_d, heap_i, roots, bufs)`` for every task, in order, on worker
    threads that take the next task in turn, and return the merged ``(heap_d, heap_i)``.

    Each worker owns (n, kc) max-heaps (float32 distances, int32 ids; ``inf`` / ``-1``
    empty) and the buffers ``scratch()`` makes; ``roots`` (float32, ``inf`` at first) is
    one bound per point shared by all workers (see ``_ivf_kernels._select_gathered``).
    The workers are as many as ``threads`` and the tasks allow, and no more than
    ``_HEAP_BUDGET`` bytes of heaps hold; the workers' heaps are merged at the end."""
    from ._ivf_kernels import _merge_heaps

    heap_bytes = n * kc * 8
    workers = int(max(1, min(threads, len(tasks), _HEAP_BUDGET // max(heap_bytes, 1))))
    lock = threading.Lock()
    nxt = [0]
    roots = np.full(n, np.inf, dtype=np.float32)

    def work(_):
        hd = np.full((n, kc), np.inf, dtype=np.float32)
        hi = np.full((n, kc), -1, dtype=np.int32)
        bufs = scratch()
        while True:
            with lock:
                t = nxt[0]
                nxt[0] += 1
            if t >= len(tasks):
                return hd, hi
            search(tasks[t], hd, hi, roots, bufs)

    heaps = run_tasks(work, range(workers), workers)
    hd, hi = heaps[0]
    for od, oi in heaps[1:]:
        _merge_heaps(hd, hi, od, oi)
    return hd, hi
