"""Inverted-file kNN graphs on the exact search's float32 GEMM and fused top-k kernels.

Algorithm (the inverted file of Sivic & Zisserman, "Video Google", ICCV 2003, and Jegou,
Douze & Schmid, "Product quantization for nearest neighbor search", TPAMI 33(1), 2011, with
the exact search's filter / refine / certify steps of :mod:`fastgssl.graphs._knn`):

1. *Operands.* The rows are centred and scaled by a power of two and rounded once to
   float32, augmented as ``A = [x', ||x'||^2, 1]`` and ``B = [-2 x', 1, ||x'||^2]``, so that
   one GEMM ``A B^T`` gives approximate squared distances (the exact search's operands).
2. *Lists.* Lloyd's k-means (3 iterations) with ``n_lists`` centroids on a random sample
   of ``max(16384, 30 n_lists)`` rows (float32 GEMM assignment, float64 means); a list that
   empties is re-seeded with a point of a large list (the split of faiss' k-means).  The
   lists are named in a spatial order (recursive median splits of the centroids along
   principal axes), so that near lists are near in the list order of the rows.
3. *Probes.* Every point ``q`` gets its own probe set ``P(q)``: its ``n_probe`` nearest
   centroids (GEMM blocks of all rows against the centroids, each row then selected by a
   sampled cut and a quickselect of the few entries below it); its nearest one is its
   list.  ``target_recall`` chooses ``n_probe`` first:
   on a sample of points with exact neighbours, the recall of probe count ``p`` is the
   share of exact neighbours whose list is among the ``p`` nearest centroids of the query.
4. *Search.* The probe sets are inverted: list ``L`` is searched by the batch
   ``B_L = {q : L in P(q)}``.  Single-threaded ``sgemm`` blocks of the gathered query rows
   against the list's rows (contiguous: the rows are stored in list order) and the fused
   top-``k_c`` selection into the queries' heaps (``k_c = k + max(4, k / 4)``); two lists
   probed both ways share their common block (rows and columns both select,
   :mod:`fastgssl.graphs._ivf_pairs`; on Dask too, a pair whose lists sit in two search
   tasks' groups being searched once by one of them, the smaller list sent to it whole).
   Worker threads own whole tasks and their own heaps, merged at the end.
5. *Refine and certify* as the exact search: the ``k_c`` candidates are re-ranked by their
   float64 distances, sorted by ``(distance, index)``; a row whose float32 filter cannot
   separate the ``k``-th candidate from the rest of its probed points by the rounding bound
   ``delta`` (ties, duplicated points) is rescanned exactly over its probed lists.

The result is therefore the exact ``k`` nearest neighbours *within the probed lists* of
each point; with ``n_probe = n_lists`` it is the exact search's result, index for index.

One driver runs these stages (:func:`fastgssl.graphs._ivf_driver.ivf_lists`: their order,
the random streams, ``k_c``, the bound) over a rows backend, ``MemoryRows`` for an
in-memory ``X`` or :class:`fastgssl.graphs._ivf_dask.DaskRows` for row chunks on a Dask
cluster; this module holds the builder (parameters, weights, warnings, attributes).
"""

from __future__ import annotations

import math
import time
import warnings

import numpy as np
import scipy.sparse as sp

from fastgssl._validation import (
    check_bounded_int,
    check_n_neighbors,
    check_X,
    store_init_arguments,
)

from ._builders import _GraphBuilder, knn_adjacency
from ._graph import Graph
from ._ivf_driver import MemoryRows, ivf_lists, ivf_recall
from ._knn import _search_dtype
from ._nndescent import check_min_recall, warn_low_recall
from ._weights import (
    DEFAULT_SELF_TUNED_CONSTANT,
    check_knn_weight,
)

__all__ = ["IVFGraph", "default_n_lists"]


def default_n_lists(n_samples):
    """``n_lists`` of ``n_lists=None``: ``2 sqrt(n)`` lists, at least 32 points per list on
    average (894 lists at ``2 10^5`` points, 2,000 at ``10^6``, 1 below 64 points).

    Measured at ``2 10^5 x 50`` (Gaussian mixture, recall 0.9, one thread):
    ``4 sqrt(n)`` lists scanned fewer pairs (4.7 % against 5.1 %) but cost more in
    k-means and probe selection, and a list of ~100 points is a short GEMM block: 35 s
    against 23-25 s in total for 450-900 lists."""
    return int(max(1, min(round(2.0 * math.sqrt(n_samples)), n_samples // 32)))


class IVFGraph(_GraphBuilder):
    """Registry factory ``"ivf"``: approximate kNN graph by an inverted file (k-means lists).

    ``IVFGraph(...)(X)`` returns the symmetric affinity ``W``, like the other builders.

    Parameters
    ----------
    n_neighbors : int, default=10
        ``k`` neighbours per point (self excluded), ``1 <= k < n``.
    weight, sigma_w, symmetrize, self_tuned_constant
        As in :func:`fastgssl.graphs.knn_graph` (applied by the same code).
    n_lists : int or None, default=None
        Number of k-means lists, ``1 <= n_lists <= n``; ``None``:
        :func:`default_n_lists` (``2 sqrt(n)``, at least 32 points per list).
    n_probe : int or None, default=None
        Lists searched per point (its nearest centroids), ``1 <= n_probe <= n_lists``.
        Exclusive with ``target_recall``; when both are None, ``target_recall=0.95``.
    target_recall : float or None, default=None
        Recall in ``(0, 1]`` that ``n_probe`` is chosen for, on a sample of 1,000 points
        with exact neighbours before the full search (see Notes).
    recall_sample : int, default=1000
        Points on which ``recall_`` is measured against exact search (0 disables it).
    min_recall : float or None, default=0.9
        A measured recall below this gives a :class:`LowRecallWarning` with the number and
        what to change; None never warns.
    random_state : int, RandomState or None, default=None
        The k-means sample and start, and the recall samples.
    n_jobs : int or None, default=None
        Threads (GEMM workers with one BLAS thread each, and the Numba kernels), as in
        :func:`fastgssl.graphs.knn_search`.  (On a Dask cluster every task runs on one
        thread; the cluster's worker threads are the parallelism.)
    client : distributed.Client or None, default=None
        Build on this Dask cluster (:mod:`fastgssl.graphs._ivf_dask`): a NumPy ``X`` is
        scattered in row chunks, a ``dask.array`` ``X`` (row chunks) is searched where its
        chunks live (then ``None`` means the active client).  The graph is the in-memory
        one for the same ``random_state`` and ``n_probe``.  Needs ``pip install
        'dask[distributed]'`` (from a checkout: ``pip install -e '.[dask]'``).

    Attributes
    ----------
    recall_ : float
        Recall@k of the last graph against exact search on ``recall_sample`` points
        (:func:`fastgssl.graphs.knn_recall`, drawn with ``random_state``); NaN if disabled.
    neighbors_ : ndarray of shape (n_samples, n_neighbors), int64
        The neighbour lists of the last graph, nearest first (ties by index), before
        symmetrization.
    n_probe_ : int
        The number of lists each point searched.
    n_lists_ : int
        The number of non-empty k-means lists.
    scan_fraction_ : float
        Distance pairs the search formed, as a share of all ``n^2`` pairs (the exact
        search forms about half of them); a pair of lists probed both ways is searched
        once (:mod:`fastgssl.graphs._ivf_pairs`), on Dask when both lists are in one
        search task's group (else once per direction: a few more pairs).
    stage_times_ : dict
        Wall seconds of the stages of the last call: ``"operands"`` (centre, float32
        rows), ``"kmeans"``, ``"tune"`` (choice of ``n_probe``), ``"assign"`` (probe
        lists), ``"search"``, ``"refine"``, ``"weights"``, ``"recall"``.  (On Dask the
        chunks' check and ranges come before the stages, in no entry; the search tasks
        refine their rows, so ``"refine"`` is only the exact search of short rows.)
    dask_info_ : dict or None
        On Dask: ``"bytes_moved"`` (scatter, rows sent to the list groups and lists
        gathered back; approximate), ``"n_groups"`` (search tasks) and
        ``"groups_per_point"`` (mean number of groups a point's rows went to),
        ``"search_cpu"`` and ``"search_wall"`` (CPU and wall seconds of the search tasks,
        summed), ``"pairs"`` (distance pairs they formed: the in-memory search's) and
        ``"extra_lists"`` (lists sent whole to another group, whose pairs of lists probed
        both ways it searches once); None for an in-memory build.

    Notes
    -----
    See :mod:`fastgssl.graphs._ivf` for the algorithm.  Each point's list is exact among
    the points of its ``n_probe`` probed lists (float64 distances, ties by index), so with
    ``n_probe = n_lists`` the graph is the exact one.  With ``p_L`` the share of points in
    list ``L`` the one-way search costs ``n sum_q sum_{L in P(q)} p_L`` distance pairs, a
    fraction ``f`` of all ``n^2`` (measured on a 50-dimensional Gaussian mixture with the
    default lists: 5.6 % at recall 0.91, 7.1 % at 0.96, 8 % at 0.98 at ``2 10^5`` points,
    4.7 % at recall 0.92 at ``10^6``), each a share of one float32 GEMM; the exact search
    forms half of all pairs.  In memory, pairs of lists probed both ways are searched once,
    which forms 25-30 % fewer (``scan_fraction_``: 4.1 % against 5.9 % at ``2 10^5`` with
    40 probes, 3.5 % against 4.7 % at ``10^6`` with 68).  Memory: the float32 operands
    (``2 n (d + 2)`` floats), a copy of ``X`` in list order for the refinement, the probe
    lists and their inverse (``2 n n_probe`` int32) and one candidate heap per thread
    (``n k_c`` entries; threads beyond a 2 GB heap budget are not used).  Measured peak at
    ``10^6 x 50`` float32: 1.6 GB.

    Recall: for a query, the search finds exactly those exact neighbours whose list is
    probed, so the recall of ``n_probe = p`` is the share of (query, exact neighbour) pairs
    where the neighbour's list is among the query's ``p`` nearest centroids.  One exact
    search of a sample gives that curve for every ``p`` at once; ``target_recall`` takes the
    smallest ``p`` on it.  ``recall_`` is then measured on an independent sample.

    Sparse input is refused (densify it, or use the exact ``"knn"``, which searches CSR
    natively); float16 and integer data are searched in float64.

    Examples
    --------
    >>> import numpy as np
    >>> from fastgssl.graphs import IVFGraph, knn_search
    >>> X = np.random.default_rng(0).normal(size=(400, 8))
    >>> builder = IVFGraph(n_neighbors=5, n_lists=8, n_probe=8, random_state=0)
    >>> W = builder(X)
    >>> bool((builder.neighbors_ == knn_search(X, 5)[0]).all()), builder.recall_
    (True, 1.0)
    """

    def __init__(self, n_neighbors=10, weight="binary", sigma_w=None, symmetrize=None,
                 n_lists=None, n_probe=None, target_recall=None, recall_sample=1000,
                 min_recall=0.9, random_state=None, n_jobs=None, client=None,
                 self_tuned_constant=DEFAULT_SELF_TUNED_CONSTANT):
        store_init_arguments(self, locals())

    def _check_params(self, n):
        k = check_n_neighbors(self.n_neighbors, n)
        sigma_w, constant, how = check_knn_weight(self.weight, self.sigma_w, self.symmetrize,
                                                  self.self_tuned_constant)
        if self.n_lists is None:
            n_lists = default_n_lists(n)
        else:
            n_lists = check_bounded_int(self.n_lists, "n_lists", low=1, high=n,
                                        hint=f" (X has {n} points: at most one list each)")
        if self.n_probe is not None and self.target_recall is not None:
            raise ValueError(
                f"give n_probe or target_recall, not both (n_probe={self.n_probe!r}, "
                f"target_recall={self.target_recall!r})."
            )
        n_probe = None
        if self.n_probe is not None:
            n_probe = check_bounded_int(self.n_probe, "n_probe", low=1, high=n_lists,
                                        hint=f" (n_lists={n_lists}: a point can probe "
                                             f"every list at most once)")
        target = 0.95 if self.target_recall is None else self.target_recall
        if n_probe is None and (isinstance(target, bool) or not isinstance(
                target, (int, float, np.integer, np.floating))
                or not 0.0 < float(target) <= 1.0):
            raise ValueError(f"target_recall must be a number in (0, 1], got "
                             f"{self.target_recall!r}.")
        recall_sample = check_bounded_int(self.recall_sample, "recall_sample", low=0)
        min_recall = check_min_recall(self.min_recall)
        return (k, (sigma_w, constant, how), n_lists, n_probe, float(target), recall_sample,
                min_recall)

    def build(self, X):
        """The graph of ``X`` as a :class:`._graph.Graph` (``builder(X)`` is its ``W``)."""
        from ._ivf_dask import DaskRows, is_dask_array
        from ._knn import shared_self_search

        if sp.issparse(X):
            raise TypeError(
                "IVFGraph needs dense X (its lists are k-means centroids in the data's "
                "coordinates); pass X.toarray() if it fits in memory, or use the exact "
                "builder graph='knn', which searches sparse data natively."
            )
        X_given = None
        if self.client is not None or is_dask_array(X):
            rows = DaskRows(X, self.client)
        else:
            X_given = X
            rows = MemoryRows(check_X(X, "X", dtype=_search_dtype(X)))  # float32 stays
        k, weight_params, n_lists, n_probe, target, recall_sample, min_recall = \
            self._check_params(rows.n)
        seed = self.random_state

        def search(n_neighbors):
            return self._search(rows, n_neighbors, n_lists, n_probe, target, recall_sample)

        found = None
        if X_given is not None:  # inside reuse_neighbors (a grid over k): one search
            key = ("ivf", n_lists, n_probe, target,
                   seed if seed is None or isinstance(seed, (int, np.integer)) else id(seed))
            found = shared_self_search(X_given, k, key, search)
        out_i, out_d, info = search(k) if found is None else found
        self.dask_info_ = info["backend"]
        return self._finish(rows, out_i, out_d, info, k, n_lists, weight_params, recall_sample,
                            min_recall)

    def _search(self, rows, k, n_lists, n_probe, target, recall_points):
        """The lists of every point of the rows backend ``rows`` (in memory or on Dask):
        ``(indices, sq_distances, info)`` of :func:`._ivf_driver.ivf_lists`."""
        return ivf_lists(rows, k, n_lists, n_probe, target, recall_points, self.random_state,
                         self.n_jobs)

    def _finish(self, rows, out_i, out_d, info, k, n_lists, weight_params, recall_sample,
                min_recall):
        """Attributes, warnings, weights (:func:`knn_adjacency`, with ``weight_params``
        ``(sigma_w, self_tuned_constant, symmetrize)`` as checked) and ``recall_``
        (:func:`._ivf_driver.ivf_recall`) of the lists of a search."""
        sigma_w, constant, how = weight_params
        n = out_i.shape[0]
        times = dict(info["times"])
        clock = time.perf_counter
        self.n_lists_ = info["n_lists"]
        self.n_probe_ = info["n_probe"]
        self.scan_fraction_ = info["scan_fraction"]
        self.neighbors_ = out_i
        self._warn_lists(n, n_lists, info["n_empty"], info["largest"], info["n_full"], k)
        t0 = clock()
        W, sigma_w, self.kth_sq_distances_ = knn_adjacency(
            out_i, out_d, weight=self.weight, sigma_w=sigma_w, symmetrize=how,
            self_tuned_constant=constant, n_jobs=self.n_jobs)
        times["weights"] = clock() - t0
        t0 = clock()
        if recall_sample:
            self.recall_ = ivf_recall(rows, out_i, out_d, info, recall_sample,
                                      self.random_state, self.n_jobs)
        else:
            self.recall_ = float("nan")
        times["recall"] = clock() - t0
        self.stage_times_ = times
        warn_low_recall("IVFGraph", k, self.recall_, min(recall_sample, n), min_recall,
                        f" (n_probe={self.n_probe_} of {self.n_lists_} lists); raise n_probe "
                        f"or target_recall,", stacklevel=4)
        return Graph(W, weight=self.weight, sigma_w=sigma_w, self_tuned_constant=constant,
                     symmetrize=how, n_neighbors=k, neighbors=out_i,
                     kth_sq_distances=self.kth_sq_distances_,
                     recall=self.recall_ if recall_sample else None)

    def _warn_lists(self, n, n_lists, n_empty, largest, n_full, k):
        """Warnings about the lists: empty ones, one holding most points, tiny probes."""
        if n_empty:
            warnings.warn(
                f"IVFGraph: {n_empty} of n_lists={n_lists} k-means lists stayed empty (X "
                f"has too few distinct points for that many lists?); searching "
                f"{self.n_lists_} lists. Lower n_lists.",
                UserWarning,
                stacklevel=5,
            )
        mean = n / self.n_lists_
        # k-means lists are uneven (up to ~15x the mean size measured on a 784-dimensional
        # mixture); a quarter of all points in one list is what equal points do
        if self.n_lists_ >= 4 and largest > max(8.0 * mean, 0.25 * n):
            warnings.warn(
                f"IVFGraph: one list holds {largest} of {n} points ({100.0 * largest / n:.0f} "
                f"%, {largest * self.n_lists_ / n:.0f}x the mean list size) that k-means "
                f"could not split (many equal or nearly equal points?); every point probing "
                f"it scans all of them (time grows with its size squared).",
                UserWarning,
                stacklevel=5,
            )
        if n_full:
            warnings.warn(
                f"IVFGraph: {n_full} points found fewer than n_neighbors={k} others in "
                f"their {self.n_probe_} probed lists and were searched exactly against "
                f"all points; raise n_probe or lower n_lists.",
                UserWarning,
                stacklevel=5,
            )
