"""t-BIF and t-FBIF: cross-validation by the Bouligand influence function from one fit.

Liu et al. (2018, 2019), with the corrected Hessian order, hinge sign and margin mask.
"""

from __future__ import annotations

import numpy as np

from fastgssl.cv._base import (
    _check_fitted,
    _fitted_state,
    _kernel_matrix,
    _landmark_factor,
    _OneFitMethod,
    fold_regularizers,
)
from fastgssl.cv._bif import (
    bif_dense,
    bif_predictions,
    bif_wspace,
    fbif_dense,
)

__all__ = ["BIF", "FBIF", "bif_of_fitted"]


def bif_of_fitted(fitted, folds, n_folds, method="bif", n_components=None, random_state=0,
                  V=None, info=None):
    """BIF matrix of a fitted estimator: (n, t) for one output, (n, t, k) for k outputs.

    ``method="bif"``: dense H of Liu et al. 2019 (nystrom backend: exact w-space BIF);
    ``method="fbif"``: Nystrom + Woodbury (Liu et al. 2018), ``n_components`` sampled columns
    (default: ``min(n, 300)``), or a given factor ``V`` (an array, or a callable returning
    it, called only when a factor is needed); nystrom backend: w-space BIF.
    Without a graph, an output whose loss has at most c points of non-zero curvature (Huber
    margin points) gets the exact rank-|M| Woodbury BIF instead (cheaper, no Nystrom error).
    ``info`` (a dict) receives the form used.
    """
    state = _check_fitted(fitted)
    Y, F, G, Hc, labeled, one_d = _fitted_state(state)
    n = len(labeled)
    gamma_a = float(state.gamma_a)
    gamma_i = float(state.gamma_i or 0.0)
    Q = state.regularizer if gamma_i > 0 else None
    if gamma_i > 0 and Q is None:
        raise ValueError("the learner has gamma_i > 0 but no regularizer in its CVState.")
    Qs = fold_regularizers(state, folds, n_folds)
    if not state.uses_graph:
        gamma_i = 0.0
    nys = state.factor
    K = None if nys is not None else _kernel_matrix(state)
    out = []
    if K is None:  # nystrom backend: exact BIF of the linear model in the c features
        Vn = np.asarray(nys, dtype=np.float64)
        Wc = np.asarray(state.coef, dtype=np.float64)
        Wc = Wc[:, None] if Wc.ndim == 1 else Wc
        for k in range(Y.shape[1]):
            out.append(bif_wspace(Vn, Wc[:, k], G[:, k], Hc[:, k], labeled, folds, n_folds,
                                  gamma_a, gamma_i, Q, Qs))
    elif method == "bif":
        for k in range(Y.shape[1]):
            out.append(bif_dense(K, F[:, k], G[:, k], Hc[:, k], labeled, folds, n_folds,
                                 gamma_a, gamma_i, Q, Qs))
    elif method == "fbif":
        c = min(n, 300 if n_components is None else int(n_components))
        K_lab = K[:, labeled] if gamma_i > 0 and labeled.sum() < n else None
        forms = []
        for k in range(Y.shape[1]):
            n_active = int(np.count_nonzero(Hc[labeled, k]))
            if gamma_i == 0 and n_active <= c:
                # Few curved points (Huber margin): the exact rank-|M| Woodbury update is
                # cheaper than rank c and has no Nystrom error.
                out.append(fbif_dense(np.empty((n, 0)), F[:, k], G[:, k], Hc[:, k], labeled,
                                      folds, n_folds, gamma_a, K_labeled=K[:, labeled]))
                forms.append("exact-active-set")
                continue
            if V is None:
                V = _landmark_factor(state, K, c, random_state)
            elif callable(V):  # a shared factor built on first use (the search object)
                V = V()
            out.append(fbif_dense(V, F[:, k], G[:, k], Hc[:, k], labeled, folds, n_folds,
                                  gamma_a, gamma_i, Q, Qs, K_labeled=K_lab))
            forms.append("nystrom-woodbury")
        if info is not None:
            info["form"] = sorted(set(forms))
            info["n_components"] = None if V is None or callable(V) else int(V.shape[1])
    else:
        raise ValueError(f"method must be 'bif' or 'fbif', got {method!r}.")
    return out[0] if one_d else np.stack(out, axis=2)


class BIF(_OneFitMethod):
    """t-fold CV by the Bouligand influence function from one fit (Liu et al. 2019).

    Parameters
    ----------
    None (the exact dense BIF; the nystrom backend uses its exact w-space BIF).

    Notes
    -----
    ``f_{-i}(x_j) ~ f_j + eps_i B[j, i]`` for the labeled points of fold i, with
    ``eps_i = -m_i / (l - m_i)`` (``-1/(t-1)`` for equal folds) and
    ``B = H^{-1} [r_1 .. r_t]``.  Semi-supervised: ``L_{S_i}`` is the regularizer of the
    subgraph induced on S_i (``graph_mode = "induced"``).  Cost O(n^3 + t n^2) dense,
    O(n c^2 + nnz(L) c + t n c) for the nystrom backend.
    """

    name = "bif"

    def bif_matrix(self, state, folds, n_folds):
        return bif_of_fitted(state, folds, n_folds, method="bif")

    def _predict(self, state, folds, n_folds):
        B = self.bif_matrix(state, folds, n_folds)
        f = np.asarray(state.f, dtype=np.float64)
        labeled = np.asarray(state.labeled, dtype=bool)
        backend = "nystrom-wspace" if state.factor is not None else "dense"
        return bif_predictions(f, B, labeled, folds, n_folds), {"backend": backend}, {}


class FBIF(BIF):
    """t-FBIF: the BIF with a Nystrom low-rank kernel and the Woodbury identity (Liu et al. 2018).

    Parameters
    ----------
    n_components : int or None
        Number of sampled kernel columns c (default ``min(n, 300)``); with c = n the result
        equals :class:`BIF` to round-off.
    random_state : int, RandomState or None
        Landmark sampling.

    Notes
    -----
    Supervised (gamma_I = 0): ``H~ = 2 gamma_A I + V Z`` with ``Z = (1/l) V^T diag(h)``, h
    non-zero only on margin points for the Huber hinge.  Semi-supervised: labeled columns
    exact and the Laplacian term low rank (rank l_h + c).  For the nystrom backend the
    w-space BIF is already exact and cheap, and is used as is.  ``kernel="precomputed"``
    samples columns of the given Gram matrix.
    """

    name = "fbif"

    def __init__(self, n_components=None, random_state=0):
        self.n_components = n_components
        self.random_state = random_state

    def bif_matrix(self, state, folds, n_folds, V=None):
        return bif_of_fitted(state, folds, n_folds, method="fbif",
                             n_components=self.n_components, random_state=self.random_state,
                             V=V)

    def _predict(self, state, folds, n_folds, V=None):
        info = {}
        if state.factor is not None:
            info = {"backend": "nystrom-wspace", "rank": state.factor.shape[1]}
        else:
            info = {"backend": "dense"}
        B = bif_of_fitted(state, folds, n_folds, method="fbif", n_components=self.n_components,
                          random_state=self.random_state, V=V, info=info)
        f = np.asarray(state.f, dtype=np.float64)
        labeled = np.asarray(state.labeled, dtype=bool)
        return bif_predictions(f, B, labeled, folds, n_folds), info, {}
