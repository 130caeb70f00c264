"""Bouligand-influence-function (BIF) matrices and exact quadratic CV on raw arrays.

Implements the corrected formulas of Liu et al. 2018-2019, corrected for the papers

* Liu, Li, Wu, Ding, Wang: *Efficient Cross-Validation for Semi-Supervised Learning*
  (Liu et al. (2019): t-BIF / t-FBIF for LapRLS and LapSVM), and
* Liu, Lin, Ding, Wang, Liao: *Fast Cross-Validation*, IJCAI 2018 (Liu et al. (2018): t-BIF /
  t-FBIF for KRR / LSSVM and the Huber-smoothed SVM),

plus the exact t-fold CV of the square loss from one factorization (block hat-matrix
identity; An, Liu & Venkatesh 2007; LS-SVMlab ``crossvalidatelssvm``).

Everything here works on plain arrays (kernel matrix or Nystrom features, fitted values,
loss derivatives, sparse regularizers); :mod:`fastgssl.cv._base` pulls these out of
fitted estimators.  The learner is

    min_f  (1/l) sum_{j in L} ell(y_j, f_j) + gamma_A ||f||_K^2 + s f^T Q f,   s = gamma_I / n^2

and the BIF of fold i is ``B[:, i] = d f_eps / d eps`` at ``eps = 0`` for the contaminated
objective J_eps of Liu et al. 2019.  The seeds print ``J K F`` in the Hessian and flip the sign of
the hinge term (Liu et al. (2018)); both are corrected here and checked against finite-difference
refits in ``tests/test_bif.py``.
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
    "exact_quadratic_eigh",
    "exact_quadratic_predictions",
    "exact_quadratic_wspace",
    "fbif_dense",
    "fold_epsilons",
    "fold_rhs_weights",
    "newton_step_predictions",
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


def fbif_dense(V, f, g, h, labeled, folds, n_folds, gamma_a, gamma_i=0.0, Q=None,
               fold_regularizers=None, K_labeled=None):
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

    Parameters
    ----------
    V : ndarray of shape (n, c)
        Nystrom features of the training points.
    w : ndarray of shape (c,)
        Fitted coefficients; ``f = V w``.
    Other parameters : as :func:`bif_dense`.

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


def exact_quadratic_predictions(K, y, labeled, folds, n_folds, mu_a, mu_i=0.0, Q=None):
    """Exact t-fold CV of the square loss from one factorization (sum form).

    The learner is ``min_f sum_{j in L} (y_j - f_j)^2 + mu_a ||f||_K^2 + mu_i f^T Q f``
    (the mean form of the papers' objective times l: ``mu_a = l gamma_A``,
    ``mu_i = l gamma_I / n^2``).
    Fold i refits with the labeled points of L_i removed from the loss and the same mu_a,
    mu_i; the points stay in the graph as unlabeled points (no effect when mu_i = 0, where
    the refit equals a fit on the remaining points).

    Parameters
    ----------
    K : ndarray of shape (n, n)
    y : ndarray of shape (n,) or (n, k)
        Targets (any value off L).
    labeled, folds, n_folds : see :func:`bif_dense`.
    mu_a, mu_i : float
    Q : sparse matrix, optional

    Returns
    -------
    ndarray of shape (l,) or (l, k)
        Held-out predictions of the labeled points, in the order of
        ``np.flatnonzero(labeled)``.

    Notes
    -----
    With the hat matrix ``H = K (J K + mu_a I + mu_i Q K)^{-1} J`` the held-out residuals of
    fold i are ``(I - H_ii)^{-1} (y_i - f_i)`` (Woodbury on the rank-m_i change of J).  For
    ``mu_i = 0`` this is ``y_i - C_ii^{-1} alpha_i`` with ``C = (K_LL + mu_a I)^{-1}`` and
    ``alpha = C y_L`` (the block identity), computed by one Cholesky factorization.
    """
    lab_idx = np.flatnonzero(labeled)
    yl = np.asarray(y, dtype=float)[lab_idx]
    fl = folds[lab_idx]
    if mu_i == 0:
        KLL = K[np.ix_(lab_idx, lab_idx)].copy()
        KLL[np.diag_indices_from(KLL)] += mu_a
        try:
            cho = sla.cho_factor(KLL, lower=True, check_finite=False)
        except np.linalg.LinAlgError:
            raise ValueError(
                "K + mu I is not positive definite; check the kernel or increase the "
                "regularization."
           ) from None
        alpha = sla.cho_solve(cho, yl, check_finite=False)
        C = sla.cho_solve(cho, np.eye(len(lab_idx)), check_finite=False)
        return _block_heldout(yl, alpha, C, fl, n_folds, mode="inverse")
    n = K.shape[0]
    A = np.zeros((n, n))
    A[lab_idx] = K[lab_idx]
    A += mu_i * (_as_operator(Q) @ K)
    A[np.diag_indices_from(A)] += mu_a
    E = np.zeros((n, len(lab_idx)))
    E[lab_idx, np.arange(len(lab_idx))] = 1.0
    Xs = _solve_checked(A, E, "LapRLS system matrix")
    H_LL = K[lab_idx] @ Xs
    f_l = H_LL @ yl
    return _block_heldout(yl, f_l, H_LL, fl, n_folds, mode="hat")


def exact_quadratic_wspace(V, y, labeled, folds, n_folds, mu_a, mu_i=0.0, Q=None):
    """Exact t-fold CV (sum form) of the square-loss model f = V w in c Nystrom features.

    ``(V_L^T V_L + mu_a I + mu_i V^T Q V) w = V_L^T y_L``; the hat block
    ``H_LL = V_L M^{-1} V_L^T`` gives the held-out residuals ``(I - H_ii)^{-1} (y_i - f_i)``
    as in :func:`exact_quadratic_predictions`.  Cost O(n c^2 + nnz(Q) c + l^2 c).
    """
    lab_idx = np.flatnonzero(labeled)
    yl = np.asarray(y, dtype=float)[lab_idx]
    VL = V[lab_idx]
    M = VL.T @ VL
    if mu_i:
        P = V.T @ (_as_operator(Q) @ V)
        M += mu_i * 0.5 * (P + P.T)
    M[np.diag_indices_from(M)] += mu_a
    H_LL = VL @ _solve_checked(M, VL.T, "Nystrom normal matrix", assume_a="pos")
    return _block_heldout(yl, H_LL @ yl, H_LL, folds[lab_idx], n_folds, mode="hat")


def _block_heldout(yl, v, M, fl, n_folds, mode):
    """Held-out predictions fold by fold from the full fit.

    ``mode="inverse"``: ``v = alpha``, ``M = C``: ``y_i - C_ii^{-1} alpha_i``.
    ``mode="hat"``: ``v = f``, ``M = H``: ``y_i - (I - H_ii)^{-1} (y_i - f_i)``.
    """
    out = np.empty_like(yl)
    for i in range(n_folds):
        idx = np.flatnonzero(fl == i)
        Mii = M[np.ix_(idx, idx)]
        if mode == "inverse":
            out[idx] = yl[idx] - _solve_checked(Mii, v[idx], "C[S_i, S_i]", assume_a="pos")
        else:
            Iminus = np.eye(len(idx)) - Mii
            out[idx] = yl[idx] - _solve_checked(Iminus, yl[idx] - v[idx], "I - H[S_i, S_i]")
    return out


def exact_quadratic_eigh(evals, evecs, y, folds, n_folds, mu):
    """Exact t-fold CV of kernel ridge regression for one ``mu`` from ``K = U diag(lam) U^T``.

    All points are labeled (supervised).  ``C = U diag(1/(lam + mu)) U^T`` gives
    ``alpha = C y`` in O(n^2) and the diagonal blocks ``C[S_i, S_i]`` in O(n^3 / t) in
    total, so a whole path of regularization values shares one eigendecomposition.

    Returns
    -------
    pred : ndarray of shape (n,) or (n, k)
        Held-out predictions in the sum form (as :func:`exact_quadratic_predictions`).
    f : ndarray
        The full-data fitted values ``K alpha``.
    """
    d = 1.0 / (evals + mu)
    Uy = evecs.T @ y
    alpha = evecs @ (d[:, None] * Uy if Uy.ndim == 2 else d * Uy)
    f = y - mu * alpha
    out = np.empty_like(np.asarray(y, dtype=float))
    for i in range(n_folds):
        idx = np.flatnonzero(folds == i)
        Ui = evecs[idx]
        Cii = (Ui * d) @ Ui.T
        out[idx] = y[idx] - _solve_checked(Cii, alpha[idx], "C[S_i, S_i]", assume_a="pos")
    return out, f


def exact_quadratic_cholesky(K, y, folds, n_folds, mu, work=None):
    """Exact t-fold CV of kernel ridge regression for one ``mu`` by one Cholesky factor.

    The same numbers as :func:`exact_quadratic_eigh` without an eigendecomposition: with the
    folds made contiguous by a permutation, ``A = K + mu I = R^T R`` (R upper triangular) and
    ``Z = R^{-1}`` (upper triangular) give ``C = A^{-1} = Z Z^T``; the rows of fold i's
    block of Z vanish left of the block, so ``C[S_i, S_i] = Z[S_i, s_i:] Z[S_i, s_i:]^T``
    costs ``|S_i|^2 (n - s_i)`` flops (syrk).  In all ``n^3 / 3`` (potrf) + ``n^3 / 3``
    (trtri) + ``n^3 (t + 1) / (2 t^2)`` per ``mu``: cheaper than an eigendecomposition
    (about ``10 n^3`` here) unless a width has more than about 15 ``mu`` values.

    Parameters
    ----------
    K, y, folds, n_folds, mu
        As :func:`exact_quadratic_eigh` (``K`` instead of its eigendecomposition).  Folds
        already sorted (contiguous) skip the permutation.
    work : ndarray of shape (n, n), Fortran order, optional
        Scratch space reused across calls (overwritten).

    Returns
    -------
    pred, f : as :func:`exact_quadratic_eigh`.  ``None`` when ``K + mu I`` is not
    numerically positive definite (the caller falls back to the eigendecomposition,
    which clips round-off negative eigenvalues of K).
    """
    from scipy.linalg import lapack

    n = K.shape[0]
    contiguous = bool(np.all(np.diff(folds) >= 0))
    order = np.arange(n) if contiguous else np.argsort(folds, kind="stable")
    counts = np.bincount(folds, minlength=n_folds)
    starts = np.concatenate(([0], np.cumsum(counts)))
    # Fortran order for LAPACK without a hidden copy (A is symmetric: A^T = A)
    if work is None or work.shape != (n, n) or not work.flags.f_contiguous:
        work = np.empty((n, n), order="F")
    # K is symmetric: copying K^T into the Fortran buffer is a contiguous copy
    np.copyto(work, (K if contiguous else K[np.ix_(order, order)]).T)
    work.flat[::n + 1] += mu
    R, info = lapack.dpotrf(work, lower=0, overwrite_a=1, clean=1)
    if info != 0:
        return None
    Z, info = lapack.dtrtri(R, lower=0, overwrite_c=1)
    if info != 0:
        return None
    yp = y[order]
    alpha_p = Z @ (Z.T @ yp)
    out_p = np.empty_like(np.asarray(yp, dtype=float))
    for i in range(n_folds):
        a, b = starts[i], starts[i + 1]
        if a == b:
            continue
        # C_ii = Zi Zi^T by syrk (upper triangle), then its Cholesky solve with a
        # reciprocal-condition check (as _solve_checked, without scipy.linalg.solve's overhead)
        Cii = sla.blas.dsyrk(1.0, Z[a:b, a:].T, trans=1, lower=0)
        Cfull = np.triu(Cii) + np.triu(Cii, 1).T  # before potrf overwrites Cii
        anorm = np.abs(Cfull).sum(axis=0).max()
        Rc, info = lapack.dpotrf(Cii, lower=0, overwrite_a=1, clean=1)
        if info != 0:
            sol = _solve_checked(Cfull, alpha_p[a:b], "C[S_i, S_i]")
        else:
            rcond, _ = lapack.dpocon(Rc, anorm, uplo="U")
            if rcond < np.finfo(np.float64).eps:
                _warn_ill_conditioned("C[S_i, S_i]", f"reciprocal condition number {rcond:.3g}")
            sol, _ = lapack.dpotrs(Rc, alpha_p[a:b], lower=0)
        out_p[a:b] = yp[a:b] - sol
    out = np.empty_like(out_p)
    out[order] = out_p
    alpha = np.empty_like(alpha_p)
    alpha[order] = alpha_p
    return out, y - mu * alpha


def newton_step_predictions(K, alpha, g, h, labeled, folds, n_folds, gamma_a, gamma_i=0.0,
                            complement_regularizers=None):
    """Leave-fold-out predictions by one Newton step of each fold's objective (dense model).

    Fold i's objective (mean form, the subgraph induced on S minus S_i) is
    ``(1/(l - m_i)) sum_{L minus L_i} ell + gamma_A ||f||^2 + s_i' f^T Q_{-i} f`` with
    ``s_i' = gamma_I / (n - |S_i|)^2``.  From the full fit ``alpha`` one Newton step in alpha
    (gradient preconditioned by K^{-1}, as the dense solver) gives

        alpha_i = alpha - [(diag(c_i h) + 2 s_i' Q_{-i}) K + 2 gamma_A I]^{-1}
                          (c_i g + 2 s_i' Q_{-i} f + 2 gamma_A alpha),

    ``c_i = 1/(l - m_i)`` on L minus L_i.  The step is exact when the objective is quadratic
    (square loss: KRR, LapRLS with the induced subgraph) and second-order accurate otherwise,
    where the BIF is first order (approximate CV by a Newton step: Beirami et al. 2017,
    Rad & Maleki 2020, Stephenson & Broderick 2020).  Without a graph and with few curved
    points the system is a rank-|M| update of ``2 gamma_A I`` (Woodbury); otherwise one
    dense LU per fold, O(t n^3).

    Parameters
    ----------
    K : ndarray (n, n); alpha, g, h : ndarray (n,) at the full fit
    complement_regularizers : list of sparse (n, n) or None
        ``Q_{-i}``: the regularizer of the subgraph induced on S minus S_i, embedded in n x n.

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
        c = np.where(keep_lab, 1.0 / keep_lab.sum(), 0.0)
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
            inner = _solve_checked(cap, sq * F[act], "Newton-step capacitance matrix",
                                   assume_a="pos")
            step = (F - K[:, act] @ (sq * inner)) / (2.0 * gamma_a)
        else:
            A = np.diag(w)
            if gamma_i > 0:
                A = A + 2.0 * s_i * Qi.toarray()
            Jac = A @ K
            Jac[np.diag_indices_from(Jac)] += 2.0 * gamma_a
            step = _solve_checked(Jac, F, "Newton-step Jacobian")
        rows = np.flatnonzero(held & labeled)
        out[pos[rows]] = K[rows] @ (alpha - step)
    return out
