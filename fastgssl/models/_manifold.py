"""Manifold-regularized kernel machines: KRR / LSSVM, SVM, LapRLS and LapSVM.

Implements the learners of Liu et al. (2019) ("Efficient Cross-Validation for Semi-Supervised
Learning": LapRLS and LapSVM, Belkin, Niyogi & Sindhwani 2006) and of Liu et al. (2018) ("Fast
Cross-Validation": KRR / LSSVM and SVM with a Huber-smoothed hinge), in the papers' scaling
::

    f = argmin_{f in H_K}  (1/l) sum_{j in L} ell(y_j, f(x_j)) + gamma_a ||f||_K^2 + s f^T Q f,
    s = gamma_i / n^2,  n = l + u,

with Q the graph regularizer over all n training points. KRR and SVM are the supervised case
(``gamma_i = 0``, every point labeled, ``gamma_a = lam``) of the same machinery: one base class
and one pair of solvers (:mod:`fastgssl.models._kernel_solvers`), no twins.

Two backends: ``"dense"`` (``f = K alpha`` over the n training points, exact, O(n^2) memory) and
``"nystrom"`` (``f = V w`` in c Nystrom features, O(n c) memory, never an n x n matrix).
"""

from __future__ import annotations

import dataclasses
import functools
import warnings
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, clone
from sklearn.utils import ClassifierTags, RegressorTags
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, column_or_1d, validate_data

from fastgssl._protocol import CVObjective, CVState, sharing_key
from fastgssl._validation import (
    as_label_array,
    check_bounded_int,
    check_n_neighbors,
    check_positive,
    check_sample_weight,
    check_semi_supervised_y,
    check_X,
    targets_once,
    validate_params_once,
)
from fastgssl.models._kernel_solvers import SOLVERS, fit_dense, fit_nystrom, fold_refits

__all__ = ["KRR", "LapRLS", "LapSVM", "SVM"]

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
# folds of the internal CV that calibrates predict_proba (probability=True)
_PLATT_FOLDS = 5
# rows of new points per kernel block in decision_function (block x n_train doubles)
_PREDICT_BLOCK_ELEMENTS = 1 << 23


from fastgssl._warnings import UnlabeledComponentWarning  # noqa: E402


def _solve_gram(K, Y, init=None, return_info=False, sample_weight=None, *, loss, gamma_a, tol,
                max_iter, solver, ovo=False):
    """The supervised kernel machine on the Gram matrix ``K`` of its m points (every point
    labeled): ``beta`` minimizing ``(1/m) sum loss(Y, K beta) + gamma_a beta^T K beta``
    (weighted mean with ``sample_weight``; with ``return_info``: ``(beta, per-column solver
    info)``). ``ovo``: ``Y`` holds one-vs-rest columns and ``beta`` one column per class pair,
    each pair solved on the Gram block of its points (:mod:`fastgssl.models._multiclass`)."""
    from fastgssl._indexing import take_block
    from fastgssl.models._multiclass import fit_pairs

    options = {"tol": tol, "max_iter": max_iter, "solver": solver, "return_info": True}
    m = K.shape[0]
    if not ovo:
        out = fit_dense(K, Y, np.ones(m, dtype=bool), None, loss, gamma_a, 0.0, init=init,
                        sample_weight=sample_weight, **options)
        return out if return_info else out[0]

    def pair(y, in_pair, scale, init_col):
        idx = np.flatnonzero(in_pair)
        coef = np.zeros(m)
        coef[idx], info = fit_dense(
            take_block(K, idx), y[idx], np.ones(idx.size, dtype=bool), None, loss,
            gamma_a * scale, 0.0, init=None if init_col is None else init_col[idx],
            sample_weight=None if sample_weight is None else sample_weight[idx], **options)
        return coef, info

    beta, info = fit_pairs(pair, np.asarray(Y, dtype=np.float64), np.ones(m, dtype=bool),
                           sample_weight, init)
    return (beta, info) if return_info else beta


def _decoder(classes):
    """``F -> ovo_decision(F, k)``: the one-vs-rest-shaped votes of pairwise values."""
    from functools import partial

    from fastgssl.models._multiclass import ovo_decision

    return partial(ovo_decision, k=len(classes))


def _class_labels(y_enc, labeled, classes):
    """Class index of every labeled point from the encoded targets (-1 elsewhere)."""
    codes = np.full(labeled.shape[0], -1, dtype=np.intp)
    if y_enc.ndim == 1:
        codes[labeled] = (y_enc[labeled] > 0).astype(np.intp)
    else:
        codes[labeled] = np.argmax(y_enc[labeled], axis=1)
    return codes


def _point_weights(class_weight, sample_weight, y_enc, labeled, classes, task, kept=None):
    """Loss weight of every point (n,), or None when unweighted.

    ``sample_weight`` (validated, (n,)) times the class weight of each point's label; with
    ``kept`` (a subset of ``labeled``), the weights a refit on the labels of ``kept`` uses:
    "balanced" is recomputed from those labels."""
    kept = labeled if kept is None else kept
    if class_weight is None and sample_weight is None:
        return None
    w = np.ones(labeled.shape[0]) if sample_weight is None else sample_weight.copy()
    if class_weight is not None:
        if task != "classification":
            raise ValueError("class_weight applies to classification; this estimator's task "
                             "is regression (use sample_weight in fit).")
        from sklearn.utils.class_weight import compute_class_weight

        codes = _class_labels(y_enc, kept, classes)
        present = np.unique(codes[kept])
        if isinstance(class_weight, str):  # "balanced", over the kept labels
            per_class = np.ones(classes.size)
            per_class[present] = compute_class_weight("balanced", classes=present,
                                                      y=codes[kept])
        else:
            per_class = compute_class_weight(class_weight, classes=classes,
                                             y=classes[codes[kept]])
        per_class = np.asarray(per_class, dtype=np.float64)
        if not (np.isfinite(per_class).all() and (per_class >= 0).all()):
            raise ValueError(f"class_weight must give finite, non-negative weights, got "
                             f"{class_weight!r}.")
        w[kept] *= per_class[codes[kept]]
    w[~kept] = 0.0
    return w




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


def _check_class_labels(y):
    """scikit-learn's check_classification_targets, skipped for 1-D integer / bool labels
    (always valid class labels; the check costs 0.5 ms, once per candidate of a search)."""
    if not (isinstance(y, np.ndarray) and y.ndim == 1 and y.dtype.kind in "iub"):
        check_classification_targets(y)


@functools.cache
def _param_names(cls):
    return BaseEstimator._get_param_names.__func__(cls)


class _KernelMachine(BaseEstimator):
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
        from fastgssl import registry

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
        from fastgssl.kernels._pairwise import check_kernel

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
        from fastgssl.models._kernel_solvers import SOLVERS

        _check_choice(self.solver, "solver", SOLVERS)

    def _make_loss(self, task):
        from fastgssl.losses import get_loss

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
                _check_class_labels(y_chk[labeled])
        else:
            y_chk = column_or_1d(y, warn=True)
            if len(y_chk) != n:
                raise ValueError(
                    f"y has {len(y_chk)} entries but X has {n} rows; they must describe the "
                    f"same samples."
                )
            labeled = np.ones(n, dtype=bool)
            if task == "classification":
                _check_class_labels(y_chk)
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
        from fastgssl.graphs import resolve_graph

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
            if graph != "knn":  # other builders take graph_params only (as before)
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
        from fastgssl.kernels import nystrom

        fac = nystrom(X, self.n_components, sigma=self.sigma if self.kernel == "rbf" else 1.0,
                      landmarks=self.landmarks, random_state=self.random_state,
                      kernel=self.kernel)
        return _InterceptFactor(fac, self.intercept_scaling) if self.fit_intercept else fac

    def _build_regularizer(self, W):
        from fastgssl.regularizers import build_regularizer

        power = check_bounded_int(self.power, "power", low=1)
        return build_regularizer(self.regularizer, W, power=power,
                                 params=self.regularizer_params)

    @staticmethod
    def _warn_unlabeled_components(W, labeled):
        from scipy.sparse.csgraph import connected_components

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
            from fastgssl.kernels import DeformedKernel
            from fastgssl.kernels._deformed import warn_if_ill_conditioned

            dk = DeformedKernel(self.kernel, sigma=self.sigma, kernel_params=self.kernel_params,
                                route="nystrom" if fac is not None else "dense")
            dk.fit(X, Q, labeled, base_gram=K, factor=fac)
            r = gamma_i / (n**2 * gamma_a)
            # nystrom: only K~_LL (l x l) is formed; dense: the LU gives the n x l block too
            K_SL = None if fac is not None else dk.sample_block(r)
            K_LL = dk.labeled_gram(r)
            dk._release_workspace()  # the model keeps K~ at this r only: no n x n spares
            L = dk.labeled_index_
            l = L.size
            warn_if_ill_conditioned(dk.gram_norm_, gamma_a * l,
                                    f"{type(self).__name__}.fit")
            init = (previous if previous is not None and previous.shape == (l,) + n_cols
                    else None)
            beta, info = _solve_gram(K_LL, y_enc[L], init, True,
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
            decision = _decoder(classes)(decision)

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

    def _fit_platt(self, X, y):
        """Platt sigmoids on the out-of-fold decision values of exact transductive CV."""
        from fastgssl.cv import ExactCV, make_folds

        if self.task_ != "classification":
            raise ValueError("probability=True needs a classifier (task='classification').")
        labeled = self.labeled_mask_
        y_lab = np.argmax(self.y_train_, axis=1) if self.y_train_.ndim == 2 else \
            (self.y_train_ > 0).astype(int)
        counts = np.bincount(y_lab[labeled])
        n_folds = int(min(_PLATT_FOLDS, counts[counts > 0].min()))
        if n_folds < 2:
            raise ValueError(
                "probability=True calibrates on out-of-fold decision values and needs at "
                "least 2 labeled points of every class."
            )
        codes = np.where(labeled, y_lab, -1)
        folds = make_folds(codes, n_folds, labeled=labeled, random_state=self.random_state)
        res = ExactCV().run_transductive(self, X, y, folds, fitted=self)
        self.calibrate(res.predictions, res.targets)

    def calibrate(self, decision_values, targets):
        """Fit the Platt sigmoids of :meth:`predict_proba` on given out-of-fold values.

        ``fit(probability=True)`` calls this with the out-of-fold decision values of its own
        exact transductive CV; :class:`fastgssl.cv.GridSearchCV` calls it with the exact
        CV it already ran for the selected candidate, so the refit costs one fit only.

        Parameters
        ----------
        decision_values : ndarray of shape (l,) or (l, n_classes)
            Out-of-fold decision values of the labeled points.
        targets : ndarray, shape of ``decision_values``
            Their encoded targets (+1 / -1; one column per class for one-vs-rest).

        Returns
        -------
        self
        """
        from fastgssl.models._calibration import platt_fit

        check_is_fitted(self, "decision_train_")
        if self.task_ != "classification":
            raise ValueError("calibrate needs a classifier (task='classification').")
        oof = np.asarray(decision_values, dtype=np.float64)
        targets = np.asarray(targets)
        if oof.shape != targets.shape or oof.shape[1:] != self.y_train_.shape[1:]:
            raise ValueError(
                f"decision_values {oof.shape} and targets {targets.shape} must have the shape "
                f"of the labeled decision values (l,) + {self.y_train_.shape[1:]}."
            )
        if not np.isfinite(oof).all():
            raise ValueError("decision_values contains NaN or infinite values.")
        if oof.ndim == 1:
            self.probability_sigmoids_ = [platt_fit(oof, targets > 0)]
        else:
            self.probability_sigmoids_ = [platt_fit(oof[:, k], targets[:, k] > 0)
                                          for k in range(oof.shape[1])]
        return self

    def _has_probability(self):
        calibrated = bool(self.probability) or \
            getattr(self, "probability_sigmoids_", None) is not None
        return calibrated and getattr(self, "task_", "classification") == "classification"

    @available_if(_has_probability)
    def predict_proba(self, X):
        """Class probabilities by Platt scaling (fit with ``probability=True``).

        The sigmoids are fitted at ``fit`` on the out-of-fold decision values of exact
        transductive cross-validation (``min(5, smallest class count)`` stratified folds of
        the labeled points, seeded by ``random_state``): for the kernel machines that is t
        extra refits of size about l on the Gram matrix of the fit (closed forms for the
        square loss), as SVC's ``probability=True`` runs an internal CV; or by
        :meth:`calibrate` (a fitted :class:`fastgssl.cv.GridSearchCV` hands its own
        exact CV of the selected candidate to it, so its refit adds no CV). One-vs-rest
        models normalize the per-class probabilities.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_new, n_features)

        Returns
        -------
        ndarray of shape (n_new, n_classes)
        """
        from fastgssl.models._calibration import platt_probabilities

        check_is_fitted(self, "probability_sigmoids_")
        if self.probability_sigmoids_ is None:
            raise ValueError("predict_proba needs the model fitted with probability=True "
                             "(or calibrated with calibrate()).")
        return platt_probabilities(self.decision_function(X), self.probability_sigmoids_)

    @available_if(_has_probability)
    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba`."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def _objective(self, y, n, sample_weight=None):
        from functools import partial

        gamma_a, gamma_i = self._regularization()
        task = self._task(y)
        y_enc, labeled, classes = self._targets(y, n, task)
        loss = self._make_loss(task)
        ovo = self._one_vs_one(classes)
        solve = partial(_solve_gram, loss=loss, gamma_a=gamma_a, tol=self.tol,
                        max_iter=self.max_iter, solver=self.solver, ovo=ovo)
        sample_weight = check_sample_weight(sample_weight, n)
        weights = _point_weights(self.class_weight, sample_weight, y_enc, labeled, classes,
                                task)
        if weights is not None and not weights[labeled].sum() > 0:
            raise ValueError("the loss weights (sample_weight times class_weight) are zero on "
                             "every labeled point; at least one labeled point needs a positive "
                             "weight.")
        weights_for = None if weights is None else partial(
            _point_weights, self.class_weight, sample_weight, y_enc, labeled, classes, task)
        return CVObjective(task=task, y=y_enc, labeled=labeled, classes=classes,
                           gamma_a=gamma_a, gamma_i=gamma_i, loss=loss, solve=solve,
                           regularizer_factory=self._build_regularizer if gamma_i > 0 else None,
                           sample_weight=weights, weights_for=weights_for,
                           decode=_decoder(classes) if ovo else None,
                           solve_folds=None if ovo else partial(
                               fold_refits, loss=loss, gamma_a=gamma_a, tol=self.tol,
                               max_iter=self.max_iter, solver=self.solver))

    def _sharing(self, gamma_i, task):
        """The sharing declarations of :class:`fastgssl.CVObjective` (what a grid search
        builds once for the candidates with equal keys)."""
        dense = self.backend == "dense"
        kernel_params = (self.kernel, self.sigma, self.kernel_params, self.fit_intercept,
                         self.intercept_scaling)
        declared = {
            "kernel_key": sharing_key(self.backend, *kernel_params, *(
                () if dense else (self.n_components, self.landmarks, self.random_state))),
            "build_kernel": self.build_kernel if dense else None,
            "build_factor": None if dense else self._factor_features,
            "precomputed": self.kernel == "precomputed",
            "estimator_for": self._estimator_for,
            "refit_calibrated": (self._refit_calibrated
                                 if self.probability and task == "classification" else None),
        }
        if self._semi_supervised:
            by_name = isinstance(self.graph, str)
            declared.update(
                graph_key=sharing_key(self.graph, *((self.n_neighbors, self.sigma_w,
                                                     self.graph_weight, self.graph_params)
                                                    if by_name else ())),
                build_graph=self.build_graph,
                with_graph=lambda W: self._estimator_for(graph=W),
                regularizer_key=sharing_key(self.regularizer, self.regularizer_params,
                                            self.power),
                knn_k=(int(self.n_neighbors) if by_name and self.graph == "knn" and gamma_i > 0
                       and isinstance(self.n_neighbors, (int, np.integer)) else None))
        return declared

    def _factor_features(self, X):
        return np.asarray(self.build_factor(X).features_, dtype=np.float64)

    def _estimator_for(self, gram=False, graph=None, warm=None):
        """See :attr:`fastgssl.CVObjective.estimator_for`."""
        est = clone(self)
        if gram:  # build_kernel's matrix holds the intercept's constant already
            est.set_params(kernel="precomputed", fit_intercept=False)
        if graph is not None:
            est.set_params(graph=graph)
        if warm is not None:
            coef = warm.deformed_coef_ if warm.deformed_coef_ is not None else \
                warm.__dict__.get("dual_coef_")
            if coef is not None:
                est._init_coef = np.asarray(coef, dtype=np.float64)
        return est

    def _refit_calibrated(self, X, y, oof, targets, sample_weight=None):
        """See :attr:`fastgssl.CVObjective.refit_calibrated`."""
        est = clone(self).set_params(probability=False)
        est.fit(X, y, **({} if sample_weight is None else {"sample_weight": sample_weight}))
        est.calibrate(oof, targets)
        return est.set_params(probability=True)

    def cv_objective(self, y, sample_weight=None):
        """What the parameters and the targets ``y`` define, without fitting
        (:class:`fastgssl.CVObjective`).

        The parameters are validated as in :meth:`fit`. The grid search reads one objective
        per candidate (regularization, loss, encoded targets and the supervised solver on a
        Gram matrix) and shares the kernel, the graph and the deformed kernel across
        candidates instead of fitting each.

        Parameters
        ----------
        y : array-like of shape (n_samples,)
            Targets as passed to :meth:`fit`.
        sample_weight : array-like of shape (n_samples,), optional
            As passed to :meth:`fit`.

        Returns
        -------
        CVObjective
        """
        self._check_common_params()
        n = 0 if y is None else (y.shape[0] if sp.issparse(y) else len(np.asarray(y)))
        objective = self._objective(y, n, sample_weight)
        return dataclasses.replace(objective, **self._sharing(objective.gamma_i,
                                                              objective.task))

    def cv_state(self):
        """The fitted state that :mod:`fastgssl.cv` reads (:class:`fastgssl.CVState`).

        Returns
        -------
        CVState
            Targets, fitted values, loss, regularization, the base Gram matrix (dense) or
            Nystrom features, the graph and regularizer, and the deformed kernel of the fit.
        """
        from functools import partial

        check_is_fitted(self, "decision_train_")
        Q = self.laplacian_
        dk = self.deformed_kernel_
        n = self.labeled_mask_.shape[0]
        r = (self.gamma_i_ / (n**2 * self.gamma_a_)) if Q is not None else 0.0
        K = self.kernel_train_
        if K is not None and not isinstance(K, np.ndarray):
            K = K.toarray() if sp.issparse(K) else np.asarray(K, dtype=np.float64)
        return CVState(
            task=self.task_, y=self.y_train_, labeled=self.labeled_mask_,
            f=self.decision_train_, classes=getattr(self, "classes_", None),
            gamma_a=float(self.gamma_a_), gamma_i=float(self.gamma_i_), loss=self.loss_,
            kernel=K, factor=None if self.nystrom_ is None else self.nystrom_.features_,
            coef=self.dual_coef_ if self.nystrom_ is None else self.coef_,
            graph=self.graph_, regularizer=Q,
            regularizer_factory=self._build_regularizer if Q is not None else None,
            deformed=dk, r=r, estimator=self,
            solve=partial(_solve_gram, loss=self.loss_, gamma_a=float(self.gamma_a_),
                          tol=self.tol, max_iter=self.max_iter, solver=self.solver,
                          ovo=self.multi_class_ == "ovo"),
            sample_weight=self.__dict__.get("_cv_weights", (None, None))[0],
            weights_for=self.__dict__.get("_cv_weights", (None, None))[1],
            decode=_decoder(self.classes_) if self.multi_class_ == "ovo" else None,
            solve_folds=None if self.multi_class_ == "ovo" else partial(
                fold_refits, loss=self.loss_, gamma_a=float(self.gamma_a_), tol=self.tol,
                max_iter=self.max_iter, solver=self.solver),
            extra={"deformed_coef": self.deformed_coef_},
        )

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
            return _decoder(self.classes_)(out)
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
        from sklearn.metrics import accuracy_score, r2_score

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
        from fastgssl.losses import Loss

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
        return None





class KRR(_KernelMachine):
    """Kernel ridge regression (square loss); LSSVM is the same model.

    Minimizes the papers' mean form (Liu et al. (2018))::

        (1/n) sum_i (y_i - f(x_i))^2 + lam ||f||_K^2,

    so that ``alpha = (K + n lam I)^{-1} y`` (one Cholesky factorization). The least-squares
    SVM (LSSVM, Suykens) without bias is exactly this model fitted to +-1 targets: use
    ``task="classification"``.

    Parameters
    ----------
    lam : float > 0, default=1e-3
        Regularization. scikit-learn's ``KernelRidge(alpha=n * lam, kernel="rbf",
        gamma=1 / (2 * sigma))`` fits the same function (its objective is the sum form
        ``sum_i (y_i - f_i)^2 + alpha ||f||^2``).
    sigma : float > 0, default=1.0
        RBF width in the papers' convention ``exp(-||x - x'||^2 / (2 sigma))``: a squared distance.
    loss : str or Loss, default="square"
        Any registered loss; non-square losses are fitted by Newton's method.
    task : {"regression", "classification"}, default="regression"
        ``"classification"`` encodes two labels of any values as +-1 (LSSVM) and more labels
        one-vs-rest, sharing one factorization.

    kernel : {"rbf", "linear", "poly", "precomputed"} or callable, default="rbf"
        ``"rbf"``: ``exp(-||x - x'||^2 / (2 sigma))``; ``"linear"``: ``<x, x'>``; ``"poly"``:
        ``(<x, x'> / sigma + coef0) ** degree``; a callable ``(X, Z, **kernel_params) -> K``;
        ``"precomputed"``: X is the Gram matrix in ``fit`` and the kernel between new and
        training points in ``predict`` (as scikit-learn's SVC).
    kernel_params : dict, optional
        ``degree`` (3) and ``coef0`` (1.0) of ``"poly"``; keyword arguments of a callable.
    backend : {"dense", "nystrom"}, default="dense"
        ``"dense"``: exact, ``f = K alpha`` over the training points (O(n^2) memory, O(n^3)
        time). ``"nystrom"``: ``f = V w`` in ``n_components`` Nystrom features (O(n c) memory,
        O(n c^2) time), never an n x n matrix.
    n_components : int, default=300
        Number of Nystrom landmarks (nystrom backend).
    landmarks : {"uniform", "kmeans++"}, default="uniform"
        Landmark sampling of the nystrom backend.
    loss_params : dict, optional
        Extra parameters of the loss.
    tol : float, default=1e-10
        Newton stops when the largest coefficient change is below ``tol`` times the largest
        coefficient (closed forms ignore it).
    max_iter : int, default=100
        Newton iterations per output column; a ConvergenceWarning gives the numbers otherwise.
    random_state : int, RandomState or None
        Seeds the Nystrom landmarks.
    probability : bool, default=False
        Classifiers: calibrate :meth:`predict_proba` by Platt scaling on the out-of-fold
        decision values of exact transductive 5-fold CV run inside ``fit`` (t extra refits
        of size about l; see :meth:`predict_proba`).
    fit_intercept : bool, default=True
        Add an intercept as the weight of a constant feature: the kernel becomes
        ``k(x, z) + intercept_scaling**2`` (the nystrom backend gets one more feature), so
        the intercept is regularized with the kernel term, as liblinear's is, and every CV
        method and the deformed-kernel reduction see one kernel. The default was chosen by
        measurement (``docs/benchmarks_cv.md``, seed 001 sets: True for KRR / SVM, which
        closes the gap to SVC on ionosphere; False for LapRLS / LapSVM, the papers' form).
    intercept_scaling : float > 0, default=1.0
        Value of the constant feature; larger values penalize the intercept less.
    class_weight : dict, "balanced" or None, default=None
        Classification: the loss of a point of class c is weighted by ``class_weight[c]``
        (classes missing from the dict weigh 1); ``"balanced"`` uses ``l / (k l_c)`` over
        the l labeled points of k classes (``l_c`` of class c), as scikit-learn's SVC does.
        The weights multiply ``sample_weight`` of :meth:`fit`, and the data term becomes the
        weighted mean ``sum_L w_i loss_i / sum_L w_i`` (so integer weights equal repeated
        points, and "balanced" keeps the normalization ``sum_L w_i = l``). One-vs-rest
        columns weigh a point by the class of its label in every column. Exact CV refits
        recompute "balanced" from the labels each fold keeps, as a refit does.
    multi_class : {"ovr", "ovo"}, default="ovr"
        More than two classes: ``"ovr"`` fits one +-1 problem per class on all labeled
        points (decision: the largest); ``"ovo"`` fits one problem per class pair on the
        labeled points of its two classes, with the pair's data term summed and divided by
        the same l (libsvm's one C for every pair: ``SVM(lam, multi_class="ovo")`` is
        ``SVC(C=1 / (2 n lam))`` pair by pair), and decides by votes. Decision values keep
        the one-vs-rest shape (SVC's ``decision_function_shape="ovr"``: votes plus the
        summed pairwise values squashed into (-1/3, 1/3)); ``dual_coef_`` / ``coef_`` have
        one column per pair. Exact CV and the grid search support both; the first-order
        approximations (bif, fbif, newton, exact-quadratic) need ``"ovr"``. See
        :mod:`fastgssl.models._multiclass`.
    solver : {"auto", "newton", "active-set"}, default="auto"
        Optimizer for losses without a closed form (dense backend and the l-point problem
        of ``formulation="deformed"``): ``"newton"`` (damped Newton with an exact line
        search, the reference), ``"active-set"`` (Huber / squared hinge without a graph: a
        box-constrained active-set method whose m free points solve an m x m system) or
        ``"auto"`` (active-set where it applies, Newton elsewhere). All reach the same
        minimizer to round-off.
    warm_start : bool, default=False
        Dense backend, non-quadratic losses: start Newton from the previous fit's
        ``dual_coef_`` (when its shape matches) instead of the square-loss solution. A path
        over decreasing regularization (what :class:`fastgssl.cv.GridSearchCV` does)
        then needs fewer Newton steps and skips the O(n^3) square-loss start.

    Attributes
    ----------
    X_fit_ : ndarray or sparse matrix
        Training points, or the Gram matrix when ``kernel="precomputed"``.
    n_features_in_ : int
    labeled_mask_ : ndarray of bool, shape (n,)
    y_train_ : ndarray of shape (n,) or (n, n_classes)
        Encoded targets: +-1 (binary; +1 is ``classes_[1]``), one +-1 column per class
        (multi-class one-vs-rest) or real values (regression); 0 at unlabeled points.
    classes_ : ndarray (classification only)
    task_ : {"classification", "regression"}
    loss_ : fastgssl.losses.Loss
    kernel_train_ : ndarray of shape (n, n) or None
        Kernel matrix of the training points (dense backend), None for nystrom.
    nystrom_ : fastgssl.kernels.NystromFactor or None
        The factor ``V`` (``nystrom_.features_``) for the nystrom backend, else None.
    graph_ : scipy.sparse.csr_matrix or None
        Affinity W over all training points (None when ``gamma_i == 0``).
    laplacian_ : scipy.sparse.csr_matrix, LinearOperator or None
        The regularizer Q = regularizer(W): CSR, or the registry's matrix-free operator for
        ``power >= 3`` (None when ``gamma_i == 0``).
    dual_coef_ : ndarray of shape (n,), (n, n_classes) or (n, n_pairs)
        Expansion coefficients alpha, ``f = K alpha`` (dense backend only).
    coef_ : ndarray of shape (r,), (r, n_classes) or (r, n_pairs)
        Weights w of the Nystrom features, ``f = V w`` (nystrom backend only).
    decision_train_ : ndarray, shape of ``y_train_``
        f at the n training points.
    deformed_kernel_ : fastgssl.kernels.DeformedKernel or None
        The deformed kernel of the fit (``formulation="deformed"`` with a graph), else None.
    deformed_coef_ : ndarray of shape (l,), (l, n_classes) or (l, n_pairs), or None
        ``beta`` of ``f = sum_{j in L} beta_j K~(., x_j)`` (``formulation="deformed"``).
    gamma_a_, gamma_i_ : float
        The regularization of the papers' objective that was fitted (KRR / SVM: ``lam`` and 0).
    multi_class_ : {"ovr", "ovo"}
        The coding fitted: ``"ovo"`` for ``multi_class="ovo"`` with more than two
        classes (coefficients: one column per class pair, ``n_pairs = k (k - 1) / 2``),
        else ``"ovr"``.
    n_iter_ : int
        Newton iterations (largest over output columns; 1 for a closed form: one solve).

    See Also
    --------
    LapRLS : the same learner with a graph term over unlabeled points.
    SVM : the Huber-hinge counterpart.
    sklearn.kernel_ridge.KernelRidge : the sum-form equivalent (``alpha = n lam``).

    Notes
    -----
    The supervised case of :class:`LapRLS`: ``gamma_a = lam``, ``gamma_i = 0``, every point
    labeled. The papers have no intercept; ``fit_intercept=True`` (the default) adds a
    regularized one as a constant feature, ``fit_intercept=False`` is the papers' model.

    References
    ----------
    Suykens, J. A. K., Vandewalle, J. (1999). Least squares support vector machine
    classifiers. Neural Processing Letters 9.
    Liu, Y., Jiang, S., Liao, S. (2014). Efficient approximation of cross-validation for
    kernel methods using Bouligand influence function. ICML.

    Examples
    --------
    >>> import numpy as np
    >>> from fastgssl.models import KRR
    >>> X = np.linspace(0, 3, 30)[:, None]
    >>> model = KRR(lam=1e-4, sigma=0.5).fit(X, np.sin(X).ravel())
    >>> bool(abs(model.predict([[1.5]])[0] - np.sin(1.5)) < 1e-2)
    True
    """

    _parameter_constraints = {
        **_COMMON_CONSTRAINTS,
        "lam": [_POSITIVE],
        "task": [StrOptions(set(_TASKS))],
    }

    def __init__(self, lam=1e-3, sigma=1.0, *, kernel="rbf", kernel_params=None, loss="square",
                 loss_params=None, task="regression", backend="dense", n_components=300,
                 landmarks="uniform", tol=1e-10, max_iter=100, random_state=None,
                 warm_start=False, solver="auto",
                 probability=False, fit_intercept=True, intercept_scaling=1.0,
                 class_weight=None, multi_class="ovr"):
        self.lam = lam
        self.sigma = sigma
        self.kernel = kernel
        self.kernel_params = kernel_params
        self.loss = loss
        self.loss_params = loss_params
        self.task = task
        self.backend = backend
        self.n_components = n_components
        self.landmarks = landmarks
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state
        self.warm_start = warm_start
        self.solver = solver
        self.probability = probability
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.class_weight = class_weight
        self.multi_class = multi_class

    def _regularization(self):
        return check_positive(self.lam, "lam"), 0.0

    def _task(self, y):
        return _check_choice(self.task, "task", _TASKS)

    def _declared_task(self):
        return self.task if self.task in _TASKS else None


class SVM(_KernelMachine):
    """Support vector machine with the Huber-smoothed hinge loss (Liu et al. (2018)).

    Minimizes ``(1/n) sum_i ell_h(y_i f(x_i)) + lam ||f||_K^2`` with the Huber hinge ``ell_h``
    (it tends to the hinge as ``h -> 0``) by Newton's method with a line search.
    Two labels of any values are encoded +-1; more labels one-vs-rest, or one-vs-one
    with ``multi_class="ovo"``.

    Parameters
    ----------
    lam : float > 0, default=1e-3
        Regularization. For the hinge (``h -> 0``) this is scikit-learn's
        ``SVC(C=1 / (2 n lam), kernel="rbf", gamma=1 / (2 sigma))``: dividing the objective
        by ``2 lam`` gives ``(1/2) ||f||^2 + C sum_i hinge`` (SVC's intercept is unpenalized,
        ours, ``fit_intercept``, is penalized with ``||f||^2``).
    h : float > 0, default=0.05
        Half-width of the quadratic zone of the Huber hinge.
    sigma : float > 0, default=1.0
        RBF width in the papers' convention ``exp(-||x - x'||^2 / (2 sigma))``: a squared distance.
    loss : str or Loss, default="huber_hinge"
        Any registered loss (``h`` is passed to ``huber_hinge`` only).

    kernel : {"rbf", "linear", "poly", "precomputed"} or callable, default="rbf"
        ``"rbf"``: ``exp(-||x - x'||^2 / (2 sigma))``; ``"linear"``: ``<x, x'>``; ``"poly"``:
        ``(<x, x'> / sigma + coef0) ** degree``; a callable ``(X, Z, **kernel_params) -> K``;
        ``"precomputed"``: X is the Gram matrix in ``fit`` and the kernel between new and
        training points in ``predict`` (as scikit-learn's SVC).
    kernel_params : dict, optional
        ``degree`` (3) and ``coef0`` (1.0) of ``"poly"``; keyword arguments of a callable.
    backend : {"dense", "nystrom"}, default="dense"
        ``"dense"``: exact, ``f = K alpha`` over the training points (O(n^2) memory, O(n^3)
        time). ``"nystrom"``: ``f = V w`` in ``n_components`` Nystrom features (O(n c) memory,
        O(n c^2) time), never an n x n matrix.
    n_components : int, default=300
        Number of Nystrom landmarks (nystrom backend).
    landmarks : {"uniform", "kmeans++"}, default="uniform"
        Landmark sampling of the nystrom backend.
    loss_params : dict, optional
        Extra parameters of the loss.
    tol : float, default=1e-10
        Newton stops when the largest coefficient change is below ``tol`` times the largest
        coefficient (closed forms ignore it).
    max_iter : int, default=100
        Newton iterations per output column; a ConvergenceWarning gives the numbers otherwise.
    random_state : int, RandomState or None
        Seeds the Nystrom landmarks.
    probability : bool, default=False
        Classifiers: calibrate :meth:`predict_proba` by Platt scaling on the out-of-fold
        decision values of exact transductive 5-fold CV run inside ``fit`` (t extra refits
        of size about l; see :meth:`predict_proba`).
    fit_intercept : bool, default=True
        An intercept as the weight of a constant feature (as for KRR); see :class:`KRR`.
    intercept_scaling : float > 0, default=1.0
        As in :class:`KRR`.
    class_weight : dict, "balanced" or None, default=None
        Loss weights per class, as in :class:`KRR`.
    multi_class : {"ovr", "ovo"}, default="ovr"
        One-vs-rest or one-vs-one for more than two classes, as in :class:`KRR`.
    solver : {"auto", "newton", "active-set"}, default="auto"
        Optimizer for losses without a closed form (dense backend and the l-point problem
        of ``formulation="deformed"``): ``"newton"`` (damped Newton with an exact line
        search, the reference), ``"active-set"`` (Huber / squared hinge without a graph: a
        box-constrained active-set method whose m free points solve an m x m system) or
        ``"auto"`` (active-set where it applies, Newton elsewhere). All reach the same
        minimizer to round-off.
    warm_start : bool, default=False
        Dense backend, non-quadratic losses: start Newton from the previous fit's
        ``dual_coef_`` (when its shape matches) instead of the square-loss solution. A path
        over decreasing regularization (what :class:`fastgssl.cv.GridSearchCV` does)
        then needs fewer Newton steps and skips the O(n^3) square-loss start.

    Attributes
    ----------
    X_fit_ : ndarray or sparse matrix
        Training points, or the Gram matrix when ``kernel="precomputed"``.
    n_features_in_ : int
    labeled_mask_ : ndarray of bool, shape (n,)
    y_train_ : ndarray of shape (n,) or (n, n_classes)
        Encoded targets: +-1 (binary; +1 is ``classes_[1]``), one +-1 column per class
        (multi-class one-vs-rest) or real values (regression); 0 at unlabeled points.
    classes_ : ndarray (classification only)
    task_ : {"classification", "regression"}
    loss_ : fastgssl.losses.Loss
    kernel_train_ : ndarray of shape (n, n) or None
        Kernel matrix of the training points (dense backend), None for nystrom.
    nystrom_ : fastgssl.kernels.NystromFactor or None
        The factor ``V`` (``nystrom_.features_``) for the nystrom backend, else None.
    graph_ : scipy.sparse.csr_matrix or None
        Affinity W over all training points (None when ``gamma_i == 0``).
    laplacian_ : scipy.sparse.csr_matrix, LinearOperator or None
        The regularizer Q = regularizer(W): CSR, or the registry's matrix-free operator for
        ``power >= 3`` (None when ``gamma_i == 0``).
    dual_coef_ : ndarray of shape (n,), (n, n_classes) or (n, n_pairs)
        Expansion coefficients alpha, ``f = K alpha`` (dense backend only).
    coef_ : ndarray of shape (r,), (r, n_classes) or (r, n_pairs)
        Weights w of the Nystrom features, ``f = V w`` (nystrom backend only).
    decision_train_ : ndarray, shape of ``y_train_``
        f at the n training points.
    deformed_kernel_ : fastgssl.kernels.DeformedKernel or None
        The deformed kernel of the fit (``formulation="deformed"`` with a graph), else None.
    deformed_coef_ : ndarray of shape (l,), (l, n_classes) or (l, n_pairs), or None
        ``beta`` of ``f = sum_{j in L} beta_j K~(., x_j)`` (``formulation="deformed"``).
    gamma_a_, gamma_i_ : float
        The regularization of the papers' objective that was fitted (KRR / SVM: ``lam`` and 0).
    multi_class_ : {"ovr", "ovo"}
        The coding fitted: ``"ovo"`` for ``multi_class="ovo"`` with more than two
        classes (coefficients: one column per class pair, ``n_pairs = k (k - 1) / 2``),
        else ``"ovr"``.
    n_iter_ : int
        Newton iterations (largest over output columns; 1 for a closed form: one solve).

    See Also
    --------
    LapSVM : the same learner with a graph term over unlabeled points.
    KRR : the square-loss counterpart.
    sklearn.svm.SVC : the hinge-loss SVM with an intercept (``C = 1 / (2 n lam)``).

    Notes
    -----
    The supervised case of :class:`LapSVM` (``gamma_a = lam``, ``gamma_i = 0``, all points
    labeled). The dense Newton step only factorizes the block of the points with positive
    curvature (the margin points ``|1 - y f| <= h``): O(n m + m^3) for m such points.

    References
    ----------
    Chapelle, O. (2007). Training a support vector machine in the primal. Neural
    Computation 19.
    Liu, Y., Jiang, S., Liao, S. (2014). Efficient approximation of cross-validation for
    kernel methods using Bouligand influence function. ICML.
    """

    _parameter_constraints = {**_COMMON_CONSTRAINTS, "lam": [_POSITIVE], "h": [_POSITIVE]}

    def __init__(self, lam=1e-3, h=0.05, sigma=1.0, *, kernel="rbf", kernel_params=None,
                 loss="huber_hinge", loss_params=None, backend="dense", n_components=300,
                 landmarks="uniform", tol=1e-10, max_iter=100, random_state=None,
                 warm_start=False, solver="auto",
                 probability=False, fit_intercept=True, intercept_scaling=1.0,
                 class_weight=None, multi_class="ovr"):
        self.lam = lam
        self.h = h
        self.sigma = sigma
        self.kernel = kernel
        self.kernel_params = kernel_params
        self.loss = loss
        self.loss_params = loss_params
        self.backend = backend
        self.n_components = n_components
        self.landmarks = landmarks
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state
        self.warm_start = warm_start
        self.solver = solver
        self.probability = probability
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.class_weight = class_weight
        self.multi_class = multi_class

    def _regularization(self):
        return check_positive(self.lam, "lam"), 0.0

    def _task(self, y):
        return "classification"

    def _declared_task(self):
        return "classification"




class LapRLS(_KernelMachine):
    """Laplacian regularized least squares (Liu et al. (2019); Belkin et al. 2006).

    Minimizes the papers' objective with the square loss::

        (1/l) sum_{j in L} (y_j - f(x_j))^2 + gamma_a ||f||_K^2 + gamma_i / n^2 f^T Q f,

    closed form (dense backend) ``alpha = (J K + gamma_a l I + gamma_i l / n^2 Q K)^{-1} J y``.
    Unlabeled points: ``-1`` (classification) or ``NaN`` (regression). With every point
    labeled the model is the supervised one plus the graph term; with ``gamma_i = 0`` it is
    :class:`KRR` on the labeled points.

    Parameters
    ----------

    gamma_a : float > 0, default=1e-2
        Weight of the RKHS norm (ambient regularization).
    gamma_i : float >= 0, default=1e-2
        Weight of the intrinsic (graph) term; the penalty is ``gamma_i / n^2 f^T Q f``.
        ``gamma_i = 0`` skips the graph altogether.
    sigma : float > 0, default=1.0
        RBF width in the papers' convention ``exp(-||x - x'||^2 / (2 sigma))``: a squared distance.
    graph : str or sparse matrix, default="knn"
        A registered builder of ``fastgssl.graphs`` (``"knn"`` takes ``n_neighbors``,
        ``graph_weight`` and ``sigma_w``; other builders take ``graph_params``), or a
        precomputed symmetric nonnegative affinity W (n, n) over all training points.
    n_neighbors : int, default=10
        k of the kNN graph.
    sigma_w : float > 0 or None, default=None
        Width of the Gaussian edge weights ``exp(-||x_i - x_j||^2 / (2 sigma_w))`` (papers'
        convention); None lets the builder choose its heuristic.
    graph_weight : {"gaussian", "binary", "distance"}, default="gaussian"
        Edge weights of the kNN graph: Gaussian as in Liu et al. (2019), whose grid searches
        ``sigma_w``.
    graph_params : dict, optional
        Extra keyword arguments of the graph builder.
    regularizer : {"L", "L_norm"} or a registered name, default="L"
        ``L = D - W`` or ``L_norm = I - D^{-1/2} W D^{-1/2}``, via ``fastgssl.regularizers``
        (a plugin's factory: see the plugin guide), or a callable ``W -> Q``.
    regularizer_params : dict, optional
        Arguments of a registered regularizer's factory beyond ``power`` (a plugin's own
        parameters); searchable as any parameter (``{"regularizer_params": [{...}, ...]}``).
    power : int >= 1, default=1
        Iterated regularizer ``Q^p`` (passed to a factory that takes ``power``; a factory
        without it accepts only 1).
    formulation : {"deformed", "full"}, default="deformed"
        ``"deformed"``: solve the equivalent supervised problem on the l labeled points with
        the deformed kernel ``K~`` (Sindhwani, Niyogi & Belkin 2005; see
        :class:`fastgssl.kernels.DeformedKernel`): one O(n^3) (dense) or O(n c^2) (nystrom)
        formation of ``K~_{S,L}``, then an l-point fit (closed form or Newton). ``"full"``:
        the n-space problem (the reference). Both give the same minimizer, the same
        ``dual_coef_`` / ``coef_`` and predictions (to round-off).

    loss : str or Loss, default="square"
    task : {"auto", "classification", "regression"}, default="auto"
        ``"auto"``: regression when y is floating point and contains NaN or non-integral
        values, classification otherwise (integer-valued regression targets need
        ``task="regression"``).

    kernel : {"rbf", "linear", "poly", "precomputed"} or callable, default="rbf"
        ``"rbf"``: ``exp(-||x - x'||^2 / (2 sigma))``; ``"linear"``: ``<x, x'>``; ``"poly"``:
        ``(<x, x'> / sigma + coef0) ** degree``; a callable ``(X, Z, **kernel_params) -> K``;
        ``"precomputed"``: X is the Gram matrix in ``fit`` and the kernel between new and
        training points in ``predict`` (as scikit-learn's SVC).
    kernel_params : dict, optional
        ``degree`` (3) and ``coef0`` (1.0) of ``"poly"``; keyword arguments of a callable.
    backend : {"dense", "nystrom"}, default="dense"
        ``"dense"``: exact, ``f = K alpha`` over the training points (O(n^2) memory, O(n^3)
        time). ``"nystrom"``: ``f = V w`` in ``n_components`` Nystrom features (O(n c) memory,
        O(n c^2) time), never an n x n matrix.
    n_components : int, default=300
        Number of Nystrom landmarks (nystrom backend).
    landmarks : {"uniform", "kmeans++"}, default="uniform"
        Landmark sampling of the nystrom backend.
    loss_params : dict, optional
        Extra parameters of the loss.
    tol : float, default=1e-10
        Newton stops when the largest coefficient change is below ``tol`` times the largest
        coefficient (closed forms ignore it).
    max_iter : int, default=100
        Newton iterations per output column; a ConvergenceWarning gives the numbers otherwise.
    random_state : int, RandomState or None
        Seeds the Nystrom landmarks.
    probability : bool, default=False
        Classifiers: calibrate :meth:`predict_proba` by Platt scaling on the out-of-fold
        decision values of exact transductive 5-fold CV run inside ``fit`` (t extra refits
        of size about l; see :meth:`predict_proba`).
    fit_intercept : bool, default=False
        An intercept as the weight of a constant feature (the papers' form); see :class:`KRR`.
    intercept_scaling : float > 0, default=1.0
        As in :class:`KRR`.
    class_weight : dict, "balanced" or None, default=None
        Loss weights per class, as in :class:`KRR`.
    multi_class : {"ovr", "ovo"}, default="ovr"
        One-vs-rest or one-vs-one for more than two classes, as in :class:`KRR`.
    solver : {"auto", "newton", "active-set"}, default="auto"
        Optimizer for losses without a closed form (dense backend and the l-point problem
        of ``formulation="deformed"``): ``"newton"`` (damped Newton with an exact line
        search, the reference), ``"active-set"`` (Huber / squared hinge without a graph: a
        box-constrained active-set method whose m free points solve an m x m system) or
        ``"auto"`` (active-set where it applies, Newton elsewhere). All reach the same
        minimizer to round-off.
    warm_start : bool, default=False
        Dense backend, non-quadratic losses: start Newton from the previous fit's
        ``dual_coef_`` (when its shape matches) instead of the square-loss solution. A path
        over decreasing regularization (what :class:`fastgssl.cv.GridSearchCV` does)
        then needs fewer Newton steps and skips the O(n^3) square-loss start.

    Attributes
    ----------
    X_fit_ : ndarray or sparse matrix
        Training points, or the Gram matrix when ``kernel="precomputed"``.
    n_features_in_ : int
    labeled_mask_ : ndarray of bool, shape (n,)
    y_train_ : ndarray of shape (n,) or (n, n_classes)
        Encoded targets: +-1 (binary; +1 is ``classes_[1]``), one +-1 column per class
        (multi-class one-vs-rest) or real values (regression); 0 at unlabeled points.
    classes_ : ndarray (classification only)
    task_ : {"classification", "regression"}
    loss_ : fastgssl.losses.Loss
    kernel_train_ : ndarray of shape (n, n) or None
        Kernel matrix of the training points (dense backend), None for nystrom.
    nystrom_ : fastgssl.kernels.NystromFactor or None
        The factor ``V`` (``nystrom_.features_``) for the nystrom backend, else None.
    graph_ : scipy.sparse.csr_matrix or None
        Affinity W over all training points (None when ``gamma_i == 0``).
    laplacian_ : scipy.sparse.csr_matrix, LinearOperator or None
        The regularizer Q = regularizer(W): CSR, or the registry's matrix-free operator for
        ``power >= 3`` (None when ``gamma_i == 0``).
    dual_coef_ : ndarray of shape (n,), (n, n_classes) or (n, n_pairs)
        Expansion coefficients alpha, ``f = K alpha`` (dense backend only).
    coef_ : ndarray of shape (r,), (r, n_classes) or (r, n_pairs)
        Weights w of the Nystrom features, ``f = V w`` (nystrom backend only).
    decision_train_ : ndarray, shape of ``y_train_``
        f at the n training points.
    deformed_kernel_ : fastgssl.kernels.DeformedKernel or None
        The deformed kernel of the fit (``formulation="deformed"`` with a graph), else None.
    deformed_coef_ : ndarray of shape (l,), (l, n_classes) or (l, n_pairs), or None
        ``beta`` of ``f = sum_{j in L} beta_j K~(., x_j)`` (``formulation="deformed"``).
    gamma_a_, gamma_i_ : float
        The regularization of the papers' objective that was fitted (KRR / SVM: ``lam`` and 0).
    multi_class_ : {"ovr", "ovo"}
        The coding fitted: ``"ovo"`` for ``multi_class="ovo"`` with more than two
        classes (coefficients: one column per class pair, ``n_pairs = k (k - 1) / 2``),
        else ``"ovr"``.
    n_iter_ : int
        Newton iterations (largest over output columns; 1 for a closed form: one solve).

    See Also
    --------
    LapSVM : the Huber-hinge counterpart.
    KRR : the supervised case (``gamma_i = 0``).
    fastgssl.kernels.DeformedKernel : the kernel of ``formulation="deformed"``.

    Notes
    -----
    Graph components without a labeled point raise an ``UnlabeledComponentWarning``: the
    intrinsic term is constant on them, so only the kernel term decides there. The dense
    backend factorizes the n x n matrix (LU, O(n^3)); the nystrom backend solves a c x c
    system after one product ``V^T Q V``.

    References
    ----------
    Belkin, M., Niyogi, P., Sindhwani, V. (2006). Manifold regularization: a geometric
    framework for learning from labeled and unlabeled examples. JMLR 7.
    Sindhwani, V., Niyogi, P., Belkin, M. (2005). Beyond the point cloud: from
    transductive to semi-supervised learning. ICML.
    """

    _semi_supervised = True

    _parameter_constraints = {
        **_COMMON_CONSTRAINTS,
        **_GRAPH_CONSTRAINTS,
        "task": [StrOptions({"auto", *_TASKS})],
    }

    def __init__(self, sigma=1.0, gamma_a=1e-2, gamma_i=1e-2, *, graph="knn", n_neighbors=10,
                 sigma_w=None, graph_weight="gaussian", graph_params=None, regularizer="L",
                 power=1, loss="square", loss_params=None, task="auto", kernel="rbf",
                 kernel_params=None, backend="dense", formulation="deformed",
                 n_components=300, landmarks="uniform", tol=1e-10, max_iter=100,
                 random_state=None, warm_start=False, solver="auto",
                 probability=False, fit_intercept=False, intercept_scaling=1.0,
                 class_weight=None, multi_class="ovr", regularizer_params=None):
        self.sigma = sigma
        self.gamma_a = gamma_a
        self.gamma_i = gamma_i
        self.graph = graph
        self.n_neighbors = n_neighbors
        self.sigma_w = sigma_w
        self.graph_weight = graph_weight
        self.graph_params = graph_params
        self.regularizer = regularizer
        self.regularizer_params = regularizer_params
        self.power = power
        self.loss = loss
        self.loss_params = loss_params
        self.task = task
        self.kernel = kernel
        self.kernel_params = kernel_params
        self.backend = backend
        self.formulation = formulation
        self.n_components = n_components
        self.landmarks = landmarks
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state
        self.warm_start = warm_start
        self.solver = solver
        self.probability = probability
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.class_weight = class_weight
        self.multi_class = multi_class

    def _regularization(self):
        return (check_positive(self.gamma_a, "gamma_a"),
                check_positive(self.gamma_i, "gamma_i", strict=False))

    def _formulation(self):
        return _check_choice(self.formulation, "formulation", _FORMULATIONS)

    def _task(self, y):
        task = _check_choice(self.task, "task", ("auto",) + _TASKS)
        if task != "auto":
            return task
        y = np.asarray(y)
        if y.dtype.kind == "f":
            finite = y[~np.isnan(y)]
            if finite.size < y.size or not np.array_equal(finite, np.round(finite)):
                return "regression"
        return "classification"

    def _declared_task(self):
        return self.task if self.task in _TASKS else None


class LapSVM(_KernelMachine):
    """Laplacian SVM with the Huber-smoothed hinge (Liu et al. (2019)).

    Minimizes the papers' objective with the Huber hinge ``ell_h`` (half-width ``h``)::

        (1/l) sum_{j in L} ell_h(y_j f(x_j)) + gamma_a ||f||_K^2 + gamma_i / n^2 f^T Q f

    by Newton's method with a line search, in alpha (dense) or in the Nystrom weights w.
    Unlabeled points are marked ``-1`` (so ``-1`` cannot be a class label); two labels of any
    other values are encoded +-1, more labels one-vs-rest sharing the kernel, graph and
    regularizer.

    Parameters
    ----------

    gamma_a : float > 0, default=1e-2
        Weight of the RKHS norm (ambient regularization).
    gamma_i : float >= 0, default=1e-2
        Weight of the intrinsic (graph) term; the penalty is ``gamma_i / n^2 f^T Q f``.
        ``gamma_i = 0`` skips the graph altogether.
    sigma : float > 0, default=1.0
        RBF width in the papers' convention ``exp(-||x - x'||^2 / (2 sigma))``: a squared distance.
    graph : str or sparse matrix, default="knn"
        A registered builder of ``fastgssl.graphs`` (``"knn"`` takes ``n_neighbors``,
        ``graph_weight`` and ``sigma_w``; other builders take ``graph_params``), or a
        precomputed symmetric nonnegative affinity W (n, n) over all training points.
    n_neighbors : int, default=10
        k of the kNN graph.
    sigma_w : float > 0 or None, default=None
        Width of the Gaussian edge weights ``exp(-||x_i - x_j||^2 / (2 sigma_w))`` (papers'
        convention); None lets the builder choose its heuristic.
    graph_weight : {"gaussian", "binary", "distance"}, default="gaussian"
        Edge weights of the kNN graph: Gaussian as in Liu et al. (2019), whose grid searches
        ``sigma_w``.
    graph_params : dict, optional
        Extra keyword arguments of the graph builder.
    regularizer : {"L", "L_norm"} or a registered name, default="L"
        ``L = D - W`` or ``L_norm = I - D^{-1/2} W D^{-1/2}``, via ``fastgssl.regularizers``
        (a plugin's factory: see the plugin guide), or a callable ``W -> Q``.
    regularizer_params : dict, optional
        Arguments of a registered regularizer's factory beyond ``power`` (a plugin's own
        parameters); searchable as any parameter (``{"regularizer_params": [{...}, ...]}``).
    power : int >= 1, default=1
        Iterated regularizer ``Q^p`` (passed to a factory that takes ``power``; a factory
        without it accepts only 1).
    formulation : {"deformed", "full"}, default="deformed"
        ``"deformed"``: solve the equivalent supervised problem on the l labeled points with
        the deformed kernel ``K~`` (Sindhwani, Niyogi & Belkin 2005; see
        :class:`fastgssl.kernels.DeformedKernel`): one O(n^3) (dense) or O(n c^2) (nystrom)
        formation of ``K~_{S,L}``, then an l-point fit (closed form or Newton). ``"full"``:
        the n-space problem (the reference). Both give the same minimizer, the same
        ``dual_coef_`` / ``coef_`` and predictions (to round-off).

    h : float > 0, default=0.01
        Half-width of the Huber zone (Liu et al. (2019) uses 0.01).
    loss : str or Loss, default="huber_hinge"

    kernel : {"rbf", "linear", "poly", "precomputed"} or callable, default="rbf"
        ``"rbf"``: ``exp(-||x - x'||^2 / (2 sigma))``; ``"linear"``: ``<x, x'>``; ``"poly"``:
        ``(<x, x'> / sigma + coef0) ** degree``; a callable ``(X, Z, **kernel_params) -> K``;
        ``"precomputed"``: X is the Gram matrix in ``fit`` and the kernel between new and
        training points in ``predict`` (as scikit-learn's SVC).
    kernel_params : dict, optional
        ``degree`` (3) and ``coef0`` (1.0) of ``"poly"``; keyword arguments of a callable.
    backend : {"dense", "nystrom"}, default="dense"
        ``"dense"``: exact, ``f = K alpha`` over the training points (O(n^2) memory, O(n^3)
        time). ``"nystrom"``: ``f = V w`` in ``n_components`` Nystrom features (O(n c) memory,
        O(n c^2) time), never an n x n matrix.
    n_components : int, default=300
        Number of Nystrom landmarks (nystrom backend).
    landmarks : {"uniform", "kmeans++"}, default="uniform"
        Landmark sampling of the nystrom backend.
    loss_params : dict, optional
        Extra parameters of the loss.
    tol : float, default=1e-10
        Newton stops when the largest coefficient change is below ``tol`` times the largest
        coefficient (closed forms ignore it).
    max_iter : int, default=100
        Newton iterations per output column; a ConvergenceWarning gives the numbers otherwise.
    random_state : int, RandomState or None
        Seeds the Nystrom landmarks.
    probability : bool, default=False
        Classifiers: calibrate :meth:`predict_proba` by Platt scaling on the out-of-fold
        decision values of exact transductive 5-fold CV run inside ``fit`` (t extra refits
        of size about l; see :meth:`predict_proba`).
    fit_intercept : bool, default=False
        An intercept as the weight of a constant feature (the papers' form); see :class:`KRR`.
    intercept_scaling : float > 0, default=1.0
        As in :class:`KRR`.
    class_weight : dict, "balanced" or None, default=None
        Loss weights per class, as in :class:`KRR`.
    multi_class : {"ovr", "ovo"}, default="ovr"
        One-vs-rest or one-vs-one for more than two classes, as in :class:`KRR`.
    solver : {"auto", "newton", "active-set"}, default="auto"
        Optimizer for losses without a closed form (dense backend and the l-point problem
        of ``formulation="deformed"``): ``"newton"`` (damped Newton with an exact line
        search, the reference), ``"active-set"`` (Huber / squared hinge without a graph: a
        box-constrained active-set method whose m free points solve an m x m system) or
        ``"auto"`` (active-set where it applies, Newton elsewhere). All reach the same
        minimizer to round-off.
    warm_start : bool, default=False
        Dense backend, non-quadratic losses: start Newton from the previous fit's
        ``dual_coef_`` (when its shape matches) instead of the square-loss solution. A path
        over decreasing regularization (what :class:`fastgssl.cv.GridSearchCV` does)
        then needs fewer Newton steps and skips the O(n^3) square-loss start.

    Attributes
    ----------
    X_fit_ : ndarray or sparse matrix
        Training points, or the Gram matrix when ``kernel="precomputed"``.
    n_features_in_ : int
    labeled_mask_ : ndarray of bool, shape (n,)
    y_train_ : ndarray of shape (n,) or (n, n_classes)
        Encoded targets: +-1 (binary; +1 is ``classes_[1]``), one +-1 column per class
        (multi-class one-vs-rest) or real values (regression); 0 at unlabeled points.
    classes_ : ndarray (classification only)
    task_ : {"classification", "regression"}
    loss_ : fastgssl.losses.Loss
    kernel_train_ : ndarray of shape (n, n) or None
        Kernel matrix of the training points (dense backend), None for nystrom.
    nystrom_ : fastgssl.kernels.NystromFactor or None
        The factor ``V`` (``nystrom_.features_``) for the nystrom backend, else None.
    graph_ : scipy.sparse.csr_matrix or None
        Affinity W over all training points (None when ``gamma_i == 0``).
    laplacian_ : scipy.sparse.csr_matrix, LinearOperator or None
        The regularizer Q = regularizer(W): CSR, or the registry's matrix-free operator for
        ``power >= 3`` (None when ``gamma_i == 0``).
    dual_coef_ : ndarray of shape (n,), (n, n_classes) or (n, n_pairs)
        Expansion coefficients alpha, ``f = K alpha`` (dense backend only).
    coef_ : ndarray of shape (r,), (r, n_classes) or (r, n_pairs)
        Weights w of the Nystrom features, ``f = V w`` (nystrom backend only).
    decision_train_ : ndarray, shape of ``y_train_``
        f at the n training points.
    deformed_kernel_ : fastgssl.kernels.DeformedKernel or None
        The deformed kernel of the fit (``formulation="deformed"`` with a graph), else None.
    deformed_coef_ : ndarray of shape (l,), (l, n_classes) or (l, n_pairs), or None
        ``beta`` of ``f = sum_{j in L} beta_j K~(., x_j)`` (``formulation="deformed"``).
    gamma_a_, gamma_i_ : float
        The regularization of the papers' objective that was fitted (KRR / SVM: ``lam`` and 0).
    multi_class_ : {"ovr", "ovo"}
        The coding fitted: ``"ovo"`` for ``multi_class="ovo"`` with more than two
        classes (coefficients: one column per class pair, ``n_pairs = k (k - 1) / 2``),
        else ``"ovr"``.
    n_iter_ : int
        Newton iterations (largest over output columns; 1 for a closed form: one solve).

    See Also
    --------
    LapRLS : the square-loss counterpart.
    SVM : the supervised case (``gamma_i = 0``).
    fastgssl.kernels.DeformedKernel : the kernel of ``formulation="deformed"``.

    Notes
    -----
    Dense Newton step: ``(2 gamma_a I + (D + 2 s Q) K) d = -r`` with ``D = diag(ell'')/l`` on
    the labeled points: ``B = 2 gamma_a I + 2 s Q K`` is factorized once per fit (LU, O(n^3),
    shared by all classes) and each step is a Woodbury update of rank m = number of margin
    points (O(n^2 + m^3)). Nystrom Newton step: ``H_w d = -grad`` with
    ``H_w = (1/l) V_L^T diag(ell'') V_L + 2 gamma_a I + 2 s V^T Q V`` (c x c Cholesky,
    O(l c^2 + c^3) per step after one O(nnz(Q) c + n c^2) product), never an n x n matrix.
    With every point labeled and ``gamma_i = 0`` the model is :class:`SVM`.

    References
    ----------
    Belkin, M., Niyogi, P., Sindhwani, V. (2006). Manifold regularization: a geometric
    framework for learning from labeled and unlabeled examples. JMLR 7.
    Sindhwani, V., Niyogi, P., Belkin, M. (2005). Beyond the point cloud: from
    transductive to semi-supervised learning. ICML.
    Melacci, S., Belkin, M. (2011). Laplacian support vector machines trained in the
    primal. JMLR 12.
    """

    _semi_supervised = True

    _parameter_constraints = {**_COMMON_CONSTRAINTS, **_GRAPH_CONSTRAINTS, "h": [_POSITIVE]}

    def __init__(self, sigma=1.0, gamma_a=1e-2, gamma_i=1e-2, *, h=0.01, graph="knn",
                 n_neighbors=10, sigma_w=None, graph_weight="gaussian", graph_params=None,
                 regularizer="L", power=1, loss="huber_hinge", loss_params=None, kernel="rbf",
                 kernel_params=None, backend="dense", formulation="deformed",
                 n_components=300, landmarks="uniform", tol=1e-10, max_iter=100,
                 random_state=None, warm_start=False, solver="auto",
                 probability=False, fit_intercept=False, intercept_scaling=1.0,
                 class_weight=None, multi_class="ovr", regularizer_params=None):
        self.sigma = sigma
        self.gamma_a = gamma_a
        self.gamma_i = gamma_i
        self.h = h
        self.graph = graph
        self.n_neighbors = n_neighbors
        self.sigma_w = sigma_w
        self.graph_weight = graph_weight
        self.graph_params = graph_params
        self.regularizer = regularizer
        self.regularizer_params = regularizer_params
        self.power = power
        self.loss = loss
        self.loss_params = loss_params
        self.kernel = kernel
        self.kernel_params = kernel_params
        self.backend = backend
        self.formulation = formulation
        self.n_components = n_components
        self.landmarks = landmarks
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state
        self.warm_start = warm_start
        self.solver = solver
        self.probability = probability
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.class_weight = class_weight
        self.multi_class = multi_class

    _regularization = LapRLS._regularization
    _formulation = LapRLS._formulation

    def _task(self, y):
        return "classification"

    def _declared_task(self):
        return "classification"
