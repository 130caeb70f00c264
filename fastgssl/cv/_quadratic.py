"""Exact t-fold CV of the square loss from one factorization (sum-of-losses form)."""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla
from scipy.linalg import lapack

from fastgssl.cv._base import _kernel_matrix, _OneFitMethod
from fastgssl.cv._bif import _as_operator, _solve_checked, _warn_ill_conditioned

__all__ = ["ExactQuadraticMethod", "exact_quadratic_cholesky", "exact_quadratic_eigh",
           "exact_quadratic_predictions", "exact_quadratic_wspace"]



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


class ExactQuadraticMethod(_OneFitMethod):
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
    spectral_form = "exact-quadratic"

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
