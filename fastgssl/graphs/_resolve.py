"""One road from a graph specification to an affinity matrix, for every estimator.

``graph`` may be a registered builder name of the ``fastgssl.graphs`` group (``"knn"``,
``"epsilon"``, ``"nndescent"``, plugins), a builder object or any callable ``X -> W``, or an
(n, n) affinity matrix (sparse or dense). :func:`resolve_graph_value` builds or checks it
and returns the graph value (:class:`fastgssl.graphs.Graph`) whose ``W`` is a symmetric,
nonnegative, finite float64 CSR matrix with an empty diagonal over the n rows of ``X``
(:func:`fastgssl.graphs.check_adjacency`); :func:`resolve_graph` returns that ``W``.

A fastgssl builder gives its value (``builder.build(X)``); a plugin builder or callable that
returns only a matrix gets one from the parameters it declares under the builders' names
(:func:`graph_value`).
"""

from __future__ import annotations

import inspect
import warnings
from dataclasses import replace

import numpy as np
import scipy.sparse as sp

from fastgssl import registry
from fastgssl.graphs._graph import Graph

__all__ = ["graph_value", "resolve_graph", "resolve_graph_value"]

# offered to every builder; a builder without threads ignores it without a word
_RESOURCES = ("n_jobs",)


def _signature(factory):
    try:
        return inspect.signature(factory)
    except (TypeError, ValueError):
        return None


def _accepted(factory, params):
    """The keyword arguments a registered factory accepts (all, if it takes ``**kwargs``)."""
    sig = _signature(factory)
    if sig is None or any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values()):
        return params
    return {k: v for k, v in params.items() if k in sig.parameters}


def _check_builder_params(factory, params, accepted, defaults, graph, name):
    """A required setting the learner cannot give is an error; a setting the builder does
    not take warns unless the caller offered it by default (a grid over it would give
    identical graphs)."""
    sig = _signature(factory)
    if sig is not None:
        missing = [p.name for p in sig.parameters.values()
                   if p.default is p.empty and p.name not in accepted
                   and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
        if missing:
            example = ", ".join(f"{m}=..." for m in missing)
            raise ValueError(
                f"{name}={graph!r}: the builder {getattr(factory, '__name__', factory)} needs "
                f"{', '.join(missing)}, which this learner's parameters do not give. Pass a "
                f"builder object instead, e.g. {name}={getattr(factory, '__name__', 'Builder')}"
                f"({example}) (fastgssl.graphs), or, on a learner with graph_params, "
                f"graph_params={{{', '.join(repr(m) + ': ...' for m in missing)}}}."
            )
    defaults = defaults or {}
    dropped = {k: v for k, v in params.items()
               if k not in accepted and k not in _RESOURCES
               and not (k in defaults and _same(defaults[k], v))}
    if dropped:
        warnings.warn(
            f"{name}={graph!r} does not take "
            f"{', '.join(f'{k}={v!r}' for k, v in dropped.items())}: the setting is ignored "
            f"(candidates of a search that differ only in it get the same graph). Remove it, "
            f"or use a builder that takes it.",
            UserWarning,
            stacklevel=4,
        )


def _same(a, b):
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return a is b


def graph_value(builder, X):
    """The graph value of the callable ``builder`` over the rows of ``X``.

    A fastgssl builder (``fastgssl.graphs.KNNGraph``, ...) returns it from ``build(X)``.
    Any other callable ``X -> W`` (a plugin) gives ``W``; what the value says of its weight
    comes from the parameters it declares under the builders' names (``weight``,
    ``sigma_w``, ``symmetrize``, ``n_neighbors``, ``self_tuned_constant``, as given, the
    constant defaulting to the self-tuned weights' own) when its ``weight`` is one of the
    builders' weights, and from the fitted attributes ``kth_sq_distances_`` and ``recall_``
    when it sets them; the value of a callable that declares nothing is ``W`` alone.
    """
    from fastgssl.graphs._builders import _GraphBuilder
    from fastgssl.graphs._weights import DEFAULT_SELF_TUNED_CONSTANT, WEIGHTS

    if isinstance(builder, _GraphBuilder):
        return builder.build(X)
    W = builder(X)
    weight = getattr(builder, "weight", None)
    recall = getattr(builder, "recall_", None)
    kth = getattr(builder, "kth_sq_distances_", None)
    if weight not in WEIGHTS:
        return Graph(W, kth_sq_distances=kth, recall=recall)
    return Graph(W, weight=weight, sigma_w=getattr(builder, "sigma_w", None),
                 self_tuned_constant=getattr(builder, "self_tuned_constant",
                                             DEFAULT_SELF_TUNED_CONSTANT),
                 symmetrize=getattr(builder, "symmetrize", None),
                 n_neighbors=getattr(builder, "n_neighbors", None),
                 kth_sq_distances=kth, recall=recall)


def resolve_graph(graph, X, *, n_samples=None, builder_params=None, name="graph",
                  defaults=None):
    """Build or check the affinity W of ``graph`` over the rows of ``X``: the ``W`` of
    :func:`resolve_graph_value` (same parameters).

    Returns
    -------
    W : scipy.sparse.csr_matrix of shape (n, n)
    """
    return resolve_graph_value(graph, X, n_samples=n_samples, builder_params=builder_params,
                               name=name, defaults=defaults).W


def resolve_graph_value(graph, X, *, n_samples=None, builder_params=None, name="graph",
                        defaults=None):
    """Build or check the graph of ``graph`` over the rows of ``X``, as a value.

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
        ``weight``, ``sigma_w``, ``n_jobs``, ...); those it does not accept are left out
        with a warning (``n_jobs`` silently), None values are left out. A required
        argument of the builder that none of them gives is an error naming it.
    name : str
        Argument name for messages.
    defaults : dict, optional
        Values of ``builder_params`` that the caller offers by default rather than because
        the user set them: left out silently when the builder does not take them.

    Returns
    -------
    graph : fastgssl.graphs.Graph
        ``graph.W`` the checked affinity; the rest as the builder reports it
        (:func:`graph_value`); a matrix's value is its ``W`` alone.
    """
    from fastgssl.graphs._builders import check_adjacency

    n = X.shape[0] if X is not None else n_samples
    if isinstance(graph, str):
        if X is None:
            raise ValueError(
                f"{name}={graph!r} needs coordinates to build a graph from; pass the affinity "
                f"itself ({name}=W, an (n, n) sparse matrix)."
            )

        factory = registry.load("fastgssl.graphs", graph)
        params = {k: v for k, v in (builder_params or {}).items() if v is not None}
        accepted = _accepted(factory, params)
        _check_builder_params(factory, params, accepted, defaults, graph, name)
        value = graph_value(factory(**accepted), X)
        what = f"the graph built by {name}={graph!r}"
    elif sp.issparse(graph) or isinstance(graph, np.ndarray):
        value, what = Graph(graph), name
    elif callable(graph):
        value, what = graph_value(graph, X), f"the graph returned by the {name} callable"
    else:
        raise ValueError(
            f"{name} must be a registered graph-builder name (e.g. 'knn'), a callable "
            f"X -> W, or an (n, n) affinity matrix; got {type(graph).__name__}."
        )
    W = check_adjacency(value.W, what)
    if W.shape != (n, n):
        raise ValueError(
            f"{what} has shape {W.shape} but X has {n} samples; a graph must be the "
            f"({n}, {n}) affinity over all training points (labeled and unlabeled)."
        )
    return replace(value, W=W)
