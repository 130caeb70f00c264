"""Exact t-fold CV of the square loss from one factorization (sum-of-losses form)."""

from __future__ import annotations

import numpy as np

from fastgssl.cv._base import _kernel_matrix, _OneFitMethod
from fastgssl.cv._bif import (
    exact_quadratic_predictions,
    exact_quadratic_wspace,
)

__all__ = ["ExactQuadraticCV"]


class ExactQuadraticCV(_OneFitMethod):
    """Exact t-fold CV of the square loss at the cost of one fit (the block identity).

    Notes
    -----
    Sum-of-losses form: the fold-i model minimizes
    ``sum_{L minus L_i} (y_j - f_j)^2 + mu_A ||f||^2 + mu_I f^T Q f`` with
    ``mu_A = l gamma_A`` and ``mu_I = l gamma_I / n^2`` held fixed across folds (as
    scikit-learn's ``KernelRidge(alpha=mu_A)``); in the papers' mean form this is a refit with
    ``gamma_A l / (l - m_i)``.  Held-out residuals of fold i are
    ``(I - H_ii)^{-1} (y_i - f_i)`` with the hat matrix H; supervised: ``y_i - f_i^{(-i)} =
    C_ii^{-1} alpha_i``, ``C = (K + mu_A I)^{-1}``.  Semi-supervised (LapRLS) the held-out
    labeled points stay in the graph as unlabeled points (``graph_mode`` says so).  Only the
    square loss is allowed.
    """

    name = "exact-quadratic"
    protocols = ("transductive",)
    is_exact = True

    def _predict(self, state, folds, n_folds):
        name = getattr(state.loss, "name", None)
        if name != "square":
            raise ValueError(
                f"method='exact-quadratic' needs the square loss, the estimator uses "
                f"{name!r}; use method='exact', 'bif' or 'fbif'."
           )
        labeled = np.asarray(state.labeled, dtype=bool)
        l = int(labeled.sum())
        n = len(labeled)
        gamma_i = float(state.gamma_i or 0.0)
        use_graph = state.uses_graph
        mu_a = l * float(state.gamma_a)
        mu_i = l * gamma_i / n**2 if use_graph else 0.0
        Q = state.regularizer if use_graph else None
        y = np.asarray(state.y, dtype=np.float64)
        nys = state.factor
        if nys is not None:
            pred = exact_quadratic_wspace(np.asarray(nys), y, labeled, folds, n_folds, mu_a,
                                          mu_i, Q)
            backend = "nystrom-wspace"
        else:
            pred = exact_quadratic_predictions(_kernel_matrix(state), y, labeled, folds,
                                               n_folds, mu_a, mu_i, Q)
            backend = "dense"
        extra = {"form": "sum"}
        if use_graph:
            extra["graph_mode"] = "held-out points kept as unlabeled"
        return pred, {"backend": backend, "mu_a": mu_a, "mu_i": mu_i}, extra
