"""CutSSL: graph cut with class-size constraints, relaxed and solved by an ADMM homotopy.

Implements Holtz, Chen, Wan, Cheng & Mishne (2024), *Continuous partitioning for graph-based
semi-supervised learning* (NeurIPS), with the corrections of DESIGN 3.13. Notation: n points
of the labeled components, l labeled with one-hot rows F, M = n - l unlabeled, d the degrees
(D = diag d), L = D - W, b = W_ul F (M x k) and m = n pi - F^T 1 the class sizes of the
unlabeled points (pi the class priors; rounded to integers summing to M). CutSSL solves

    min_X  1/2 tr(X^T (L - s D)_uu X) - tr(X^T b)
    s.t.   X >= 0,  X 1_k = 1_M,  1_M^T X = m^T

for s along a schedule (the paper's s = 0, 0.1). At s = 0 the problem is a convex QP (the
Laplace learning energy with the class sizes imposed); a larger s makes it concave along the
directions that split a row, which pushes the minimizers to 0/1 labelings (the paper's
exactness result: once (L - sD)_ii + (L - sD)_jj < 2 (L - sD)_ij for every unlabeled pair,
every local minimum is a labeling).

- **Start** (exact, k + 1 solves of L_uu, SPD on the labeled components):
  h = L_uu^-1 1, c = 1^T h, nu = (b^T h - m) / c, X0 = L_uu^-1 b - h nu^T, the minimum of the
  s = 0 problem without X >= 0. Its rows sum to 1 and its columns to m. (The released code
  solves P L_uu P z = P b, which lacks the term -L_uu 1 m^T / M: DESIGN 3.13.)
- **ADMM** for each s, with H = (L - sD)_uu + rho I, y the nonnegative copy and lambda the
  scaled multiplier, R = rho (y - lambda) + b:

      X = H^-1 (R - 1 mu1^T - mu2 1^T)     (the X-step, equality constraints exact)
      y = max(X + lambda, 0);   lambda <- lambda + X - y

  The multipliers of the X-step solve its two constraints exactly: with h = H^-1 1,
  c = 1^T h, a = H 1 (h^T a = M), and the free direction (mu1 + t, mu2 - t) fixed by
  1^T mu1 = 0, mu2 = (R 1_k - a) / k and mu1 = (R^T h - (h^T mu2) 1_k - m) / c. The released
  code alternates the two formulas once per iteration (Gauss-Seidel); both have the same fixed
  points. One (k + 1)-column solve with H per iteration (block Jacobi-PCG warm-started from
  the last iterate; H is well conditioned: its spectrum lies in [rho + lambda_min, rho + 2
  d_max]), one setup per s.
- **H must be positive definite**, which holds iff s < sigma_min, the least eigenvalue of the
  pencil (L_uu + rho I, D_uu). Sufficient and free: the Gershgorin margins
  rho - s d_i + d_i^l > 0 (d_i^l: the weight from i to the labeled points). When a margin is
  not positive the pencil's sigma_min is computed (Lanczos on D^-1/2 (L_uu + rho I) D^-1/2)
  and s is lowered to 0.9 sigma_min with a :class:`CutSSLWarning` naming s and the bound.
  Positive definiteness makes each X-step convex, not the ADMM convergent: for s > 0 the
  problem is not convex, and on graphs of large degree (binary 10-NN weights on digits,
  degrees up to 35) the iterates diverged at s = 0.66 sigma_min. A stage whose primal
  residual exceeds 1 per entry (impossible on the polytope) is rerun from its start at s / 2,
  with a :class:`CutSSLWarning`.
- **Decision**: the last y (rows on the simplex, ``scores_``) rounded to a labeling whose
  class sizes are m exactly (the transportation problem max sum_i y_{i, c(i)}, solved to its
  optimum by :func:`fastgssl.models.exact_size_assignment`).

References
----------
Holtz, C., Chen, P., Wan, Z., Cheng, C.-K. & Mishne, G. (2024). Continuous partitioning for
graph-based semi-supervised learning. NeurIPS 37.
Boyd, S. et al. (2011). Distributed optimization and statistical learning via the
alternating direction method of multipliers. Found. Trends Mach. Learn. 3(1).
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numba
import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import eigsh
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted

from fastgssl._doc_examples import blobs_example
from fastgssl._sparse_blocks import row_product
from fastgssl._validation import store_init_arguments
from fastgssl.exceptions import CutSSLWarning
from fastgssl.models._propagation_base import _GraphPropagation, _PropagationClassifier
from fastgssl.models._propagation_docs import (
    N_JOBS_PARAM,
    POLICY_PARAM,
    SELF_TUNED_NOTE,
    SIZED_LABELING_ATTRIBUTES,
    graph_params,
)
from fastgssl.models._size_assignment import exact_size_assignment, sized_problem
from fastgssl.solvers import LaplacianSolver

__all__ = ["CutSSL", "CutSSLWarning", "cutssl_admm", "cutssl_start", "label_margin"]


# the ADMM's solves carry their residual from one iteration to the next; it is recomputed
# from the matrix every this many iterations
_RESIDUAL_EVERY = 20


# ---------------------------------------------------------------------------------------------
# the problem's data
# ---------------------------------------------------------------------------------------------


def _rms(A):
    """Root mean square of the entries (no BLAS call: a threaded dot costs more than this
    sum on the ADMM's arrays)."""
    return float(np.sqrt(np.einsum("ij,ij->", A, A) / A.size))


@numba.njit(cache=True)
def _block_pcg(indptr, indices, data, dinv, X, R, target, max_iter):  # pragma: no cover
    """Block Jacobi-PCG on the CSR matrix H in place: X the iterate, R its residual
    B - H X; column j stops when ||R_j|| <= target_j. Serial, one compiled call per solve
    (the ADMM calls it hundreds of times on 10^3-10^5 rows, where Python's per-iteration
    overhead and a thread pool's start-up per call cost more than the products).
    Returns whether every column met its target."""
    n, r = X.shape
    Z = np.empty((n, r))
    P = np.empty((n, r))
    HP = np.empty((n, r))
    rz = np.zeros(r)
    for i in range(n):
        for j in range(r):
            z = dinv[i] * R[i, j]
            Z[i, j] = z
            P[i, j] = z
            rz[j] += R[i, j] * z
    rr = np.zeros(r)
    php = np.zeros(r)
    alpha = np.zeros(r)
    beta = np.zeros(r)
    for _ in range(max_iter + 1):
        rr[:] = 0.0
        for i in range(n):
            for j in range(r):
                rr[j] += R[i, j] * R[i, j]
        done = True
        for j in range(r):
            if np.sqrt(rr[j]) > target[j]:
                done = False
        if done:
            return True
        if _ == max_iter:
            return False
        php[:] = 0.0
        for i in range(n):
            row_product(indptr, indices, data, i, P, HP, i)
            for j in range(r):
                php[j] += P[i, j] * HP[i, j]
        for j in range(r):
            alpha[j] = rz[j] / php[j] if php[j] > 0 else 0.0
        rz_new = np.zeros(r)
        for i in range(n):
            for j in range(r):
                X[i, j] += alpha[j] * P[i, j]
                R[i, j] -= alpha[j] * HP[i, j]
                z = dinv[i] * R[i, j]
                Z[i, j] = z
                rz_new[j] += R[i, j] * z
        for j in range(r):
            beta[j] = rz_new[j] / rz[j] if rz[j] > 0 else 0.0
            rz[j] = rz_new[j]
        for i in range(n):
            for j in range(r):
                P[i, j] = Z[i, j] + beta[j] * P[i, j]
    return False


def _solve(H, dinv, B, X0, rtol, max_iter, R0=None):
    """Block Jacobi-PCG for the SPD ``H`` (CSR, sorted indices), warm-started from ``X0``,
    each column to ``||b - H x|| <= rtol ||b||`` (:func:`_block_pcg`). ``R0``: the residual
    ``B - H X0`` when the caller knows it (the ADMM carries it from the last solve: saves one
    product per call). Returns ``(X, converged, R)`` with R the recurrence residual."""
    B = np.ascontiguousarray(B, dtype=np.float64)
    X = np.zeros_like(B) if X0 is None else np.array(X0, dtype=np.float64, order="C")
    R = B - H @ X if R0 is None else np.array(R0, dtype=np.float64, order="C")
    target = rtol * np.sqrt(np.einsum("ij,ij->j", B, B))
    ok = _block_pcg(H.indptr, H.indices, H.data, dinv, X, R, target, int(max_iter))
    return X, bool(ok), R


def cutssl_start(L_uu, b, m, *, rtol=1e-8):
    """The exact minimum of the s = 0 problem without X >= 0 ("exact Laplace", DESIGN 3.13):
    X0 = L_uu^-1 b - h nu^T with h = L_uu^-1 1, nu = (b^T h - m) / (1^T h).

    Its columns sum to m and its rows to 1. L_uu must be positive definite (every component
    holds a label)."""
    M, k = b.shape
    solver = LaplacianSolver(L_uu, rtol=rtol, null_space=None, check_input=False)
    sol, _ = solver.solve(np.column_stack([b, np.ones(M)]))
    sol = np.asarray(sol).reshape(M, k + 1)
    Z, h = sol[:, :k], sol[:, k]
    nu = (b.T @ h - m) / h.sum()
    return Z - np.outer(h, nu)


def _pencil_bound(L_uu, d_u, rho):
    """sigma_min of the pencil (L_uu + rho I, D_uu): H = (L - sD)_uu + rho I > 0 iff
    s < sigma_min."""
    s = 1.0 / np.sqrt(d_u)
    A = sp.diags(s) @ (L_uu + rho * sp.identity(L_uu.shape[0])) @ sp.diags(s)
    if A.shape[0] <= 500:
        return float(np.linalg.eigvalsh(A.toarray())[0])
    try:
        val = eigsh(sp.csr_matrix(A), k=1, sigma=0, which="LM", return_eigenvectors=False)
    except Exception:  # noqa: BLE001 - factorization trouble: the slower Lanczos end
        val = eigsh(sp.csr_matrix(A), k=1, which="SA", return_eigenvectors=False,
                    tol=1e-6, maxiter=5000)
    return float(val[0])


def _stage(L_uu, d_u, b, m, s, iters, rho, tol, rtol, y, lam, Z, g, callback):
    """One ADMM stage at fixed s from the state (y, lam, Z, g). Returns the new state, the
    stage's record and whether it diverged (an iterate's distance to its nonnegative copy
    above 1 per entry, which no point of the polytope allows)."""
    M, k = b.shape
    ones = np.ones(M)
    H = sp.csr_matrix(L_uu - sp.diags(s * d_u) + rho * sp.identity(M))
    H.sort_indices()
    dinv = 1.0 / H.diagonal()
    a = np.asarray(H @ ones).ravel()
    h = _solve(H, dinv, ones[:, None], None, rtol * 1e-5, 10 * M + 100)[0][:, 0]
    c = h.sum()
    it = 0
    r_pri = r_dual = np.inf
    Zg = np.column_stack([Z, g])
    B_last = R_last = None
    for it in range(1, int(iters) + 1):
        B = np.empty((M, k + 1))
        R = B[:, :k]
        np.subtract(y, lam, out=R)
        R *= rho
        R += b
        B[:, k] = mu2 = (R.sum(axis=1) - a) / k
        mu1 = (np.einsum("ij,i->j", R, h) - (h @ mu2) - m) / c
        # the residual of the warm start, B - H Zg = (B - B_last) + R_last, carried from the
        # last solve; recomputed every _RESIDUAL_EVERY iterations against round-off drift
        R0 = None if B_last is None or it % _RESIDUAL_EVERY == 0 else (B - B_last) + R_last
        Zg, _, R_last = _solve(H, dinv, B, Zg, rtol, 10 * M + 100, R0=R0)
        B_last = B
        X = Zg[:, :k] - np.outer(h, mu1)
        X -= Zg[:, k:]
        y_old = y
        y = np.maximum(X + lam, 0.0)
        lam = lam + X - y
        r_pri = _rms(X - y)
        r_dual = rho * _rms(y - y_old)
        if callback is not None:
            callback(s, it, X, y)
        if not r_pri <= 1.0:
            return (y, lam, Zg[:, :k], Zg[:, k]), None, True
        if r_pri <= tol and r_dual <= tol:
            break
    Z, g = Zg[:, :k], Zg[:, k]
    record = {"s": s, "iterations": it, "primal_residual": float(r_pri),
              "dual_residual": float(r_dual), "converged": bool(r_pri <= tol and r_dual <= tol)}
    return (y, lam, Z, g), record, False


def cutssl_admm(L_uu, d_u, d_l, b, m, X, *, s_schedule, max_iter, rho, tol, rtol,
                callback=None):
    """The ADMM homotopy over ``s_schedule`` from the start ``X`` (module docstring).

    An s at which H = (L - sD)_uu + rho I is not positive definite is lowered to 0.9 times
    the bound; a stage whose iterates diverge (possible below the bound: the problem is not
    convex for s > 0) is rerun from its start with s halved, at most 8 times, each with a
    :class:`CutSSLWarning`.

    Returns ``(y, info)``: the last nonnegative iterate (rows on the simplex, columns summing
    to m up to the ADMM's residual) and a dict with, per stage, the s run (after any
    lowering), the iterations, the primal and dual residuals and whether ``tol`` was met,
    and ``pencil_bound`` when it was computed.
    """
    state = (np.maximum(X, 0.0), np.zeros_like(X), np.ascontiguousarray(X),
             np.zeros(b.shape[0]))
    stages = []
    bound = None
    for s, iters in zip(s_schedule, max_iter, strict=True):
        s = asked = float(s)
        margin = rho - s * d_u + d_l
        if s > 0 and margin.min() <= 0:
            if bound is None:
                bound = _pencil_bound(L_uu, d_u, rho)
            if s >= bound:
                s = 0.9 * bound
                warnings.warn(
                    f"CutSSL: at s={asked:g} the X-step matrix (L - sD)_uu + rho I with "
                    f"rho={rho:g} is not positive definite (the least eigenvalue of the "
                    f"pencil (L_uu + rho I, D_uu) is {bound:.4g}, so s must stay below it; the "
                    f"Gershgorin margin rho - s d_i + d_i^l reaches {margin.min():.4g}); s "
                    f"lowered to {s:.4g}. Raise rho above s max(d) = "
                    f"{asked * d_u.max():.4g} to run s={asked:g}.", CutSSLWarning, stacklevel=4)
        for _ in range(9):
            new, record, diverged = _stage(L_uu, d_u, b, m, s, iters, rho, tol, rtol, *state,
                                           callback)
            if not diverged:
                break
            warnings.warn(
                f"CutSSL: the ADMM diverged at s={s:.4g} with rho={rho:g} (the problem is not "
                f"convex for s > 0; max degree {d_u.max():.4g}); the stage is rerun at "
                f"s={s / 2:.4g}. A larger rho (or weights of smaller degree) allows larger s.",
                CutSSLWarning, stacklevel=4)
            s /= 2
        if diverged:
            raise RuntimeError(
                f"CutSSL: the ADMM diverged at every s down to {s:.3g}; lower s_schedule or "
                f"raise rho (now {rho:g}).")
        state = new
        stages.append(record)
    return state[0], {"stages": stages, "pencil_bound": bound}


# ---------------------------------------------------------------------------------------------
# the estimator
# ---------------------------------------------------------------------------------------------


class CutSSL(_PropagationClassifier):
    __doc__ = """CutSSL (Holtz, Chen, Wan, Cheng & Mishne 2024): the graph cut of the
    unlabeled points with class sizes given, relaxed to the transportation polytope and
    solved by an ADMM homotopy toward 0/1 labelings.

    Parameters
    ----------
    class_priors : array-like of shape (n_classes,) or None, default=None
        Class shares in the order of ``classes_`` (normalized to sum to one): the unlabeled
        points of class c number m_c = n pi_c - (labels of c), n the points of labeled
        components (rounded to integers summing to the unlabeled count). None: the labels'
        shares. A class with more labels than n pi_c is an error naming it.
    s_schedule : sequence of float >= 0, default=(0.0, 0.1)
        The homotopy's values of s, run in order (the paper's 0 and 0.1): s = 0 is the convex
        problem, a larger s pushes the iterates to labelings. An s at which the X-step matrix
        would be indefinite is lowered, and a stage that diverges is rerun at s / 2, each with
        a :class:`CutSSLWarning` (module docstring).
    max_iter : int or sequence of int, default=(100, 400)
        ADMM iterations per value of s (the paper's 100 and 400); one int applies to every s.
    rho : float > 0, default=1.0
        ADMM penalty (the paper's 1). A larger rho keeps H = (L - sD)_uu + rho I positive
        definite at larger s but moves the iterates more slowly.
    tol : float, default=1e-5
        A stage stops early when the primal and dual residuals (root mean square per
        entry) both fall below it.
    rtol : float, default=1e-3
        Relative residual of the ADMM's linear solves, each warm-started from the last
        iterate (an inexact X-step; the start's solve runs to 1e-2 of it, the solve of
        h = H^-1 1 to 1e-5 of it).
""" + graph_params("self_tuned", SELF_TUNED_NOTE) + POLICY_PARAM + N_JOBS_PARAM + """
""" + SIZED_LABELING_ATTRIBUTES + """\
    scores_ : ndarray of shape (n_samples, n_classes)
        The relaxed solution y of the last stage (rows on the simplex; labeled rows one-hot;
        zero where unreached). Its margin at each row's label ranks how sure the labeling is:
        ``confidence_``.
    confidence_ : ndarray of shape (n_samples,)
        The margin of ``scores_`` at each row's label: the score of its label minus its best
        other score (1 on labeled points, 0 where abstaining; below 0 where the exact
        class-size rounding moved a row off its argmax). Higher is more often right.
    label_distributions_ : ndarray of shape (n_samples, n_classes)
        One-hot rows of ``transduction_`` (uniform where abstaining).
    class_priors_ : ndarray of shape (n_classes,)
    class_sizes_ : ndarray of shape (n_classes,)
        m, the class sizes imposed on the unlabeled points.
    admm_info_ : dict
        Per stage: s run (after any lowering), iterations, primal and dual residuals,
        whether the tolerance was met; ``pencil_bound`` when it was computed.
    graph_, n_unreached_, solver_info_
        As in :class:`LabelPropagation` (``solver_info_`` is None).
    feature_names_in_ : ndarray of str
        Column names of a DataFrame ``X``.

    Notes
    -----
    The problem, the exact start and the ADMM are in :mod:`fastgssl.models._cutssl`'s
    docstring and DESIGN 3.13. Departures from the released code (Mishne-Lab/CutSSL): the
    start solves the projected system with its term -L_uu 1 m^T / M (the released one lacks
    it, so its rows do not sum to 1); the graph, k and the centring (1/M, not 1/n) are those
    of the fit; the X-step's multipliers are solved exactly rather than alternated; the
    final labeling is the exact class-size rounding of the relaxed solution rather than its
    row argmax, so the class sizes are m whatever the residual.

    Not linear in the labels: exact cross-validation refits per fold. New points get the
    Parzen induction formula over the one-hot labeling (a weighted vote of their training
    neighbours).

    See Also
    --------
    PoissonMBO : Poisson learning refined by volume-constrained MBO steps.
    CutRefinement : exact class-size rounding and cut descent of any learner's scores.

    References
    ----------
    Holtz, C., Chen, P., Wan, Z., Cheng, C.-K. & Mishne, G. (2024). Continuous partitioning
    for graph-based semi-supervised learning. NeurIPS 37.

    Examples
    --------
""" + blobs_example(1) + """\
    >>> from fastgssl.models import CutSSL
    >>> model = CutSSL(n_neighbors=10).fit(X, y_ssl)
    >>> float(np.mean(model.transduction_ == y)) > 0.9
    True
    """

    _parameter_constraints = {
        **_GraphPropagation._parameter_constraints,
        "class_priors": ["array-like", None],
        "s_schedule": ["array-like"],
        "max_iter": [Interval(Integral, 1, None, closed="left"), "array-like"],
        "rho": [Interval(Real, 0, None, closed="neither")],
        "tol": [Interval(Real, 0, None, closed="neither")],
    }

    def __init__(self, class_priors=None, *, s_schedule=(0.0, 0.1), max_iter=(100, 400),
                 rho=1.0, tol=1e-5, rtol=1e-3, graph="knn", n_neighbors=10,
                 graph_weight="self_tuned", graph_symmetrize="max", sigma_w=None,
                 self_tuned_constant=3.0, unlabeled_policy="auto", n_jobs=None):
        store_init_arguments(self, locals())

    _share_hint = "Check the graph (n_neighbors, connectivity) and class_priors."

    def _schedule(self):
        try:
            s = np.atleast_1d(np.asarray(self.s_schedule, dtype=np.float64))
        except (TypeError, ValueError):
            s = np.array([np.nan])
        if s.ndim != 1 or s.size == 0 or not np.isfinite(s).all() or (s < 0).any():
            raise ValueError(
                f"s_schedule must be a nonempty sequence of finite numbers >= 0 (the "
                f"paper's (0.0, 0.1)), got {self.s_schedule!r}.")
        iters = np.atleast_1d(np.asarray(self.max_iter))
        if iters.size == 1:
            iters = np.repeat(iters, s.size)
        if (iters.shape != s.shape or iters.dtype.kind not in "iu" or (iters < 1).any()):
            raise ValueError(
                f"max_iter must be a positive int or one positive int per value of "
                f"s_schedule ({s.size}), got {self.max_iter!r}.")
        return s, iters

    def _solve_full(self, W, labeled, Y):
        k = Y.shape[1]
        schedule, iters = self._schedule()
        if k < 2:
            raise ValueError(
                "CutSSL needs labels of at least two classes; with one class every point "
                "takes it.")
        self.class_priors_, idx, reached, Wr, m = sized_problem(
            W, labeled, Y, self.class_priors, self.classes_)
        lab = np.flatnonzero(labeled)
        lab_r = np.flatnonzero(labeled[idx])
        unl_r = np.flatnonzero(~labeled[idx])
        d = np.asarray(Wr.sum(axis=1)).ravel()
        Fl = Y[idx][lab_r]
        self.class_sizes_ = m
        scores = np.zeros(Y.shape)
        scores[lab] = Y[lab]
        labels = np.full(W.shape[0], -1, dtype=np.int64)
        labels[lab] = np.argmax(Y[lab], axis=1)
        self.admm_info_ = {"stages": [], "pencil_bound": None}
        if unl_r.size:
            W_uu = Wr[unl_r][:, unl_r].tocsr()
            W_ul = Wr[unl_r][:, lab_r].tocsr()
            d_u = d[unl_r]
            d_l = np.asarray(W_ul.sum(axis=1)).ravel()
            L_uu = sp.csr_matrix(sp.diags(d_u) - W_uu)
            b = np.asarray(W_ul @ Fl)
            X0 = cutssl_start(L_uu, b, m.astype(np.float64), rtol=self.rtol * 1e-2)
            y, info = cutssl_admm(L_uu, d_u, d_l, b, m.astype(np.float64), X0,
                                  s_schedule=schedule, max_iter=iters, rho=float(self.rho),
                                  tol=float(self.tol), rtol=float(self.rtol))
            self.admm_info_ = info
            rows = idx[unl_r]
            scores[rows] = y
            labels[rows] = exact_size_assignment(y, m)
        F = np.zeros(Y.shape)
        F[idx, labels[idx]] = 1.0
        self.scores_ = scores
        return F, reached, None

    @property
    def confidence_(self):
        """The margin of ``scores_`` at each row's label (:func:`label_margin`): the score of
        its label minus its best other score (1 on labeled points; 0 where abstaining)."""
        check_is_fitted(self, "scores_")
        decided = self.transduction_ != -1
        out = np.zeros(self.scores_.shape[0])
        ids = np.searchsorted(self.classes_, self.transduction_[decided])
        out[decided] = label_margin(self.scores_[decided], ids)
        return out

    def _propagation_system(self):
        return None  # not linear in the labels: exact CV refits per fold


def label_margin(S, labels):
    """Score of each row's label minus the row's best other score (``S[i, labels[i]] -
    max_{c != labels[i]} S[i, c]``; below 0 where the label is not the row's argmax, e.g.
    moved by an exact class-size rounding)."""
    S = np.asarray(S, dtype=np.float64)
    rows = np.arange(S.shape[0])
    if S.shape[1] < 2:
        return np.zeros(S.shape[0])
    own = S[rows, labels]
    other = S.copy()
    other[rows, labels] = -np.inf
    return own - other.max(axis=1)
