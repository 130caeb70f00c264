"""Adaptive Laplacian graph trimming (ALGT), Yue et al. (2017) (Yue, Meng, He, Zhang).

ALGT minimizes, jointly over the decision function f and the weights W of the edges of an
initial kNN graph (Yue et al. 2017)::

    E(W, f) = (1/l) sum_L ell(y_j, f_j) + gamma_a ||f||_K^2 + gamma_i f^T L_W f
              + gamma_x tr(X^T L_W X) + F(W; lambda),

by alternate convex search: (a) fit a LapSVM / LapRLS on the current W; (b) with f fixed,
re-weight every candidate edge (i, j) in closed form from

    d_ij = gamma_i (f_i - f_j)^2 + gamma_x ||x_i - x_j||^2

with the self-paced regularizers of the paper:

* hard, F = -lambda sum w:               w_ij = 1 if d_ij < lambda else 0;
* soft, F = lambda sum (w ln w - w):     w_ij = exp(-d_ij / lambda) if d_ij < lambda else 0.

Edges between points that the current classifier separates get a large d_ij and are cut,
which removes the "shortcut" edges that a too large k creates between classes; this makes
the result robust to the choice of k. lambda (the "age") may grow by a factor per iteration.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from fastgssl._validation import check_n_neighbors, check_positive, check_X
from fastgssl.models._laplacian_machines import LapSVM
from fastgssl.models._scoring import labeled_score

__all__ = ["ALGT", "trimmed_weights"]

_WEIGHTINGS = ("hard", "soft")


def trimmed_weights(d, age, weighting="hard"):
    """Closed-form minimizer of the W-step of ALGT for fixed f.

    Parameters
    ----------
    d : ndarray
        Edge costs ``d_ij = gamma_i (f_i - f_j)^2 + gamma_x ||x_i - x_j||^2`` (>= 0).
    age : float > 0
        The self-paced "age" lambda.
    weighting : {"hard", "soft"}

    Returns
    -------
    w : ndarray
        ``hard``: argmin over w in [0, 1] of ``w d - lambda w`` (1 if d < lambda, else 0);
        ``soft``: argmin over w > 0 of ``w d + lambda (w ln w - w)``, i.e. ``exp(-d/lambda)``,
        set to 0 where ``d >= lambda`` (the paper's truncation, Eq. 8).
    """
    d = np.asarray(d, dtype=np.float64)
    keep = d < age
    if weighting == "hard":
        return keep.astype(np.float64)
    return np.where(keep, np.exp(-d / age), 0.0)


class ALGT(ClassifierMixin, BaseEstimator):
    """Adaptive Laplacian graph trimming around a LapSVM or LapRLS (Yue et al. (2017)).

    Parameters
    ----------
    estimator : LapSVM or LapRLS, default=None
        The manifold-regularized classifier fitted at every iteration (its ``graph`` is
        replaced by the trimmed graph). ``None``: ``LapSVM(gamma_a=1e-5, gamma_i=1.0)``, the
        paper's setting. Its ``kernel`` must be ``"rbf"`` (the candidate edges need
        coordinates).
    n_neighbors : int, default=20
        Size k of the initial kNN graph; its edges are the only candidates (the constraint
        ``w_{i, delta_i(j)} = 0 for j > K`` of the paper).
    gamma_x : float > 0, default=1.0
        Weight of the geometric term ``||x_i - x_j||^2`` in ``d_ij`` (the paper fixes 1).
    gamma_f : float > 0 or None, default=None
        Weight of the label-feedback term ``(f_i - f_j)^2`` in ``d_ij``; ``None`` uses the
        estimator's ``gamma_i`` as in the paper's Eq. 9.
    age : float > 0 or None, default=None
        Initial self-paced age lambda. ``None``: the largest ``gamma_x ||x_i - x_j||^2`` over
        the candidate edges times 1.000001, so that with ``f = 0`` every kNN edge is kept and
        the first graph is the plain kNN graph.
    age_growth : float >= 1, default=1.0
        Factor applied to the age after every iteration (self-paced learning lets the model
        include more edges as it "ages").
    weighting : {"hard", "soft"}, default="hard"
        Closed-form weights of the paper's Eq. 7 (0/1) or Eq. 8 (``exp(-d/lambda)``).
    max_iter : int >= 1, default=10
        Alternations (the paper reports convergence in at most 10).
    tol : float >= 0, default=1e-6
        Stop when no weight changes by more than ``tol`` (hard weights: no edge flips).
    verbose : int, default=0
        Print the number of kept edges per iteration.

    Attributes
    ----------
    estimator_ : fitted estimator on the final graph
    graph_ : scipy.sparse.csr_matrix, the final trimmed graph W
    initial_graph_ : csr_matrix, the first graph (every candidate edge weighted with f = 0)
    n_iter_ : int, number of classifier fits
    n_edges_ : list of int, kept (undirected) edges after each W-step
    age_ : float, the final age
    converged_ : bool
    classes_ : labels of the classes

    Notes
    -----
    Each iteration costs one fit of the base estimator plus O(n k) for the W-step: the
    candidate edges are the exact kNN pairs (``fastgssl.graphs.knn_search``), so no n x n
    matrix is formed by ALGT itself.

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from fastgssl.models._algt import ALGT
    >>> X, y = make_moons(200, noise=0.08, random_state=0)
    >>> y_ssl = y.copy(); y_ssl[10:] = -1
    >>> model = ALGT(n_neighbors=15).fit(X, y_ssl)
    >>> model.n_iter_ >= 1
    True
    """

    # scikit-learn's parameter constraints (BaseEstimator._validate_params at fit); the checks
    # that need the data or the base estimator's own parameters stay in fit / _base
    _parameter_constraints = {
        "estimator": [HasMethods(["fit", "decision_function"]), None],
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "gamma_x": [Interval(Real, 0, None, closed="neither")],
        "gamma_f": [Interval(Real, 0, None, closed="neither"), None],
        "age": [Interval(Real, 0, None, closed="neither"), None],
        # >= 1: the age never decreases
        "age_growth": [Interval(Real, 1, None, closed="left")],
        "weighting": [StrOptions(set(_WEIGHTINGS))],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "verbose": ["verbose"],
    }

    def __init__(self, estimator=None, *, n_neighbors=20, gamma_x=1.0, gamma_f=None, age=None,
                 age_growth=1.0, weighting="hard", max_iter=10, tol=1e-6, verbose=0):
        self.estimator = estimator
        self.n_neighbors = n_neighbors
        self.gamma_x = gamma_x
        self.gamma_f = gamma_f
        self.age = age
        self.age_growth = age_growth
        self.weighting = weighting
        self.max_iter = max_iter
        self.tol = tol
        self.verbose = verbose

    def _base(self):
        if self.estimator is None:
            return LapSVM(gamma_a=1e-5, gamma_i=1.0)
        est = clone(self.estimator)
        if getattr(est, "kernel", "rbf") != "rbf":
            raise ValueError(
                "ALGT needs coordinates to find candidate edges: use an estimator with "
                f"kernel='rbf' (got kernel={est.kernel!r})."
            )
        if not hasattr(est, "gamma_i") or not hasattr(est, "graph"):
            raise ValueError(
                "estimator must be a graph-regularized learner with 'graph' and 'gamma_i' "
                f"parameters (LapSVM or LapRLS), got {type(est).__name__}."
            )
        return est

    def fit(self, X, y):
        """Alternate classifier fits and closed-form edge re-weighting until W is stable.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,), ``-1`` for unlabeled points.
        """
        self._validate_params()
        gamma_x, growth = float(self.gamma_x), float(self.age_growth)
        base = self._base()
        X = check_X(X)
        n = X.shape[0]
        k = check_n_neighbors(self.n_neighbors, n)
        gamma_f = (check_positive(base.gamma_i, "estimator.gamma_i") if self.gamma_f is None
                   else float(self.gamma_f))
        rows, cols, sqdist = self._candidate_edges(X, k)
        geo = gamma_x * sqdist
        age = 1.000001 * float(geo.max()) if self.age is None else float(self.age)
        weights = trimmed_weights(geo, age, self.weighting)
        self.initial_graph_ = self._graph(rows, cols, weights, n)
        W = self.initial_graph_
        self.n_edges_ = [int(np.count_nonzero(weights))]
        self.converged_ = False
        for it in range(1, self.max_iter + 1):
            est = clone(base).set_params(graph=W)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                est.fit(X, y)
            f = np.asarray(est.decision_train_, dtype=np.float64)
            diff = f[rows] - f[cols]
            feedback = diff * diff if diff.ndim == 1 else np.einsum("ij,ij->i", diff, diff)
            new_weights = trimmed_weights(gamma_f * feedback + geo, age, self.weighting)
            change = float(np.max(np.abs(new_weights - weights))) if weights.size else 0.0
            weights = new_weights
            self.n_edges_.append(int(np.count_nonzero(weights)))
            if self.verbose:
                print(f"[ALGT] iteration {it}: {self.n_edges_[-1]} of {rows.size} candidate "
                      f"edges kept, max weight change {change:.3g}, age {age:.4g}")
            if change <= self.tol:
                self.converged_ = True
                break
            W = self._graph(rows, cols, weights, n)
            age *= growth
        for w in caught:  # re-issue the final fit's warnings (e.g. unlabeled components)
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        if not self.converged_:
            warnings.warn(
                f"ALGT did not converge in max_iter={self.max_iter} alternations: the last "
                f"W-step still changed a weight by {change:.3g} > tol={self.tol}; kept "
                f"edges per iteration {self.n_edges_}. Increase max_iter.",
                ConvergenceWarning,
                stacklevel=2,
            )
        self.estimator_ = est
        self.graph_ = est.graph_ if getattr(est, "graph_", None) is not None else W
        self.n_iter_ = it
        self.age_ = age
        if hasattr(est, "classes_"):
            self.classes_ = est.classes_
        return self

    @staticmethod
    def _candidate_edges(X, k):
        """Upper-triangular list of the symmetrized exact kNN pairs with squared distances."""
        from fastgssl.graphs import knn_search

        ind, sqd = knn_search(X, k)
        n = X.shape[0]
        A = sp.csr_matrix((sqd.ravel(), (np.repeat(np.arange(n), k), ind.ravel())),
                          shape=(n, n))
        # Distances are symmetric, so the max keeps the exact value of either direction; a
        # zero distance (duplicate points) is stored explicitly so the edge is not lost.
        A.data = A.data + 1.0
        A = sp.triu(A.maximum(A.T), k=1).tocoo()
        return A.row.astype(np.int64), A.col.astype(np.int64), A.data - 1.0

    @staticmethod
    def _graph(rows, cols, weights, n):
        keep = weights > 0
        W = sp.coo_matrix((weights[keep], (rows[keep], cols[keep])), shape=(n, n))
        return (W + W.T).tocsr()

    def decision_function(self, X):
        """Decision values of the final estimator."""
        check_is_fitted(self, "estimator_")
        return self.estimator_.decision_function(X)

    def predict(self, X):
        """Class labels predicted by the final estimator."""
        check_is_fitted(self, "estimator_")
        return self.estimator_.predict(X)

    def score(self, X, y, sample_weight=None):
        """Accuracy of ``predict(X)`` over the entries of ``y`` that are not ``-1`` (the
        unlabeled marker of :meth:`fit`), as the base estimator's; a ValueError when every
        entry is ``-1``."""
        check_is_fitted(self, "estimator_")
        return labeled_score(self, X, y, sample_weight)
