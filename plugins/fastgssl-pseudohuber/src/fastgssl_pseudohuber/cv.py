"""A cross-validation method as a fastgssl plugin (entry point group ``fastgssl.cv``).

``hidden-label-refits``: exact transductive t-fold CV by brute force. For every fold the
learner is refitted from scratch with the labels of that fold hidden (``-1`` for
classifiers, ``NaN`` for regressors) and every point kept; the held-out values are read from
the refit's :class:`fastgssl.CVState` (its fitted values at the training points). It works
for any learner that implements the protocol (``cv_state()``), kernel machines and label
propagation alike, at the price of t full fits: it is the reference that fastgssl's
one-fit transductive CV must reproduce to round-off.

Written only against fastgssl's documented protocol: :class:`fastgssl.cv.CVMethod`,
:class:`fastgssl.cv.CVResult`, ``cv_state()`` and :func:`fastgssl.cv.check_folds`.
"""

import numpy as np
from sklearn.base import clone

from fastgssl.cv import CVMethod, CVResult, check_folds

__all__ = ["HiddenLabelRefits"]


def _hide(y, mask, classification):
    y = np.array(y, copy=True)
    if classification:
        y = y.astype(np.result_type(y.dtype, np.int8)) if y.dtype.kind in "iub" else y
        y[mask] = -1
    else:
        y = y.astype(np.float64)
        y[mask] = np.nan
    return y


class HiddenLabelRefits(CVMethod):
    """Exact transductive t-fold CV by t refits with the fold's labels hidden.

    Parameters
    ----------
    None.
    """

    name = "hidden-label-refits"
    protocols = ("transductive",)
    is_exact = True

    def run(self, estimator, X, y, folds, *, protocol=None):
        protocol = self.check_protocol(protocol)
        full = clone(estimator).fit(X, y).cv_state()
        labeled = np.asarray(full.labeled, dtype=bool)
        classification = full.classification
        y_codes = np.asarray(y)
        check_y = None
        if classification:
            Y = np.asarray(full.y)
            check_y = Y if Y.ndim == 1 else np.argmax(Y, axis=1)
        folds, n_folds = check_folds(folds, labeled, check_y, classification=classification)
        lab_idx = np.flatnonzero(labeled)
        targets = np.asarray(full.y, dtype=np.float64)[lab_idx]
        pred = np.empty_like(targets)
        pos = np.empty(labeled.size, dtype=np.intp)
        pos[lab_idx] = np.arange(lab_idx.size)
        for i in range(n_folds):
            hide = (folds == i) & labeled
            state = clone(estimator).fit(X, _hide(y_codes, hide, classification)).cv_state()
            f = np.asarray(state.f, dtype=np.float64)
            pred[pos[hide]] = f[hide]
        if classification:
            if pred.ndim == 1:
                errors = np.sign(pred) != np.sign(targets)
            else:
                errors = np.argmax(pred, axis=1) != np.argmax(targets, axis=1)
        else:
            errors = (pred - targets) ** 2
        return CVResult(method=self.name, score=float(np.mean(errors)), predictions=pred,
                        targets=targets, labeled_index=lab_idx, folds=folds, n_folds=n_folds,
                        task=full.task, classes=full.classes, form="mean",
                        graph_mode="held-out labels hidden (refits)", protocol=protocol,
                        info={"refits": n_folds})
