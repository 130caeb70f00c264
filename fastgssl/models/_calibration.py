"""Platt scaling of decision values into class probabilities.

Platt (1999) fits ``P(y = 1 | f) = 1 / (1 + exp(A f + B))`` by maximum likelihood on
decision values that the model did not see the labels of (here: out-of-fold values of exact
cross-validation), with the targets smoothed to ``(N_+ + 1) / (N_+ + 2)`` and
``1 / (N_- + 2)`` against overfitting. Lin, Lin & Weng (2007) give the numerically careful
form of the likelihood used here (no overflow of ``exp`` for large ``|A f + B|``).
Multi-class one-vs-rest: one sigmoid per class column, then the probabilities are
normalized to sum to one (as scikit-learn's one-vs-rest calibration).

References
----------
Platt, J. (1999). Probabilistic outputs for support vector machines and comparisons to
regularized likelihood methods. Advances in Large Margin Classifiers.
Lin, H.-T., Lin, C.-J., Weng, R. C. (2007). A note on Platt's probabilistic outputs for
support vector machines. Machine Learning 68.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from fastgssl import registry
from fastgssl._folds import make_folds

__all__ = ["platt_fit", "platt_probabilities"]

# folds of the internal CV that calibrates predict_proba (probability=True)
_PLATT_FOLDS = 5


def _neg_log_likelihood(params, f, t):
    A, B = params
    z = A * f + B
    # log(1 + exp(z)) and log(1 + exp(-z)) without overflow
    log1pexp = np.logaddexp(0.0, z)
    # p = P(y = 1) = 1 / (1 + exp(z)): -log p = log1pexp, -log(1 - p) = log1pexp - z
    value = np.sum(t * log1pexp + (1.0 - t) * (log1pexp - z))
    p = np.exp(-log1pexp)
    dz = t - p  # d/dz of the summand
    return value, np.array([np.sum(dz * f), np.sum(dz)])


def platt_fit(decision, positive):
    """Fit ``(A, B)`` of Platt's sigmoid.

    Parameters
    ----------
    decision : ndarray of shape (m,)
        Out-of-sample decision values.
    positive : ndarray of bool of shape (m,)
        Whether each point belongs to the positive class.

    Returns
    -------
    (A, B) : tuple of float
    """
    f = np.asarray(decision, dtype=np.float64)
    pos = np.asarray(positive, dtype=bool)
    n_pos, n_neg = int(pos.sum()), int((~pos).sum())
    t = np.where(pos, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))
    x0 = np.array([0.0, np.log((n_neg + 1.0) / (n_pos + 1.0))])
    res = minimize(_neg_log_likelihood, x0, args=(f, t), jac=True, method="L-BFGS-B")
    return float(res.x[0]), float(res.x[1])


def platt_probabilities(decision, sigmoids):
    """Probabilities from decision values and one ``(A, B)`` per column.

    Binary (1-D ``decision``, one sigmoid): columns ``[P(classes_[0]), P(classes_[1])]``.
    One-vs-rest (2-D): one sigmoid per column, rows normalized to sum to one.
    """
    f = np.asarray(decision, dtype=np.float64)
    if f.ndim == 1:
        A, B = sigmoids[0]
        p = 1.0 / (1.0 + np.exp(np.clip(A * f + B, -700, 700)))
        return np.column_stack([1.0 - p, p])
    P = np.empty_like(f)
    for k, (A, B) in enumerate(sigmoids):
        P[:, k] = 1.0 / (1.0 + np.exp(np.clip(A * f[:, k] + B, -700, 700)))
    total = P.sum(axis=1, keepdims=True)
    uniform = total[:, 0] <= 0
    P[uniform] = 1.0
    total[uniform] = P.shape[1]
    return P / total


class _PlattCalibration:
    """``predict_proba`` by Platt scaling on out-of-fold decision values (``probability=True``)
    of :class:`fastgssl.models._kernel_machine._KernelMachine` (a mixin of it)."""

    def _fit_platt(self, X, y):
        """Platt sigmoids on the out-of-fold decision values of exact transductive CV."""
        # exact CV through the registry: models sit below fastgssl.cv and do not import it
        exact = registry.get("fastgssl.cv", "exact")

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
