"""Kernel k-means clustering, e.g. with a data-dependent kernel (Lever et al. (2012), Section 5.2).

Seed 002 clusters with the metric of a kernel's RKHS,
``d(x, x')^2 = K(x, x) + K(x', x') - 2 K(x, x')`` (Lever et al. 2012), using its data-dependent
kernel ``K_breve`` (:class:`fastgssl.kernels.DataDependentKernel`): on two moons it reports 1 %
error against 11.4 % for Euclidean k-means. :class:`KernelKMeans` is Lloyd's algorithm in the
feature space (Dhillon, Guan & Kulis, 2004) with kernel k-means++ seeding (Arthur &
Vassilvitskii, 2007, distances in feature space), best of ``n_init`` runs.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClusterMixin, clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from fastgssl._validation import MAX_N_INIT, check_no_complex, check_random_state, check_X
from fastgssl.kernels import DataDependentKernel, default_sigma, pairwise_kernel, rbf_kernel

__all__ = ["KernelKMeans"]

# Relative slack under which a point keeps its cluster rather than moving to an equidistant one.
_TIE_RTOL = 1e-12


class KernelKMeans(ClusterMixin, BaseEstimator):
    """Kernel k-means: Lloyd iterations on the Gram matrix, k-means++ seeding.

    Parameters
    ----------
    n_clusters : int, default=2
        Number of clusters.
    kernel : {"rbf", "precomputed"}, callable or DataDependentKernel, default="rbf"
        ``"rbf"``: ``exp(-||x - x'||^2 / (2 sigma))`` (papers' convention);
        ``"precomputed"``: ``X`` is the ``(n, n)`` Gram matrix in :meth:`fit` and the
        ``(n_new, n)`` kernel to the training points in :meth:`predict`;
        a callable ``kernel(X1, X2) -> (n1, n2)`` (e.g. ``ddk.gram``);
        a :class:`fastgssl.kernels.DataDependentKernel`: used as is when fitted (typically on
        a larger unlabeled set), otherwise a clone is fitted on ``X``.
    sigma : float > 0 or None, default=None
        RBF bandwidth; None: median heuristic (:func:`fastgssl.kernels.default_sigma`).
    n_init : int in [1, 1000], default=10
        Number of seedings; the run with the smallest inertia is kept. Each one is a full
        run of Lloyd's algorithm; more than a few hundred restarts does not find better
        optima in practice.
    max_iter : int >= 1, default=300
        Lloyd iterations per run; a :class:`~sklearn.exceptions.ConvergenceWarning` is issued
        when the assignment still changes after ``max_iter``.
    random_state : int, RandomState or None, default=None

    Attributes
    ----------
    labels_ : ndarray of int, shape (n_samples,)
    inertia_ : float
        Sum over points of the squared feature-space distance to their cluster mean.
    n_iter_ : int
        Lloyd iterations of the kept run.
    kernel_ : object
        The kernel used (the fitted clone for an unfitted DataDependentKernel).
    sigma_ : float or None
        RBF bandwidth used (``kernel="rbf"``).
    n_features_in_ : int

    Notes
    -----
    With ``G`` the Gram matrix and ``Z`` the ``n x k`` cluster indicator scaled by
    ``1 / |c|`` per column, the squared distance of ``x_i`` to the mean of cluster ``c`` is

        G_ii - 2 (G Z)_ic + (Z^T G Z)_cc,

    so one Lloyd step is one ``n x n`` by ``n x k`` product. An emptied cluster receives the
    point farthest from its own cluster mean. Memory is the ``n x n`` Gram matrix: this
    estimator is for clustering thousands of points; the data-dependent kernel itself is
    fitted on as many unlabeled points as the graph can hold.

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from fastgssl.models import KernelKMeans
    >>> X, y = make_moons(200, noise=0.05, random_state=0)
    >>> km = KernelKMeans(n_clusters=2, kernel="rbf", sigma=0.5, random_state=0).fit(X)
    >>> km.labels_.shape
    (200,)
    """

    # scikit-learn's parameter constraints (BaseEstimator._validate_params at fit); a
    # DataDependentKernel is callable. n_clusters <= n_samples is checked in fit.
    _parameter_constraints = {
        "n_clusters": [Interval(Integral, 1, None, closed="left")],
        "kernel": [StrOptions({"rbf", "precomputed"}), callable],
        "sigma": [Interval(Real, 0, None, closed="neither"), None],
        "n_init": [Interval(Integral, 1, MAX_N_INIT, closed="both")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(self, n_clusters=2, kernel="rbf", sigma=None, n_init=10, max_iter=300,
                 random_state=None):
        self.n_clusters = n_clusters
        self.kernel = kernel
        self.sigma = sigma
        self.n_init = n_init
        self.max_iter = max_iter
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.pairwise = isinstance(self.kernel, str) and self.kernel == "precomputed"
        return tags

    def fit(self, X, y=None):
        """Cluster ``X`` (or the precomputed Gram matrix ``X``).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features), or (n, n) Gram
        y : ignored

        Returns
        -------
        self
        """
        self._validate_params()
        k, n_init, max_iter = int(self.n_clusters), int(self.n_init), int(self.max_iter)
        rng = check_random_state(self.random_state)
        G, X_fit = self._train_gram(X)
        n = G.shape[0]
        if k > n:
            raise ValueError(f"n_clusters={k} exceeds the number of samples ({n}).")
        g = np.ascontiguousarray(np.diag(G))
        best = None
        for _ in range(n_init):
            labels = _kmeans_pp_labels(G, g, k, rng)
            labels, inertia, n_iter, converged = _lloyd(G, g, labels, k, max_iter)
            if best is None or inertia < best[1]:
                best = (labels, inertia, n_iter, converged)
        labels, inertia, n_iter, converged = best
        if not converged:
            warnings.warn(
                f"kernel k-means did not converge in max_iter={max_iter} iterations (the "
                f"assignment still changed); increase max_iter.",
                ConvergenceWarning,
                stacklevel=2,
            )
        weights = _mean_weights(labels, k)
        self.labels_ = labels
        self.inertia_ = float(inertia)
        self.n_iter_ = int(n_iter)
        self._weights = weights
        self._centre_norms = np.einsum("ic,ic->c", weights, G @ weights)
        self._X_fit = X_fit
        return self

    def _train_gram(self, X):
        kernel = self.kernel
        self.sigma_ = None
        if isinstance(kernel, str) and kernel == "precomputed":
            G = _check_gram(X)
            self.kernel_ = kernel
            self.n_features_in_ = G.shape[1]
            return G, None
        X = check_X(X, "X")
        self.n_features_in_ = X.shape[1]
        if isinstance(kernel, str) and kernel == "rbf":
            self.sigma_ = default_sigma(X) if self.sigma is None else float(self.sigma)
            self.kernel_ = kernel
            return rbf_kernel(X, sigma=self.sigma_), X
        if isinstance(kernel, DataDependentKernel):
            if not hasattr(kernel, "_whiten_t"):
                kernel = clone(kernel).fit(X)
            self.kernel_ = kernel
            return kernel.gram(X), X
        # any other callable (the parameter constraints admit nothing else)
        self.kernel_ = kernel
        return pairwise_kernel(X, X, kernel), X

    def _cross_gram(self, X):
        kernel = self.kernel_
        n_train = self._weights.shape[0]
        if isinstance(kernel, str) and kernel == "precomputed":
            check_no_complex(X, "X")
            K = np.asarray(X.toarray() if sp.issparse(X) else X, dtype=np.float64)
            if K.ndim == 2 and not np.isfinite(K).all():
                raise ValueError("the precomputed kernel X contains NaN or infinite values.")
            if K.ndim != 2 or K.shape[1] != n_train:
                raise ValueError(
                    f"with kernel='precomputed', predict takes the (n_new, {n_train}) kernel "
                    f"between the new and the training points, got shape {K.shape}."
                )
            return K
        X = check_X(X, "X")
        if X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} features, but KernelKMeans is expecting "
                f"{self.n_features_in_} features as input."
            )
        if isinstance(kernel, str):
            return rbf_kernel(X, self._X_fit, sigma=self.sigma_)
        if hasattr(kernel, "gram"):
            return kernel.gram(X, self._X_fit)
        return pairwise_kernel(X, self._X_fit, kernel)

    def predict(self, X):
        """Nearest cluster mean in feature space for new points.

        Parameters
        ----------
        X : array-like of shape (n_new, n_features), or (n_new, n_train) kernel values for
            ``kernel="precomputed"``

        Returns
        -------
        labels : ndarray of int, shape (n_new,)
        """
        check_is_fitted(self, "_weights")
        K = self._cross_gram(X)
        # K(x, x) is the same for every cluster and drops out of the argmin.
        return np.argmin(self._centre_norms[None, :] - 2.0 * (K @ self._weights), axis=1)


def _check_gram(X):
    check_no_complex(X, "X")
    G = np.asarray(X.toarray() if sp.issparse(X) else X, dtype=np.float64)
    if G.ndim != 2 or G.shape[0] != G.shape[1]:
        raise ValueError(
            f"with kernel='precomputed', X must be the square (n, n) Gram matrix, got shape "
            f"{G.shape}."
        )
    if not np.isfinite(G).all():
        raise ValueError("the precomputed Gram matrix X contains NaN or infinite values.")
    return G


def _mean_weights(labels, k):
    """``n x k`` indicator with column ``c`` scaled by ``1 / |c|`` (empty columns zero)."""
    n = labels.size
    Z = np.zeros((n, k))
    Z[np.arange(n), labels] = 1.0
    counts = Z.sum(axis=0)
    Z[:, counts > 0] /= counts[counts > 0]
    return Z


def _distances(G, g, labels, k):
    Z = _mean_weights(labels, k)
    GZ = G @ Z
    centre = np.einsum("ic,ic->c", Z, GZ)
    D = g[:, None] - 2.0 * GZ + centre[None, :]
    np.maximum(D, 0.0, out=D)  # round-off below 0
    empty = np.bincount(labels, minlength=k) == 0
    D[:, empty] = np.inf
    return D


def _kmeans_pp_labels(G, g, k, rng):
    """k-means++ seeds in feature space; returns the nearest-seed assignment."""
    n = g.size
    seeds = [int(rng.randint(n))]
    d2 = np.maximum(g + g[seeds[0]] - 2.0 * G[:, seeds[0]], 0.0)
    for _ in range(1, k):
        total = d2.sum()
        nxt = int(rng.choice(n, p=d2 / total)) if total > 0 else int(rng.randint(n))
        seeds.append(nxt)
        d2 = np.minimum(d2, np.maximum(g + g[nxt] - 2.0 * G[:, nxt], 0.0))
    D = g[:, None] + g[seeds][None, :] - 2.0 * G[:, seeds]
    labels = np.argmin(D, axis=1)
    labels[seeds] = np.arange(k)  # each seed owns its cluster even with duplicates
    return labels


def _lloyd(G, g, labels, k, max_iter):
    """Lloyd iterations from ``labels``: ``(labels, inertia, n_iter, converged)``."""
    labels = labels.copy()
    converged = False
    n_iter = 0
    for _ in range(max_iter):
        n_iter += 1
        D = _distances(G, g, labels, k)
        new = np.argmin(D, axis=1)
        # ties (up to round-off) keep the current cluster, so the inertia strictly decreases
        rows = np.arange(new.size)
        stay = D[rows, labels] <= D[rows, new] + _TIE_RTOL * (D[rows, new] + g)
        new[stay] = labels[stay]
        counts = np.bincount(new, minlength=k)
        for c in np.flatnonzero(counts == 0):
            # the point farthest from its own mean, among clusters that can spare one
            own = D[np.arange(new.size), new]
            own[counts[new] <= 1] = -np.inf
            far = int(np.argmax(own))
            counts[new[far]] -= 1
            new[far] = c
            counts[c] = 1
        if np.array_equal(new, labels):
            converged = True
            break
        labels = new
    D = _distances(G, g, labels, k)
    inertia = float(D[np.arange(labels.size), labels].sum())
    return labels, inertia, n_iter, converged
