"""The active-learning loop: query, ask an oracle, add its labels, for a number of rounds."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ._learner import _labeled_mask, _x_key

__all__ = ["ActiveLearningHistory", "active_learning_loop"]


@dataclass
class ActiveLearningHistory:
    """What :func:`active_learning_loop` did.

    Attributes
    ----------
    y : ndarray of shape (n,)
        The labels at the end (the initial ones and every answer of the oracle).
    queried : ndarray of int of shape (n_rounds, batch_size)
        The points asked in each round, in the order the learner chose them.
    answers : ndarray of shape (n_rounds, batch_size)
        The oracle's labels of those points.
    transductions : ndarray of shape (n_rounds + 1, n)
        The learner's label of every point fitted on the labels before each round, and
        (last row) on the final labels; ``-1`` where it abstains.
    round_times : ndarray of shape (n_rounds,)
        Wall seconds per query (the learner's fit and the acquisition).
    n_solved : ndarray of int of shape (n_rounds,)
        Covariance columns solved per query (variance criteria; 0 otherwise).
    round_cpu_times : ndarray of shape (n_rounds,)
        CPU seconds per query (all threads of the process).
    """

    y: np.ndarray
    queried: np.ndarray
    answers: np.ndarray
    transductions: np.ndarray
    round_times: np.ndarray
    n_solved: np.ndarray
    round_cpu_times: np.ndarray = None
    extra: dict = field(default_factory=dict)

    def accuracy(self, y_true, *, unlabeled_only=True):
        """Accuracy of each row of :attr:`transductions` against ``y_true`` (over the points
        unlabeled at that moment by default), shape (n_rounds + 1,)."""
        y_true = np.asarray(y_true)
        labeled = np.asarray(self.y) != -1
        start = labeled.copy()
        start[self.queried.ravel()] = False
        out = []
        for r, pred in enumerate(self.transductions):
            known = start.copy()
            known[self.queried[:r].ravel()] = True
            mask = ~known if unlabeled_only else np.ones_like(known)
            out.append(float(np.mean(pred[mask] == y_true[mask])))
        return np.array(out)


def _answers(oracle, idx, allowed):
    if callable(oracle):
        labels = np.asarray(oracle(idx))
    else:
        labels = np.asarray(oracle)[idx]
    if labels.shape != idx.shape:
        raise ValueError(f"oracle returned {labels.shape[0] if labels.ndim else 'a scalar'} "
                         f"labels for {idx.size} queried points.")
    if labels.dtype.kind == "f" and np.isnan(labels).any():
        raise ValueError(f"oracle returned NaN for point(s) {idx[np.isnan(labels)].tolist()}; "
                         f"an oracle must label every point it is asked.")
    unl = labels == -1
    if unl.any():
        raise ValueError(f"oracle returned -1 (unlabeled) for point(s) {idx[unl].tolist()}; "
                         f"an oracle must label every point it is asked.")
    unknown = ~np.isin(labels, allowed)
    if unknown.any():
        raise ValueError(
            f"oracle returned label(s) {sorted(set(labels[unknown].tolist()))} (points "
            f"{idx[unknown].tolist()}) outside classes={list(allowed)} (default: the classes "
            f"of the initial labels); pass classes= to accept more."
        )
    return labels


def active_learning_loop(learner, X, y, oracle, n_rounds, *, classes=None, callback=None):
    """Run ``n_rounds`` of active learning: query, ask ``oracle``, add the labels.

    Later rounds warm-start from earlier ones: the graph is built once, and the variance
    criteria update their kept covariance columns by rank one instead of solving again.

    Parameters
    ----------
    learner : ActiveLearner
    X : array-like of shape (n_samples, n_features)
        The points; identified once (a digest of its entries) for the kept graph, so it
        must not change during the loop.
    y : array-like of shape (n_samples,)
        Initial labels, ``-1`` for unlabeled points (not modified).
    oracle : array-like of shape (n_samples,) or callable
        The true labels (a label array, as in tests and benchmarks), or
        ``oracle(indices) -> labels``. Every answer must be a label of ``classes``: ``-1``,
        NaN or another class is a ``ValueError`` naming the points.
    n_rounds : int
        Number of queries (``n_rounds * learner.batch_size`` labels asked in all).
    classes : array-like or None, default=None
        The labels the oracle may answer (None: the classes of the initial labels; a class
        absent from them could not be predicted by the learner anyway until labeled).
    callback : callable or None
        ``callback(round, learner, y)`` after each round's labels are added.

    Returns
    -------
    ActiveLearningHistory
    """
    if not isinstance(n_rounds, (int, np.integer)) or n_rounds < 1:
        raise ValueError(f"n_rounds must be a positive integer, got {n_rounds!r}.")
    y = np.array(y, copy=True)
    labeled = _labeled_mask(y)
    allowed = np.unique(y[labeled]) if classes is None else np.asarray(classes)
    if not callable(oracle):
        oracle = np.asarray(oracle)
        if oracle.shape != y.shape:
            raise ValueError(f"oracle must be a label array of shape {y.shape} or a "
                             f"callable, got shape {oracle.shape}.")
    unlabeled = int((~labeled).sum())
    if n_rounds * learner.batch_size > unlabeled:
        raise ValueError(
            f"n_rounds={n_rounds} rounds of batch_size={learner.batch_size} ask for "
            f"{n_rounds * learner.batch_size} labels, more than the {unlabeled} unlabeled "
            f"points."
        )
    queried, answers, preds, times, cpu, solved = [], [], [], [], [], []
    x_key = _x_key(X)  # X is the same every round: its digest once, not per query
    for r in range(n_rounds):
        idx = learner.query(X, y, x_key=x_key)
        preds.append(learner.transduction_)
        times.append(learner.query_time_)
        cpu.append(learner.query_cpu_time_)
        solved.append(learner.n_solved_)
        labels = _answers(oracle, idx, allowed)
        if y.dtype.kind in "iu" and labels.dtype.kind == "f":
            y = y.astype(np.float64)
        y[idx] = labels
        queried.append(idx)
        answers.append(labels)
        if callback is not None:
            callback(r, learner, y)
    learner.fit(X, y, x_key=x_key)
    preds.append(learner.transduction_)
    return ActiveLearningHistory(y=y, queried=np.array(queried), answers=np.array(answers),
                                 transductions=np.array(preds), round_times=np.array(times),
                                 n_solved=np.array(solved, dtype=np.int64),
                                 round_cpu_times=np.array(cpu))
