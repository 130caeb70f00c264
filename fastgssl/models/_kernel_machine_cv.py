"""The kernel machines' side of the CV protocol (:mod:`fastgssl._protocol`): the objective
their parameters define before any fit (with what a grid search may share), and the state
of a fit."""

from __future__ import annotations

import dataclasses
from functools import partial

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.utils.validation import check_is_fitted

from fastgssl._protocol import CVObjective, CVState, GraphPart, KernelPart, RefitPart, sharing_key
from fastgssl._validation import check_sample_weight
from fastgssl.models._multiclass import solve_gram
from fastgssl.models._targets import decoder, point_weights
from fastgssl.solvers.internal import fold_refits, has_fold_refits

__all__ = []


class _CVDeclarations:
    """``cv_objective`` / ``cv_state`` of :class:`_KernelMachine` (a mixin of it)."""

    def _objective(self, y, n, sample_weight=None):
        gamma_a, gamma_i = self._regularization()
        task = self._task(y)
        y_enc, labeled, classes = self._targets(y, n, task)
        loss = self._make_loss(task)
        ovo = self._one_vs_one(classes)
        sample_weight = check_sample_weight(sample_weight, n)
        weights = point_weights(self.class_weight, sample_weight, y_enc, labeled, classes,
                                task)
        if weights is not None and not weights[labeled].sum() > 0:
            raise ValueError("the loss weights (sample_weight times class_weight) are zero on "
                             "every labeled point; at least one labeled point needs a positive "
                             "weight.")
        weights_for = None if weights is None else partial(
            point_weights, self.class_weight, sample_weight, y_enc, labeled, classes, task)
        return CVObjective(task=task, y=y_enc, labeled=labeled, classes=classes,
                           gamma_a=gamma_a, gamma_i=gamma_i, loss=loss,
                           regularizer_factory=self._build_regularizer if gamma_i > 0 else None,
                           sample_weight=weights,
                           refit_part=self._refit_part(loss, gamma_a, classes if ovo else None,
                                                       weights_for))

    def _refit_part(self, loss, gamma_a, pairs_of, weights_for):
        """The protocol's :class:`fastgssl.RefitPart`: the supervised solver on a Gram
        matrix, one-vs-one votes (``pairs_of``: the classes of a one-vs-one learner, else
        None), the batched active-set fold refits where the loss and solver have them (not
        one-vs-one), and the loss weights of a refit."""
        ovo = pairs_of is not None
        optimizer = self._optimizer()
        solve_folds = None
        if not ovo and has_fold_refits(loss, optimizer):
            solve_folds = partial(fold_refits, loss=loss, gamma_a=gamma_a, tol=self.tol,
                                  max_iter=self.max_iter, solver=optimizer)
        return RefitPart(solve=partial(solve_gram, loss=loss, gamma_a=gamma_a, tol=self.tol,
                                       max_iter=self.max_iter, solver=optimizer, ovo=ovo),
                         solve_folds=solve_folds, decode=decoder(pairs_of) if ovo else None,
                         weights_for=weights_for)

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

    def _sharing(self, gamma_i, task):
        """The sharing declarations of :class:`fastgssl.CVObjective` (what a grid search
        builds once for the candidates with equal keys)."""
        dense = self.backend == "dense"
        kernel_params = (self.kernel, self.sigma, self.kernel_params, self.fit_intercept,
                         self.intercept_scaling)
        declared = {
            "kernel_part": KernelPart(
                key=sharing_key(self.backend, *kernel_params, *(
                    () if dense else (self.n_components, self.landmarks, self.random_state))),
                build_kernel=self.build_kernel if dense else None,
                build_factor=None if dense else self._factor_features,
                precomputed=self.kernel == "precomputed",
                estimator_for=self._estimator_for),
            "refit_calibrated": (self._refit_calibrated
                                 if self.probability and task == "classification" else None),
        }
        if self._semi_supervised:
            by_name = isinstance(self.graph, str)
            declared["graph_part"] = GraphPart(
                key=sharing_key(self.graph, *((self.n_neighbors, self.sigma_w,
                                               self.graph_weight, self.graph_params)
                                              if by_name else ())),
                build_graph=self.build_graph,
                with_graph=lambda W: self._estimator_for(graph=W),
                given=not by_name and not callable(self.graph),
                regularizer_key=sharing_key(self.regularizer, self.regularizer_params,
                                            self.power),
                knn_k=(int(self.n_neighbors)
                       if by_name and self.graph in ("knn", "ivf") and gamma_i > 0
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

    def cv_state(self):
        """The fitted state that :mod:`fastgssl.cv` reads (:class:`fastgssl.CVState`).

        Returns
        -------
        CVState
            Targets, fitted values, loss, regularization, the base Gram matrix (dense) or
            Nystrom features, the graph and regularizer, and the deformed kernel of the fit.
        """
        check_is_fitted(self, "decision_train_")
        Q = self.laplacian_
        dk = self.deformed_kernel_
        n = self.labeled_mask_.shape[0]
        r = (self.gamma_i_ / (n**2 * self.gamma_a_)) if Q is not None else 0.0
        K = self.kernel_train_
        weights, weights_for = self.__dict__.get("_cv_weights", (None, None))
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
            deformed=dk, r=r, estimator=self, sample_weight=weights,
            refit_part=self._refit_part(
                self.loss_, float(self.gamma_a_),
                self.classes_ if self.multi_class_ == "ovo" else None, weights_for),
            deformed_coef=self.deformed_coef_,
        )
