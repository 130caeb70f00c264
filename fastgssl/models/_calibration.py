"""Platt scaling of decision values into class probabilities.

Platt (1999) fits ``P(y = 1 | f) = 1 / (1 + exp(A f + B))`` by maximum likelihood on
decision values that the model did not see the labels of (here: out-of-fold values of exact
cross-validation), with the targets smoothed to ``(N_+ + 1) / (N_+ + 2)`` and
``1 / (N_- + 2)`` against overfitting. Lin, Lin & Weng (2007) give the numerically careful
form of the likelihood used here (no overflow of ``exp`` for large ``|A f + B|``).
Multi-class one-vs-rest: one sigmoid per class column, then the probabilities are
normalized to sum to one (as scikit-learn's one-vs-rest calibration).

The calibration stage of the kernel machines (values in, values out): the folds of the
internal CV that ``probability=True`` runs (:func:`platt_folds`), the sigmoids of given
out-of-fold values (:func:`platt_sigmoids`) and the probabilities they give. The estimator
shell (:class:`fastgssl.models._kernel_machine._KernelMachine`) runs the CV between them.

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

from fastgssl._folds import make_folds

__all__ = ["platt_fit", "platt_folds", "platt_probabilities", "platt_sigmoids"]

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


def platt_folds(task, y_train, labeled, random_state):
    """The stratified folds of the labeled points for the CV that calibrates
    ``predict_proba`` at fit (``min(5, smallest class count)`` folds, seeded by
    ``random_state``), from the fit's task, encoded targets and labeled mask."""
    if task != "classification":
        raise ValueError("probability=True needs a classifier (task='classification').")
    y_lab = np.argmax(y_train, axis=1) if y_train.ndim == 2 else (y_train > 0).astype(int)
    counts = np.bincount(y_lab[labeled])
    n_folds = int(min(_PLATT_FOLDS, counts[counts > 0].min()))
    if n_folds < 2:
        raise ValueError(
            "probability=True calibrates on out-of-fold decision values and needs at "
            "least 2 labeled points of every class."
        )
    codes = np.where(labeled, y_lab, -1)
    return make_folds(codes, n_folds, labeled=labeled, random_state=random_state)


def platt_sigmoids(task, decision_values, targets, target_shape):
    """One Platt sigmoid ``(A, B)`` per column of the out-of-fold ``decision_values``
    (checked against ``targets`` and the fit's encoded ``target_shape``)."""
    if task != "classification":
        raise ValueError("calibrate needs a classifier (task='classification').")
    oof = np.asarray(decision_values, dtype=np.float64)
    targets = np.asarray(targets)
    if oof.shape != targets.shape or oof.shape[1:] != target_shape[1:]:
        raise ValueError(
            f"decision_values {oof.shape} and targets {targets.shape} must have the shape "
            f"of the labeled decision values (l,) + {target_shape[1:]}."
        )
    if not np.isfinite(oof).all():
        raise ValueError("decision_values contains NaN or infinite values.")
    if oof.ndim == 1:
        return [platt_fit(oof, targets > 0)]
    return [platt_fit(oof[:, k], targets[:, k] > 0) for k in range(oof.shape[1])]
