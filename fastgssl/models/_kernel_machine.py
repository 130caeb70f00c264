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

:class:`_KernelMachine` is the estimator shell over four stages that pass values, each a
module of functions that never sees the estimator: check (:mod:`._kernel_machine_checks`:
the parameters as a :class:`~._kernel_machine_checks.MachineParams`, the points, the
:class:`~._kernel_machine_checks.Problem`), build (:mod:`._kernel_machine_build`: graph,
regularizer, kernel or Nystrom factor, a :class:`~._kernel_machine_build.System`), solve
(:mod:`._kernel_machine_solve`: deformed l-point or n-space, a
:class:`~._kernel_machine_solve.Solution`) and CV (:mod:`._kernel_machine_cv`: the
:class:`fastgssl.CVObjective` and :class:`fastgssl.CVState`), with Platt calibration
(:mod:`._calibration`). ``fit`` calls them in this order and stores their results as the
fitted attributes; this module also holds prediction, scoring, pickling and the
scikit-learn tags.
"""

from __future__ import annotations

import functools

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, clone
from sklearn.metrics import accuracy_score, r2_score
from sklearn.utils import ClassifierTags, RegressorTags
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted, validate_data

from fastgssl import registry
from fastgssl._shared_checks import validate_params_once
from fastgssl.losses import Loss, get_loss
from fastgssl.models import _kernel_machine_build as build
from fastgssl.models import _kernel_machine_checks as checks
from fastgssl.models import _kernel_machine_cv as cv
from fastgssl.models import _kernel_machine_solve as solve
from fastgssl.models._calibration import platt_folds, platt_probabilities, platt_sigmoids
from fastgssl.models._scoring import labeled_score
from fastgssl.models._targets import decoder

__all__ = []

# rows of new points per kernel block in decision_function (block x n_train doubles)
_PREDICT_BLOCK_ELEMENTS = 1 << 23


class _PickledLoss:
    """Stand-in for a Loss inside a pickle: rebuilt with ``get_loss(name, **params)``."""

    def __init__(self, name, params):
        self.name = name
        self.params = dict(params)


@functools.cache
def _param_names(cls):
    return BaseEstimator._get_param_names.__func__(cls)


@functools.cache
def _stage_param_names(cls):
    """The parameters of ``cls`` that :class:`~._kernel_machine_checks.MachineParams`
    holds."""
    return tuple(name for name in _param_names(cls) if name in checks.PARAM_FIELDS)


class _KernelMachine(BaseEstimator):
    """Shared implementation of KRR, SVM, LapRLS and LapSVM (see the module docstring)."""

    # LapRLS / LapSVM: a graph term over labeled and unlabeled points
    _semi_supervised = False

    @classmethod
    def _get_param_names(cls):
        # scikit-learn reads the constructor's signature at every get_params / clone /
        # set_params (0.2 ms each); a grid search asks thousands of times, the signature of a
        # class never changes
        return _param_names(cls)

    def _params(self):
        """The parameters as the stages read them (checked by no one yet)."""
        cls = type(self)
        return checks.MachineParams(cls=cls, semi_supervised=self._semi_supervised,
                                    **{name: getattr(self, name)
                                       for name in _stage_param_names(cls)})

    def _checked_params(self):
        """scikit-learn's constraints of the parameters, then the parameters' value."""
        validate_params_once(self, self._parameter_constraints)
        return self._params()

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
            common factor changes nothing. Every optimizer and backend takes them, and
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
        p = self._checked_params()
        checks.check_params(p)
        X = self._check_train_X(p, X)
        n = X.shape[0]
        problem = checks.check_problem(p, y, n, sample_weight)
        checks.check_dense_backend(p, n, problem.gamma_i)
        graph_term = build.build_graph_term(p, X, problem)
        # fastgssl.cv's exact refits hand a start in through _init_coef (used once)
        previous = self.__dict__.pop("_init_coef", None)
        system = build.build_system(p, X, graph_term)
        if previous is None and self.warm_start:
            previous = getattr(self, "deformed_coef_" if solve.is_deformed(p, system)
                               else "dual_coef_", None)
        solution = solve.solve(p, system, problem, previous)

        self.X_fit_ = X
        self.n_features_in_ = X.shape[1]
        self.labeled_mask_ = problem.labeled
        self.y_train_ = problem.y
        if problem.task == "classification":
            self.classes_ = problem.classes
        self.task_ = problem.task
        self.loss_ = problem.loss
        self.kernel_train_ = system.kernel
        self.nystrom_ = system.factor
        self.graph_ = system.graph
        self.laplacian_ = system.regularizer
        self.gamma_a_ = problem.gamma_a
        self.gamma_i_ = problem.gamma_i
        if p.backend == "dense":
            self.dual_coef_ = solution.coef
        else:
            self.coef_ = solution.coef
        self.decision_train_ = solution.decision
        self.deformed_kernel_ = solution.deformed_kernel
        self.deformed_coef_ = solution.beta
        self.multi_class_ = "ovo" if problem.one_vs_one else "ovr"
        self._cv_weights = (problem.sample_weight, problem.weights_of)
        self.n_iter_ = solution.n_iter
        self.probability_sigmoids_ = None
        if p.probability:
            self._fit_platt(X, y)
        return self

    def _check_train_X(self, p, X):
        # feature names (DataFrame columns) are recorded as scikit-learn does and checked at
        # predict time; the array itself goes through fastgssl's own checks
        X_checked = checks.check_points(X)
        validate_data(self, X, skip_check_array=True, reset=True)
        return checks.check_train_points(p, X_checked)

    def _check_new_X(self, X):
        X_checked = checks.check_points(X)
        if self.kernel != "precomputed":
            validate_data(self, X, skip_check_array=True, reset=False)
        return checks.check_new_points(self._params(), X_checked, self.n_features_in_)

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
        p = self._params()
        m, n_train = X.shape[0], self.X_fit_.shape[0]
        out = np.empty((m,) + alpha.shape[1:])
        block = max(1, _PREDICT_BLOCK_ELEMENTS // max(n_train, 1))
        for start in range(0, m, block):
            stop = min(m, start + block)
            out[start:stop] = build.build_kernel(p, X[start:stop], self.X_fit_) @ alpha
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

        Semi-supervised estimators skip entries marked unlabeled (``-1`` / ``NaN``); a
        ``y`` without a labeled entry is refused (:mod:`fastgssl.models._scoring`).
        """
        check_is_fitted(self, "decision_train_")
        if self._semi_supervised:
            return labeled_score(self, X, y, sample_weight, task=self.task_)
        y = np.asarray(y)
        pred = self.predict(X)
        if self.task_ == "classification":
            return float(accuracy_score(y, pred, sample_weight=sample_weight))
        return float(r2_score(y, pred, sample_weight=sample_weight))

    # ---- the builders, public (build stage on the current parameters) -------------------
    def build_graph(self, X):
        """The affinity W of the estimator's ``graph`` over the rows of ``X``.

        Uses :func:`fastgssl.graphs.resolve_graph` with ``n_neighbors``, ``graph_weight``,
        ``sigma_w`` and ``graph_params``; the grid search builds it once per graph group.

        Returns
        -------
        scipy.sparse.csr_matrix of shape (n, n)
        """
        return build.build_graph(self._params(), X)

    def build_kernel(self, X, Z=None):
        """The estimator's kernel ``k(X, Z)`` (``Z=None``: the Gram matrix of ``X``).

        The base kernel (``kernel``, ``sigma``, ``kernel_params``; with
        ``kernel="precomputed"``, ``X`` itself) plus ``intercept_scaling**2`` when
        ``fit_intercept``: the intercept is the weight of a constant feature, regularized
        with the kernel term as liblinear's is. The grid search builds it once per width.

        Returns
        -------
        ndarray of shape (n_X, n_Z)
        """
        return build.build_kernel(self._params(), X, Z)

    def build_factor(self, X):
        """The Nystrom factor of the estimator's kernel over the rows of ``X``
        (``backend="nystrom"``: ``n_components`` landmarks drawn with ``landmarks`` and
        ``random_state``; with ``fit_intercept`` one more constant feature
        ``intercept_scaling``); the grid search builds it once per kernel width.

        Returns
        -------
        fastgssl.kernels.NystromFactor
        """
        return build.build_factor(self._params(), X)

    def _build_regularizer(self, W):
        return build.build_regularizer(self._params(), W)

    # ---- the CV protocol (CV stage) ------------------------------------------------------
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
        p = self._checked_params()
        checks.check_params(p)
        n = 0 if y is None else (y.shape[0] if sp.issparse(y) else len(np.asarray(y)))
        problem = checks.check_problem(p, y, n, sample_weight)
        return cv.cv_objective(p, problem, estimator_for=self._estimator_for,
                               with_graph=lambda W: self._estimator_for(graph=W),
                               refit_calibrated=self._refit_calibrated)

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

    def cv_state(self):
        """The fitted state that :mod:`fastgssl.cv` reads (:class:`fastgssl.CVState`).

        Returns
        -------
        CVState
            Targets, fitted values, loss, regularization, the base Gram matrix (dense) or
            Nystrom features, the graph and regularizer, and the deformed kernel of the fit.
        """
        check_is_fitted(self, "decision_train_")
        weights, weights_for = self.__dict__.get("_cv_weights", (None, None))
        return cv.cv_state(
            self._params(), task=self.task_, y=self.y_train_, labeled=self.labeled_mask_,
            decision=self.decision_train_, classes=getattr(self, "classes_", None),
            gamma_a=self.gamma_a_, gamma_i=self.gamma_i_, loss=self.loss_,
            kernel=self.kernel_train_, factor=self.nystrom_,
            coef=self.dual_coef_ if self.nystrom_ is None else self.coef_,
            graph=self.graph_, regularizer=self.laplacian_,
            deformed_kernel=self.deformed_kernel_, deformed_coef=self.deformed_coef_,
            one_vs_one=self.multi_class_ == "ovo", weights=weights, weights_for=weights_for,
            estimator=self)

    # ---- Platt calibration (probability=True) --------------------------------------------
    def _fit_platt(self, X, y):
        """Platt sigmoids on the out-of-fold decision values of exact transductive CV."""
        # exact CV through the registry: models sit below fastgssl.cv and do not import it
        exact = registry.get("fastgssl.cv", "exact")
        folds = platt_folds(self.task_, self.y_train_, self.labeled_mask_, self.random_state)
        res = exact.run_transductive(self, X, y, folds, fitted=self)
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
        check_is_fitted(self, "decision_train_")
        self.probability_sigmoids_ = platt_sigmoids(self.task_, decision_values, targets,
                                                    self.y_train_.shape)
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
                state[key] = get_loss(value.name, **value.params)
        super().__setstate__(state)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = self.kernel != "precomputed"
        tags.input_tags.pairwise = self.kernel == "precomputed"
        tags.target_tags.required = True
        task = checks.declared_task(getattr(self, "task", None))
        if task == "classification":
            tags.estimator_type = "classifier"
            tags.classifier_tags = ClassifierTags()
            tags.regressor_tags = None
        elif task == "regression":
            tags.estimator_type = "regressor"
            tags.regressor_tags = RegressorTags()
            tags.classifier_tags = None
        return tags
