"""Graphs on data points: exact kNN and epsilon graphs, approximate kNN, user graphs.

- :func:`knn_search`     exact k nearest neighbours (BLAS filter + certified exact refinement,
  kd-tree candidates in low dimension); ``knn_search(X_query, k, X_ref)`` for new points
- :func:`reuse_neighbors`  context: self-searches of one X with k <= K share one search
- :func:`knn_graph`      symmetric kNN graph, weights binary / gaussian / distance /
  self-tuned (graphlearning's ``exp(-4 |x_i - x_j|^2 / d_k(x_i)^2)``, and its symmetric form)
- :func:`epsilon_graph`  symmetric epsilon-neighbourhood graph
- :func:`check_adjacency`  validation of a user-supplied W
- :func:`resolve_graph`  one road from a builder name, callable or matrix to W (every
  estimator uses it)
- :class:`Graph`         the graph value: W with the weight's parameters as used, the
  neighbour lists, ``d_k(x_i)^2`` and the recall where the builder has them
  (``builder.build(X)``; ``builder(X)`` is its W); :func:`resolve_graph_value` gives it
  for a name, callable or matrix
- :func:`knn_recall`     recall of approximate neighbour lists against exact search
- registry factories (group ``fastgssl.graphs``): :class:`KNNGraph` (``"knn"``),
  :class:`EpsilonGraph` (``"epsilon"``), :class:`PrecomputedGraph` (``"precomputed"``),
  :class:`NNDescentGraph` (``"nndescent"``, needs the optional ``pynndescent``),
  :class:`IVFGraph` (``"ivf"``, an inverted file of k-means lists on the exact search's
  GEMM kernels)
- :func:`default_n_lists`  the number of lists of ``IVFGraph(n_lists=None)``

Every builder returns a symmetric, nonnegative float64 CSR matrix with an empty diagonal.
Names are imported on first access, so importing this package compiles no Numba kernel.
"""

from fastgssl import registry
from fastgssl._lazy import attach_stub

# the built-ins of the registry group named after this package (imported on first use)
registry.register_builtins("fastgssl.graphs", {
    "knn": "fastgssl.graphs._builders:KNNGraph",
    "epsilon": "fastgssl.graphs._builders:EpsilonGraph",
    "precomputed": "fastgssl.graphs._builders:PrecomputedGraph",
    "nndescent": "fastgssl.graphs._nndescent:NNDescentGraph",
    "ivf": "fastgssl.graphs._ivf:IVFGraph",
})

__getattr__, __dir__, __all__ = attach_stub(__name__, __file__)
