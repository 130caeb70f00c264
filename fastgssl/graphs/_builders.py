"""Graph builders: kNN and epsilon graphs, a validated precomputed graph, registry factories.

Every builder returns a symmetric, nonnegative ``scipy.sparse.csr_matrix`` (float64, sorted
indices) with an empty diagonal, the input of :mod:`fastgssl.regularizers`.  The graphs are
those of the source papers (the design notes): kNN or epsilon neighbourhoods with 0-1 or heat
kernel weights ``exp(-||x_i - x_j||^2 / (2 sigma_w))``, and on kNN graphs the self-tuned
weights ``exp(-c ||x_i - x_j||^2 / d_k(x_i)^2)`` of graphlearning (c = 4, its constant, by
default; :mod:`._weights`).
"""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import scipy.sparse as sp

from fastgssl._geometry import check_distance_scale
from fastgssl._threads import numba_threads
from fastgssl._validation import (
    check_no_complex,
    check_positive,
    check_X,
    store_init_arguments,
)

from ._adjacency_kernels import canonical_symmetric_scan
from ._graph import Graph
from ._weights import (
    DEFAULT_SELF_TUNED_CONSTANT,
    check_knn_weight,
    check_self_tuned_constant,
    check_symmetrize,
    check_weight,
    default_sigma_w,
    drop_diagonal,
    edge_weights,
    isolated_count,
    knn_edge_weights,
    symmetrize_lists,
)

__all__ = [
    "EpsilonGraph",
    "KNNGraph",
    "PrecomputedGraph",
    "check_adjacency",
    "epsilon_graph",
    "knn_adjacency",
    "knn_graph",
]

# The Returns section of the builders' docstrings, written once: a builder's docstring says
# GRAPH_RETURNS where it goes (see _graph_returns).
_GRAPH_RETURNS = """\
    Returns
    -------
    W : scipy.sparse.csr_matrix of shape (n_samples, n_samples)
        Symmetric, nonnegative, float64, empty diagonal.
"""


def _graph_returns(builder):
    """Put :data:`_GRAPH_RETURNS` in ``builder``'s docstring (none under ``python -OO``)."""
    if builder.__doc__:
        builder.__doc__ = builder.__doc__.replace("    GRAPH_RETURNS\n", _GRAPH_RETURNS)
    return builder


@_graph_returns
def knn_graph(X, n_neighbors, *, weight="binary", sigma_w=None, symmetrize=None,
              n_jobs=None, self_tuned_constant=DEFAULT_SELF_TUNED_CONSTANT):
    """Symmetric k-nearest-neighbour graph (exact search).

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_samples, n_features)
        Data; dense arrays and CSR matrices are both searched natively.
    n_neighbors : int
        ``k``, neighbours per point (``1 <= k < n_samples``); a point is not its own
        neighbour, but its exact duplicates are.
    weight : {"binary", "gaussian", "distance", "self_tuned", "self_tuned_sym"}, \
default="binary"
        Edge weight: 1; ``exp(-||x_i - x_j||^2 / (2 sigma_w))``; ``||x_i - x_j||``;
        ``exp(-c ||x_i - x_j||^2 / d_k(x_i)^2)`` with ``d_k(x_i)`` the distance from
        ``x_i`` to its k-th neighbour (graphlearning's default, locally scaled, at c = 4);
        or ``exp(-c ||x_i - x_j||^2 / (d_k(x_i) d_k(x_j)))`` (graphlearning's
        ``symgaussian`` at c = 4); c is ``self_tuned_constant``.
    sigma_w : float or None, default=None
        Gaussian bandwidth in the papers' convention: it divides the *squared* distance and
        is itself **not** squared.  ``None``: the mean squared distance from each point to
        its ``k`` neighbours (an average edge then weighs ``exp(-1/2)``).  Used by
        ``weight="gaussian"`` only.
    symmetrize : {"max", "mean", "mutual"} or None, default=None
        ``max(A, A^T)`` (either point lists the other), ``(A + A^T) / 2``, or
        ``min(A, A^T)`` (mutual neighbours only). ``None``: the weight's own, ``"mean"``
        for ``"self_tuned"`` (graphlearning's ``(W + W^T) / 2``) and ``"max"`` for the
        others (``"self_tuned_sym"`` is symmetric already: the union of the edges).
    n_jobs : int or None, default=None
        Threads of the search kernels (None or -1: all).
    self_tuned_constant : float > 0, default=4.0
        The constant c of the self-tuned weights (graphlearning's 4 by default). Along one
        list the first neighbour then outweighs the k-th by exp(c (1 - d_1^2 / d_k^2)); a
        smaller c gives flatter weights. A value other than 4 with a weight that is not
        self-tuned is an error.

    GRAPH_RETURNS

    Notes
    -----
    ``A[i, j] = w(x_i, x_j)`` for ``j`` among the ``k`` nearest neighbours of ``i`` (exact,
    ties broken by the smaller index, see :func:`fastgssl.graphs.knn_search`), then ``W`` is
    the chosen symmetrization of ``A``.  Time: blocked products ``O(n^2 d)`` in float32
    BLAS plus an ``O(n k d)`` exact refinement, or ``O(n log n)`` through a kd-tree when
    ``d <= 5``; memory ``O(n k)``.

    ``weight="self_tuned"`` with the default constant and symmetrization equals
    graphlearning's ``gl.weightmatrix.knn(X, k)`` on the same neighbour lists, to round-off.

    Examples
    --------
    >>> import numpy as np
    >>> from fastgssl.graphs import knn_graph
    >>> X = np.array([[0.0], [1.0], [3.0], [7.0]])
    >>> knn_graph(X, 1).toarray()
    array([[0., 1., 0., 0.],
           [1., 0., 1., 0.],
           [0., 1., 0., 1.],
           [0., 0., 1., 0.]])
    >>> W = knn_graph(X, 1, weight="self_tuned")
    >>> round(float(W[1, 2]), 4)  # x_2 lists x_1 (d_1(x_2) = 2), not the reverse: e^-4 / 2
    0.0092
    """
    return _knn_graph(X, n_neighbors, weight, sigma_w, symmetrize, n_jobs,
                      self_tuned_constant).W


def _knn_graph(X, n_neighbors, weight, sigma_w, symmetrize, n_jobs,
               constant=DEFAULT_SELF_TUNED_CONSTANT):
    """:func:`knn_graph` as a :class:`._graph.Graph` (the lists, ``d_k(x_i)^2``, the
    weight's parameters as used)."""
    from ._knn import knn_search

    sigma_w, constant, symmetrize = check_knn_weight(weight, sigma_w, symmetrize, constant)
    idx, sq = knn_search(X, n_neighbors, n_jobs=n_jobs)
    n = idx.shape[0]
    W, sigma_w, kth = knn_adjacency(idx, sq, weight=weight, sigma_w=sigma_w,
                                    symmetrize=symmetrize, self_tuned_constant=constant,
                                    n_jobs=n_jobs)
    n_iso = isolated_count(W)
    if n_iso:
        # mutual kNN drops one-sided edges; Gaussian weights can underflow to 0 for a tiny
        # sigma_w; distance weights vanish between exact duplicates; the symmetric self-tuned
        # weight from a point with k exact duplicates (d_k = 0) to any other point is 0
        n_dup = int(np.count_nonzero(kth == 0))
        hint = ("use symmetrize='max', a larger sigma_w or more neighbours"
                if weight != "self_tuned_sym" or not n_dup
                else f"{n_dup} points have their k-th neighbour at distance 0 (exact "
                     f"duplicates); use more neighbours or weight='self_tuned'")
        warnings.warn(
            f"knn_graph: {n_iso} of {n} vertices have no edge left (isolated vertices; "
            f"weight={weight!r}, symmetrize={symmetrize!r}, sigma_w={sigma_w}); {hint}.",
            UserWarning,
            stacklevel=3,
        )
    return Graph(W, weight=weight, sigma_w=sigma_w, self_tuned_constant=constant,
                 symmetrize=symmetrize, n_neighbors=int(n_neighbors), neighbors=idx,
                 kth_sq_distances=kth)


def knn_adjacency(indices, sq_distances, *, weight, sigma_w, symmetrize,
                  self_tuned_constant=DEFAULT_SELF_TUNED_CONSTANT, n_jobs=None):
    """Weighted, symmetrized graph of neighbour lists: the one place where every kNN builder
    (exact, NN-descent, inverted file) turns its lists into ``W``.

    Parameters
    ----------
    indices : ndarray of shape (n_samples, k), integer
        Neighbours of every point, nearest first, ``-1`` for a missing entry.
    sq_distances : ndarray of shape (n_samples, k), float64
        Their exact squared distances (ignored where ``indices`` is ``-1``).
    weight, sigma_w, symmetrize, self_tuned_constant, n_jobs
        As in :func:`knn_graph` (``weight`` and ``sigma_w`` already checked by
        :func:`fastgssl.graphs._weights.check_weight`; ``symmetrize`` None takes the
        weight's own; ``n_jobs``: the threads of the compiled symmetrization).

    Returns
    -------
    W : scipy.sparse.csr_matrix of shape (n_samples, n_samples)
        Symmetric, nonnegative, float64, empty diagonal, no stored zeros.
    sigma_w : float or None
        The Gaussian bandwidth used (the default of :func:`default_sigma_w` when it was
        None), None for other weights.
    kth_sq : ndarray of shape (n_samples,)
        ``d_k(x_i)^2``, the scale of the self-tuned weights (new points need their own).
    """
    missing = indices < 0
    idx = np.where(missing, 0, indices)
    data, sigma_w, kth = knn_edge_weights(
        idx, sq_distances, weight, sigma_w, missing=missing if missing.any() else None,
        constant=check_self_tuned_constant(self_tuned_constant, weight))
    with numba_threads(n_jobs):
        W = symmetrize_lists(idx, data, check_symmetrize(symmetrize, weight))
    return W, sigma_w, kth


@_graph_returns
def epsilon_graph(X, eps, *, weight="binary", sigma_w=None):
    """Symmetric epsilon-neighbourhood graph: an edge when ``||x_i - x_j|| <= eps``.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_samples, n_features)
    eps : float
        Radius (a Euclidean distance, not squared), ``> 0``.
    weight : {"binary", "gaussian", "distance"}, default="binary"
        As in :func:`knn_graph` (the self-tuned weights need kNN lists).
    sigma_w : float or None, default=None
        Gaussian width, a squared distance (as the kernels' ``sigma``); ``None``: the mean
        squared length of the edges.

    GRAPH_RETURNS

    Warns
    -----
    UserWarning
        When some vertices have no neighbour within ``eps`` (their count is given).

    Notes
    -----
    Exact: the boundary test ``d_ij^2 <= eps^2`` is made on float64 sums of
    ``(x_il - x_jl)^2``.  Dense data with ``d <= 5`` uses a kd-tree (output-sensitive);
    otherwise blocked products over the pairs ``i < j``.  The number of edges, hence memory,
    is data dependent: choose ``eps`` so that the graph stays sparse.
    """
    return _epsilon_graph(X, eps, weight, sigma_w).W


def _epsilon_graph(X, eps, weight, sigma_w):
    """:func:`epsilon_graph` as a :class:`._graph.Graph` (the bandwidth as used)."""
    X = check_X(X, "X", min_samples=2)
    eps = check_positive(eps, "eps")
    check_distance_scale(X, name="X")
    sigma_w = check_weight(weight, sigma_w, knn=False)
    if sp.issparse(X):
        X.sort_indices()
    from ._epsilon import epsilon_pairs

    rows, cols, sq = epsilon_pairs(X, eps)
    if weight == "gaussian" and sigma_w is None:
        sigma_w = default_sigma_w(sq)
    w = edge_weights(sq, weight, sigma_w)
    n = X.shape[0]
    A = sp.coo_matrix((w, (rows, cols)), shape=(n, n))
    W = (A + A.T).tocsr()
    W.eliminate_zeros()
    W.sort_indices()
    n_iso = isolated_count(W)
    if n_iso:
        warnings.warn(
            f"epsilon_graph: {n_iso} of {n} vertices have no neighbour within eps={eps:g} "
            f"(isolated vertices); increase eps or use knn_graph.",
            UserWarning,
            stacklevel=3,
        )
    return Graph(W, weight=weight, sigma_w=sigma_w if weight == "gaussian" else None)


def check_adjacency(W, name="W"):
    """Validate a user graph: square, symmetric, nonnegative, finite; drop the diagonal.

    Returns
    -------
    W : scipy.sparse.csr_matrix, float64, sorted indices, no stored diagonal. A canonical,
        exactly symmetric float64 CSR input comes back without a copy: a new matrix on
        its arrays (fastgssl does not write into them).
    """
    if W is None:
        raise ValueError(f"{name} is None; pass a square (n, n) adjacency matrix.")
    check_no_complex(W, name)
    if not sp.issparse(W):
        try:
            W = np.asarray(W, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{name} must be a numeric square matrix: {exc}") from None
    if W.ndim != 2 or W.shape[0] != W.shape[1]:
        raise ValueError(f"{name} must be a square (n, n) matrix, got shape {W.shape}.")
    if W.shape[0] < 1:
        raise ValueError(f"{name} is empty; a graph needs at least one vertex.")
    # a new matrix object; a float64 CSR input's arrays are not copied (216 MB at 10^6
    # vertices of a 10-NN graph), as scikit-learn's check_array(copy=False): fastgssl
    # never writes into a checked graph (tests/test_graphs.py checks the learners)
    W = sp.csr_matrix(W, dtype=np.float64)
    if W.nnz and canonical_symmetric_scan(W):
        # canonical, finite, positive and exactly symmetric, as builders return it: one
        # compiled pass says what the passes below would (fastgssl.graphs._adjacency_kernels)
        W.has_canonical_format = True
        return W
    W = W.copy()  # the passes below work in place
    W.sum_duplicates()
    if not np.isfinite(W.data).all():
        raise ValueError(f"{name} contains NaN or infinite weights; all weights must be finite.")
    if W.nnz and W.data.min() < 0:
        raise ValueError(
            f"{name} has {int((W.data < 0).sum())} negative weight(s) (min {W.data.min():g}); "
            f"graph weights must be nonnegative."
        )
    if W.diagonal().any():  # (stored zeros on the diagonal go with eliminate_zeros)
        W = drop_diagonal(W)
    W.eliminate_zeros()
    W.sort_indices()
    # The transpose in CSR (one compiled pass; sorted indices) compared with W: an exactly
    # symmetric W, as graph builders return, is returned as it is, never averaged again;
    # one with W's pattern and round-off asymmetry gets (W + W^T) / 2 on that pattern
    # (halved first: no overflow; exactly symmetric, as a + b = b + a).
    T = W.T.tocsr()
    same_pattern = (np.array_equal(T.indptr, W.indptr)
                    and np.array_equal(T.indices, W.indices))
    if same_pattern:
        worst = float(np.max(np.abs(W.data - T.data))) if W.nnz else 0.0
    else:
        asym = abs(W - T)
        worst = asym.max() if asym.nnz else 0.0
    scale = W.data.max() if W.nnz else 0.0
    if worst > 1e-12 * max(scale, 1.0):
        raise ValueError(
            f"{name} is not symmetric (max |W - W^T| = {worst:.3g}); pass "
            f"(W + W.T) / 2 or W.maximum(W.T)."
        )
    if worst == 0.0:
        return W
    if same_pattern:
        W.data = W.data * 0.5 + T.data * 0.5
    else:
        W = (W * 0.5 + T * 0.5).tocsr()
        W.sort_indices()
    return W


class _GraphBuilder:
    """Base of the registry factories: ``builder.build(X)`` returns the graph value
    (:class:`._graph.Graph`), ``builder(X)`` its ``W``; readable parameters (the arguments
    of ``__init__``, stored unchanged under their names as scikit-learn's)."""

    def __call__(self, X):
        return self.build(X).W

    @classmethod
    def _get_param_names(cls):
        return [name for name in inspect.signature(cls.__init__).parameters if name != "self"]

    def get_params(self):
        return {name: getattr(self, name) for name in self._get_param_names()}

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"


class KNNGraph(_GraphBuilder):
    """Registry factory ``"knn"``: ``KNNGraph(...)(X)`` is ``knn_graph(X, ...)``.

    Parameters
    ----------
    n_neighbors, weight, sigma_w, symmetrize, n_jobs, self_tuned_constant
        As in :func:`knn_graph`.

    Attributes
    ----------
    kth_sq_distances_ : ndarray of shape (n_samples,)
        ``d_k(x_i)^2``, the squared distance from each point to its k-th neighbour in the
        last graph built (the scale of the self-tuned weights), also the
        ``kth_sq_distances`` of :meth:`build`'s value, which the propagation learners read.

    ``builder.build(X)`` returns the graph value (:class:`fastgssl.graphs.Graph`: ``W``, the
    lists, ``d_k(x_i)^2``, the weight's parameters as used); ``builder(X)`` is its ``W``.

    Examples
    --------
    >>> import numpy as np
    >>> from fastgssl import registry
    >>> builder = registry.get("fastgssl.graphs", "knn", n_neighbors=2)
    >>> builder(np.arange(5.0).reshape(-1, 1)).nnz
    12
    """

    def __init__(self, n_neighbors=10, weight="binary", sigma_w=None, symmetrize=None,
                 n_jobs=None, self_tuned_constant=DEFAULT_SELF_TUNED_CONSTANT):
        store_init_arguments(self, locals())

    def build(self, X):
        """The graph of ``X`` as a :class:`._graph.Graph` (``builder(X)`` is its ``W``)."""
        graph = _knn_graph(X, self.n_neighbors, self.weight, self.sigma_w, self.symmetrize,
                           self.n_jobs, self.self_tuned_constant)
        self.kth_sq_distances_ = graph.kth_sq_distances
        return graph


class EpsilonGraph(_GraphBuilder):
    """Registry factory ``"epsilon"``: ``EpsilonGraph(eps, ...)(X)`` is ``epsilon_graph``."""

    def __init__(self, eps, weight="binary", sigma_w=None):
        store_init_arguments(self, locals())

    def build(self, X):
        """The graph of ``X`` as a :class:`._graph.Graph` (``builder(X)`` is its ``W``)."""
        return _epsilon_graph(X, self.eps, self.weight, self.sigma_w)


class PrecomputedGraph(_GraphBuilder):
    """Registry factory ``"precomputed"``: a user graph, validated once at construction.

    ``PrecomputedGraph(W)(X)`` returns the validated ``W`` (see :func:`check_adjacency`);
    ``X`` only has to have ``W.shape[0]`` rows.
    """

    def __init__(self, W):
        self.W = check_adjacency(W, "W")

    def __call__(self, X=None):
        return self.build(X).W

    def build(self, X=None):
        """The validated ``W`` as a :class:`._graph.Graph` (nothing else is known of it)."""
        if X is not None and X.shape[0] != self.W.shape[0]:
            raise ValueError(
                f"the precomputed graph has {self.W.shape[0]} vertices but X has "
                f"{X.shape[0]} rows; they must describe the same samples."
            )
        return Graph(self.W)
