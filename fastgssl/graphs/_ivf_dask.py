"""The inverted-file kNN graph (:class:`fastgssl.graphs.IVFGraph`) searched on a Dask cluster.

``IVFGraph(...)(X)`` takes this road when ``X`` is a ``dask.array`` (row chunks) or when the
builder was given ``client=``; the client gets the same graph as the in-memory search with
the same ``random_state`` and ``n_probe`` (same neighbours, same weights).

Algorithm (the stages of :mod:`fastgssl.graphs._ivf`, split between client and workers):

1. *Parts.* ``X`` stays in row chunks on the workers: a dask array's chunks are computed
   there, a NumPy array is cut into one chunk per worker thread and scattered once.  Each
   chunk is validated and cast (float32 stays float32) where it lives.
2. *Operands.* The per-feature ranges (the distance-scale check and the power-of-two scale)
   and the centre are reduced from the chunks; the centre is folded chunk after chunk in
   the in-memory search's order of summation (blocks of ``2^20 / d`` rows from the first
   row as pivot), so it is the same float64 vector bit for bit.  Each worker then builds
   its chunk's float32 rows ``[x', ||x'||^2, 1]`` and their float64 norms.
3. *Lists (client).* The k-means sample's rows are gathered to the client, which runs the
   same k-means (and the ``target_recall`` choice of ``n_probe``: the sample's exact
   neighbours are merged from per-chunk exact searches) with the same random streams.
4. *Probes (workers).* Every chunk selects its points' ``n_probe`` nearest centroids and
   returns only per-list counts (members and probing points).
5. *Groups.* The lists are cut into ``n_groups`` groups of about equal cost ``sum_L
   |L| |B_L|`` by recursive bisection along the principal axis of their centroids, so a
   group's lists are near each other and most points probe few groups.  Every chunk sends
   to group ``g`` the points of its lists (members) and the other points that probe one
   of them (queries), with their float32 rows, float64 rows and probe lists.
6. *Search (one task per group).* The local search on the group alone: members in list
   order, the probe lists restricted to the group, one GEMM block + fused top-``k_c`` per
   (list, batch), float64 re-ranking and certification; an uncertified row is scanned
   exactly over its probed lists of the group.  So every task returns, per point, the
   exact ``k`` nearest (``(distance, index)`` order) among the members of its probed
   lists in that group.
7. *Merge (client).* Per point the top ``k`` of its groups' lists: the groups partition the
   lists, so this is the exact ``k`` nearest among all probed lists -- the in-memory
   result, index for index.  A point with fewer than ``k`` others in its probed lists is
   searched exactly against every chunk (as the in-memory search does), then
   :func:`knn_adjacency` gives the weights and ``recall_`` is measured.

Bytes moved (``IVFGraph.dask_info_["bytes_moved"]``, approximate): ``X`` once when it is
scattered (a dask array's chunks are computed where they live), the k-means sample to the
client, each point's rows (float32 operand, ``X`` row, probes, ``~(4 + s) d + 4 n_probe``
bytes for ``s``-byte ``X``) to every group it probes (``groups_per_point`` groups on
average), and per such copy ``k`` (index, distance) pairs back to the client.  Worker
processes each run one search task per thread (serial kernels, one BLAS thread).
"""

from __future__ import annotations

import math
import operator
import threading
import time

import numpy as np

from fastgssl._geometry import check_distance_scale
from fastgssl._threads import numba_threads, small_blas
from fastgssl._validation import check_random_state, check_X

from ._ivf_search import (
    _choose_n_probe,
    _kmeans,
    _nearest_centroids,
    _search_lists,
)
from ._knn import _U32, reference_rows

__all__ = ["dask_ivf_search", "is_dask_array"]

# rows per block of the in-memory centre's summation (_knn._gemm_operands' ``step``)
_STEP_CELLS = 1 << 20
# members per search task at most (about): a task holds its members' and probing points'
# float32 and float64 rows and one heap of k_c candidates per row (~300 MB at d = 50)
_GROUP_POINTS = 1 << 19
# parallel kernels (the exact search on the workers) one at a time per worker process:
# Numba's workqueue layer refuses concurrent launches from the threads of one worker
_KERNEL_LOCK = threading.Lock()


def is_dask_array(X):
    """True for a ``dask.array.Array`` (checked without importing dask)."""
    return type(X).__module__.split(".")[0] == "dask" and hasattr(X, "to_delayed")


def _distributed():
    try:
        import distributed
    except ImportError:
        raise ImportError(
            "IVFGraph on a Dask cluster (a dask array X or client=...) needs "
            "dask.distributed: pip install 'dask[distributed]' (from a fastgssl checkout: "
            "pip install -e '.[dask]')."
        ) from None
    return distributed


def _check_client(client):
    """The active (or given) ``distributed.Client``, running, whose workers import fastgssl."""
    distributed = _distributed()
    if client is None:
        try:
            client = distributed.get_client()
        except ValueError:
            raise ValueError(
                "IVFGraph got a dask array X but no dask.distributed Client is active: start "
                "one (distributed.Client(...)) or pass client= to IVFGraph."
            ) from None
    if not isinstance(client, distributed.Client):
        raise TypeError(f"client must be a dask.distributed.Client or None, got "
                        f"{type(client).__name__}.")
    if client.status != "running":
        raise RuntimeError(f"IVFGraph: the dask client is {client.status!r}, not running "
                           f"(closed?); connect a new Client to the cluster.")
    import sys

    version = sys.modules["fastgssl"].__version__  # (imported: this is its code)
    # eval is pickled by reference: it runs even where fastgssl cannot be imported
    found = client.run(eval, "__import__('importlib').util.find_spec('fastgssl') is not "
                             "None and __import__('fastgssl').__version__")
    if not found:
        raise RuntimeError("IVFGraph: the dask cluster has no workers (wait for them with "
                           "client.wait_for_workers(n)).")
    bad = {w: v for w, v in found.items() if v != version}
    if bad:
        raise RuntimeError(
            f"IVFGraph: dask workers {sorted(bad)} do not import fastgssl "
            f"{version} (found {sorted(set(map(str, bad.values())))}; False: "
            f"not installed); install the client's version on every worker."
        )
    return client


def _gather(client, futures, stage):
    """Gather results; a lost worker or cancelled data fails the whole build clearly."""
    distributed = _distributed()
    try:
        return client.gather(futures)
    except (distributed.client.FutureCancelledError, distributed.scheduler.KilledWorker,
            OSError) as exc:
        raise RuntimeError(
            f"IVFGraph on Dask failed in stage {stage!r} ({type(exc).__name__}: {exc}); a "
            f"worker was lost and its data could not be recomputed (scattered data lives on "
            f"one worker only). No graph is returned; rerun the build."
        ) from exc


# ---------------------------------------------------------------- worker-side functions


def _part_check(Xc):
    from ._knn import _search_dtype

    return check_X(Xc, "X", dtype=_search_dtype(Xc))


def _part_range(Xc):
    return Xc.min(axis=0), Xc.max(axis=0)


def _part_centre(state, Xc, offset, step, pivot):
    """Continue the in-memory centre's sum ``total += (X[s0:s0 + step] - pivot).sum(0)``
    over this chunk (``state = (total, partial sum of the open block)``).  A NumPy sum
    along axis 0 adds rows in order, so a block cut by a chunk border continues from its
    partial sum with the same result."""
    total, partial = state
    n = Xc.shape[0]
    pos = 0
    while pos < n:
        g = offset + pos
        end = (g // step + 1) * step
        take = min(n - pos, end - g)
        block = Xc[pos:pos + take] - pivot
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


def _part_operands(Xc, centre, inv):
    """The chunk's float32 query rows ``[x', ||x'||^2, 1]`` and float64 norms (as
    :func:`._knn._gemm_operands`, row by row)."""
    n, d = Xc.shape
    out = np.empty((n, d + 2), dtype=np.float32)
    block = ((Xc - centre) * inv).astype(np.float32)
    norms = np.einsum("ij,ij->i", block, block, dtype=np.float64)
    out[:, :d] = block
    out[:, d] = norms
    out[:, d + 1] = 1.0
    return out, norms


def _part_norm_max(Ac):
    return float(Ac[1].max(initial=0.0))


def _part_rows(Ac, ids):
    return Ac[0][ids] if isinstance(Ac, tuple) else Ac[ids]


def _part_assign(Ac, Cop, n_probe):
    A = Ac[0]
    labels = np.empty(A.shape[0], dtype=np.int64)
    probe = np.empty((A.shape[0], n_probe), dtype=np.int32)
    with small_blas(0.0):
        _nearest_centroids(A, Cop, n_probe, 1, labels=labels, probe=probe)
    return labels, probe


def _part_counts(assign, n_lists):
    labels, probe = assign
    return (np.bincount(labels, minlength=n_lists),
            np.bincount(probe.ravel(), minlength=n_lists))


def _part_split(Ac, Xc, assign, offset, group_of, n_groups):
    """Per group: the chunk's points whose list is in it or that probe one of its lists."""
    A, norms = Ac
    labels, probe = assign
    own = group_of[labels]
    hit = np.zeros((labels.size, n_groups), dtype=np.bool_)
    hit[np.arange(labels.size)[:, None], group_of[probe]] = True
    out = []
    for g in range(n_groups):
        rows = np.flatnonzero(hit[:, g])
        out.append((rows + offset, own[rows] == g, labels[rows], probe[rows], A[rows],
                    norms[rows], Xc[rows]))
    return tuple(out)


def _group_search(lists, n_lists, k, kc, unit2, rmax, *pieces):
    """One group's search (stage 6 of the module docstring): ``(indices of its rows in X,
    their k nearest among the group's probed lists, squared distances, pairs formed, CPU
    seconds of the task's thread)``."""
    from ._ivf_kernels import _invert_probes_here, _refine_task, _scan_task

    cpu0 = time.thread_time()
    orig, member, labels, probe, A, norms, Xr = (np.concatenate(p) for p in zip(*pieces))
    n_l = lists.size
    local = np.full(n_lists, n_l, dtype=np.int32)  # n_l: an empty list (other groups)
    local[lists] = np.arange(n_l, dtype=np.int32)
    members = np.flatnonzero(member)
    members = members[np.argsort(local[labels[members]], kind="stable")]  # (list, index)
    rows = np.concatenate([members, np.flatnonzero(~member)])
    counts = np.bincount(local[labels[members]], minlength=n_l + 1)
    starts = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    probe_l = local[probe[rows]]
    orig, At, Xt, norms = orig[rows], A[rows], Xr[rows], norms[rows]
    d = At.shape[1] - 2
    m = members.size
    Bt = reference_rows(At[:m])
    ptr, queries = _invert_probes_here(probe_l, n_l + 1, np.arange(probe_l.shape[0]))
    with small_blas(0.0):
        heap_d, heap_i = _search_lists(At, Bt, starts, ptr, queries, kc, 1)
    scanned = float(np.dot(np.diff(ptr).astype(np.float64), counts))
    worst = heap_d[:, 0].astype(np.float64) * unit2
    delta = 8.0 * (d + 9) * _U32 * (norms + rmax) * unit2
    nt = rows.size
    out_i = np.full((nt, k), -1, dtype=np.int64)
    out_d = np.full((nt, k), np.inf)
    failed = np.zeros(nt, dtype=np.bool_)
    _refine_task(Xt, orig, heap_i, worst, delta, k, out_i, out_d, failed)
    bad = np.flatnonzero(failed)
    if bad.size:
        _scan_task(Xt, orig, bad, probe_l[bad], starts[:n_l + 1], k, out_i, out_d)
    return orig, out_i, out_d, scanned, time.thread_time() - cpu0


def _part_knn(Xc, offset, Xq, kk):
    """Exact ``kk`` nearest of the rows ``Xq`` in this chunk (indices in X)."""
    from ._knn import knn_search

    kk = min(kk, Xc.shape[0])
    with _KERNEL_LOCK:
        idx, sq = knn_search(Xq, kk, Xc, n_jobs=1)
    return idx + offset, sq


# ---------------------------------------------------------------- client-side driver


class _Parts:
    """The row chunks of X on the workers (futures), their offsets, and a row-gathering
    view ``rows[ids]`` of a per-chunk array (``shape`` and indexing, for :func:`_kmeans`)."""

    def __init__(self, client, futures, sizes, d):
        self.client = client
        self.futures = futures
        self.sizes = np.asarray(sizes, dtype=np.int64)
        self.offsets = np.concatenate(([0], np.cumsum(self.sizes)))
        self.n = int(self.offsets[-1])
        self.d = d

    def rows(self, futures, width, stage):
        parts = self

        class _View:
            shape = (parts.n, width)

            def __getitem__(self, ids):
                return parts.take(futures, ids, stage)

        return _View()

    def take(self, futures, ids, stage):
        ids = np.asarray(ids, dtype=np.int64).ravel()
        uniq, inv = np.unique(ids, return_inverse=True)
        cut = np.searchsorted(uniq, self.offsets)
        jobs = [self.client.submit(_part_rows, f, uniq[cut[c]:cut[c + 1]] - self.offsets[c],
                                   pure=False)
                for c, f in enumerate(futures) if cut[c + 1] > cut[c]]
        got = _gather(self.client, jobs, stage)
        return np.concatenate(got)[inv]

    def knn(self, Xq, kk, stage):
        """Exact ``kk`` nearest of ``Xq`` among all rows: per-chunk exact searches merged by
        ``(distance, index)``."""
        from ._ivf_kernels import _merge_rows

        Xq_f = self.client.scatter(Xq, broadcast=True)
        jobs = [self.client.submit(_part_knn, f, int(self.offsets[c]), Xq_f, kk, pure=False)
                for c, f in enumerate(self.futures)]
        m = Xq.shape[0]
        out_i = np.full((m, kk), -1, dtype=np.int64)
        out_d = np.full((m, kk), np.inf)
        counts = np.zeros(m, dtype=np.int64)
        for idx, sq in _gather(self.client, jobs, stage):
            _merge_rows(np.arange(m), idx, sq, kk, out_i, out_d, counts)
        return out_i, out_d


def _self_dropped(idx, sq, sample, k):
    """Drop each sampled point itself (or its (k + 1)-th entry) from exact k + 1 lists."""
    m = sample.size
    is_self = idx == sample[:, None]
    drop = np.where(is_self.any(axis=1), is_self.argmax(axis=1), k)
    keep = np.ones_like(is_self)
    keep[np.arange(m), drop] = False
    return idx[keep].reshape(m, k), sq[keep].reshape(m, k)


def _split_parts(client, X):
    """Row-chunk futures and sizes of a dask array or a NumPy array (scattered)."""
    from ._knn import _search_dtype

    if is_dask_array(X):
        if X.ndim != 2:
            raise ValueError(f"X must be a 2-D dask array, got {X.ndim} dimensions.")
        if len(X.chunks[1]) != 1:
            raise ValueError(
                f"X is a dask array chunked along its columns (column chunks {X.chunks[1]}); "
                f"IVFGraph needs row chunks holding every feature: X.rechunk({{1: -1}})."
            )
        if any(math.isnan(c) for c in X.chunks[0]):
            X = X.compute_chunk_sizes()
        if X.shape[0] == 0 or X.shape[1] == 0:
            raise ValueError(
                f"X is an empty dask array (shape {X.shape}): IVFGraph needs rows with at "
                f"least one feature, more rows than n_neighbors."
            )
        futures = client.compute(list(X.to_delayed().ravel()))
        sizes = list(X.chunks[0])
        d = X.shape[1]
        bytes_in = 0
    else:
        X = check_X(X, "X", dtype=_search_dtype(X))
        threads = sum(client.nthreads().values())
        cuts = np.linspace(0, X.shape[0], max(1, min(threads, X.shape[0])) + 1).astype(int)
        futures = client.scatter([X[a:b] for a, b in zip(cuts[:-1], cuts[1:])])
        sizes = list(np.diff(cuts))
        d = X.shape[1]
        bytes_in = X.nbytes
    keep = [c for c, s in enumerate(sizes) if s > 0]
    checked = [client.submit(_part_check, futures[c], pure=False) for c in keep]
    return checked, [sizes[c] for c in keep], d, bytes_in


def _group_lists(C, cost, n_groups):
    """Lists cut into ``n_groups`` groups of about equal ``cost`` by recursive bisection
    along the principal axis of their centroids (near lists together)."""
    group_of = np.zeros(C.shape[0], dtype=np.int64)

    def split(ids, first, count):
        if count == 1 or ids.size <= 1:
            group_of[ids] = first
            return
        Z = C[ids] - C[ids].mean(axis=0)
        axis = np.linalg.svd(Z, full_matrices=False)[2][0] if ids.size > 2 else Z[0]
        ids = ids[np.argsort(Z @ axis, kind="stable")]
        left = count // 2
        cum = np.cumsum(cost[ids])
        cut = int(np.searchsorted(cum, cum[-1] * left / count)) + 1
        cut = min(max(cut, 1), ids.size - 1)
        split(ids[:cut], first, left)
        split(ids[cut:], first + left, count - left)

    split(np.arange(C.shape[0]), 0, min(n_groups, C.shape[0]))
    return np.unique(group_of, return_inverse=True)[1].astype(np.int64)  # no empty group


def dask_ivf_search(builder, X, client=None, n_groups=None):
    """The IVF search of ``builder`` on a Dask cluster (see the module docstring).

    Returns ``(indices, sq_distances, info, recall)``: the lists as the in-memory
    :meth:`IVFGraph._search` returns them, its ``info`` plus the Dask counters
    (``"bytes_moved"``, ``"n_groups"``, ``"groups_per_point"``, ``"search_cpu"``,
    ``"pairs"``), and a function
    ``recall(indices, sample_size)`` measuring recall@k against exact search.
    """
    from ._ivf_kernels import _merge_rows

    client = _check_client(client)
    clock = time.perf_counter
    times = {}
    t0 = clock()
    futures, sizes, d, bytes_moved = _split_parts(client, X)
    parts = _Parts(client, futures, sizes, d)
    n = parts.n
    ranges = _gather(client, [client.submit(_part_range, f) for f in futures], "check")
    lo = np.min([r[0] for r in ranges], axis=0)
    hi = np.max([r[1] for r in ranges], axis=0)
    sq_spread = check_distance_scale(np.vstack([lo, hi]), name="X")
    k, sigma_w, n_lists, n_probe, target, recall_sample, min_recall = builder._check_params(n)
    del sigma_w, recall_sample, min_recall
    step = max(1, _STEP_CELLS // max(d, 1))
    pivot = np.asarray(parts.take(futures, [0], "centre")[0], dtype=np.float64)
    state = (np.zeros(d), None)
    for c, f in enumerate(futures):
        state = client.submit(_part_centre, state, f, int(parts.offsets[c]), step, pivot,
                              pure=False)
    total, partial = _gather(client, state, "centre")
    if partial is not None:
        total += partial
    centre = pivot + total / n
    unit = 2.0 ** np.ceil(0.5 * np.log2(sq_spread)) if sq_spread > 0 else 1.0
    unit2 = unit * unit
    A_f = [client.submit(_part_operands, f, centre, 1.0 / unit) for f in futures]
    rmax = max(_gather(client, [client.submit(_part_norm_max, f) for f in A_f],
                       "operands"))
    times["operands"] = clock() - t0
    t0 = clock()
    rng = check_random_state(builder.random_state)
    kmeans_rng, tune_rng = (np.random.RandomState(s) for s in
                            rng.randint(0, 2**31 - 1, size=2))
    A_rows = parts.rows(A_f, d + 2, "kmeans")
    # the client's own threads for its stages (the same lists whatever their number)
    with numba_threads(builder.n_jobs) as threads, small_blas(0.0):
        C, Cop, n_empty = _kmeans(A_rows, n_lists, kmeans_rng, threads)
        n_lists_ = C.shape[0]
        times["kmeans"] = clock() - t0
        t0 = clock()
        if n_probe is None:
            if n_lists_ == 1:
                n_probe_ = 1
            else:
                def neighbors(sample, kk):
                    idx, sq = parts.knn(parts.take(futures, sample, "tune"), kk + 1, "tune")
                    return _self_dropped(idx, sq, sample, kk)[0]

                X_view = parts.rows(futures, d, "tune")
                n_probe_ = _choose_n_probe(X_view, A_rows, Cop, k, target, tune_rng, threads,
                                           None, neighbors=neighbors)
        else:
            n_probe_ = min(n_probe, n_lists_)
    times["tune"] = clock() - t0
    t0 = clock()
    Cop_f = client.scatter(Cop, broadcast=True)
    assign = [client.submit(_part_assign, a, Cop_f, n_probe_) for a in A_f]
    got = _gather(client, [client.submit(_part_counts, a, n_lists_) for a in assign],
                  "assign")
    counts = np.sum([g[0] for g in got], axis=0)
    probing = np.sum([g[1] for g in got], axis=0)
    times["assign"] = clock() - t0
    t0 = clock()
    if n_groups is None:  # two tasks per worker thread, and tasks of at most ~2^19 points
        n_groups = max(2 * sum(client.nthreads().values()), -(-n // _GROUP_POINTS))
    group_of = _group_lists(C, counts.astype(np.float64) * probing, n_groups)
    n_groups = int(group_of.max()) + 1
    splits = [client.submit(_part_split, a, x, s, int(parts.offsets[c]), group_of, n_groups)
              for c, (a, x, s) in enumerate(zip(A_f, futures, assign))]
    kc = min(n - 1, k + max(4, k // 4))
    tasks = []
    for g in range(n_groups):
        pieces = [client.submit(operator.getitem, s, g) for s in splits]
        tasks.append(client.submit(_group_search, np.flatnonzero(group_of == g), n_lists_,
                                   k, kc, unit2, rmax, *pieces, pure=False))
    out_i = np.full((n, k), -1, dtype=np.int64)
    out_d = np.full((n, k), np.inf)
    filled = np.zeros(n, dtype=np.int64)
    scanned = 0.0
    search_cpu = 0.0
    row_copies = 0
    distributed = _distributed()
    try:
        for _, res in distributed.as_completed(tasks, with_results=True):
            rows, idx, sq, pairs, cpu = res
            _merge_rows(rows, idx, sq, k, out_i, out_d, filled)
            scanned += pairs
            search_cpu += cpu
            row_copies += rows.size
            del res, rows, idx, sq
    except (distributed.client.FutureCancelledError, distributed.scheduler.KilledWorker,
            OSError) as exc:
        _gather(client, tasks, "search")  # raises the clear error
        raise exc
    # per row sent to a group: index, member flag, list, probes, float32 row, norm, X row;
    # back: index and k (index, distance) pairs
    xsize = 4 if np.dtype(getattr(X, "dtype", np.float64)) == np.float32 else 8
    itemsize = 8 + 1 + 8 + 4 * n_probe_ + 4 * (d + 2) + 8 + xsize * d
    bytes_moved += row_copies * (itemsize + 8 + 16 * k)
    times["search"] = clock() - t0
    t0 = clock()
    short = np.flatnonzero(filled < k)
    if short.size:  # fewer than k others in the probed lists: all points, as in memory
        idx, sq = parts.knn(parts.take(futures, short, "refine"), k + 1, "refine")
        out_i[short], out_d[short] = _self_dropped(idx, sq, short, k)
    times["refine"] = clock() - t0
    del tasks, splits, assign

    def recall(indices, sample_size):
        """Recall@k on ``sample_size`` points (drawn as :func:`knn_recall` draws them)."""
        m = min(int(sample_size), n)
        sample = np.sort(check_random_state(builder.random_state).choice(n, m, replace=False))
        idx, sq = parts.knn(parts.take(futures, sample, "recall"), k + 1, "recall")
        exact, ex_sq = _self_dropped(idx, sq, sample, k)
        approx = indices[sample]
        in_exact = (approx[:, :, None] == exact[:, None, :]).any(axis=2)
        tied = out_d[sample] <= ex_sq[:, k - 1][:, None]
        return int(np.count_nonzero((approx >= 0) & (in_exact | tied))) / (m * k)

    info = {"n_lists": int(n_lists_), "n_probe": int(n_probe_), "times": times,
            "scan_fraction": scanned / max(float(n) * n, 1.0), "n_empty": n_empty,
            "largest": int(counts.max()), "n_full": int(short.size),
            "bytes_moved": int(bytes_moved), "n_groups": n_groups,
            "search_cpu": search_cpu, "pairs": scanned,
            "groups_per_point": row_copies / max(n, 1)}
    return out_i, out_d, info, recall
