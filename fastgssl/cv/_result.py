"""The result of a cross-validation run, and the validation losses it reports."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["CVResult", "validation_loss"]


@dataclass
class CVResult:
    """Outcome of one cross-validation run.

    Attributes
    ----------
    method : str
        Registry name of the method.
    score : float
        Mean validation loss over the labeled points (0-1 loss or squared error).
    predictions : ndarray of shape (l,) or (l, k)
        Out-of-fold decision values of the labeled points (order of ``labeled_index``).
    targets : ndarray of shape (l,) or (l, k)
        Encoded targets of the labeled points (+-1 per class, or real values).
    labeled_index : ndarray of int
        Indices of the labeled training points.
    folds : ndarray of int of shape (n,)
        Fold id of every training point.
    n_folds : int
    task : {"classification", "regression"}
    classes : ndarray or None
    form : str
        ``"mean"`` (refits or BIF of the papers' mean-of-losses objective with the same
        hyper-parameters) or ``"sum"`` (exact-quadratic: the sum-of-losses objective, mu held
        fixed across folds).
    graph_mode : str or None
        How the graph of a fold refit is defined (``"rebuild"``, ``"induced"``,
        ``"held-out points kept as unlabeled"``), None without a graph.
    protocol : {"transductive", "inductive"}
        ``"transductive"``: the fold's labels hidden, every point kept in the graph;
        ``"inductive"``: the fold's points removed (graph rebuilt or induced). The two
        coincide for supervised learners.
    times : dict
        Wall seconds of the phases (``fit``, ``cv``).
    info : dict
        Method-specific details (e.g. the Nystrom rank of FBIF).
    """

    method: str
    score: float
    predictions: np.ndarray
    targets: np.ndarray
    labeled_index: np.ndarray
    folds: np.ndarray
    n_folds: int
    task: str
    classes: np.ndarray | None = None
    form: str = "mean"
    graph_mode: str | None = None
    protocol: str = "inductive"
    times: dict = field(default_factory=dict)
    info: dict = field(default_factory=dict)


# ------------------------------------------------------------------------------------ helpers


def validation_loss(pred, targets, classification):
    """Per-point validation loss: 0-1 (classification, +-1 coded targets) or squared error.

    A classifier's NaN row is an abstention (a point the refit leaves undecided, label -1):
    an error, as the refit's label is."""
    if classification:
        if pred.ndim == 1:
            wrong = np.where(pred > 0, 1.0, -1.0) != np.sign(targets)
            return (wrong | np.isnan(pred)).astype(float)
        wrong = np.argmax(pred, axis=1) != np.argmax(targets, axis=1)
        return (wrong | np.isnan(pred).any(axis=1)).astype(float)
    err = (pred - targets) ** 2
    return err if err.ndim == 1 else err.sum(axis=1)


def at_training_error(error, train, classification, targets):
    """Whether a CV criterion ``error`` fell to the training error ``train`` of the model
    fitted on all labels: equal for 0-1 errors; for squared errors within a millionth of the
    targets' mean square (a nearly interpolating model's criterion, ~1e-9, sits just above
    its training error, ~1e-10). A first-order criterion there is uninformative."""
    if classification:
        slack = 1e-12 * max(1.0, abs(train))
    else:
        slack = 1e-6 * float(np.mean(np.asarray(targets, dtype=float) ** 2))
    return error <= train + slack


def _result(method, pred, targets, lab_idx, folds, n_folds, classification, classes, **kw):
    score = float(np.mean(validation_loss(pred, targets, classification)))
    return CVResult(
        method=method,
        score=score,
        predictions=pred,
        targets=targets,
        labeled_index=lab_idx,
        folds=folds,
        n_folds=n_folds,
        task="classification" if classification else "regression",
        classes=classes,
        **kw,
    )


def _encode_targets(y, lab_idx, classification):
    """Targets of the labeled points coded as the estimators code them (+-1 / one-vs-rest)."""
    yl = y[lab_idx]
    if not classification:
        return np.asarray(yl, dtype=np.float64), None
    classes = np.unique(yl)
    if len(classes) == 2:
        return np.where(yl == classes[1], 1.0, -1.0), classes
    return np.where(yl[:, None] == classes[None, :], 1.0, -1.0), classes
