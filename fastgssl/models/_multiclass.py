"""One-vs-one coding of the multi-class kernel machines (``multi_class="ovo"``).

With k classes, one-vs-rest fits k problems, each on all l labeled points; one-vs-one fits
the k (k - 1) / 2 pairs (a, b), a < b, each on the labeled points of its two classes (+1 for
a, -1 for b), as scikit-learn's SVC (libsvm) does. Every point stays where it was in the
kernel and the graph; only the data term changes. The pair's problem is the learner's
objective with the data term summed over the pair and divided by the same l::

    (1/l) sum_{j in L_ab} ell(y_j, f_j) + gamma_a ||f||_K^2 + gamma_i / n^2 f^T Q f,

that is the mean over the pair with ``gamma_a`` and ``gamma_i`` multiplied by
``l / l_ab`` (with loss weights: ``sum_L w / sum_{L_ab} w``). This is libsvm's convention:
one C for every pair, so ``SVM(lam, multi_class="ovo")`` is ``SVC(C = 1 / (2 l lam))``
pair by pair. The ratio ``gamma_i / gamma_a`` is that of the whole problem, so the
deformed kernel is shared by all pairs.

Decision values of new points are returned in the one-vs-rest shape, as SVC's
``decision_function_shape="ovr"``: per class, its votes plus the summed pairwise decision
values squashed into (-1/3, 1/3) (``c / (3 (|c| + 1))``), which only breaks ties between
equal vote counts. ``predict`` takes the largest: the class with most votes, ties going to
the larger summed confidence (SVC's ``break_ties=True``).

References
----------
Hsu, C.-W., Lin, C.-J. (2002). A comparison of methods for multiclass support vector
machines. IEEE Transactions on Neural Networks 13.
"""

from __future__ import annotations

import numpy as np

from fastgssl._indexing import take_block
from fastgssl.solvers.internal import fit_dense

__all__ = ["MULTI_CLASS", "fit_pairs", "ovo_decision", "ovo_pairs"]

MULTI_CLASS = ("ovr", "ovo")


def ovo_pairs(k):
    """The pairs ``(a, b)``, ``a < b``, in libsvm's order."""
    return [(a, b) for a in range(k) for b in range(a + 1, k)]


def ovo_decision(F, k):
    """One-vs-rest-shaped decision values ``(m, k)`` of the pairwise values ``F`` ``(m, P)``.

    Pair ``(a, b)`` votes for ``a`` where its value is >= 0, else for ``b``.
    """
    F = np.asarray(F, dtype=np.float64)
    votes = np.zeros((F.shape[0], k))
    conf = np.zeros((F.shape[0], k))
    for p, (a, b) in enumerate(ovo_pairs(k)):
        f = F[:, p]
        win = f >= 0
        votes[:, a] += win
        votes[:, b] += ~win
        conf[:, a] += f
        conf[:, b] -= f
    return votes + conf / (3.0 * (np.abs(conf) + 1.0))


def fit_pairs(fit_column, Y, labeled, weights=None, init=None):
    """Fit the k (k - 1) / 2 pair problems.

    Parameters
    ----------
    fit_column : callable
        ``fit_column(y, labeled_pair, scale, init) -> (coef, infos)``: the learner's solver
        on one +-1 target column ``y`` (n,), the labeled points of the pair (a mask), with
        ``gamma_a`` and ``gamma_i`` multiplied by ``scale``; ``coef`` is 1-D.
    Y : ndarray of shape (n, k)
        One-vs-rest targets (+-1 at labeled points).
    labeled : ndarray of bool of shape (n,)
    weights : ndarray of shape (n,) or None
        Loss weights (read at labeled points).
    init : ndarray of shape (m, P) or None
        Warm start, one column per pair.

    Returns
    -------
    coef : ndarray of shape (m, P)
    infos : list of dict
    """
    k = Y.shape[1]
    codes = np.full(labeled.shape[0], -1, dtype=np.intp)
    codes[labeled] = np.argmax(Y[labeled], axis=1)
    w = np.ones(labeled.shape[0]) if weights is None else np.asarray(weights, np.float64)
    total = float(w[labeled].sum())
    columns, infos = [], []
    for p, (a, b) in enumerate(ovo_pairs(k)):
        in_pair = (codes == a) | (codes == b)
        mass = float(w[in_pair].sum())
        if not mass > 0:  # neither class keeps a labeled point of positive weight (a CV
            columns.append(None)  # fold): no data term, f = 0 on this pair
            continue
        y = np.where(codes == a, 1.0, np.where(codes == b, -1.0, 0.0))
        coef, info = fit_column(y, in_pair, total / mass,
                                None if init is None else init[:, p])
        columns.append(np.asarray(coef, dtype=np.float64))
        infos.extend(info)
    size = next((c.shape[0] for c in columns if c is not None), None)
    if size is None:
        raise ValueError("no class pair has a labeled point of positive weight.")
    coef = np.column_stack([np.zeros(size) if c is None else c for c in columns])
    return coef, infos


def solve_gram(K, Y, init=None, return_info=False, sample_weight=None, *, loss, gamma_a, tol,
                max_iter, solver, ovo=False):
    """The supervised kernel machine on the Gram matrix ``K`` of its m points (every point
    labeled): ``beta`` minimizing ``(1/m) sum loss(Y, K beta) + gamma_a beta^T K beta``
    (weighted mean with ``sample_weight``; with ``return_info``: ``(beta, per-column solver
    info)``). ``ovo``: ``Y`` holds one-vs-rest columns and ``beta`` one column per class pair,
    each pair solved on the Gram block of its points (:mod:`fastgssl.models._multiclass`)."""
    options = {"tol": tol, "max_iter": max_iter, "solver": solver, "return_info": True}
    m = K.shape[0]
    if not ovo:
        out = fit_dense(K, Y, np.ones(m, dtype=bool), None, loss, gamma_a, 0.0, init=init,
                        sample_weight=sample_weight, **options)
        return out if return_info else out[0]

    def pair(y, in_pair, scale, init_col):
        idx = np.flatnonzero(in_pair)
        coef = np.zeros(m)
        coef[idx], info = fit_dense(
            take_block(K, idx), y[idx], np.ones(idx.size, dtype=bool), None, loss,
            gamma_a * scale, 0.0, init=None if init_col is None else init_col[idx],
            sample_weight=None if sample_weight is None else sample_weight[idx], **options)
        return coef, info

    beta, info = fit_pairs(pair, np.asarray(Y, dtype=np.float64), np.ones(m, dtype=bool),
                           sample_weight, init)
    return (beta, info) if return_info else beta
