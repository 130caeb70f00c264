"""Leave-fold-out by one Newton step of each fold's objective from the full fit."""

from __future__ import annotations

import warnings

import numpy as np

from fastgssl._threads import small_blas
from fastgssl.cv._base import (
    _fitted_state,
    _kernel_matrix,
    _OneFitMethod,
    complement_regularizers,
)
from fastgssl.cv._bif import _as_operator, _solve_checked
from fastgssl.cv._parts import refit_of

__all__ = ["NewtonStepMethod", "newton_step_predictions"]



def newton_step_predictions(K, alpha, g, h, labeled, folds, n_folds, gamma_a, gamma_i=0.0,
                            complement_regularizers=None, weights_for=None):
    """Leave-fold-out predictions by one Newton step of each fold's objective (dense model).

    Fold i's objective (mean form, the subgraph induced on S minus S_i) is
    ``(1/(l - m_i)) sum_{L minus L_i} ell + gamma_A ||f||^2 + s_i' f^T Q_{-i} f`` with
    ``s_i' = gamma_I / (n - |S_i|)^2``.  From the full fit ``alpha`` one Newton step in alpha
    (gradient preconditioned by K^{-1}, as the dense solver) gives

        alpha_i = alpha - [(diag(c_i h) + 2 s_i' Q_{-i}) K + 2 gamma_A I]^{-1}
                          (c_i g + 2 s_i' Q_{-i} f + 2 gamma_A alpha),

    ``c_i = 1/(l - m_i)`` on L minus L_i (with loss weights, ``c_i = w_j / sum w`` over the
    weights a refit on L minus L_i uses: ``weights_for``).  The step is exact when the
    objective is quadratic (square loss: KRR, LapRLS with the induced subgraph) and
    second-order accurate otherwise,
    where the BIF is first order (approximate CV by a Newton step: Beirami et al. 2017,
    Rad & Maleki 2020, Stephenson & Broderick 2020).  Without a graph and with few curved
    points the system is a rank-m update of ``2 gamma_A I`` (Woodbury); otherwise one
    dense LU per fold, O(t n^3).

    Parameters
    ----------
    K : ndarray (n, n); alpha, g, h : ndarray (n,) at the full fit
    complement_regularizers : list of sparse (n, n) or None
        ``Q_{-i}``: the regularizer of the subgraph induced on S minus S_i, embedded in n x n.
    weights_for : callable or None
        ``weights_for(kept) -> (n,)`` loss weights of a refit on the labeled points ``kept``
        (:attr:`fastgssl.RefitPart.weights_for`); None: unweighted.

    Returns
    -------
    ndarray of shape (l,)
        Predictions of the labeled points at their held-out fold's model.
    """
    n = len(alpha)
    l = int(labeled.sum())
    f = K @ alpha
    lab_idx = np.flatnonzero(labeled)
    out = np.empty(l)
    pos = np.full(n, -1)
    pos[lab_idx] = np.arange(l)
    for i in range(n_folds):
        held = folds == i
        keep_lab = labeled & ~held
        if weights_for is None:
            c = np.where(keep_lab, 1.0 / keep_lab.sum(), 0.0)
        else:
            w_i = np.where(keep_lab, np.asarray(weights_for(keep_lab), dtype=np.float64), 0.0)
            c = w_i / w_i.sum()
        F = c * g + 2.0 * gamma_a * alpha
        w = c * h
        if gamma_i > 0:
            s_i = gamma_i / (n - held.sum()) ** 2
            Qi = _as_operator(complement_regularizers[i])
            F = F + 2.0 * s_i * (Qi @ f)
        act = np.flatnonzero(w)
        if gamma_i == 0 and len(act) < n // 2:
            # (2 gamma_A I + K[:, M] diag(w_M) E_M^T)^{-1} F by Woodbury, SPD capacitance
            sq = np.sqrt(w[act])
            cap = sq[:, None] * K[np.ix_(act, act)] * sq[None, :]
            cap[np.diag_indices_from(cap)] += 2.0 * gamma_a
            with small_blas(len(act) ** 3 / 3.0):
                inner = _solve_checked(cap, sq * F[act], "Newton-step capacitance matrix",
                                       assume_a="pos")
            step = (F - K[:, act] @ (sq * inner)) / (2.0 * gamma_a)
        else:
            A = np.diag(w)
            if gamma_i > 0:
                A = A + 2.0 * s_i * Qi.toarray()
            Jac = A @ K
            Jac[np.diag_indices_from(Jac)] += 2.0 * gamma_a
            with small_blas(2.0 * n**3 / 3.0):
                step = _solve_checked(Jac, F, "Newton-step Jacobian")
        rows = np.flatnonzero(held & labeled)
        out[pos[rows]] = K[rows] @ (alpha - step)
    return out


class NewtonStepMethod(_OneFitMethod):
    """Leave-fold-out by one Newton step of each fold's objective from the full fit.

    Not in the source papers: the second-order companion of the BIF (approximate CV by a Newton
    step; Beirami et al. 2017, Rad & Maleki 2020, Stephenson & Broderick 2020).  It is
    **exact** for quadratic objectives (KRR, LapRLS with the induced subgraph, mean form, the
    same hyper-parameters: equal to ``exact`` with ``graph_mode="induced"``) and 1.5-10x
    closer to exact CV than the first-order BIF for smooth, strictly convex losses such as
    the logistic loss.  **Not for losses with linear pieces** (Huber hinge): there the
    Newton model has only the 2 gamma_A curvature along points on the linear pieces and the
    step overshoots (use ``bif`` / ``fbif`` or ``exact``).  Cost: one Newton system per
    fold, a rank-m Woodbury update without a graph (m = points of non-zero curvature),
    a dense O(n^3) LU with a graph.  Dense backend only.

    Notes
    -----
    See :func:`fastgssl.cv._bif.newton_step_predictions` for the step.
    """

    name = "newton"
    takes_weights = True  # fold objectives with the loss weights each refit uses

    def _predict(self, state, folds, n_folds):
        if state.factor is not None:
            raise ValueError(
                "method='newton' needs the dense backend (backend='dense'); for the nystrom "
                "backend use method='bif' (its exact w-space BIF) or 'exact'."
            )
        Y, F, G, Hc, labeled, one_d = _fitted_state(state)
        K = _kernel_matrix(state)
        alpha = np.asarray(state.coef, dtype=np.float64)
        alpha = alpha[:, None] if alpha.ndim == 1 else alpha
        gamma_i = float(state.gamma_i or 0.0) if state.uses_graph else 0.0
        counted = labeled if state.sample_weight is None else \
            labeled & (np.asarray(state.sample_weight) > 0)
        linear = int(np.count_nonzero((G[counted] != 0) & (Hc[counted] == 0)))
        if linear:
            warnings.warn(
                f"method='newton': {linear} labeled point(s) sit on a linear piece of the "
                f"loss {state.loss.name!r} (non-zero slope, zero curvature); the Newton step "
                f"is unreliable there. Use method='bif', 'fbif' or 'exact'.",
                RuntimeWarning,
                stacklevel=4,
            )
        Qc = complement_regularizers(state, folds, n_folds)
        weights_for = None
        if state.sample_weight is not None:
            weights_for = refit_of(state).weights_for or (
                lambda kept: np.where(kept, state.sample_weight, 0.0))
        cols = [newton_step_predictions(K, alpha[:, k], G[:, k], Hc[:, k], labeled, folds,
                                        n_folds, float(state.gamma_a), gamma_i, Qc,
                                        weights_for=weights_for)
                for k in range(Y.shape[1])]
        pred = cols[0] if one_d else np.column_stack(cols)
        return pred, {"backend": "dense"}, {}
