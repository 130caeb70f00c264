"""t-BIF and t-FBIF: cross-validation by the Bouligand influence function from one fit.

Liu et al. (2018, 2019), with the corrected Hessian order and hinge sign.  ``"fbif"`` is
seed 001's t-FBIF as its section 4 writes it for the supervised learners (no margin mask in
the Nystrom Hessian, c = n / 10 sampled columns, exact right-hand sides);
``"fbif-margin"`` keeps the margin mask (DESIGN 3.3: the exact BIF when the margin points
are at most c, a masked Nystrom Hessian otherwise).
"""

from __future__ import annotations

import numpy as np

from fastgssl.cv._base import (
    _check_fitted,
    _fitted_state,
    _kernel_matrix,
    _OneFitMethod,
    fold_regularizers,
    landmark_factor,
)
from fastgssl.cv._bif import (
    bif_dense,
    bif_predictions,
    bif_wspace,
    fbif_dense,
    paper_curvature,
)

__all__ = ["BIFMethod", "FBIFMethod", "MarginFBIFMethod", "bif_of_fitted", "fbif_rank"]

_FBIF_METHODS = ("fbif", "fbif-margin")


def fbif_rank(n, n_components=None, paper=True):
    """Nystrom rank c of t-FBIF: ``n_components`` (at most n), else seed 001's c = n / 10
    (rounded up) for its supervised form, or ``min(n, 300)`` (graph and margin forms)."""
    if n_components is not None:
        if int(n_components) < 1:
            raise ValueError(f"n_components must be >= 1, got {n_components}.")
        return min(n, int(n_components))
    return max(1, -(-n // 10)) if paper else min(n, 300)


def bif_of_fitted(fitted, folds, n_folds, method="bif", n_components=None, random_state=0,
                  V=None, info=None):
    """BIF matrix of a fitted estimator: (n, t) for one output, (n, t, k) for k outputs.

    ``method="bif"``: dense H of Liu et al. 2019 (nystrom backend: exact w-space BIF).
    ``method="fbif"``: without a graph, seed 001's t-FBIF as written (section 4):
    ``H~ = 2 gamma_A I + (1/l) K~ diag(h~)`` with ``K~ = V V^T`` from ``n_components``
    sampled columns (default ``ceil(n / 10)``, the paper's c = 0.1 n), ``h~`` the loss
    curvature without the margin mask (:func:`fastgssl.cv._bif.paper_curvature`) and the
    exact kernel in the right-hand sides; with a graph, seed 000's form (labeled columns
    exact, Laplacian term low rank, default ``min(n, 300)`` columns).
    ``method="fbif-margin"``: the margin-masked form (DESIGN 3.3): an output whose loss has
    at most c points of non-zero curvature (Huber margin points) gets the exact rank-``|M|``
    Woodbury BIF, others the masked Nystrom Hessian (default ``min(n, 300)`` columns).
    ``V``: a given factor (an array, or a callable returning it, called only when a factor
    is needed).  Nystrom backend: the w-space BIF for every method.  ``info`` (a dict)
    receives the form used.
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
    elif method in _FBIF_METHODS:
        paper = method == "fbif" and gamma_i == 0
        c = fbif_rank(n, n_components, paper=paper)

        def factor():
            nonlocal V
            if V is None:
                V = landmark_factor(K, c, random_state)
            elif callable(V):  # a shared factor built on first use (the search object)
                V = V()
            return V

        K_lab = K[:, labeled] if gamma_i > 0 and labeled.sum() < n else None
        forms = []
        for k in range(Y.shape[1]):
            if paper:
                curv = paper_curvature(state.loss, Hc[:, k], labeled)
                out.append(fbif_dense(factor(), F[:, k], G[:, k], curv, labeled, folds,
                                      n_folds, gamma_a, K_rhs=K))
                forms.append("paper-nystrom")
                continue
            n_active = int(np.count_nonzero(Hc[labeled, k]))
            if gamma_i == 0 and n_active <= c:
                # Few curved points (Huber margin): the exact rank-|M| Woodbury update is
                # cheaper than rank c and has no Nystrom error.
                out.append(fbif_dense(np.empty((n, 0)), F[:, k], G[:, k], Hc[:, k], labeled,
                                      folds, n_folds, gamma_a, K_labeled=K[:, labeled]))
                forms.append("exact-active-set")
                continue
            out.append(fbif_dense(factor(), F[:, k], G[:, k], Hc[:, k], labeled, folds,
                                  n_folds, gamma_a, gamma_i, Q, Qs, K_labeled=K_lab))
            forms.append("nystrom-woodbury")
        if info is not None:
            info["form"] = sorted(set(forms))
            info["n_components"] = None if V is None or callable(V) else int(V.shape[1])
    else:
        raise ValueError(f"method must be 'bif', 'fbif' or 'fbif-margin', got {method!r}.")
    return out[0] if one_d else np.stack(out, axis=2)


class BIFMethod(_OneFitMethod):
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
    spectral_form = "bif"

    def bif_matrix(self, state, folds, n_folds):
        return bif_of_fitted(state, folds, n_folds, method="bif")

    def _predict(self, state, folds, n_folds):
        B = self.bif_matrix(state, folds, n_folds)
        f = np.asarray(state.f, dtype=np.float64)
        labeled = np.asarray(state.labeled, dtype=bool)
        backend = "nystrom-wspace" if state.factor is not None else "dense"
        return bif_predictions(f, B, labeled, folds, n_folds), {"backend": backend}, {}


class FBIFMethod(BIFMethod):
    """t-FBIF of seed 001 (Liu et al. 2018, section 4) as written: the BIF with the Nystrom
    kernel in its Hessian, solved by the Woodbury identity.

    Parameters
    ----------
    n_components : int or None
        Number of uniformly sampled kernel columns c (default: the paper's c = n / 10,
        rounded up, without a graph; ``min(n, 300)`` with one).
    random_state : int, RandomState or None
        Landmark sampling.

    Notes
    -----
    Supervised (gamma_I = 0), the paper's ``L~``:
    ``H~ = 2 gamma_A I + (1/n) K~ diag(h~)``, ``K~ = V V^T``, with ``h~`` the loss curvature
    on *every* point (``1/(2h)`` for the Huber hinge: section 4 drops the margin mask
    ``I^0`` that its section 3.3 has; :func:`fastgssl.cv._bif.paper_curvature`), and the
    right-hand sides ``r_i = -2 gamma_A f - (1/m) K[:, S_i] g[S_i]`` with the exact kernel
    (the paper replaces only L).  The sign of the loss term is Theorem 1's; the paper's
    hinge formula prints ``+``, which contradicts its Theorem 1 and its own square-loss case
    (DESIGN 3.2).  With c = n and the square loss this is the exact BIF; with the Huber
    hinge it is not (no mask): :class:`MarginFBIFMethod` is the masked form.

    Like every first-order criterion it collapses to the training error for nearly
    interpolating models (small lam and sigma): see the user guide ("Why t-FBIF selects
    the interpolating corner") and :class:`fastgssl.cv.GridSearchCV` (``verify``).

    Semi-supervised: seed 000's form (labeled columns exact, the Laplacian term low rank:
    rank l_h + c).  The nystrom backend uses its exact w-space BIF.  ``kernel="precomputed"``
    samples columns of the given Gram matrix.
    """

    name = "fbif"
    spectral_form = "fbif"
    shares_factor = True
    takes_search_options = True
    paper_rank = True

    def __init__(self, n_components=None, random_state=0):
        self.n_components = n_components
        self.random_state = random_state

    def bif_matrix(self, state, folds, n_folds, V=None):
        return bif_of_fitted(state, folds, n_folds, method=self.name,
                             n_components=self.n_components, random_state=self.random_state,
                             V=V)

    def _predict(self, state, folds, n_folds, V=None):
        if state.factor is not None:
            info = {"backend": "nystrom-wspace", "rank": state.factor.shape[1]}
        else:
            info = {"backend": "dense"}
        B = bif_of_fitted(state, folds, n_folds, method=self.name,
                          n_components=self.n_components, random_state=self.random_state,
                          V=V, info=info)
        f = np.asarray(state.f, dtype=np.float64)
        labeled = np.asarray(state.labeled, dtype=bool)
        return bif_predictions(f, B, labeled, folds, n_folds), info, {}


class MarginFBIFMethod(FBIFMethod):
    """t-FBIF with the margin mask (DESIGN 3.3): a closer approximation of the BIF.

    Parameters
    ----------
    n_components : int or None
        Number of sampled kernel columns c (default ``min(n, 300)``); with c = n the result
        equals :class:`BIFMethod` to round-off.
    random_state : int, RandomState or None
        Landmark sampling.

    Notes
    -----
    Supervised (gamma_I = 0): ``H~ = 2 gamma_A I + V Z`` with ``Z = (1/l) V^T diag(h)``, h
    non-zero only on margin points for the Huber hinge; when those are at most c the exact
    rank-``|M|`` Woodbury update (the exact BIF) is used instead.  The right-hand sides use
    ``V V^T``.  Semi-supervised: as :class:`FBIFMethod`.  This was ``"fbif"`` before seed 001's
    form was implemented as written; it ranks like :class:`BIFMethod` at the cost of a rank-c
    update, and like every first-order criterion it is optimistic for nearly interpolating
    models.
    """

    name = "fbif-margin"
    spectral_form = "fbif-margin"
    paper_rank = False
