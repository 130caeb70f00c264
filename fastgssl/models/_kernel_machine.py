"""Manifold-regularized kernel machines: KRR / LSSVM, SVM, LapRLS and LapSVM.

Implements the learners of Liu et al. (2019) ("Efficient Cross-Validation for Semi-Supervised
Learning": LapRLS and LapSVM, Belkin, Niyogi & Sindhwani 2006) and of Liu et al. (2018) ("Fast
Cross-Validation": KRR / LSSVM and SVM with a Huber-smoothed hinge), in the papers' scaling
::

    f = argmin_{f in H_K}  (1/l) sum_{j in L} ell(y_j, f(x_j)) + gamma_a ||f||_K^2 + s f^T Q f,
    s = gamma_i / n^2,  n = l + u,

with Q the graph regularizer over all n training points. KRR and SVM are the supervised case
(``gamma_i = 0``, every point labeled, ``gamma_a = lam``) of the same machinery: one base class
and one pair of solvers (:mod:`fastgssl.solvers._kernel_fits`), no twins.

Two backends: ``"dense"`` (``f = K alpha`` over the n training points, exact, O(n^2) memory) and
``"nystrom"`` (``f = V w`` in c Nystrom features, O(n c) memory, never an n x n matrix).
"""

from __future__ import annotations

import functools
import warnings
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
from sklearn.base import BaseEstimator
from sklearn.metrics import accuracy_score, r2_score
from sklearn.utils import ClassifierTags, RegressorTags
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, column_or_1d, validate_data

from fastgssl import registry
from fastgssl._validation import (
    as_label_array,
    check_bounded_int,
    check_n_neighbors,
    check_positive,
    check_semi_supervised_y,
    check_X,
    targets_once,
    validate_params_once,
)
from fastgssl.exceptions import UnlabeledComponentWarning
from fastgssl.graphs import resolve_graph
from fastgssl.kernels import check_kernel, nystrom
from fastgssl.losses import Loss, get_loss
from fastgssl.models._calibration import _PlattCalibration
from fastgssl.models._kernel_machine_cv import _CVDeclarations
from fastgssl.models._multiclass import solve_gram
from fastgssl.models._targets import check_class_labels, decoder
from fastgssl.regularizers import build_regularizer
from fastgssl.solvers import SOLVERS, fit_dense, fit_nystrom

__all__ = []

_FORMULATIONS = ("deformed", "full")
_BACKENDS = ("dense", "nystrom")
_LANDMARKS = ("uniform", "kmeans++")
_TASKS = ("classification", "regression")

_POSITIVE = Interval(Real, 0, None, closed="neither")
# scikit-learn's parameter constraints (checked by BaseEstimator._validate_params at fit and
# cv_objective); checks that involve several parameters stay in _check_common_params
_COMMON_CONSTRAINTS = {
    "sigma": [_POSITIVE],
    "kernel": [StrOptions({"rbf", "linear", "poly", "precomputed"}), callable],
    "kernel_params": [dict, None],
    "loss": [str, HasMethods(["d1", "d2"])],
    "loss_params": [dict, None],
    "backend": [StrOptions(set(_BACKENDS))],
    "n_components": [Interval(Integral, 1, None, closed="left")],
    "landmarks": [StrOptions(set(_LANDMARKS))],
    "tol": [_POSITIVE],
    "max_iter": [Interval(Integral, 1, None, closed="left")],
    "random_state": ["random_state"],
    "warm_start": ["boolean"],
    "solver": [StrOptions(set(SOLVERS))],
    "probability": ["boolean"],
    "fit_intercept": ["boolean"],
    "intercept_scaling": [_POSITIVE],
    "class_weight": [dict, StrOptions({"balanced"}), None],
    "multi_class": [StrOptions({"ovr", "ovo"})],
}
_GRAPH_CONSTRAINTS = {
    "gamma_a": [_POSITIVE],
    "gamma_i": [Interval(Real, 0, None, closed="left")],
    "graph": [str, callable, "sparse matrix", np.ndarray],
    "n_neighbors": [Interval(Integral, 1, None, closed="left")],
    "sigma_w": [_POSITIVE, None],
    "graph_weight": [StrOptions({"binary", "gaussian", "distance"})],
    "graph_params": [dict, None],
    "regularizer": [str, callable],
    "regularizer_params": [dict, None],
    "power": [Interval(Integral, 1, None, closed="left")],
    "formulation": [StrOptions(set(_FORMULATIONS))],
}
# rows of new points per kernel block in decision_function (block x n_train doubles)
_PREDICT_BLOCK_ELEMENTS = 1 << 23


def _check_choice(value, name, choices):
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {list(choices)}, got {value!r}.")
    return value


class _PickledLoss:
    """Stand-in for a Loss inside a pickle: rebuilt with ``get_loss(name, **params)``."""

    def __init__(self, name, params):
        self.name = name
        self.params = dict(params)


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


@functools.cache
def _param_names(cls):
    return BaseEstimator._get_param_names.__func__(cls)


class _KernelMachine(_CVDeclarations, _PlattCalibration, BaseEstimator):
    """Shared implementation of KRR, SVM, LapRLS and LapSVM (see the module docstring)."""

    _semi_supervised = False

    @classmethod
    def _get_param_names(cls):
        # scikit-learn reads the constructor's signature at every get_params / clone /
        # set_params (0.2 ms each); a grid search asks thousands of times, the signature of a
        # class never changes
        return _param_names(cls)

    # ---- hooks the four estimators define ------------------------------------------------
    def _regularization(self):
        """Return validated (gamma_a, gamma_i)."""
        raise NotImplementedError

    def _task(self, y):
        """Return "classification" or "regression" for targets y."""
        raise NotImplementedError

    def _loss_params(self):
        """Parameters for ``get_loss(self.loss, ...)``: ``loss_params`` plus ``h``.

        ``h`` goes to any loss (built-in or plugin, bare or qualified name) that declares a
        parameter ``h``; giving ``h`` a different value in ``loss_params`` is an error. A bound
        :class:`~fastgssl.losses.Loss` object is used as it is.
        """
        params = dict(self.loss_params or {})
        if not hasattr(self, "h") or not isinstance(self.loss, str):
            return params

        spec = registry.load("fastgssl.losses", self.loss)
        if "h" in spec.param_names:
            h = check_positive(self.h, "h")
            if "h" in params and float(params["h"]) != h:
                raise ValueError(
                    f"h={h} conflicts with loss_params={{'h': {params['h']}}}; set the "
                    f"Huber width once, with h."
                )
            params["h"] = h
        return params

    def _one_vs_one(self, classes):
        """Whether the fit codes its classes one-vs-one (more than two classes only)."""
        return self.multi_class == "ovo" and classes is not None and classes.size > 2

    # ---- validation ----------------------------------------------------------------------
    def _formulation(self):
        """"deformed" (the l-point problem with the deformed kernel) or "full" (n-space)."""
        return "full"

    def _check_common_params(self):
        validate_params_once(self)
        check_kernel(self.kernel, self.kernel_params)
        _check_choice(self.backend, "backend", _BACKENDS)
        if self.backend == "nystrom" and (callable(self.kernel)
                                          or self.kernel not in ("rbf", "precomputed")):
            raise ValueError(
                f"backend='nystrom' supports kernel='rbf' or 'precomputed', got "
                f"{self.kernel!r}; use backend='dense'."
            )
        if self.kernel in ("rbf", "poly"):
            check_positive(self.sigma, "sigma")
        self._formulation()
        if hasattr(self, "h"):
            check_positive(self.h, "h")
        if self.backend == "nystrom":
            check_bounded_int(self.n_components, "n_components", low=1)
            _check_choice(self.landmarks, "landmarks", _LANDMARKS)
        check_positive(self.tol, "tol")
        check_bounded_int(self.max_iter, "max_iter", low=1)

        _check_choice(self.solver, "solver", SOLVERS)

    def _make_loss(self, task):
        loss = get_loss(self.loss, **self._loss_params())
        if task == "regression" and loss.spec.y_domain == "binary":
            raise ValueError(
                f"loss={loss.name!r} is a classification loss (targets -1 / +1) but the task "
                f"is regression; use loss='square' or a real-domain loss."
            )
        return loss

    def _check_train_X(self, X):
        # feature names (DataFrame columns) are recorded as scikit-learn does and checked at
        # predict time; the array itself goes through fastgssl's own checks
        X_in = X
        X = check_X(X, "X", accept_sparse=True)
        validate_data(self, X_in, skip_check_array=True, reset=True)
        if self.kernel == "precomputed":
            if X.shape[0] != X.shape[1]:
                raise ValueError(
                    f"with kernel='precomputed', X must be the square (n, n) Gram matrix of "
                    f"the training points; got shape {X.shape}."
                )
            if sp.issparse(X):
                X = X.toarray()
        return X

    def _check_new_X(self, X):
        X_in = X
        X = check_X(X, "X", accept_sparse=True)
        if self.kernel != "precomputed":
            validate_data(self, X_in, skip_check_array=True, reset=False)
        expected = self.n_features_in_
        if X.shape[1] != expected:
            if self.kernel == "precomputed":
                raise ValueError(
                    f"X has {X.shape[1]} features, but {type(self).__name__} is expecting "
                    f"{expected} features as input: with kernel='precomputed', X must be the "
                    f"kernel between the new points and the {expected} training points."
                )
            raise ValueError(
                f"X has {X.shape[1]} features, but {type(self).__name__} is expecting "
                f"{expected} features as input."
            )
        return X

    # ---- targets -------------------------------------------------------------------------
    def _targets(self, y, n, task):
        """Return (y_enc, labeled, classes) (once per y in a grid's shared checks)."""
        return targets_once(y, (type(self), n, task),
                            lambda: self._encode_targets(y, n, task))

    def _encode_targets(self, y, n, task):
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None."
            )
        if not sp.issparse(y):
            y = as_label_array(y, "y")  # object arrays of numbers / strings, complex refused
        if self._semi_supervised:
            y = column_or_1d(y, warn=True)
            y_chk, labeled, classes = check_semi_supervised_y(y, n, task=task)
            if task == "classification":
                check_class_labels(y_chk[labeled])
        else:
            y_chk = column_or_1d(y, warn=True)
            if len(y_chk) != n:
                raise ValueError(
                    f"y has {len(y_chk)} entries but X has {n} rows; they must describe the "
                    f"same samples."
                )
            labeled = np.ones(n, dtype=bool)
            if task == "classification":
                check_class_labels(y_chk)
                classes = np.unique(y_chk)
                if classes.size < 2:
                    raise ValueError(
                        f"y has only 1 class ({classes.tolist()}); a classifier needs at "
                        f"least 2 classes."
                    )
            else:
                try:
                    y_chk = y_chk.astype(np.float64)
                except (TypeError, ValueError):
                    raise ValueError("y must be numeric for regression.") from None
                if not np.isfinite(y_chk).all():
                    raise ValueError(
                        "y contains NaN or infinite values; the supervised "
                        f"{type(self).__name__} needs every target (use LapRLS for NaN = "
                        "unlabeled)."
                    )
                classes = None
        if task == "regression":
            y_enc = np.where(labeled, np.asarray(y_chk, dtype=np.float64), 0.0)
            return y_enc, labeled, None
        if classes.size == 2:
            y_enc = np.zeros(n)
            y_enc[labeled] = np.where(y_chk[labeled] == classes[1], 1.0, -1.0)
        else:  # one-vs-rest: one +-1 column per class
            y_enc = np.zeros((n, classes.size))
            y_enc[labeled] = np.where(y_chk[labeled, None] == classes[None, :], 1.0, -1.0)
        return y_enc, labeled, classes

    # ---- graph ---------------------------------------------------------------------------
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
            from fastgssl.kernels import pairwise_kernel

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
        n_comp, comp = connected_components(W, directed=False)
        if n_comp < 2:
            return
        has_label = np.zeros(n_comp, dtype=bool)
        has_label[comp[labeled]] = True
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

    # ---- fit / predict -------------------------------------------------------------------
    def fit(self, X, y, sample_weight=None, *, init_coef=None):
        """Fit the model.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features), or (n, n)
            Training points (labeled and unlabeled), or the Gram matrix for
            ``kernel="precomputed"``.
        y : array-like of shape (n_samples,)
            Targets; semi-supervised estimators mark unlabeled points with ``-1``
            (classification) or ``NaN`` (regression).
        sample_weight : array-like of shape (n_samples,), optional
            Weights of the points' losses (finite, >= 0; read at the labeled points and
            multiplied by ``class_weight``): the data term is the weighted mean
            ``sum_L w_i loss_i / sum_L w_i``. Integer weights equal repeating points, 0
            equals leaving a labeled point's loss out (the point stays in the graph), and a
            common factor changes nothing. Every solver and backend takes them, and
            :mod:`fastgssl.cv`'s exact methods carry them into the fold refits.
        init_coef : ndarray, optional
            Warm start of Newton's method (losses without a closed form): ``beta`` over the
            labeled points (``formulation="deformed"`` with a graph, shape of
            ``deformed_coef_``) or ``alpha`` over the training points (dense backend, shape
            of ``dual_coef_``); ignored when its shape does not match. The minimizer does
            not depend on it (strictly convex objective), only the number of steps.

        Returns
        -------
        self
        """
        if init_coef is not None:
            self._init_coef = np.asarray(init_coef, dtype=np.float64)
        self._check_common_params()
        X = self._check_train_X(X)
        n = X.shape[0]
        objective = self._objective(y, n, sample_weight)
        task, loss = objective.task, objective.loss
        weights = objective.sample_weight
        gamma_a, gamma_i = objective.gamma_a, objective.gamma_i
        y_enc, labeled, classes = objective.y, objective.labeled, objective.classes

        if self.backend == "dense":  # refuse before any work (graph, kernel) is done
            from fastgssl._memory import check_dense_memory

            # the n x n kernel, plus the n x n factorization of a graph problem (I + r K Q or
            # Q K), or the Cholesky copy of K_LL without a graph
            check_dense_memory(n, n, (3 if gamma_i > 0 else 2) - (self.kernel == "precomputed"),
                               what=f"{type(self).__name__}'s dense kernel and factorization",
                               remedy="use backend='nystrom' (n_components=300..1000) or fewer "
                                      "points")
        W = Q = None
        if gamma_i > 0:
            W = self.build_graph(X)
            Q = self._build_regularizer(W)
            self._warn_unlabeled_components(W, labeled)

        K = fac = dk = beta = None
        options = {"tol": self.tol, "max_iter": self.max_iter, "return_info": True}
        dense_options = {**options, "solver": self.solver}
        ovo = self._one_vs_one(classes)
        # coefficient columns: one per class pair (one-vs-one), else those of the targets
        n_cols = (classes.size * (classes.size - 1) // 2,) if ovo else y_enc.shape[1:]
        # fastgssl.cv's exact refits hand a start in through _init_coef (used once)
        previous = self.__dict__.pop("_init_coef", None)
        deformed = Q is not None and self._formulation() == "deformed"
        if previous is None and self.warm_start:
            previous = getattr(self, "deformed_coef_" if deformed else "dual_coef_", None)
        if self.backend == "dense":
            K = self.build_kernel(X)
        else:
            fac = self.build_factor(X)
        if deformed:
            # Sindhwani et al. (2005): the supervised learner on L with the deformed kernel
            from fastgssl.kernels import DeformedKernel, warn_if_ill_conditioned

            dk = DeformedKernel(self.kernel, sigma=self.sigma, kernel_params=self.kernel_params,
                                route="nystrom" if fac is not None else "dense")
            dk.fit(X, Q, labeled, base_gram=K, factor=fac)
            r = gamma_i / (n**2 * gamma_a)
            # nystrom: only K~_LL (l x l) is formed; dense: the LU gives the n x l block too
            K_SL = None if fac is not None else dk.sample_block(r)
            K_LL = dk.labeled_gram(r)
            dk.release_workspace()  # the model keeps K~ at this r only: no n x n spares
            L = dk.labeled_index_
            l = L.size
            warn_if_ill_conditioned(dk.gram_norm_, gamma_a * l,
                                    f"{type(self).__name__}.fit")
            init = (previous if previous is not None and previous.shape == (l,) + n_cols
                    else None)
            beta, info = solve_gram(K_LL, y_enc[L], init, True,
                                     None if weights is None else weights[L], loss=loss,
                                     gamma_a=gamma_a, tol=self.tol, max_iter=self.max_iter,
                                     solver=self.solver, ovo=ovo)
            coef = dk.expansion(beta, r)
            decision = fac.features_ @ coef if fac is not None else K_SL @ beta
        else:
            if K is not None:
                init = (previous if previous is not None and previous.shape == (n,) + n_cols
                        else None)

                def solve(y, lab, scale, init):
                    return fit_dense(K, y, lab, Q, loss, gamma_a * scale, gamma_i * scale,
                                     init=init, sample_weight=weights, **dense_options)
            else:
                init = None

                def solve(y, lab, scale, init):
                    return fit_nystrom(fac.features_, y, lab, Q, loss, gamma_a * scale,
                                       gamma_i * scale, sample_weight=weights, **options)
            if ovo:
                from fastgssl.models._multiclass import fit_pairs

                coef, info = fit_pairs(solve, y_enc, labeled, weights, init)
            else:
                coef, info = solve(y_enc, labeled, 1.0, init)
            decision = (K if K is not None else fac.features_) @ coef
        if ovo:  # votes: the one-vs-rest shape of the targets
            decision = decoder(classes)(decision)

        self.X_fit_ = X
        self.n_features_in_ = X.shape[1]
        self.labeled_mask_ = labeled
        self.y_train_ = y_enc
        if task == "classification":
            self.classes_ = classes
        self.task_ = task
        self.loss_ = loss
        self.kernel_train_ = K
        self.nystrom_ = fac
        self.graph_ = W
        self.laplacian_ = Q
        self.gamma_a_ = gamma_a
        self.gamma_i_ = gamma_i
        if self.backend == "dense":
            self.dual_coef_ = coef
        else:
            self.coef_ = coef
        self.decision_train_ = decision
        self.deformed_kernel_ = dk
        self.deformed_coef_ = beta
        self.multi_class_ = "ovo" if ovo else "ovr"
        self._cv_weights = (weights, objective.weights_for)
        self.n_iter_ = max((i["n_iter"] for i in info), default=1)
        self.probability_sigmoids_ = None
        if self.probability:
            self._fit_platt(X, y)
        return self

    def decision_function(self, X):
        """Decision values ``f(x)`` of new points by the kernel expansion.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_new, n_features)
            New points; with ``kernel="precomputed"`` the kernel between the new points and
            the training points, shape (n_new, n_train).

        Returns
        -------
        f : ndarray of shape (n_new,) or (n_new, n_classes)
            Binary: positive values predict ``classes_[1]``. Multi-class: one column per
            class (one-vs-rest). Regression: the predictions.
        """
        check_is_fitted(self, "decision_train_")
        X = self._check_new_X(X)
        out = self._column_values(X)
        if getattr(self, "multi_class_", "ovr") == "ovo":
            return decoder(self.classes_)(out)
        return out

    def _column_values(self, X):
        """``k(x, X) alpha`` (or ``v(x) w``): one column per coefficient column."""
        if self.nystrom_ is not None:
            return self.nystrom_.transform(X) @ self.coef_
        alpha = self.dual_coef_
        if self.kernel == "precomputed":
            out = np.asarray(X @ alpha)
            if self.fit_intercept:
                out = out + self.intercept_scaling**2 * alpha.sum(axis=0)
            return out
        m, n_train = X.shape[0], self.X_fit_.shape[0]
        out = np.empty((m,) + alpha.shape[1:])
        block = max(1, _PREDICT_BLOCK_ELEMENTS // max(n_train, 1))
        for start in range(0, m, block):
            stop = min(m, start + block)
            out[start:stop] = self.build_kernel(X[start:stop], self.X_fit_) @ alpha
        return out

    def predict(self, X):
        """Predicted class labels (classification) or values (regression) of new points."""
        f = self.decision_function(X)
        if getattr(self, "task_", None) != "classification":
            return f
        if f.ndim == 1:
            return self.classes_[(f > 0).astype(np.intp)]
        return self.classes_[np.argmax(f, axis=1)]

    def score(self, X, y, sample_weight=None):
        """Accuracy (classification) or R^2 (regression) on the labeled entries of ``y``.

        Semi-supervised estimators skip entries marked unlabeled (``-1`` / ``NaN``).
        """
        check_is_fitted(self, "decision_train_")
        y = np.asarray(y)
        keep = np.ones(len(y), dtype=bool)
        if self._semi_supervised:
            if self.task_ == "regression":
                keep = ~np.isnan(y.astype(np.float64))
            else:
                keep = np.array([str(v) != "-1" for v in y], dtype=bool) if y.dtype.kind \
                    not in "fiu" else y != -1
        pred = self.predict(X)
        sw = None if sample_weight is None else np.asarray(sample_weight)[keep]
        if self.task_ == "classification":
            return float(accuracy_score(y[keep], pred[keep], sample_weight=sw))
        return float(r2_score(y[keep], pred[keep], sample_weight=sw))

    def __getstate__(self):
        # Loss objects hold Numba dispatchers; pickle them by registry name and parameters.

        state = super().__getstate__()
        for key in ("loss", "loss_"):
            value = state.get(key)
            if isinstance(value, Loss):
                state = dict(state)
                state[key] = _PickledLoss(value.name, value.params)
        return state

    def __setstate__(self, state):
        for key in ("loss", "loss_"):
            value = state.get(key)
            if isinstance(value, _PickledLoss):
                from fastgssl.losses import get_loss

                state[key] = get_loss(value.name, **value.params)
        super().__setstate__(state)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = self.kernel != "precomputed"
        tags.input_tags.pairwise = self.kernel == "precomputed"
        tags.target_tags.required = True
        task = self._declared_task()
        if task == "classification":
            tags.estimator_type = "classifier"
            tags.classifier_tags = ClassifierTags()
            tags.regressor_tags = None
        elif task == "regression":
            tags.estimator_type = "regressor"
            tags.regressor_tags = RegressorTags()
            tags.classifier_tags = None
        return tags

    def _declared_task(self):
        """The task the parameters fix before any fit (None: the targets decide)."""
        task = getattr(self, "task", None)
        return task if task in _TASKS else None


class _ClassifierOnly:
    """Mixin of the machines without a ``task`` parameter (SVM, LapSVM): classifiers
    whatever the targets."""

    def _task(self, y):
        return "classification"

    def _declared_task(self):
        return "classification"
