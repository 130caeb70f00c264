"""``score`` of the semi-supervised estimators: accuracy or R^2 over the labeled entries.

scikit-learn's ``ClassifierMixin.score`` is the accuracy over every entry of ``y``, so with
``y`` as a semi-supervised fit takes it (``-1`` marking unlabeled points) each unlabeled
point counts as an error against a class ``-1`` that no learner predicts: 0.003-0.01 for a
model that is right on 80 % of its points. Here the entries marked unlabeled (``-1`` among
numbers, the string ``"-1"``, ``None`` / ``NaN``; ``NaN`` for a regression target) are left
out, as :meth:`fastgssl.models.LapSVM.score` has always done, and a ``y`` without a single
labeled entry is refused rather than scored 0/0.
"""

from __future__ import annotations

import numpy as np
from sklearn.metrics import accuracy_score, r2_score

from fastgssl._validation import UNLABELED_STRING, check_target

__all__ = ["labeled_entries", "labeled_score"]


def labeled_entries(y, task="classification"):
    """``(y, mask)``: the targets as an array and the mask of entries that carry a label
    (classification: not ``-1`` / ``"-1"`` / None / NaN; regression: not NaN)."""
    y = check_target(y)
    if task == "regression":
        return y, ~np.isnan(y.astype(np.float64))
    if y.dtype.kind == "f":
        return y, ~np.isnan(y) & (y != -1)
    if y.dtype.kind in "iu":
        return y, y != -1
    return y, np.array([str(v) != UNLABELED_STRING for v in y], dtype=bool)


def labeled_score(estimator, X, y, sample_weight=None, task="classification"):
    """Accuracy (classification) or R^2 (regression) of ``estimator.predict(X)`` over the
    entries of ``y`` that carry a label; a ValueError when none does."""
    y, keep = labeled_entries(y, task)
    if not keep.any():
        marker = "NaN" if task == "regression" else "-1"
        raise ValueError(
            f"every entry of y is {marker} (unlabeled), so {type(estimator).__name__}.score "
            f"has nothing to compare with; pass the true labels of the points to score (the "
            f"entries marked {marker} are left out of the score).")
    pred = estimator.predict(X)
    if len(pred) != len(y):
        raise ValueError(f"X has {len(pred)} rows but y has {len(y)} entries.")
    sw = None if sample_weight is None else np.asarray(sample_weight)[keep]
    if task == "regression":
        return float(r2_score(y[keep].astype(np.float64), pred[keep], sample_weight=sw))
    return float(accuracy_score(y[keep], pred[keep], sample_weight=sw))
