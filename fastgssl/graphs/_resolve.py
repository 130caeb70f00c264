"""One road from a graph specification to an affinity matrix, for every estimator.

``graph`` may be a registered builder name of the ``fastgssl.graphs`` group (``"knn"``,
``"epsilon"``, ``"nndescent"``, plugins), a builder object or any callable ``X -> W``, or an
(n, n) affinity matrix (sparse or dense). :func:`resolve_graph` builds or checks it and
returns a symmetric, nonnegative, finite float64 CSR matrix with an empty diagonal over the
n rows of ``X`` (:func:`fastgssl.graphs.check_adjacency`).
"""

from __future__ import annotations

import inspect

import numpy as np
import scipy.sparse as sp

__all__ = ["resolve_graph"]


def _accepted(factory, params):
    """The keyword arguments a registered factory accepts (all, if it takes ``**kwargs``)."""
    try:
        sig = inspect.signature(factory)
    except (TypeError, ValueError):
        return params
    if any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values()):
        return params
    return {k: v for k, v in params.items() if k in sig.parameters}


def resolve_graph(graph, X, *, n_samples=None, builder_params=None, name="graph",
                  return_builder=False):
    """Build or check the affinity W of ``graph`` over the rows of ``X``.

    Parameters
    ----------
    graph : str, callable, sparse matrix or ndarray
        A registered builder name, a callable ``X -> W`` (builder objects included), or an
        (n, n) affinity over the training points.
    X : ndarray or sparse matrix of shape (n, d), or None
        The points (None when ``graph`` is a matrix).
    n_samples : int, optional
        n when ``X`` is None.
    builder_params : dict, optional
        Keyword arguments offered to a registered builder's factory (``n_neighbors``,
        ``weight``, ``sigma_w``, ``n_jobs``, ...); those it does not accept are left out,
        None values are left out.
    name : str
        Argument name for messages.
    return_builder : bool, default=False
        Also return the builder object that made W (the registered factory's instance or
        the callable; None for a matrix), whose fitted attributes (``kth_sq_distances_``,
        ``recall_``) describe the graph.

    Returns
    -------
    W : scipy.sparse.csr_matrix of shape (n, n)
    builder : object or None
        Only with ``return_builder=True``.
    """
    from fastgssl.graphs._builders import check_adjacency

    n = X.shape[0] if X is not None else n_samples
    if isinstance(graph, str):
        if X is None:
            raise ValueError(
                f"{name}={graph!r} needs coordinates to build a graph from; pass the affinity "
                f"itself ({name}=W, an (n, n) sparse matrix)."
            )
        from fastgssl import registry

        factory = registry.load("fastgssl.graphs", graph)
        params = {k: v for k, v in (builder_params or {}).items() if v is not None}
        builder = factory(**_accepted(factory, params))
        W = builder(X)
        what = f"the graph built by {name}={graph!r}"
    elif sp.issparse(graph) or isinstance(graph, np.ndarray):
        W, what, builder = graph, name, None
    elif callable(graph):
        W, what, builder = graph(X), f"the graph returned by the {name} callable", graph
    else:
        raise ValueError(
            f"{name} must be a registered graph-builder name (e.g. 'knn'), a callable "
            f"X -> W, or an (n, n) affinity matrix; got {type(graph).__name__}."
        )
    W = check_adjacency(W, what)
    if W.shape != (n, n):
        raise ValueError(
            f"{what} has shape {W.shape} but X has {n} samples; a graph must be the "
            f"({n}, {n}) affinity over all training points (labeled and unlabeled)."
        )
    return (W, builder) if return_builder else W
