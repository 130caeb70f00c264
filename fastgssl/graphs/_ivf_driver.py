"""The inverted-file search's driver: its stages, seeds and constants once, over a rows backend.

:func:`ivf_lists` runs the stages of :mod:`fastgssl.graphs._ivf` (operands, k-means lists,
the choice of ``n_probe``, probes, search, refinement) in one order, with one split of the
random stream (k-means, then the ``n_probe`` tuning sample), one candidate count ``k_c`` and
one certification bound (:func:`fastgssl.graphs._operands.filter_bound`), and returns the lists
and the ``info`` of the build; :func:`ivf_recall` measures their recall.  Where the rows
live is the backend's business (the pattern of faiss' ``DatasetAssign`` /
``big_batch_search``: one driver, a data backend):

- :class:`MemoryRows` (this module): ``X`` in memory, searched by Numba kernels and worker
  threads; pairs of lists probed both ways share their block
  (:mod:`fastgssl.graphs._ivf_pairs`).
- :class:`fastgssl.graphs._ivf_dask.DaskRows`: ``X`` in row chunks on a Dask cluster.

A backend has ``n`` and ``d`` (rows, features) and the operations the stages need:

``operands(threads)``
    Build the float32 query rows ``[x', ||x'||^2, 1]`` (the exact search's operands) and
    return a ``(n, d + 2)`` view with ``shape`` and row indexing (``A[ids]``).
``sample_knn(sample, k, threads)``
    Exact ``k`` nearest of the points ``sample`` among all rows, self left out
    (``(indices, sq_distances)``, ``(distance, index)`` order): the tuning and recall
    samples, and the Dask search's short rows.
``assign(C, Cop, n_probe, threads)``
    Every point's ``n_probe`` nearest centroids; returns the list sizes.
``search(k, kc, threads)``
    The search of every list by the points probing it (top ``k_c`` float32 candidates);
    returns the distance pairs formed.
``refine(k, threads)``
    The candidates re-ranked in float64 and certified, uncertified and short rows scanned
    exactly: ``(indices, sq_distances, n_full)``, ``n_full`` the points searched against
    all points for want of ``k`` others in their probed lists.
``counters()``
    The backend's own counters for ``info["backend"]`` (None in memory).

Both backends compute every number from the same operations on the same values, so the
lists (and the graph) are identical, index for index and bit for bit.
"""

from __future__ import annotations

import time

import numpy as np

from fastgssl._geometry import check_distance_scale
from fastgssl._threads import numba_threads, small_blas
from fastgssl._validation import check_random_state

from ._ivf_search import _centroid_order, _choose_n_probe, _kmeans, _nearest_centroids
from ._nndescent import draw_recall_sample, exact_sample_lists
from ._operands import _gemm_operands, filter_bound

__all__ = ["MemoryRows", "candidate_count", "ivf_lists", "ivf_recall"]


def candidate_count(n, k):
    """``k_c``, the float32 candidates kept per point beyond ``k`` for the certificate's
    margin: ``k + max(4, k / 4)`` (at most ``n - 1``).  Fewer than the exact search's
    ``max(8, k)``: each one costs heap pushes in every probed list (measured at ``2 10^5 x
    50``: 11 % less CPU time with ``k + 4`` than with ``2 k``, the same lists)."""
    return min(n - 1, k + max(4, k // 4))


def ivf_lists(rows, k, n_lists, n_probe, target, recall_points, random_state, n_jobs):
    """The lists of every point of the backend ``rows``: ``(indices, sq_distances, info)``.

    ``n_probe`` None chooses it for ``target`` recall (:func:`._ivf_search._choose_n_probe`)
    from one exact search of the tuning sample together with the ``recall_points`` points
    :func:`ivf_recall` checks, whose lists go to ``info["recall_exact"]``.  ``info`` holds
    ``n_lists``, ``n_probe``, ``times`` (wall seconds per stage), ``scan_fraction``,
    ``n_empty`` (k-means lists that emptied), ``largest`` (list size), ``n_full``,
    ``recall_exact`` and ``backend`` (:meth:`counters`)."""
    rng = check_random_state(random_state)
    kmeans_rng, tune_rng = (np.random.RandomState(s) for s in
                            rng.randint(0, 2**31 - 1, size=2))
    n = rows.n
    times = {}
    exact = {}
    clock = time.perf_counter
    with numba_threads(n_jobs) as threads, small_blas(0.0):
        t0 = clock()
        A = rows.operands(threads)
        times["operands"] = clock() - t0
        t0 = clock()
        C, Cop, n_empty = _kmeans(A, n_lists, kmeans_rng, threads)
        n_lists_ = C.shape[0]
        times["kmeans"] = clock() - t0
        t0 = clock()
        if n_probe is not None:
            n_probe_ = min(n_probe, n_lists_)
        elif n_lists_ == 1:
            n_probe_ = 1
        else:
            rec = (draw_recall_sample(n, recall_points, random_state) if recall_points
                   else np.empty(0, dtype=np.int64))

            def neighbors(sample, kk):
                # one exact search of the tuning sample and the recall sample
                both, where = np.unique(np.concatenate((sample, rec)), return_inverse=True)
                idx, sq = rows.sample_knn(both, kk, threads)
                at = where[sample.size:]
                if rec.size:
                    exact["recall"] = (rec, idx[at], sq[at])
                return idx[where[:sample.size]]

            n_probe_ = _choose_n_probe(A, A, Cop, k, target, tune_rng, threads, n_jobs,
                                       neighbors=neighbors)
        times["tune"] = clock() - t0
        del A
        t0 = clock()
        counts = rows.assign(C, Cop, n_probe_, threads)
        times["assign"] = clock() - t0
        t0 = clock()
        scanned = rows.search(k, candidate_count(n, k), threads)
        times["search"] = clock() - t0
        t0 = clock()
        out_i, out_d, n_full = rows.refine(k, threads)
        times["refine"] = clock() - t0
    info = {"n_lists": int(n_lists_), "n_probe": int(n_probe_), "times": times,
            "scan_fraction": scanned / max(float(n) * n, 1.0), "n_empty": n_empty,
            "largest": int(counts.max()), "n_full": int(n_full),
            "recall_exact": exact.get("recall"), "backend": rows.counters()}
    return out_i, out_d, info


def ivf_recall(rows, indices, sq_distances, info, sample_size, random_state, n_jobs):
    """Recall@k of the lists ``(indices, sq_distances)`` on ``sample_size`` points drawn as
    :func:`fastgssl.graphs.knn_recall` draws them (``random_state``): an entry is a hit if
    it is in the point's exact list or no farther than its exact ``k``-th neighbour (ties).
    The exact lists come from ``info["recall_exact"]`` when the search found them (same
    ``k``), else from the backend's exact search of the sample."""
    k = indices.shape[1]
    found = info.get("recall_exact")
    if found is not None and found[1].shape[1] == k:
        sample, exact, exact_sq = found
    else:
        sample = draw_recall_sample(rows.n, sample_size, random_state)
        with numba_threads(n_jobs) as threads:
            exact, exact_sq = rows.sample_knn(sample, k, threads)
    approx = indices[sample]
    in_exact = (approx[:, :, None] == exact[:, None, :]).any(axis=2)
    tied = sq_distances[sample] <= exact_sq[:, k - 1][:, None]
    return int(np.count_nonzero((approx >= 0) & (in_exact | tied))) / (sample.size * k)


class MemoryRows:
    """The rows backend of an in-memory ``X`` (checked: float32 or float64, finite).

    Operands of :func:`._operands._gemm_operands`; assignment by GEMM blocks against the
    centroids, the lists named in spatial order (:func:`._ivf_search._centroid_order`) and
    the rows stored in list order; search by :func:`._ivf_pairs._search_pairs` (a pair of
    lists probed both ways shares its block); refinement by the Numba kernels of
    :mod:`fastgssl.graphs._ivf_kernels`.  Worker threads own whole tasks."""

    def __init__(self, X):
        self.X = X
        self.n, self.d = X.shape
        self.sq_spread = check_distance_scale(X, name="X")

    def operands(self, threads):
        self.A, _, self.q_norms, self.r_norms, self.unit2 = _gemm_operands(
            self.X, self.X, self.sq_spread, references=False, threads=threads)
        return self.A

    def sample_knn(self, sample, k, threads):
        return exact_sample_lists(self.X, sample, k, threads)

    def assign(self, C, Cop, n_probe, threads):
        n = self.n
        labels = np.empty(n, dtype=np.int64)
        self.probe = np.empty((n, n_probe), dtype=np.int32)
        _nearest_centroids(self.A, Cop, n_probe, threads, labels=labels, probe=self.probe,
                           names=_centroid_order(C))
        self.n_lists = C.shape[0]
        self.perm = np.argsort(labels, kind="stable")
        counts = np.bincount(labels, minlength=self.n_lists)
        self.starts = np.concatenate(([0], np.cumsum(counts)))
        return counts

    def search(self, k, kc, threads):
        from ._ivf_kernels import _invert_probes, _list_order_operands
        from ._ivf_pairs import _search_pairs

        ptr, queries = _invert_probes(self.probe, self.n_lists, self.perm)
        A, B = _list_order_operands(self.A, self.perm)
        self.A = None
        self.heap_d, self.heap_i, scanned = _search_pairs(A, B, self.starts, ptr, queries,
                                                          kc, threads)
        return scanned

    def refine(self, k, threads):
        """The candidates re-ranked in float64 in list order (near rows, near in memory)
        and certified as in the exact search, written back in the original order; rows
        the bound cannot certify are scanned over their probed lists (or all points)."""
        from ._ivf_kernels import _refine_lists, _scan_probed, _take_rows

        n, perm = self.n, self.perm
        Xp = _take_rows(self.X, perm)
        delta = filter_bound(self.d, self.q_norms[perm], self.r_norms.max(), self.unit2)
        out_i = np.full((n, k), -1, dtype=np.int64)
        out_d = np.full((n, k), np.inf)
        failed = np.zeros(n, dtype=np.bool_)
        _refine_lists(Xp, perm, self.heap_i, self.heap_d, self.unit2, delta, k, out_i, out_d,
                      failed)
        del Xp
        self.heap_i = self.heap_d = None
        rows = np.flatnonzero(failed)
        n_full = 0
        if rows.size:
            n_full = _scan_probed(self.X, rows, self.probe[rows], self.starts, perm, k, out_i,
                                  out_d)
        return out_i, out_d, n_full

    def counters(self):
        return None
