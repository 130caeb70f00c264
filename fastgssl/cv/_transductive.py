"""Exact transductive t-fold CV: hide the labels of a fold, keep every point in the graph.

Kernel machines (KRR, SVM, LapRLS, LapSVM and any learner whose :class:`fastgssl.CVState`
has a kernel or a factor): the graph, the regularizer and n do not change when labels are
hidden, so neither does the deformed kernel ``K~`` (Sindhwani, Niyogi & Belkin 2005;
:class:`fastgssl.kernels.DeformedKernel`). The refit of fold i is the supervised learner on
``L minus L_i`` with the Gram ``K~`` restricted to those points and the mean of its
``l - m_i`` losses; its values at the held-out points are ``K~[L_i, L minus L_i] beta_i``.
This is the minimizer a brute-force refit with the fold's labels set to "unlabeled"
computes, to round-off.

* square loss: ``beta_i = (K~_RR + gamma_a (l - m_i) I)^{-1} y_R``; with
  ``C = (K~_LL + mu I)^{-1}`` the held-out residuals of all folds of one size ``m`` are
  ``C[L_i, L_i]^{-1} (C y)[L_i]`` at ``mu = gamma_a (l - m)``: one Cholesky factorization per
  distinct fold size (at most two with balanced folds); below ``_DIRECT_MAX_L`` labeled
  points the t refits themselves, in one compiled call (cheaper than the LAPACK calls there);
* other losses: t refits of size about l with the learner's ``solve``, each warm-started
  from the full fit's ``beta`` restricted to ``L minus L_i`` and scaled by
  ``l / (l - m_i)``; cold refits go through the learner's ``solve_folds`` when it has one
  (the Huber and squared hinges: all t active-set refits in one call), which also replaces
  the warm starts where the folds run on several threads (:func:`fastgssl._threads.
  fold_threads`: from 256 labeled points); a grid search then fits no candidate on all labels
  (:func:`batched_fold_refits`).

Label propagation: the propagation is re-solved on the same graph with the fold's labels
hidden (t solves; the graph is built once).
"""

from __future__ import annotations

import numba
import numpy as np
import scipy.linalg as sla

from fastgssl._indexing import fold_block, fold_split, held_out_values, take_block
from fastgssl._threads import fold_threads, small_blas
from fastgssl.cv._base import weight_kw
from fastgssl.cv._parts import refit_of, solves_one_vs_one
from fastgssl.cv._quadratic import exact_quadratic_cholesky

__all__ = ["deformed_gram", "transductive_predictions"]


def deformed_gram(state):
    """``K~_LL`` of a fitted kernel machine's state (``K_LL`` without a graph)."""
    L = np.flatnonzero(state.labeled)
    if state.deformed is not None:
        return state.deformed.labeled_gram(state.r)
    if state.uses_graph:
        from fastgssl.kernels import DeformedKernel

        dk = DeformedKernel(route="nystrom" if state.factor is not None else "dense")
        if state.factor is not None:
            dk.fit(None, state.regularizer, L, factor=state.factor)
        else:
            dk.fit(None, state.regularizer, L, base_gram=state.kernel)
        return dk.labeled_gram(state.r)
    if state.factor is not None:
        V = np.asarray(state.factor, dtype=np.float64)[L]
        return V @ V.T
    if state.kernel is None:
        raise ValueError(
            "the learner's CVState has neither a kernel nor a factor; the transductive "
            "reduction needs one (use method='exact' refits)."
        )
    return take_block(state.kernel, L)


# below this many labeled points the square loss's folds are refitted directly, all in one
# compiled call (t Cholesky factorizations of about l x l: the per-fold-size algebra's
# LAPACK calls cost more than the flops; l = 40, t = 5: 0.75 ms -> 0.03 ms per candidate)
_DIRECT_MAX_L = 200


@numba.njit(cache=True, nogil=True)
def _square_refits_kernel(K, Y, fl, n_folds, gamma_a, pred, ok):
    """``pred[V_i] = K[V_i, R_i] (K[R_i, R_i] + gamma_a |R_i| I)^{-1} Y[R_i]`` for every fold
    (Cholesky in place; ``ok[i]`` False where ``K[R_i, R_i] + mu I`` is not numerically
    positive definite, those rows left for the caller)."""
    l, k = Y.shape
    for i in range(n_folds):
        R, V = fold_split(fl, i)
        m = R.shape[0]
        if m == l:  # an empty fold: nothing held out
            continue
        A = fold_block(K, R)
        for s in range(m):
            A[s, s] += gamma_a * m
        good = True
        for j in range(m):  # A = C C^T, C lower, in place
            d = A[j, j]
            for q in range(j):
                d -= A[j, q] * A[j, q]
            if not d > 0.0:
                good = False
                break
            d = np.sqrt(d)
            A[j, j] = d
            for r in range(j + 1, m):
                v = A[r, j]
                for q in range(j):
                    v -= A[r, q] * A[j, q]
                A[r, j] = v / d
        ok[i] = good
        if not good:
            continue
        x = np.empty(m)
        for c in range(k):
            for s in range(m):  # C z = y_R
                v = Y[R[s], c]
                for q in range(s):
                    v -= A[s, q] * x[q]
                x[s] = v / A[s, s]
            for s in range(m - 1, -1, -1):  # C^T beta = z
                v = x[s]
                for q in range(s + 1, m):
                    v -= A[q, s] * x[q]
                x[s] = v / A[s, s]
            held_out_values(K, V, R, x, pred, c)


def _square_predictions(KLL, Y, fl, n_folds, gamma_a):
    """Mean-form held-out predictions of the square loss: direct refits in one compiled call
    for small l, else one factorization per fold size."""
    l = KLL.shape[0]
    pred = np.empty_like(Y)
    if l <= _DIRECT_MAX_L:
        ok = np.zeros(n_folds, dtype=np.bool_)
        _square_refits_kernel(np.ascontiguousarray(KLL, dtype=np.float64),
                              np.ascontiguousarray(Y, dtype=np.float64),
                              np.ascontiguousarray(fl, dtype=np.int64), int(n_folds),
                              float(gamma_a), pred, ok)
        for i in np.flatnonzero(~ok):  # not numerically PD: a symmetric solve per fold
            R, V = np.flatnonzero(fl != i), np.flatnonzero(fl == i)
            if V.size == 0:
                continue
            A = take_block(KLL, R)
            A.flat[:: R.size + 1] += gamma_a * R.size
            pred[V] = take_block(KLL, V, R) @ sla.solve(A, Y[R], assume_a="sym")
        return pred
    sizes = np.bincount(fl, minlength=n_folds)
    for m in np.unique(sizes):
        mu = gamma_a * (l - m)
        folds_m = np.flatnonzero(sizes == m)
        with small_blas(l**3):
            res = exact_quadratic_cholesky(KLL, Y, fl, n_folds, mu)
        if res is not None:
            rows = np.isin(fl, folds_m)
            pred[rows] = res[0][rows]
            continue
        for i in folds_m:  # K~_LL + mu I not numerically PD: direct refits of these folds
            R, V = np.flatnonzero(fl != i), np.flatnonzero(fl == i)
            A = take_block(KLL, R)
            A.flat[:: R.size + 1] += mu
            pred[V] = take_block(KLL, V, R) @ sla.solve(A, Y[R], assume_a="sym")
    return pred


def batched_fold_refits(objective):
    """Whether the learner's ``solve_folds`` serves the transductive refits (unweighted, not
    one-vs-one): all t cold refits in one call, concurrently where
    :func:`fastgssl._threads.fold_threads` gives several threads. A grid search then skips
    the per-candidate fit on all labels that would only start the refits: on the Caravan
    shape (1,260 points, 12 candidates, one thread) the cold refits without those fits took
    9 % less time than the warm-started ones with them."""
    return (refit_of(objective).solve_folds is not None and objective.sample_weight is None
            and not solves_one_vs_one(objective))


def _refit_predictions(KLL, Y, fl, n_folds, state, warm_start):
    """Losses without a closed form (and weighted or one-vs-one square losses): the
    learner's ``solve`` on each ``K~_RR``, with the loss weights each refit uses; the held-out
    values go through ``state.decode`` (one-vs-one votes) when the learner gives one."""
    refit = refit_of(state)
    if refit.solve is None:
        raise ValueError(
            "the learner's CVState has no solve(K, Y, init) callable; the transductive "
            "refits of a loss without closed form need it: declare "
            "CVState(refit_part=fastgssl.RefitPart(solve=...)) (see fastgssl.RefitPart)."
        )
    l = KLL.shape[0]
    L = np.flatnonzero(state.labeled)
    w_full = None if state.sample_weight is None else np.asarray(state.sample_weight)[L]
    beta_full = state.deformed_coef if warm_start else None
    if beta_full is None and warm_start and not state.uses_graph and state.coef is not None \
            and state.factor is None:
        beta_full = np.asarray(state.coef)[np.flatnonzero(state.labeled)]
    if beta_full is not None:  # (l,) + the solve's columns (class pairs for one-vs-one)
        beta_full = np.asarray(beta_full, dtype=np.float64).reshape(Y.shape[0], -1)

    if batched_fold_refits(state) and \
            (beta_full is None or fold_threads(l, n_folds) > 1):
        # every cold refit in one call; with the full fit's solution at hand only where the
        # folds run concurrently (a warm start saved 5-10 % of a refit, two threads ~40 %)
        with small_blas(l**3 / 3.0):
            out = refit.solve_folds(KLL, Y, fl, n_folds)
        if out is not None:
            return out[0], [int(v) for v in out[1]], False
    pred = np.empty_like(Y)
    infos = []
    # one BLAS thread for the whole loop when its factorizations are small (one threadpoolctl
    # limit instead of one per fold and product)
    with small_blas(l**3 / 3.0):
        for i in range(n_folds):
            R, V = np.flatnonzero(fl != i), np.flatnonzero(fl == i)
            w_R = _fold_weights(state, L, R, fl, i)
            init = None if beta_full is None else beta_full[R] * _start_scale(w_full, w_R, R,
                                                                              l)
            beta, info = refit.solve(take_block(KLL, R), Y[R], init=init, return_info=True,
                                     **weight_kw(w_R))
            with small_blas(2.0 * V.size * R.size * beta.shape[1]):
                values = take_block(KLL, V, R) @ beta
            pred[V] = values if refit.decode is None else refit.decode(values)
            infos.append(max((d["n_iter"] for d in info), default=1))
    return pred, infos, beta_full is not None


def _fold_weights(state, L, R, fl, i):
    """Loss weights of the labeled points R kept by fold i, as the refit computes them."""
    if state.sample_weight is None:
        return None
    kept = np.zeros(state.labeled.shape[0], dtype=bool)
    kept[L[fl != i]] = True
    weights_for = refit_of(state).weights_for
    w = weights_for(kept) if weights_for is not None else \
        np.where(kept, state.sample_weight, 0.0)
    w = np.asarray(w, dtype=np.float64)[L[R]]
    if not w.sum() > 0:
        raise ValueError(f"fold {i} keeps only labeled points of weight 0: its refit has no "
                         f"data term (give those points positive sample_weight or change "
                         f"the folds).")
    return w


def _start_scale(w_full, w_R, R, l):
    """Factor from the full fit's coefficients to a fold refit's start: ``alpha_j =
    -w_j ell'_j / (2 gamma_a sum w)`` (mean form; ``l / |R|`` unweighted)."""
    if w_R is None:
        return l / R.size
    old = w_full[R]
    ratio = np.divide(w_R, old, out=np.zeros_like(w_R), where=old > 0)
    return (ratio * (w_full.sum() / w_R.sum()))[:, None]


def transductive_predictions(state, folds, n_folds, *, warm_start=True, KLL=None):
    """Exact out-of-fold values of the labeled points under the transductive protocol.

    Parameters
    ----------
    state : CVState
        Of the learner fitted on all labels.
    folds : ndarray of int of shape (n,)
    n_folds : int
    warm_start : bool
        Newton refits start from the full fit's solution (same optimum).
    KLL : ndarray of shape (l, l), optional
        ``K~_LL`` when the caller has it (the grid search shares it).

    Returns
    -------
    pred : ndarray of shape (l,) or (l, k)
        In the order of ``np.flatnonzero(state.labeled)``.
    info : dict
    """
    if state.loss is None:
        return _propagation_predictions(state, folds, n_folds)
    Y, _, one_d = state.columns()
    L = np.flatnonzero(state.labeled)
    Y = Y[L]
    fl = np.asarray(folds)[L]
    if KLL is None:
        KLL = deformed_gram(state)
    if getattr(state.loss, "name", None) == "square" and state.sample_weight is None \
            and not solves_one_vs_one(state):
        pred = _square_predictions(KLL, Y, fl, n_folds, state.gamma_a)
        info = {"solver": "cholesky per fold" if KLL.shape[0] <= _DIRECT_MAX_L
                else "cholesky per fold size", "warm_start": False}
    else:
        pred, iters, warm = _refit_predictions(KLL, Y, fl, n_folds, state, warm_start)
        info = {"solver": "the learner's solve, one refit per fold", "n_iter": iters,
                "warm_start": warm}
    info["reduction"] = "deformed kernel" if state.uses_graph else "supervised kernel"
    return (pred[:, 0] if one_d else pred), info


def _propagation_predictions(state, folds, n_folds):
    """Label propagation: the block solve of :mod:`fastgssl.cv._propagation` when the
    learner declares its system, else a re-solve per fold with the fold's labels hidden."""
    labeled = state.labeled
    L = np.flatnonzero(labeled)
    Y, _, one_d = state.columns()
    classification = state.classification
    if refit_of(state).relabel is None and state.propagation is None:
        raise ValueError(
            "the learner's CVState has no loss, no propagation system and no relabel hook: "
            "transductive CV re-solves it with the fold's labels hidden and needs "
            "CVState.propagation or CVState(refit_part=fastgssl.RefitPart(relabel=...))."
        )

    def refit_fold(i):
        if refit_of(state).relabel is None:
            raise ValueError(
                f"fold {i} cannot be computed from the block solve (a graph component loses "
                f"its labels) and the learner's CVState has no relabel hook to refit it."
            )
        hide = (np.asarray(folds) == i) & labeled
        if classification:
            y_fold = np.where(labeled & ~hide, np.argmax(Y, axis=1), -1)
        else:
            y_fold = np.where(labeled & ~hide, Y[:, 0], np.nan)
        F = np.asarray(refit_of(state).relabel(y_fold).f, dtype=np.float64)
        F = F[:, None] if F.ndim == 1 else F
        V = np.flatnonzero(hide)
        return F[V] if classification else F[V, :1]

    if state.propagation is not None:
        from fastgssl.cv._propagation import propagation_predictions

        pred, info = propagation_predictions(state, folds, n_folds, refit_fold)
        return (pred[:, 0] if one_d else pred), info
    pred = np.empty((L.size, Y.shape[1]))
    pos = np.empty(labeled.size, dtype=np.intp)
    pos[L] = np.arange(L.size)
    for i in range(n_folds):
        pred[pos[np.flatnonzero((np.asarray(folds) == i) & labeled)]] = refit_fold(i)
    return (pred[:, 0] if one_d else pred), {"solver": "propagation re-solve",
                                             "reduction": "same graph, labels hidden"}
