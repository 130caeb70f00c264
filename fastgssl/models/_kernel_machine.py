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

:class:`_KernelMachine` is assembled from one mixin per concept: validation of parameters,
points and targets (:mod:`._kernel_machine_checks`), the builders of graph, regularizer,
kernel and Nystrom factor (:mod:`._kernel_machine_build`), the two solves, deformed
l-point and n-space (:mod:`._kernel_machine_solve`), what cross-validation reads
(:mod:`._kernel_machine_cv`) and Platt calibration (:mod:`._calibration`); this module holds
``fit``, prediction, scoring, pickling and the scikit-learn tags.
"""

from __future__ import annotations

import functools

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.metrics import accuracy_score, r2_score
from sklearn.utils import ClassifierTags, RegressorTags
from sklearn.utils.validation import check_is_fitted

from fastgssl.losses import Loss, get_loss
from fastgssl.models._calibration import _PlattCalibration
from fastgssl.models._kernel_machine_build import _MachineBuilders
from fastgssl.models._kernel_machine_checks import _TASKS, _MachineChecks
from fastgssl.models._kernel_machine_cv import _CVDeclarations
from fastgssl.models._kernel_machine_solve import _MachineSolve
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


class _KernelMachine(_MachineSolve, _MachineBuilders, _MachineChecks, _CVDeclarations,
                     _PlattCalibration, BaseEstimator):
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

    def _one_vs_one(self, classes):
        """Whether the fit codes its classes one-vs-one (more than two classes only)."""
        return self.multi_class == "ovo" and classes is not None and classes.size > 2

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
        self._check_common_params()
        X = self._check_train_X(X)
        n = X.shape[0]
        objective = self._objective(y, n, sample_weight)
        task, loss = objective.task, objective.loss
        weights = objective.sample_weight
        gamma_a, gamma_i = objective.gamma_a, objective.gamma_i
        y_enc, labeled, classes = objective.y, objective.labeled, objective.classes
        self._check_dense_backend(n, gamma_i)
        W = Q = None
        if gamma_i > 0:
            W = self.build_graph(X)
            Q = self._build_regularizer(W)
            self._warn_unlabeled_components(W, labeled)
        ovo = self._one_vs_one(classes)
        # coefficient columns: one per class pair (one-vs-one), else those of the targets
        n_cols = (classes.size * (classes.size - 1) // 2,) if ovo else y_enc.shape[1:]
        # fastgssl.cv's exact refits hand a start in through _init_coef (used once)
        previous = self.__dict__.pop("_init_coef", None)
        deformed = Q is not None and self._formulation() == "deformed"
        if previous is None and self.warm_start:
            previous = getattr(self, "deformed_coef_" if deformed else "dual_coef_", None)
        K = fac = None
        if self.backend == "dense":
            K = self.build_kernel(X)
        else:
            fac = self.build_factor(X)
        if deformed:
            coef, decision, dk, beta, info = self._solve_deformed(X, Q, K, fac, objective,
                                                                  previous, n_cols, ovo)
        else:
            coef, decision, dk, beta, info = self._solve_full(Q, K, fac, objective, previous,
                                                              n_cols, ovo)
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
