"""scikit-learn scorers on out-of-fold predictions.

A scorer (a name of :func:`sklearn.metrics.get_scorer` such as ``"balanced_accuracy"``,
``"roc_auc"``, ``"f1_macro"`` or ``"neg_mean_absolute_error"``, or a callable
``scorer(estimator, X, y)``) is applied to the held-out predictions of one fold through a
stand-in estimator whose ``predict`` / ``decision_function`` return those predictions, so
every scorer works through its public interface, with its own response method and sign.
"""

from __future__ import annotations

import numpy as np
from sklearn.metrics import get_scorer
from sklearn.utils import ClassifierTags, RegressorTags, Tags, TargetTags

__all__ = ["BUILTIN_SCORINGS", "check_scoring", "fold_scores"]

BUILTIN_SCORINGS = (None, "accuracy", "neg_mean_squared_error", "neg_error")


class _OutOfFold:
    """Stand-in estimator: returns stored out-of-fold values for row indices ``X``."""

    def __init__(self, decision, classes):
        self._decision = decision
        self.classes_ = classes
        self._estimator_type = "regressor" if classes is None else "classifier"

    def __sklearn_tags__(self):
        tags = Tags(estimator_type=self._estimator_type, target_tags=TargetTags(required=True))
        if self.classes_ is None:
            tags.regressor_tags = RegressorTags()
        else:
            tags.classifier_tags = ClassifierTags()
        return tags

    def decision_function(self, X):
        if self.classes_ is None:
            raise AttributeError("a regressor has no decision_function")
        # an abstention (NaN row) scores 0 for every class, as the abstaining learner's F row
        return np.nan_to_num(self._decision[np.asarray(X, dtype=np.intp).ravel()], nan=0.0)

    def predict(self, X):
        d = self._decision[np.asarray(X, dtype=np.intp).ravel()]
        if self.classes_ is None:
            return d
        if d.ndim == 1:
            labels, abstained = self.classes_[(d > 0).astype(np.intp)], np.isnan(d)
        else:
            labels, abstained = self.classes_[np.argmax(d, axis=1)], np.isnan(d).any(axis=1)
        if abstained.any():  # the learner's label of an abstention
            if labels.dtype.kind not in "iuf":
                labels = labels.astype(object)
            labels[abstained] = -1
        return labels

    def fit(self, X, y):  # pragma: no cover - never fitted; scorers only predict
        return self


def check_scoring(scoring):
    """A scorer object for ``scoring`` (None for the built-in criteria)."""
    if scoring in BUILTIN_SCORINGS:
        return None
    if callable(scoring):
        return scoring

    try:
        return get_scorer(scoring)
    except (ValueError, TypeError):
        raise ValueError(
            f"scoring must be None, 'neg_error', a scikit-learn scorer name (e.g. "
            f"'balanced_accuracy', 'roc_auc', 'f1_macro') or a callable "
            f"scorer(estimator, X, y); got {scoring!r}."
        ) from None


def fold_scores(scorer, decision, targets, fold_of_labeled, n_folds, classes):
    """Scorer values per fold on out-of-fold ``decision`` values of the labeled points.

    ``targets`` are the encoded targets (+-1 columns for classifiers, values for
    regressors); ``classes`` the class labels (None for regression).
    """
    decision = np.asarray(decision, dtype=np.float64)
    targets = np.asarray(targets)
    if classes is not None:
        if targets.ndim == 1:
            y_true = np.asarray(classes)[(targets > 0).astype(np.intp)]
        else:
            y_true = np.asarray(classes)[np.argmax(targets, axis=1)]
    else:
        y_true = targets
    stand_in = _OutOfFold(decision, None if classes is None else np.asarray(classes))
    out = np.empty(n_folds)
    for i in range(n_folds):
        rows = np.flatnonzero(fold_of_labeled == i)
        out[i] = float(scorer(stand_in, rows[:, None], y_true[rows]))
    return out
