"""The build stage of the kernel machines (after :mod:`._kernel_machine_checks`, before
:mod:`._kernel_machine_solve`): values in, values out.

Takes the checked parameters (:class:`._kernel_machine_checks.MachineParams`) and the
checked training points; returns what the solve needs, by backend: the graph ``W`` and its
regularizer ``Q`` (``gamma_i > 0``), the kernel over the training points
(``backend="dense"``) or its Nystrom factor (``backend="nystrom"``, with one constant feature
for the intercept), gathered in a :class:`System`. The estimators' public ``build_graph`` /
``build_kernel`` / ``build_factor`` (which the grid search calls once per graph group or
kernel width) are these functions on their parameters.
"""

from __future__ import annotations

import dataclasses
import warnings
from typing import Any

import numpy as np
import scipy.sparse as sp

from fastgssl._components import labeled_components
from fastgssl._validation import check_bounded_int, check_n_neighbors, check_positive
from fastgssl.exceptions import UnlabeledComponentWarning
from fastgssl.graphs import resolve_graph
from fastgssl.kernels import nystrom, pairwise_kernel
from fastgssl.regularizers import build_regularizer as build_regularizer_of

__all__ = []


class _InterceptFactor:
    """A Nystrom factor with one more constant feature ``c`` (the intercept): features
    ``[V, c 1]``, so ``V V^T + c^2 1 1^T`` approximates the kernel plus ``c^2``."""

    def __init__(self, factor, c):
        self.factor = factor
        self.c = float(c)
        V = factor.features_
        self.features_ = np.hstack([V, np.full((V.shape[0], 1), self.c)])

    @property
    def n_components_(self):
        return self.factor.n_components_ + 1

    def transform(self, X):
        V = self.factor.transform(X)
        return np.hstack([V, np.full((V.shape[0], 1), self.c)])

    def __getattr__(self, name):  # landmarks, eigenvalues, ...: those of the kernel's factor
        if name == "factor":
            raise AttributeError(name)
        return getattr(self.factor, name)


@dataclasses.dataclass(frozen=True, eq=False)
class System:
    """What the solve works on (the build stage's result): the training points ``X``, the
    graph ``W`` and its regularizer ``Q`` (None without a graph term), the dense kernel
    ``K`` (``backend="dense"``) or the Nystrom ``factor`` (``backend="nystrom"``)."""

    X: Any
    graph: Any
    regularizer: Any
    kernel: Any
    factor: Any


def build_graph(p, X):
    """The affinity W of ``p.graph`` over the rows of ``X``.

    Uses :func:`fastgssl.graphs.resolve_graph` with ``n_neighbors``, ``graph_weight``,
    ``sigma_w`` and ``graph_params``.

    Returns
    -------
    scipy.sparse.csr_matrix of shape (n, n)
    """
    graph = p.graph
    n = X.shape[0]
    if isinstance(graph, str) and p.kernel == "precomputed":
        raise ValueError(
            "kernel='precomputed' gives no coordinates to build a graph from; pass "
            "graph=W (a precomputed (n, n) sparse affinity) or set gamma_i=0."
        )
    params = {}
    if isinstance(graph, str):
        params["n_neighbors"] = check_n_neighbors(p.n_neighbors, n)
        params["weight"] = p.graph_weight
        if p.sigma_w is not None:
            params["sigma_w"] = check_positive(p.sigma_w, "sigma_w")
        if graph not in ("knn", "ivf"):  # others take graph_params only (as before)
            params = {}
        params.update(p.graph_params or {})
    return resolve_graph(graph, X, builder_params=params)


def build_kernel(p, X, Z=None):
    """The kernel ``k(X, Z)`` of the parameters ``p`` (``Z=None``: the Gram matrix of
    ``X``).

    The base kernel (``kernel``, ``sigma``, ``kernel_params``; with
    ``kernel="precomputed"``, ``X`` itself) plus ``intercept_scaling**2`` when
    ``fit_intercept``: the intercept is the weight of a constant feature, regularized with
    the kernel term as liblinear's is.

    Returns
    -------
    ndarray of shape (n_X, n_Z)
    """
    if p.kernel == "precomputed":
        K = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64)
    else:
        K = pairwise_kernel(X, Z, kernel=p.kernel, sigma=p.sigma,
                            kernel_params=p.kernel_params)
    if p.fit_intercept:
        if p.kernel == "precomputed" or callable(p.kernel):
            K = K + p.intercept_scaling**2  # never modify an array of the caller's
        else:
            K += p.intercept_scaling**2
    return K


def build_factor(p, X):
    """The Nystrom factor of the kernel of ``p`` over the rows of ``X`` (``n_components``
    landmarks drawn with ``landmarks`` and ``random_state``; with ``fit_intercept`` one more
    constant feature ``intercept_scaling``).

    Returns
    -------
    fastgssl.kernels.NystromFactor
    """
    fac = nystrom(X, p.n_components, sigma=p.sigma if p.kernel == "rbf" else 1.0,
                  landmarks=p.landmarks, random_state=p.random_state, kernel=p.kernel)
    return _InterceptFactor(fac, p.intercept_scaling) if p.fit_intercept else fac


def factor_features(p, X):
    """The features ``V`` (n, c) of :func:`build_factor` as a float64 array."""
    return np.asarray(build_factor(p, X).features_, dtype=np.float64)


def build_regularizer(p, W):
    """The graph regularizer ``Q`` of ``W``: ``p.regularizer`` to the power ``p.power``."""
    power = check_bounded_int(p.power, "power", low=1)
    return build_regularizer_of(p.regularizer, W, power=power, params=p.regularizer_params)


def warn_unlabeled_components(W, labeled, stacklevel=3):
    """Warn (:class:`fastgssl.exceptions.UnlabeledComponentWarning`) when components of
    ``W`` hold no labeled point; ``stacklevel`` counts from this function."""
    comp, has_label = labeled_components(W, labeled)
    n_comp = has_label.size
    if has_label.all():
        return
    n_points = int(np.count_nonzero(~has_label[comp]))
    warnings.warn(
        f"{int(np.count_nonzero(~has_label))} of the {n_comp} connected components of the "
        f"graph ({n_points} points) contain no labeled point: there the decision is made "
        f"by the ambient kernel term (gamma_a) alone. Increase n_neighbors or label points "
        f"in those components.",
        UnlabeledComponentWarning,
        stacklevel=stacklevel,
    )


def build_graph_term(p, X, problem):
    """``(W, Q)`` of a fit: the graph and its regularizer when ``problem.gamma_i > 0``
    (with the warning of :func:`warn_unlabeled_components` for the caller of the
    estimator's ``fit``), else ``(None, None)``."""
    if not problem.gamma_i > 0:
        return None, None
    W = build_graph(p, X)
    Q = build_regularizer(p, W)
    warn_unlabeled_components(W, problem.labeled, stacklevel=4)
    return W, Q


def build_system(p, X, graph_term):
    """The :class:`System` of a fit: ``graph_term`` (:func:`build_graph_term`) and the
    dense kernel or the Nystrom factor of ``X`` by ``p.backend``."""
    W, Q = graph_term
    K = fac = None
    if p.backend == "dense":
        K = build_kernel(p, X)
    else:
        fac = build_factor(p, X)
    return System(X=X, graph=W, regularizer=Q, kernel=K, factor=fac)
