"""What a kernel machine (:class:`fastgssl.models._kernel_machine._KernelMachine`) builds
before its solve, by backend: the graph ``W`` and its regularizer ``Q`` (``gamma_i > 0``),
the kernel over the training points (``backend="dense"``) or its Nystrom factor
(``backend="nystrom"``, with one constant feature for the intercept). The grid search calls
the public builders once per graph group or kernel width.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp

from fastgssl._components import labeled_components
from fastgssl._validation import check_bounded_int, check_n_neighbors, check_positive
from fastgssl.exceptions import UnlabeledComponentWarning
from fastgssl.graphs import resolve_graph
from fastgssl.kernels import nystrom, pairwise_kernel
from fastgssl.regularizers import build_regularizer

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


class _MachineBuilders:
    """The builders mixin of the kernel machines (graph, regularizer, kernel, factor)."""

    def build_graph(self, X):
        """The affinity W of the estimator's ``graph`` over the rows of ``X``.

        Uses :func:`fastgssl.graphs.resolve_graph` with ``n_neighbors``, ``graph_weight``,
        ``sigma_w`` and ``graph_params``; the grid search calls it once per graph group.

        Returns
        -------
        scipy.sparse.csr_matrix of shape (n, n)
        """
        graph = self.graph
        n = X.shape[0]
        if isinstance(graph, str) and self.kernel == "precomputed":
            raise ValueError(
                "kernel='precomputed' gives no coordinates to build a graph from; pass "
                "graph=W (a precomputed (n, n) sparse affinity) or set gamma_i=0."
            )
        params = {}
        if isinstance(graph, str):
            params["n_neighbors"] = check_n_neighbors(self.n_neighbors, n)
            params["weight"] = self.graph_weight
            if self.sigma_w is not None:
                params["sigma_w"] = check_positive(self.sigma_w, "sigma_w")
            if graph not in ("knn", "ivf"):  # others take graph_params only (as before)
                params = {}
            params.update(self.graph_params or {})
        return resolve_graph(graph, X, builder_params=params)

    def build_kernel(self, X, Z=None):
        """The estimator's kernel ``k(X, Z)`` (``Z=None``: the Gram matrix of ``X``).

        The base kernel (``kernel``, ``sigma``, ``kernel_params``; with
        ``kernel="precomputed"``, ``X`` itself) plus ``intercept_scaling**2`` when
        ``fit_intercept``: the intercept is the weight of a constant feature, regularized
        with the kernel term as liblinear's is. The grid search calls it once per width.

        Returns
        -------
        ndarray of shape (n_X, n_Z)
        """
        if self.kernel == "precomputed":
            K = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64)
        else:
            K = pairwise_kernel(X, Z, kernel=self.kernel, sigma=self.sigma,
                                kernel_params=self.kernel_params)
        if self.fit_intercept:
            if self.kernel == "precomputed" or callable(self.kernel):
                K = K + self.intercept_scaling**2  # never modify an array of the caller's
            else:
                K += self.intercept_scaling**2
        return K

    def build_factor(self, X):
        """The Nystrom factor of the estimator's kernel over the rows of ``X``
        (``backend="nystrom"``: ``n_components`` landmarks drawn with ``landmarks`` and
        ``random_state``; with ``fit_intercept`` one more constant feature
        ``intercept_scaling``); the grid search calls it once per kernel width.

        Returns
        -------
        fastgssl.kernels.NystromFactor
        """
        fac = nystrom(X, self.n_components, sigma=self.sigma if self.kernel == "rbf" else 1.0,
                      landmarks=self.landmarks, random_state=self.random_state,
                      kernel=self.kernel)
        return _InterceptFactor(fac, self.intercept_scaling) if self.fit_intercept else fac

    def _build_regularizer(self, W):
        power = check_bounded_int(self.power, "power", low=1)
        return build_regularizer(self.regularizer, W, power=power,
                                 params=self.regularizer_params)

    @staticmethod
    def _warn_unlabeled_components(W, labeled):
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
            stacklevel=3,
        )
