"""The inverted-file kNN graph (:class:`fastgssl.graphs.IVFGraph`) searched on a Dask cluster.

``IVFGraph(...)(X)`` takes this road when ``X`` is a ``dask.array`` (row chunks) or when the
builder was given ``client=``; the client gets the same graph as the in-memory search with
the same ``random_state`` and ``n_probe`` (same neighbours, same weights).

:class:`DaskRows` is the rows backend of the inverted-file driver
(:func:`fastgssl.graphs._ivf_driver.ivf_lists`), which runs the stages of
:mod:`fastgssl.graphs._ivf` in their order with their seeds and constants; the backend
splits them between client and workers:

1. *Parts.* ``X`` stays in row chunks on the workers: a dask array's chunks are computed
   there, a NumPy array is cut into one chunk per worker thread and scattered once.  Each
   chunk is validated and cast (float32 stays float32) where it lives.
2. *Operands.* The per-feature ranges (the distance-scale check and the power-of-two scale)
   and the centre are reduced from the chunks; the centre is folded chunk after chunk in
   the in-memory search's order of summation (:func:`fastgssl.graphs._operands.centre_fold`,
   the in-memory code itself), so it is the same float64 vector bit for bit.  Each worker
   then builds its chunk's float32 rows ``[x', ||x'||^2, 1]`` and their float64 norms
   (:func:`fastgssl.graphs._operands.augmented_rows`, as in memory).
3. *Lists (client).* The k-means sample's rows are gathered to the client, where the
   driver runs the same k-means (and the ``target_recall`` choice of ``n_probe``: the
   sample's exact neighbours are merged from per-chunk exact searches) with the same
   random streams.
4. *Probes (workers).* Every chunk selects its points' ``n_probe`` nearest centroids and
   returns only per-list counts (members and probing points) and its (list, probed list)
   pairs.
5. *Groups.* The lists are cut into ``n_groups`` groups of about equal cost ``sum_L
   |L| |B_L|`` by recursive bisection along the principal axis of their centroids, so a
   group's lists are near each other and most points probe few groups.  A probe ``(q,
   L)`` is searched in the group of ``L``, except for a pair of lists ``S``, ``T`` of two
   groups probed both ways (a member of each probes the other): the smaller, ``S``, goes
   whole to the group of ``T`` as an extra list, and the probes of ``S`` by the members of
   ``T`` are searched there (:func:`_cross_pairs`).  Every chunk sends to group ``g`` the
   members of its lists and extra lists and the other points with a probe searched in
   ``g``, with their rows of ``X`` and the probes searched in ``g`` (the task rebuilds
   their float32 operands, the chunks' bits).
6. *Search (one task per group).* The in-memory search on the group alone
   (:func:`fastgssl.graphs._ivf_pairs._search_pairs`): members in list order, GEMM blocks
   + fused top-``k_c`` per (list, batch), a pair of lists probed both ways searched once
   as two-way blocks (two of the group's lists, or one and an extra list: so the pairs
   formed are those of the in-memory search, ``info["scan_fraction"]`` equal), the rows
   of no list of the group a list nobody probes; float64 re-ranking and certification
   (:func:`fastgssl.graphs._operands.filter_bound`); an uncertified row is scanned
   exactly over its probes searched in the group.  So every task returns, per point, the
   exact ``k`` nearest (``(distance, index)`` order) among the members of the lists of
   its probes searched there.
7. *Merge (client).* Per point the top ``k`` of its groups' lists: every probe is searched
   in exactly one group, so this is the exact ``k`` nearest among all probed lists -- the
   in-memory result, index for index.  A point with fewer than ``k`` others in its probed lists is
   searched exactly against every chunk (as the in-memory search does); the builder
   then computes the weights and the driver measures ``recall_`` (per-chunk exact
   searches of the recall sample).

Bytes moved (``IVFGraph.dask_info_["bytes_moved"]``, approximate): ``X`` once when it is
scattered (a dask array's chunks are computed where they live), the k-means sample to the
client, each point's row of ``X`` and its probes (``~s d + 4 n_probe`` bytes for
``s``-byte ``X``) to every group it goes to (``groups_per_point`` groups on average), and
per such copy ``k`` (index, distance) pairs back to the client.  Worker
processes each run one search task per thread (serial kernels, one BLAS thread).
"""

from __future__ import annotations

import math
import operator
import threading
import time

import numpy as np

from fastgssl._geometry import check_distance_scale
from fastgssl._threads import small_blas
from fastgssl._validation import check_X

from ._ivf_search import _nearest_centroids
from ._nndescent import drop_self
from ._operands import (
    augmented_rows,
    centre_fold,
    filter_bound,
    operand_step,
    power_of_two_unit,
    reference_rows,
)

__all__ = ["DaskRows", "is_dask_array"]

# members per search task at most (about): a task holds its members' and probing points'
# float32 and float64 rows and one heap of k_c candidates per row (~300 MB at d = 50)
_GROUP_POINTS = 1 << 19
# parallel kernels (the exact search on the workers) one at a time per worker process:
# Numba's workqueue layer refuses concurrent launches from the threads of one worker
_KERNEL_LOCK = threading.Lock()
# (list, list) keys handled with a table of flags up to this many keys (64 MB; 8,192 lists)
_TABLE_MAX = 1 << 26


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


def _distinct(keys, size):
    """The sorted distinct values of the integer array ``keys`` (in ``[0, size)``): by a
    table of ``size`` flags when it is small (a sort of the ``n n_probe`` keys of a chunk
    took 1.7 s for 10^5 points and 37 probes, the table 0.01 s), else by a sort."""
    if size > _TABLE_MAX:
        return np.unique(keys)
    seen = np.zeros(size, dtype=np.bool_)
    seen[keys] = True
    return np.flatnonzero(seen)


def _isin_sorted(keys, sorted_keys, size):
    """``np.isin(keys, sorted_keys)`` for integer keys in ``[0, size)`` (as
    :func:`_distinct`: a table of flags when ``size`` is small, else a binary search)."""
    if size > _TABLE_MAX:
        at = np.minimum(np.searchsorted(sorted_keys, keys), sorted_keys.size - 1)
        return sorted_keys[at] == keys
    table = np.zeros(size, dtype=np.bool_)
    table[sorted_keys] = True
    return table[keys]


def _part_counts(assign, n_lists):
    """Per-list members and probing points of the chunk, and its (list, probed list)
    pairs: sorted keys ``list * n_lists + probed list``."""
    labels, probe = assign
    return (np.bincount(labels, minlength=n_lists),
            np.bincount(probe.ravel(), minlength=n_lists),
            _distinct(labels[:, None] * n_lists + probe, n_lists * n_lists))


def _part_split(Xc, assign, offset, group_of, moved, extra_in):
    """Per group ``g``: the chunk's points that have a probe searched in ``g`` or whose
    list is one of ``g``'s lists (its own or an extra list, ``extra_in[g, L]``), with their
    kind (0 a member of one of ``g``'s lists, 1 of an extra list, 2 neither) and their
    probes, ``-1`` for a probe searched in another group.  A probe ``(p, L)`` is searched
    in the group of ``L``, or in the group of ``p``'s list when ``labels[p] * n_lists + L``
    is in ``moved`` (sorted)."""
    labels, probe = assign
    n_lists = group_of.size
    n_groups = extra_in.shape[0]
    home = group_of[labels]
    where = group_of[probe]
    if moved.size:
        where = np.where(_isin_sorted(labels[:, None] * n_lists + probe, moved,
                                      n_lists * n_lists), home[:, None], where)
    hit = extra_in[:, labels].T
    hit[np.arange(labels.size)[:, None], where] = True
    out = []
    for g in range(n_groups):
        rows = np.flatnonzero(hit[:, g])
        kind = np.where(home[rows] == g, 0, np.where(extra_in[g, labels[rows]], 1, 2))
        out.append((rows + offset, kind.astype(np.int8), labels[rows],
                    np.where(where[rows] == g, probe[rows], -1).astype(np.int32), Xc[rows]))
    return tuple(out)


def _group_search(lists, extra, n_lists, k, kc, unit2, rmax, centre, inv, *pieces):
    """One group's search (stage 6 of the module docstring): ``(indices of its rows in X,
    their k nearest among the probed lists searched in this group, squared distances,
    pairs formed, (CPU, wall) seconds of the task's thread)``.  ``lists`` are the group's lists,
    ``extra`` lists of other groups whose members all came here: the other side of the
    pairs of lists probed both ways that this group searches.  The float32 operands of
    the rows are rebuilt here from their rows of ``X`` (:func:`._operands.augmented_rows`:
    a row's values do not depend on the rows beside it, so they are the chunks' bits)."""
    from ._ivf_kernels import _invert_probes_here, _refine_task, _scan_task
    from ._ivf_pairs import _search_pairs

    cpu0, wall0 = time.thread_time(), time.perf_counter()
    orig, kind, labels, probe, Xr = (np.concatenate(p) for p in zip(*pieces))
    n_l = lists.size + extra.size
    # local list ids: the group's lists, the extra lists, then n_l, an empty list (the
    # probes searched in other groups, -1: the last entry of `local`), and n_l + 1, the
    # rows of no list here, which nobody probes (rows only)
    local = np.full(n_lists + 1, n_l, dtype=np.int32)
    local[lists] = np.arange(lists.size, dtype=np.int32)
    local[extra] = np.arange(lists.size, n_l, dtype=np.int32)
    members = np.flatnonzero(kind < 2)
    members = members[np.argsort(local[labels[members]], kind="stable")]  # (list, index)
    rows = np.concatenate([members, np.flatnonzero(kind == 2)])
    counts = np.bincount(local[labels[members]], minlength=n_l + 1)
    starts = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    probe_l = local[probe[rows]]
    orig, Xt = orig[rows], Xr[rows]
    At, norms = augmented_rows(Xt, centre, inv, operand_step(Xt.shape[1]), True)
    m = members.size
    Bt = reference_rows(At[:m])
    # a pair of lists here (the group's or extra) probed both ways is searched once
    # (two-way blocks, as in memory: _ivf_pairs)
    ptr, queries = _invert_probes_here(probe_l, n_l + 2, np.arange(probe_l.shape[0]))
    with small_blas(0.0):
        heap_d, heap_i, scanned = _search_pairs(At, Bt, np.append(starts, rows.size), ptr,
                                                queries, kc, 1)
    delta = filter_bound(At.shape[1] - 2, norms, rmax, unit2)
    nt = rows.size
    out_i = np.full((nt, k), -1, dtype=np.int64)
    out_d = np.full((nt, k), np.inf)
    failed = np.zeros(nt, dtype=np.bool_)
    _refine_task(Xt, orig, heap_i, heap_d, unit2, delta, k, out_i, out_d, failed)
    bad = np.flatnonzero(failed)
    if bad.size:
        _scan_task(Xt, orig, bad, probe_l[bad], starts[:n_l + 1], k, out_i, out_d)
    return (orig, out_i, out_d, scanned,
            (time.thread_time() - cpu0, time.perf_counter() - wall0))


def _part_knn(Xc, offset, Xq, kk):
    """Exact ``kk`` nearest of the rows ``Xq`` in this chunk (indices in X)."""
    from ._knn import knn_search

    kk = min(kk, Xc.shape[0])
    with _KERNEL_LOCK:
        idx, sq = knn_search(Xq, kk, Xc, n_jobs=1)
    return idx + offset, sq


# ---------------------------------------------------------------- client-side driver


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


def _cross_pairs(keys, sizes, group_of, n_groups):
    """The pairs of lists probed both ways whose lists are in different groups, to be
    searched once (two-way blocks) by one of the two groups: ``(moved, extra_in)``.

    ``keys`` are the sorted (list, probed list) pairs (``S * n_lists + T``: a member of
    ``S`` probes ``T``), ``sizes`` the list sizes.  Of a pair ``{S, T}`` the smaller
    list (``S``) goes whole to the group of ``T`` as an extra list (``extra_in[g, S]``),
    and the probes of ``S`` by the members of ``T`` are searched there (``T * n_lists +
    S`` in the sorted ``moved``), where the two-way block of the pair forms ``|Q_ST| |T| +
    |Q_TS| |S| - |Q_ST| |Q_TS|`` pairs instead of the sum, the in-memory count.  Every
    such pair is taken: the members of ``T`` probing ``S`` then need not go to the group
    of ``S`` (measured at ``2 10^5 x 50``, 894 lists in 4 groups: 360 extra lists, 1.38
    groups per point against 1.42, 247 MB moved against 253, and 5.1 % fewer pairs)."""
    n_lists = group_of.size
    a, b = keys // n_lists, keys % n_lists
    back = b * n_lists + a
    at = np.minimum(np.searchsorted(keys, back), keys.size - 1)
    both = (keys[at] == back) & (a < b) & (group_of[a] != group_of[b])
    a, b = a[both], b[both]
    small = sizes[a] <= sizes[b]
    S, T = np.where(small, a, b), np.where(small, b, a)
    extra_in = np.zeros((n_groups, n_lists), dtype=np.bool_)
    extra_in[group_of[T], S] = True
    return np.sort(T * n_lists + S), extra_in


class DaskRows:
    """The rows backend (:mod:`fastgssl.graphs._ivf_driver`) of ``X`` on a Dask cluster.

    ``X`` is a ``dask.array`` (row chunks, computed where they live) or a NumPy array
    (scattered in one chunk per worker thread); ``client`` None means the active
    ``distributed.Client``.  The chunks are validated and the distance scale checked here
    (module docstring, stages 1-2); the operations run on the workers and return what the
    driver needs (stages 2-7).  ``n_groups`` search tasks (None: one per worker thread, and
    at most about ``2^19`` points each)."""

    def __init__(self, X, client=None, n_groups=None):
        client = _check_client(client)
        futures, sizes, d, bytes_in = _split_parts(client, X)
        self.client = client
        self.futures = futures
        self.sizes = np.asarray(sizes, dtype=np.int64)
        self.offsets = np.concatenate(([0], np.cumsum(self.sizes)))
        self.n = int(self.offsets[-1])
        self.d = d
        self.n_groups = n_groups
        self.xsize = 4 if np.dtype(getattr(X, "dtype", np.float64)) == np.float32 else 8
        self.bytes_moved = bytes_in
        ranges = _gather(client, [client.submit(_part_range, f) for f in futures], "check")
        lo = np.min([r[0] for r in ranges], axis=0)
        hi = np.max([r[1] for r in ranges], axis=0)
        self.sq_spread = check_distance_scale(np.vstack([lo, hi]), name="X")

    # -- the driver's operations

    def operands(self, threads):
        """The in-memory operands chunk by chunk: the centre folded in the in-memory order
        of summation (:func:`._operands.centre_fold`), then each chunk's rows
        (:func:`._operands.augmented_rows`)."""
        client, d = self.client, self.d
        step = operand_step(d)
        pivot = np.asarray(self.take(self.futures, [0], "centre")[0], dtype=np.float64)
        state = (np.zeros(d), None)
        for c, f in enumerate(self.futures):
            state = client.submit(centre_fold, state, f, int(self.offsets[c]), step, pivot,
                                  pure=False)
        total, partial = _gather(client, state, "centre")
        if partial is not None:
            total = total + partial
        centre = pivot + total / self.n
        unit = power_of_two_unit(self.sq_spread)
        self.unit2 = unit * unit
        self.centre, self.inv = centre, 1.0 / unit
        self.A_f = [client.submit(augmented_rows, f, centre, 1.0 / unit, step, True)
                    for f in self.futures]
        self.rmax = max(_gather(client, [client.submit(_part_norm_max, f)
                                         for f in self.A_f], "operands"))
        return self._view(self.A_f, d + 2, "kmeans")

    def sample_knn(self, sample, k, threads):
        """Per-chunk exact searches of the sample's rows merged by ``(distance, index)``."""
        idx, sq = self._knn(self.take(self.futures, sample, "exact"), k + 1, "exact")
        return drop_self(idx, sq, sample, k)

    def assign(self, C, Cop, n_probe, threads):
        client = self.client
        Cop_f = client.scatter(Cop, broadcast=True)
        self.assigned = [client.submit(_part_assign, a, Cop_f, n_probe) for a in self.A_f]
        got = _gather(client, [client.submit(_part_counts, a, C.shape[0])
                               for a in self.assigned], "assign")
        counts = np.sum([g[0] for g in got], axis=0)
        probing = np.sum([g[1] for g in got], axis=0)
        self.pairs = _distinct(np.concatenate([g[2] for g in got]), C.shape[0] ** 2)
        self.C, self.n_probe, self.counts = C, n_probe, counts
        self.cost = counts.astype(np.float64) * probing
        return counts

    def search(self, k, kc, threads):
        """One task per group of lists (stages 5-6), merged per point (stage 7)."""
        from ._ivf_kernels import _merge_rows

        client, n = self.client, self.n
        n_groups = self.n_groups
        # worker threads: group g prefers the thread g mod their number.  One group per
        # thread: a point's rows go to fewer groups than with two (measured at 2 10^5 x 50
        # on two one-thread workers, load ~2: 1.07 groups per point against 1.38, 201 MB
        # moved against 247, the build 4.7 s / 8.5 CPU-s against 6.9 s / 9.6)
        slots = [w for w, t in sorted(client.nthreads().items()) for _ in range(t)]
        if n_groups is None:  # one task per worker thread, tasks of at most ~2^19 points
            n_groups = max(len(slots), -(-n // _GROUP_POINTS))
        group_of = _group_lists(self.C, self.cost, n_groups)
        n_groups = int(group_of.max()) + 1
        moved, extra_in = _cross_pairs(self.pairs, self.counts, group_of, n_groups)
        self.pairs = None
        splits = [client.submit(_part_split, x, s, int(self.offsets[c]), group_of, moved,
                                extra_in)
                  for c, (x, s) in enumerate(zip(self.futures, self.assigned))]
        tasks = []
        for g in range(n_groups):
            pieces = [client.submit(operator.getitem, s, g) for s in splits]
            tasks.append(client.submit(_group_search, np.flatnonzero(group_of == g),
                                       np.flatnonzero(extra_in[g]), self.C.shape[0], k, kc,
                                       self.unit2, self.rmax, self.centre, self.inv,
                                       *pieces, pure=False,
                                       workers=[slots[g % len(slots)]],
                                       allow_other_workers=True))
        out_i = np.full((n, k), -1, dtype=np.int64)
        out_d = np.full((n, k), np.inf)
        filled = np.zeros(n, dtype=np.int64)
        scanned = 0.0
        search_cpu = search_wall = 0.0
        row_copies = 0
        distributed = _distributed()
        try:
            for _, res in distributed.as_completed(tasks, with_results=True):
                rows, idx, sq, pairs, (cpu, wall) = res
                _merge_rows(rows, idx, sq, k, out_i, out_d, filled)
                scanned += pairs
                search_cpu += cpu
                search_wall += wall
                row_copies += rows.size
                del res, rows, idx, sq
        except (distributed.client.FutureCancelledError, distributed.scheduler.KilledWorker,
                OSError) as exc:
            _gather(client, tasks, "search")  # raises the clear error
            raise exc
        del tasks, splits
        self.A_f = self.assigned = None
        # per row sent to a group: index, kind, list, probes, X row; back: index and k
        # (index, distance) pairs
        itemsize = 8 + 1 + 8 + 4 * self.n_probe + self.xsize * self.d
        self.bytes_moved += row_copies * (itemsize + 8 + 16 * k)
        self.found = (out_i, out_d, filled)
        self.stats = {"n_groups": n_groups, "search_cpu": search_cpu,
                      "search_wall": search_wall, "pairs": scanned,
                      "extra_lists": int(extra_in.sum()),
                      "groups_per_point": row_copies / max(n, 1)}
        return scanned

    def refine(self, k, threads):
        """The tasks refined and certified their rows; a point with fewer than ``k``
        others in its probed lists is searched exactly against every chunk (as the
        in-memory search does)."""
        out_i, out_d, filled = self.found
        self.found = None
        short = np.flatnonzero(filled < k)
        if short.size:
            out_i[short], out_d[short] = self.sample_knn(short, k, threads)
        return out_i, out_d, short.size

    def counters(self):
        """``bytes_moved`` (approximate), ``n_groups``, ``groups_per_point``,
        ``search_cpu`` and ``pairs`` (see :attr:`IVFGraph.dask_info_`), ``search_wall``
        (wall seconds of the search tasks, summed) and ``extra_lists`` (lists sent whole
        to another group for a pair probed both ways, :func:`_cross_pairs`)."""
        return {"bytes_moved": int(self.bytes_moved), **self.stats}

    # -- rows of the chunks

    def _view(self, futures, width, stage):
        """A ``rows[ids]`` view of a per-chunk array (``shape`` and indexing, for
        :func:`._ivf_search._kmeans` and :func:`._ivf_search._choose_n_probe`)."""
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

    def _knn(self, Xq, kk, stage):
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
