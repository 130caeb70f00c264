"""The linear systems of label propagation (Bengio, Delalleau & Le Roux 2005; Zhou et al. 2004).

- the criterion SS(lambda, K): (lambda Delta_L + D - W) f = lambda Delta_L y; at lambda = inf
  the labels are clamped and f is the harmonic function of Zhu, Ghahramani and Lafferty
  (2003), L_uu f_u = W_ul y_l (:func:`_solve_ss_full`);
- local and global consistency: (I - alpha D^-1/2 W D^-1/2) F = Y, solved as the symmetric
  M-matrix system (D - alpha W) G = D^1/2 Y (:func:`_solve_lgc_full`);
- the subset approximations of Bengio et al. (2005) section 5, with and without the C_RR
  term (:func:`_solve_subset`, dense m x m solves).

Each system is solved only on the graph components that hold a labeled point; the sparse
ones by :func:`fastgssl.solvers.reused_solver` (multigrid-preconditioned CG, all classes as
one batched multi-right-hand-side solve), never by fixed-point iteration.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg
import scipy.sparse as sp

from fastgssl._components import labeled_components
from fastgssl._sparse_blocks import diagonal_scaled, principal_submatrix, submatrix
from fastgssl.models._induction import subset_smoothness
from fastgssl.regularizers import laplacian
from fastgssl.solvers import reused_solver

# ---------------------------------------------------------------------------------------------
# graph handling
# ---------------------------------------------------------------------------------------------


def gaussian_sigma_from_edges(W, X, max_edges=2000):
    """Bandwidth of a Gaussian graph recovered from its edges, w = exp(-d^2 / (2 sigma)).

    For a graph that does not report its bandwidth: a user's matrix, or a plugin builder
    that chose sigma_w itself (the fastgssl builders report theirs, see
    :class:`fastgssl.graphs.Graph`). Any edge with 0 < w < 1 gives
    sigma = -d^2 / (2 log w); the median over a sample of edges is returned (None without
    such an edge or without coordinates).
    """
    W = sp.coo_matrix(W)
    ok = (W.data > 0) & (W.data < 1)
    if not ok.any() or X is None:
        return None
    idx = np.flatnonzero(ok)[:max_edges]
    xi = X[W.row[idx]]
    xj = X[W.col[idx]]
    diff = xi - xj
    if sp.issparse(diff):
        d2 = np.asarray(diff.multiply(diff).sum(axis=1)).ravel()
    else:
        d2 = np.einsum("ij,ij->i", diff, diff)
    return float(np.median(d2 / (-2.0 * np.log(W.data[idx]))))


def _laplacian(W):
    return sp.csr_matrix(laplacian(W, kind="L", validate=False))


def _reached_by_labels(W, labeled):
    """Mask of vertices whose connected component contains a labeled vertex."""
    comp, has_label = labeled_components(W, labeled)
    return has_label[comp]


# ---------------------------------------------------------------------------------------------
# full solves
# ---------------------------------------------------------------------------------------------


def _linear_solve(Q, B, solver, rtol, scale=None):
    """``Q X = B``; with ``scale`` s, ``Q`` is the symmetric diagonal scaling ``S Q0 S`` of the
    system ``Q0 X = B`` (S = diag(s)): ``S Q0 S z = S B`` is solved and ``X = S z``
    returned. The scaling (``s = diag(Q0)^-1/2``) keeps rows whose
    weights were multiplied by up to 1e7 (reweighted Laplace learning) from owning the
    relative residual and leaving the other rows unsolved."""
    # every system here is nonsingular (unlabeled components were taken out)
    if scale is not None:
        Z, info = _linear_solve(Q, scale[:, None] * B, solver, rtol)
        return scale[:, None] * Z, info
    X, info = reused_solver(Q, solver=solver, rtol=rtol, null_space=None,
                            check_input=False).solve(B)
    X = np.asarray(X, dtype=np.float64).reshape(B.shape)
    return X, info


def _sub(M, rows, cols):
    """``M[rows][:, cols]`` for increasing ``cols`` (:func:`fastgssl._sparse_blocks.submatrix`:
    scipy's entries in scipy's order, in one pass)."""
    return submatrix(M, rows, cols)


def _solve_ss_full(W, labeled, Y, lam, solver, rtol, jacobi=False):
    """Criterion SS(lambda) on the components that contain a labeled point (``jacobi``:
    solved with a symmetric diagonal scaling, see :func:`_linear_solve`)."""
    n = W.shape[0]
    reached = _reached_by_labels(W, labeled)
    F = np.zeros((n, Y.shape[1]))
    L = _laplacian(W)
    info = None
    if np.isinf(lam):
        lab = np.flatnonzero(labeled)
        unl = np.flatnonzero(reached & ~labeled)
        F[lab] = Y[lab]
        if unl.size:
            B = -(_sub(L, unl, lab) @ Y[lab])
            # (with jacobi, the scaling in the submatrix's pass)
            s = 1.0 / np.sqrt(L.diagonal()[unl]) if jacobi else None
            F[unl], info = _linear_solve(principal_submatrix(L, unl, s), B, solver, rtol, s)
    else:
        idx = np.flatnonzero(reached)
        delta = lam * labeled[idx].astype(np.float64)
        Q = (principal_submatrix(L, idx) + sp.diags(delta)).tocsr()
        s = 1.0 / np.sqrt(Q.diagonal()) if jacobi else None
        F[idx], info = _linear_solve(Q if s is None else diagonal_scaled(Q, s),
                                     delta[:, None] * Y[idx], solver, rtol, s)
    return F, reached, info


def _solve_lgc_full(W, labeled, Y, alpha, solver, rtol):
    """(I - alpha S) F = Y, solved as (D - alpha W) G = D^1/2 Y, F = D^1/2 G."""
    n = W.shape[0]
    reached = _reached_by_labels(W, labeled)
    d = np.asarray(W.sum(axis=1)).ravel()
    F = np.zeros((n, Y.shape[1]))
    active = np.flatnonzero(reached & (d > 0))
    isolated = reached & (d == 0)  # a lone labeled vertex: S has a zero row, so F = Y
    F[isolated] = Y[isolated]
    info = None
    if active.size:
        sd = np.sqrt(d[active])
        Q = (sp.diags(d[active]) - alpha * principal_submatrix(W, active)).tocsr()
        G, info = _linear_solve(Q, sd[:, None] * Y[active], solver, rtol)
        F[active] = sd[:, None] * G
    return F, reached, info


# ---------------------------------------------------------------------------------------------
# subset approximation (Bengio et al. (2005) section 5)
# ---------------------------------------------------------------------------------------------


def _dense_spd_solve(A, B, what):
    try:
        c = scipy.linalg.cho_factor(A, lower=True, check_finite=False)
        return scipy.linalg.cho_solve(c, B, check_finite=False)
    except np.linalg.LinAlgError:
        warnings.warn(
            f"the {what} system of size {A.shape[0]} is not numerically positive definite; "
            f"solved by least squares instead (check the graph weights).",
            RuntimeWarning,
            stacklevel=4,
        )
        return scipy.linalg.lstsq(A, B, check_finite=False)[0]


def _solve_subset(W, labeled, Y, S, P, *, criterion, lam, alpha, drop_rr):
    """One subset solve. Returns F over all n points and the reached mask.

    ``S`` lists the subset (labeled points included), ``P`` the (n - m) x m induction operator
    for the rest R = complement of S in the row order ``R = setdiff1d(arange(n), S)``.
    """
    n = W.shape[0]
    m = S.size
    in_S = np.zeros(n, dtype=bool)
    in_S[S] = True
    R = np.flatnonzero(~in_S)
    lab_local = labeled[S]
    Y_S = Y[S]
    A0 = subset_smoothness(W, S, R, P, normalized=criterion == "lgc", drop_rr=drop_rr)
    # components of the subset system that contain no labeled point are left undetermined
    comp, has_label = labeled_components(A0, lab_local)
    reached_S = has_label[comp]
    F_S = np.zeros((m, Y.shape[1]))
    if criterion == "lgc":
        mu = (1.0 - alpha) / alpha
        P_csr = sp.csr_matrix(P)
        A = A0 + mu * (sp.identity(m) + (P_csr.T @ P_csr))
        idx = np.flatnonzero(reached_S)
        Ad = principal_submatrix(sp.csr_matrix(A), idx).toarray()
        F_S[idx] = _dense_spd_solve(Ad, mu * Y_S[idx], "subset LGC")
    elif np.isinf(lam):
        lab = np.flatnonzero(lab_local)
        free = np.flatnonzero(reached_S & ~lab_local)
        F_S[lab] = Y_S[lab]
        if free.size:
            A0c = sp.csr_matrix(A0)
            B = -(_sub(A0c, free, lab) @ Y_S[lab])
            F_S[free] = _dense_spd_solve(principal_submatrix(A0c, free).toarray(), B,
                                         "subset harmonic")
    else:
        idx = np.flatnonzero(reached_S)
        delta = lam * lab_local[idx].astype(np.float64)
        Ad = principal_submatrix(sp.csr_matrix(A0), idx).toarray()
        Ad[np.diag_indices_from(Ad)] += delta
        F_S[idx] = _dense_spd_solve(Ad, delta[:, None] * Y_S[idx], "subset SS")
    F = np.zeros((n, Y.shape[1]))
    F[S] = F_S
    P_csr = sp.csr_matrix(P)
    if criterion == "lgc":
        F[R] = P_csr @ F_S  # undetermined subset values are exactly 0 here
        reached_R = (abs(P_csr) @ reached_S.astype(np.float64)) > 0
    else:
        # Parzen over the determined subset points only (renormalized)
        Pv = P_csr @ sp.diags(reached_S.astype(np.float64))
        mass = np.asarray(Pv.sum(axis=1)).ravel()
        reached_R = mass > 0
        F[R] = (Pv @ F_S) / np.where(reached_R, mass, 1.0)[:, None]
    reached = np.zeros(n, dtype=bool)
    reached[S] = reached_S
    reached[R] = reached_R
    return F, reached
