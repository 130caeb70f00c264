"""Target coding and loss weights of the kernel machines: class indices of the encoded
targets, the per-point loss weights (``sample_weight`` times ``class_weight``), the decoder
of one-vs-one votes."""

from __future__ import annotations

from functools import partial

import numpy as np
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.multiclass import check_classification_targets

from fastgssl.models._multiclass import ovo_decision

__all__ = ["check_class_labels", "class_labels", "decoder", "point_weights"]


def decoder(classes):
    """``F -> ovo_decision(F, k)``: the one-vs-rest-shaped votes of pairwise values."""
    return partial(ovo_decision, k=len(classes))


def class_labels(y_enc, labeled, classes):
    """Class index of every labeled point from the encoded targets (-1 elsewhere)."""
    codes = np.full(labeled.shape[0], -1, dtype=np.intp)
    if y_enc.ndim == 1:
        codes[labeled] = (y_enc[labeled] > 0).astype(np.intp)
    else:
        codes[labeled] = np.argmax(y_enc[labeled], axis=1)
    return codes


def point_weights(class_weight, sample_weight, y_enc, labeled, classes, task, kept=None):
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
        codes = class_labels(y_enc, kept, classes)
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


def check_class_labels(y):
    """scikit-learn's check_classification_targets, skipped for 1-D integer / bool labels
    (always valid class labels; the check costs 0.5 ms, once per candidate of a search)."""
    if not (isinstance(y, np.ndarray) and y.ndim == 1 and y.dtype.kind in "iub"):
        check_classification_targets(y)
