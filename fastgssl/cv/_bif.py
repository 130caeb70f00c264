"""Bouligand-influence-function (BIF) matrices on raw arrays (t-BIF and t-FBIF).

Implements, with corrected formulas,

* Liu, Li, Wu, Ding, Wang (2019): *Efficient Cross-Validation for Semi-Supervised Learning*
  (t-BIF / t-FBIF for LapRLS and LapSVM), and
* Liu, Lin, Ding, Wang, Liao (2018): *Fast Cross-Validation*, IJCAI (t-BIF / t-FBIF for
  KRR / LSSVM and the Huber-smoothed SVM).

Everything here works on plain arrays (kernel matrix or Nystrom features, fitted values,
loss derivatives, sparse regularizers); :mod:`fastgssl.cv._base` pulls these out of a
learner's :class:`fastgssl.CVState`.  The learner is

    min_f  (1/l) sum_{j in L} ell(y_j, f_j) + gamma_A ||f||_K^2 + s f^T Q f,   s = gamma_I / n^2

and the BIF of fold i is ``B[:, i] = d f_eps / d eps`` at ``eps = 0`` for the contaminated
objective J_eps.  The papers print ``J K F`` in the Hessian and flip the sign of the hinge
term (2018); both are corrected here and checked against finite-difference refits in
``tests/test_bif.py``.  The exact quadratic CV lives in :mod:`fastgssl.cv._quadratic`, the
Newton step in :mod:`fastgssl.cv._newton`.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

__all__ = [
    "bif_dense",
    "bif_predictions",
    "bif_wspace",
    "fbif_dense",
    "fold_epsilons",
    "fold_rhs_weights",
    "paper_curvature",
    "woodbury_solve",
]


def _as_operator(Q):
    """Return Q as a CSR matrix (or None)."""
    if Q is None:
        return None
    return sp.csr_matrix(Q) if not sp.issparse(Q) else Q.tocsr()


def fold_epsilons(labeled, folds, n_folds):
    """Contamination weights eps_i = -m_i / (l - m_i) (= -1/(t-1) for equal folds).

    With these weights the contaminated distribution of Liu et al. 2019 is the empirical
    distribution of the labeled points outside fold i.
    """
    m = np.bincount(folds[labeled], minlength=n_folds).astype(float)
    l = float(labeled.sum())
    return -m / (l - m)


def fold_rhs_weights(f, g, labeled, folds, n_folds, gamma_i=0.0, fold_regularizers=None):
    """Matrix G (n x t) with r_i = -2 gamma_A f - K G[:, i] (Liu et al. 2019).

    Column i holds ``g_j / m_i`` on the labeled points of fold i and
    ``2 s_i (Q_{S_i} f[S_i])`` on S_i, with ``s_i = gamma_I / |S_i|^2`` and ``Q_{S_i}`` the
    regularizer of the subgraph induced on S_i (``fold_regularizers[i]``).

    Returns
    -------
    G_loss, G_lap : ndarray of shape (n, t)
        The loss part (non-zero on labeled points only) and the Laplacian part.
    """
    n = len(f)
    G_loss = np.zeros((n, n_folds))
    G_lap = np.zeros((n, n_folds))
    for i in range(n_folds):
        in_fold = folds == i
        li = in_fold & labeled
        G_loss[li, i] = g[li] / li.sum()
        if gamma_i > 0:
            Si = np.flatnonzero(in_fold)
            Qi = _as_operator(fold_regularizers[i])
            s_i = gamma_i / len(Si) ** 2
            G_lap[Si, i] = 2.0 * s_i * (Qi @ f[Si])
    return G_loss, G_lap


def _hessian_weights(h, labeled, l):
    """Loss curvature h_j / l on labeled points, 0 on unlabeled ones."""
    return np.where(labeled, h, 0.0) / l


def bif_dense(K, f, g, h, labeled, folds, n_folds, gamma_a, gamma_i=0.0, Q=None,
              fold_regularizers=None):
    """Exact BIF matrix B (n x t) of the dense kernel model (Liu et al. 2019).

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Kernel matrix of the training points.
    f : ndarray of shape (n,)
        Fitted values at the training points.
    g, h : ndarray of shape (n,)
        First and second derivative of the loss in f at (y_j, f_j) (ignored off L).
    labeled : ndarray of bool of shape (n,)
    folds : ndarray of int of shape (n,)
        Fold id 0..t-1 of every point.
    n_folds : int
    gamma_a, gamma_i : float
        Regularization weights; ``s = gamma_i / n^2``.
    Q : sparse matrix of shape (n, n), optional
        Regularizer (L, L_norm, L^p) of the whole graph; needed when ``gamma_i > 0``.
    fold_regularizers : list of sparse matrices, optional
        Regularizer of the subgraph induced on each S_i (``gamma_i > 0``).

    Returns
    -------
    B : ndarray of shape (n, t)

    Notes
    -----
    ``H = 2 gamma_A I + K (diag(h)/l + 2 s Q)`` (not symmetric) and
    ``r_i = -2 gamma_A f - (1/m_i) K[:, L_i] g[L_i] - 2 s_i K[:, S_i] Q_{S_i} f[S_i]``;
    ``B = H^{-1} [r_1 .. r_t]`` with one LU factorization: O(n^3 + t n^2).  Without a graph
    and with fewer than n/2 points of non-zero curvature (the Huber hinge's margin points M)
    H is a rank-|M| update of ``2 gamma_A I`` and is solved exactly by the Woodbury identity
    in O(n |M|^2 + |M|^3 + t n l).
    """
    n = len(f)
    l = int(labeled.sum())
    hw = _hessian_weights(h, labeled, l)
    if gamma_i == 0 and np.count_nonzero(hw) < n // 2:
        # Supervised with few curved points (Huber margin points): H = 2 gamma_A I +
        # K[:, M] diag(h_M)/l E_M^T is a rank-|M| update, solved exactly by Woodbury.
        return fbif_dense(np.empty((n, 0)), f, g, h, labeled, folds, n_folds, gamma_a,
                          K_labeled=K[:, labeled])
    A = np.diag(hw)
    if gamma_i > 0:
        s = gamma_i / n**2
        A = A + 2.0 * s * _as_operator(Q).toarray()
    H = K @ A
    H[np.diag_indices_from(H)] += 2.0 * gamma_a
    G_loss, G_lap = fold_rhs_weights(f, g, labeled, folds, n_folds, gamma_i, fold_regularizers)
    R = -2.0 * gamma_a * f[:, None] - K @ (G_loss + G_lap)
    return _solve_checked(H, R, "BIF Hessian H")


def _solve_checked(H, R, what, assume_a="gen"):
    """Solve H X = R; warn (with scipy's condition estimate) when H is nearly singular."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", sla.LinAlgWarning)
        X = sla.solve(H, R, assume_a=assume_a, check_finite=False)
    for w in caught:
        if issubclass(w.category, sla.LinAlgWarning):
            _warn_ill_conditioned(what, str(w.message), stacklevel=4)
            break
    return X


def _warn_ill_conditioned(what, detail, stacklevel=3):
    warnings.warn(
        f"{what} is ill-conditioned ({detail}); the result may be inaccurate. "
        f"Increase the regularization (gamma_a / lam).",
        RuntimeWarning,
        stacklevel=stacklevel,
    )


def woodbury_solve(shift, X, Z, R):
    """Solve ``(shift I + X Z) Y = R`` by the Woodbury identity.

    ``Y = (1/shift) [R - X (shift I_q + Z X)^{-1} Z R]``; X is (n, q), Z is (q, n) given as a
    pair ``(Z X, Z R)`` or as an array.  Cost O(n q^2 + q^3) instead of O(n^3).

    Parameters
    ----------
    shift : float
    X : ndarray of shape (n, q)
    Z : ndarray of shape (q, n) or tuple (ZX, ZR)
    R : ndarray of shape (n, k)
    """
    if isinstance(Z, tuple):
        ZX, ZR = Z
    else:
        ZX, ZR = Z @ X, Z @ R
    q = ZX.shape[0]
    small = ZX + shift * np.eye(q)
    inner = _solve_checked(small, ZR, "Woodbury capacitance matrix")
    return (R - X @ inner) / shift


def paper_curvature(loss, h, labeled):
    """Loss curvature of seed 001's t-FBIF: ``ell''`` with the margin mask dropped.

    Seed 001 (section 4) writes ``L~ = 2 lam I + (1/(2 h n)) K~`` for the Huber hinge: the
    curvature ``1/(2h)`` of the quadratic piece on *every* point, where its exact operator
    (section 3.3) keeps it on the margin points only.  For a piecewise-quadratic loss (not
    ``spec.smooth``, with ``spec.kinks``) this returns the largest curvature of its pieces
    on every labeled point (``1/(2h)`` for ``huber_hinge``, 2 for ``squared_hinge``); for a
    smooth loss (square, logistic) the actual ``h`` (the square loss's constant 2 is the
    paper's ``lam I + K / n`` up to the factor 2).

    Parameters
    ----------
    loss : fastgssl.losses.Loss
    h : ndarray of shape (n,)
        ``ell''`` at the fitted values.
    labeled : ndarray of bool of shape (n,)
    """
    spec = getattr(loss, "spec", None)
    kinks = getattr(spec, "kinks", None)
    if spec is None or spec.smooth or kinks is None:
        return h
    knots = sorted(float(k) for k in kinks(loss.params))
    # one margin (or residual) inside each piece between and beyond the kinks
    probes = ([knots[0] - 1.0] + [(a + b) / 2 for a, b in zip(knots, knots[1:])]
              + [knots[-1] + 1.0])
    probes = np.asarray(probes, dtype=np.float64)
    if spec.y_domain == "binary":  # margins z = y f with y = +1
        curv = loss.d2(np.ones_like(probes), probes)
    else:  # residuals f - y with y = 0
        curv = loss.d2(np.zeros_like(probes), probes)
    return np.where(labeled, float(np.max(curv)), 0.0)


def fbif_dense(V, f, g, h, labeled, folds, n_folds, gamma_a, gamma_i=0.0, Q=None,
               fold_regularizers=None, K_labeled=None, K_rhs=None):
    """t-FBIF matrix (n x t): the BIF with K replaced by a Nystrom factor V V^T (Liu et al. 2018).

    Parameters
    ----------
    V : ndarray of shape (n, c)
        Nystrom factor of the kernel matrix.
    K_labeled : ndarray of shape (n, l), optional
        Exact kernel columns of the labeled points, ``K[:, labeled]``.  When given (the
        semi-supervised form of Liu et al. (2019)) the loss term of H and of the right-hand sides
        is exact and only the Laplacian term is low rank: rank q = l_h + c, with l_h the
        labeled points of non-zero curvature; otherwise (Liu et al. (2018), supervised) q = c.
    K_rhs : ndarray of shape (n, n), optional
        Supervised only: the exact kernel matrix for the right-hand sides, as seed 001
        writes them (``(K o C_i) / m``: only H is replaced by its Nystrom form); otherwise
        the right-hand sides use ``V V^T`` too.
    Other parameters : as :func:`bif_dense`.

    Notes
    -----
    ``H~ = 2 gamma_A I + X Z`` is solved by :func:`woodbury_solve`:

    * low-rank form: ``X = V``, ``Z = V^T (diag(h)/l + 2 s Q)``;
    * labeled-exact form: ``X = [K[:, L_h] diag(h_{L_h})/l, V]``,
      ``Z = [E_{L_h}^T ; 2 s V^T Q]``.

    Only labeled points with h != 0 enter (for the Huber hinge: the margin points
    |1 - y f| < h; Liu et al. (2018) drops this mask, which is wrong).  Right-hand sides never form
    K: ``K G = V (V^T G)`` (labeled part exact when ``K_labeled`` is given).  Cost
    O(n q^2 + q^3 + t n c + nnz(Q) c).
    """
    n, _ = V.shape
    l = int(labeled.sum())
    hw = _hessian_weights(h, labeled, l)
    s = gamma_i / n**2 if gamma_i > 0 else 0.0
    Qop = _as_operator(Q) if gamma_i > 0 else None
    G_loss, G_lap = fold_rhs_weights(f, g, labeled, folds, n_folds, gamma_i, fold_regularizers)
    if K_labeled is not None:
        lab_idx = np.flatnonzero(labeled)
        KG = K_labeled @ G_loss[lab_idx] + V @ (V.T @ G_lap)
    elif K_rhs is not None:
        if s > 0:
            raise ValueError("K_rhs is the supervised form (gamma_i = 0) only.")
        KG = K_rhs @ G_loss
    else:
        KG = V @ (V.T @ (G_loss + G_lap))
    R = -2.0 * gamma_a * f[:, None] - KG
    if K_labeled is not None:
        lab_idx = np.flatnonzero(labeled)
        active = hw[lab_idx] != 0
        act_idx = lab_idx[active]
        if s > 0:
            X1 = K_labeled[:, active] * hw[act_idx]  # K[:, L_h] diag(h)/l
            QV = 2.0 * s * (Qop @ V)  # (2 s Q V), so 2 s V^T Q = QV^T (Q symmetric)
            X = np.hstack([X1, V])
            ZX = np.block([[X1[act_idx], V[act_idx]], [QV.T @ X1, QV.T @ V]])
            ZR = np.vstack([R[act_idx], QV.T @ R])
        else:
            if len(act_idx) == 0:
                return R / (2.0 * gamma_a)
            # symmetric form of the capacitance matrix: with S = diag(h_M / l)^(1/2),
            # (2 gamma_A I + K_MM S^2)^{-1} = S^{-1} (2 gamma_A I + S K_MM S)^{-1} S (SPD)
            sq = np.sqrt(hw[act_idx])
            KM = K_labeled[:, active]
            cap = sq[:, None] * KM[act_idx] * sq[None, :]
            cap[np.diag_indices_from(cap)] += 2.0 * gamma_a
            inner = _solve_checked(cap, sq[:, None] * R[act_idx], "Woodbury capacitance matrix",
                                   assume_a="pos")
            return (R - KM @ (sq[:, None] * inner)) / (2.0 * gamma_a)
        return woodbury_solve(2.0 * gamma_a, X, (ZX, ZR), R)
    # low-rank form: Z = V^T diag(hw) + 2 s V^T Q
    Zt = V * hw[:, None]
    if s > 0:
        Zt = Zt + 2.0 * s * (Qop @ V)
    return woodbury_solve(2.0 * gamma_a, V, (Zt.T @ V, Zt.T @ R), R)


def bif_wspace(V, w, g, h, labeled, folds, n_folds, gamma_a, gamma_i=0.0, Q=None,
               fold_regularizers=None):
    """Exact BIF (n x t) of the Nystrom-backend model f = V w (Liu et al. 2018, w-space).

    Takes the parameters of :func:`bif_dense`, with the model given by its Nystrom features
    ``V`` (ndarray of shape (n, c), of the training points) and fitted coefficients ``w``
    (ndarray of shape (c,); ``f = V w``) in place of ``K`` and ``f``.

    Notes
    -----
    ``H_w = (1/l) V_L^T diag(h) V_L + 2 gamma_A I + 2 s V^T Q V`` (c x c, symmetric
    positive definite) and
    ``w_dot_i = -H_w^{-1} [2 gamma_A w + (1/m_i) V[L_i]^T g[L_i]
    + 2 s_i V[S_i]^T Q_{S_i} f[S_i]]``; ``B[:, i] = V w_dot_i``.
    Cost O(n c^2 + nnz(Q) c + t n c); never n x n.
    """
    n, c = V.shape
    l = int(labeled.sum())
    hw = _hessian_weights(h, labeled, l)
    f = V @ w
    Hw = V.T @ (V * hw[:, None])
    if gamma_i > 0:
        s = gamma_i / n**2
        Hw += 2.0 * s * (V.T @ (_as_operator(Q) @ V))
    Hw[np.diag_indices_from(Hw)] += 2.0 * gamma_a
    Hw = 0.5 * (Hw + Hw.T)
    G_loss, G_lap = fold_rhs_weights(f, g, labeled, folds, n_folds, gamma_i, fold_regularizers)
    rhs = -(2.0 * gamma_a * w[:, None] + V.T @ (G_loss + G_lap))
    Wdot = _solve_checked(Hw, rhs, "w-space BIF Hessian H_w", assume_a="pos")
    return V @ Wdot


def bif_predictions(f, B, labeled, folds, n_folds):
    """t-BIF out-of-fold predictions ``f_j + eps_i B[j, i]`` of the labeled points.

    Parameters
    ----------
    f : ndarray of shape (n,) or (n, k)
    B : ndarray of shape (n, t) or (n, t, k)

    Returns
    -------
    ndarray of shape (l,) or (l, k)
        One row per labeled point, in the order of ``np.flatnonzero(labeled)``.
    """
    eps = fold_epsilons(labeled, folds, n_folds)
    idx = np.flatnonzero(labeled)
    fi = folds[idx]
    return f[idx] + eps[fi].reshape((-1,) + (1,) * (f.ndim - 1)) * B[idx, fi]
