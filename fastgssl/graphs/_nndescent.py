"""Approximate kNN graphs by nearest-neighbour descent (pynndescent), with measured recall.

Implements the approximate builder of issue 3 on top of pynndescent (Dong, Moses & Li,
"Efficient k-nearest neighbor graph construction for generic similarity measures", WWW
2011; McInnes' implementation), an optional dependency: ``pip install pynndescent``
(from a checkout: ``pip install -e '.[ann]'``).
Its recall against the exact search of :func:`fastgssl.graphs.knn_search` is measured on a
random sample of points and stored on the builder (``recall_``).
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp

from fastgssl._geometry import check_distance_scale
from fastgssl._optional import import_optional
from fastgssl._validation import (
    check_bounded_int,
    check_n_jobs,
    check_n_neighbors,
    check_random_state,
    check_X,
    store_init_arguments,
)
from fastgssl.exceptions import LowRecallWarning

from ._builders import _GraphBuilder, knn_adjacency
from ._graph import Graph
from ._knn import _search_dtype, knn_search, numba_threads
from ._knn_kernels import pair_sqdist
from ._weights import (
    DEFAULT_SELF_TUNED_CONSTANT,
    check_knn_weight,
)


def check_min_recall(min_recall):
    """``min_recall`` of the approximate builders: a number in [0, 1], or None (no check)."""
    if min_recall is not None and (isinstance(min_recall, bool) or not isinstance(
            min_recall, (int, float, np.integer, np.floating))
            or not 0 <= float(min_recall) <= 1):
        raise ValueError(f"min_recall must be a number in [0, 1] or None, got "
                         f"{min_recall!r}.")
    return min_recall


def warn_low_recall(builder, k, recall, n_sampled, min_recall, fix, *, stacklevel):
    """Warn (:class:`LowRecallWarning`) when an approximate builder's measured recall@k is
    below ``min_recall`` (None: no check). ``fix`` is the builder's own advice, with its
    leading punctuation (what to raise); the exact builder is always offered last.
    ``stacklevel`` is the caller's, as if it warned itself."""
    if min_recall is not None and recall < float(min_recall):
        warnings.warn(
            f"{builder}: recall@{k} of the approximate graph is {recall:.3f} on {n_sampled} "
            f"sampled points, below min_recall={float(min_recall):g}{fix} or use the exact "
            f"builder graph='knn'.",
            LowRecallWarning,
            stacklevel=stacklevel + 1,
        )


def knn_recall(X, indices, *, sample_size=1000, random_state=None):
    """Recall@k of approximate neighbour lists against exact search on a sample.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_samples, n_features)
    indices : ndarray of shape (n_samples, k)
        Approximate neighbours of every point (self excluded).
    sample_size : int, default=1000
        Number of query points checked exactly (all points if larger than n).
    random_state : int, RandomState or None

    Returns
    -------
    recall : float
        Mean over sampled points of ``|approx(i) & exact(i)| / k``.  Exact ties at the
        k-th distance count as hits (any tied point is a correct k-th neighbour).
    """
    X = check_X(X, "X", dtype=_search_dtype(X))
    try:
        indices = np.asarray(indices)
    except ValueError as exc:
        raise ValueError(f"indices must be an integer array of shape (n_samples, k): {exc}") \
            from None
    if indices.ndim != 2 or indices.shape[0] != X.shape[0]:
        raise ValueError(
            f"indices must have shape (n_samples, k) = ({X.shape[0]}, k), got "
            f"{indices.shape}."
        )
    if indices.dtype.kind not in "iu":
        raise TypeError(f"indices must be an integer array, got dtype {indices.dtype}.")
    n, k = indices.shape
    sample = draw_recall_sample(n, sample_size, random_state)
    exact, exact_sq = exact_sample_lists(X, sample, k)
    return recall_against(X, indices, sample, exact, exact_sq)


def draw_recall_sample(n, sample_size, random_state):
    """The points :func:`knn_recall` checks: ``min(sample_size, n)`` of ``range(n)``
    without repetition, ascending, drawn with ``random_state``."""
    rng = check_random_state(random_state)
    m = min(int(sample_size), n)
    return np.sort(rng.choice(n, m, replace=False))


def exact_sample_lists(X, sample, k, n_jobs=None):
    """Exact ``k`` nearest neighbours of the points ``sample`` among all rows of ``X``,
    self left out (or, when ``k + 1`` equal points precede it, the ``(k + 1)``-th entry
    dropped): ``(indices, sq_distances)`` of shape ``(len(sample), k)``, nearest first."""
    exact_idx, exact_sq = knn_search(X[sample], k + 1, X, n_jobs=n_jobs)
    return drop_self(exact_idx, exact_sq, sample, k)


def drop_self(idx, sq, sample, k):
    """The exact ``k + 1`` lists ``(idx, sq)`` of the points ``sample`` without the point
    itself (or, when ``k + 1`` equal points precede it, without the ``(k + 1)``-th entry)."""
    m = sample.size
    is_self = idx == sample[:, None]
    drop = np.where(is_self.any(axis=1), is_self.argmax(axis=1), k)
    keep = np.ones_like(is_self)
    keep[np.arange(m), drop] = False
    return idx[keep].reshape(m, k), sq[keep].reshape(m, k)


def recall_against(X, indices, sample, exact, exact_sq):
    """Recall@k of ``indices`` on the points ``sample`` given their exact lists
    (:func:`exact_sample_lists`): an entry is a hit if it is in the exact list or no
    farther than the exact ``k``-th neighbour (ties)."""
    n, k = indices.shape
    m = sample.size
    kth = exact_sq[:, k - 1]
    approx = indices[sample].astype(np.int64)
    valid = (approx >= 0) & (approx < n) & (approx != sample[:, None])
    # exact float64 sums of (x_il - x_jl)^2, dense or CSR alike, in one parallel pass
    sq = pair_sqdist(X, np.repeat(sample, k), np.where(valid, approx, 0).ravel()).reshape(m, k)
    in_exact = (approx[:, :, None] == exact[:, None, :]).any(axis=2)
    hits = int(np.count_nonzero(valid & (in_exact | (sq <= kth[:, None]))))
    return hits / (m * k)


class NNDescentGraph(_GraphBuilder):
    """Registry factory ``"nndescent"``: approximate kNN graph by NN-descent.

    Parameters
    ----------
    n_neighbors : int, default=10
        ``k`` neighbours per point (self excluded).
    weight, sigma_w, symmetrize, self_tuned_constant
        As in :func:`fastgssl.graphs.knn_graph`.
    search_neighbors : int or None, default=None
        Size of the NN-descent lists (larger: higher recall, slower); ``None`` uses
        ``max(2 k, 30)``, for which recall is typically above 0.95.
    recall_sample : int, default=500
        Points on which recall against exact search is measured (0 disables it).
    min_recall : float or None, default=0.9
        A measured recall below this gives a :class:`LowRecallWarning` with the number and
        what to change (``search_neighbors``, or the exact builder ``"knn"``); None never
        warns.
    random_state : int or None, default=None
    n_jobs : int or None, default=None

    Attributes
    ----------
    recall_ : float
        Recall@k of the last graph built (set by ``__call__``; NaN when disabled), against
        the exact search of :func:`fastgssl.graphs.knn_search` on ``recall_sample``
        points drawn with ``random_state`` (:func:`knn_recall`).
    neighbors_ : ndarray of shape (n_samples, n_neighbors), int64
        The approximate neighbour lists of the last graph, nearest first (``-1`` where
        NN-descent returned fewer than ``k`` neighbours), before symmetrization.
    kth_sq_distances_ : ndarray of shape (n_samples,)
        ``d_k(x_i)^2`` over the approximate lists (the largest listed squared distance), the
        scale of the self-tuned weights.

    Notes
    -----
    When to use it: where the exact graph's ``O(n^2 d)`` search is out of reach, around
    ``10^6`` points on a few cores (exact: hours), and for data of low intrinsic dimension
    (images, embeddings), where NN-descent converges in few rounds.  Below ``~10^5``
    points, or for data of high intrinsic dimension (a 50-dimensional Gaussian mixture),
    the exact builder ``"knn"`` (float32 GEMM blocks near the machine's matrix-product
    rate) was measured as fast or faster on two cores (``bench/bench_approx_graph.py``).

    pynndescent computes distances in float32. Dense data are therefore centred and scaled
    by one common factor before they reach it (neighbour ranks do not change; an offset
    such as 1e8 would otherwise swallow the differences: recall 0.12 was measured without
    this), and the edge weights are computed from the original data in float64. Sparse data
    are passed as given (centring would densify them).
    """

    def __init__(self, n_neighbors=10, weight="binary", sigma_w=None, symmetrize=None,
                 search_neighbors=None, recall_sample=500, min_recall=0.9, random_state=None,
                 n_jobs=None, self_tuned_constant=DEFAULT_SELF_TUNED_CONSTANT):
        store_init_arguments(self, locals())

    def build(self, X):
        """The graph of ``X`` as a :class:`._graph.Graph` (``builder(X)`` is its ``W``)."""
        pynndescent = import_optional("pynndescent", "NNDescentGraph", extra="ann",
                                      alternative=", or use the exact builder 'knn'")
        from ._knn import _search_dtype

        X = check_X(X, "X", dtype=_search_dtype(X))  # float32 input stays float32
        check_distance_scale(X, name="X")
        n = X.shape[0]
        k = check_n_neighbors(self.n_neighbors, n)
        sigma_w, constant, how = check_knn_weight(self.weight, self.sigma_w, self.symmetrize,
                                                  self.self_tuned_constant)
        if self.search_neighbors is None:
            m = max(2 * k, 30)
        else:
            m = check_bounded_int(self.search_neighbors, "search_neighbors", low=1)
        m = min(max(m, k + 1), n)
        recall_sample = check_bounded_int(
            self.recall_sample, "recall_sample", low=0)  # 0: no recall check
        # pynndescent hands n_jobs to numba.set_num_threads: cap it at the CPU count
        n_jobs = None if self.n_jobs is None else check_n_jobs(self.n_jobs)
        min_recall = check_min_recall(self.min_recall)
        index = pynndescent.NNDescent(
            _float32_safe(X), n_neighbors=m, metric="euclidean",
            random_state=self.random_state, n_jobs=n_jobs,
        )
        idx, dist = index.neighbor_graph
        idx = np.asarray(idx, dtype=np.int64)
        # drop self (and missing entries, -1), keep the k closest of the rest
        bad = (idx == np.arange(n)[:, None]) | (idx < 0)
        order = np.argsort(np.where(bad, np.inf, dist), axis=1, kind="stable")[:, :k]
        idx = np.take_along_axis(idx, order, axis=1)
        missing = np.take_along_axis(bad, order, axis=1)
        with numba_threads(self.n_jobs):
            diff_sq = pair_sqdist(X, np.repeat(np.arange(n), k),
                                  np.where(idx < 0, 0, idx).ravel()).reshape(n, k)
        self.neighbors_ = np.where(missing, -1, idx)
        W, sigma_w, self.kth_sq_distances_ = knn_adjacency(
            self.neighbors_, diff_sq, weight=self.weight, sigma_w=sigma_w, symmetrize=how,
            self_tuned_constant=constant, n_jobs=self.n_jobs)
        if recall_sample:
            self.recall_ = knn_recall(X, self.neighbors_,
                                      sample_size=recall_sample,
                                      random_state=self.random_state)
        else:
            self.recall_ = float("nan")
        warn_low_recall("NNDescentGraph", k, self.recall_, recall_sample, min_recall,
                        f"; raise search_neighbors (now {m})", stacklevel=3)
        return Graph(W, weight=self.weight, sigma_w=sigma_w, self_tuned_constant=constant,
                     symmetrize=how, n_neighbors=k, neighbors=self.neighbors_,
                     kth_sq_distances=self.kth_sq_distances_,
                     recall=self.recall_ if recall_sample else None)


def _float32_safe(X):
    """Dense data centred and divided by their largest absolute value (one factor for
    every column: the Euclidean neighbour ranks are unchanged), as float32, so that
    float32 keeps their differences; sparse data as given.

    Built in row chunks (float64 only for a chunk), so the only full-size array is the
    float32 copy pynndescent needs anyway: at 10^6 x 50 that is 200 MB, where a centred
    float64 copy would add 400 MB."""
    if sp.issparse(X):
        return X
    n, d = X.shape
    if X.size == 0:
        return np.asarray(X, dtype=np.float32)
    step = max(1, (1 << 20) // max(d, 1))
    pivot = np.asarray(X[0], dtype=np.float64)
    total = np.zeros(d)
    for s0 in range(0, n, step):
        total += (X[s0:s0 + step] - pivot).sum(axis=0)
    centre = pivot + total / n
    scale = 0.0
    for s0 in range(0, n, step):
        scale = max(scale, float(np.max(np.abs(X[s0:s0 + step] - centre))))
    inv = 1.0 / scale if scale > 0 else 1.0
    out = np.empty((n, d), dtype=np.float32)
    for s0 in range(0, n, step):
        out[s0:s0 + step] = (X[s0:s0 + step] - centre) * inv
    return out
