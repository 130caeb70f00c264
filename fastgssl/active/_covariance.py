"""The Gaussian-process posterior covariance of graph active learning, column by column.

Implements the model behind VOpt (Ji & Han 2012), Sigma-optimality (Ma, Garnett & Schneider
2013) and model change (Miller & Bertozzi 2021) as graphlearning states it (DESIGN 3.12):
prior covariance the (pseudo-)inverse of the normalized Laplacian, observations with noise
``gamma^2`` on the labeled set S, posterior covariance

    C_S = (L_norm + tau I + gamma^-2 sum_{k in S} e_k e_k^T)^-1.

graphlearning truncates L_norm to 50 eigenpairs; here the columns ``C_S e_j`` that a
criterion reads are solved exactly, one block solve of :class:`fastgssl.solvers.
LaplacianSolver` on the sparse SPD matrix above (never C itself: no n x n array), and kept
up to date as points are labeled by the rank-one formula

    C_{S + k} e_j = C_S e_j - C_S e_k (C_S)_kj / (gamma^2 + (C_S)_kk),

O(n) per kept column and labeled point. The same update holds for any column ``C_S z`` with
a fixed ``z`` (the sketch columns of :meth:`PosteriorCovariance.sketch_estimates`).

Columns solved later (new candidates) do not refactorize: the solver is set up once for the
precision of a base set S_0 and the labels added since enter as a low-rank downdate,

    C_S = C_{S_0} - U U^T,   U = [u_1 ... u_r],   u_i = C_{S_{i-1}} e_{k_i} / sqrt(gamma^2 +
    (C_{S_{i-1}})_{k_i k_i}),

the rank-one formula above summed over the points k_1, ..., k_r labeled since S_0 (S_i the set
after the i-th). A new column is then one solve with the kept setup minus ``U U[j]^T``; the
setup (a Jacobi coarse space, or the multigrid hierarchy that ``"auto"`` switches to after
150 Jacobi iterations) is rebuilt only when r exceeds :data:`MAX_DOWNDATE_RANK`.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from fastgssl._components import labeled_components
from fastgssl.regularizers import laplacian
from fastgssl.solvers import LaplacianSolver

__all__ = ["MAX_DOWNDATE_RANK", "SKETCH_RTOL", "PosteriorCovariance", "criterion_scores",
           "greedy_batch"]

# labels added after the solver's setup before it is set up again for the current S: U is
# (n, r), and each solve pays O(n r) per column for it
MAX_DOWNDATE_RANK = 128

# relative residual of the sketch columns C Z (at most): they only preselect candidates.
# MNIST n = 10,000, 10 labels, 3 draws: the top 100 by the estimated VOpt numerator were the
# same as with 1e-6 (Sigma-opt: 99 or 100 of 100), the estimates within 5e-4 of the largest,
# for 0.20 instead of 0.30 CPU-s (about 20 instead of 41 CG iterations)
SKETCH_RTOL = 1e-3


class PosteriorCovariance:
    """Columns of ``C_S = (L_norm + tau I + gamma^-2 P_S)^-1`` on demand, updated by rank one.

    Parameters
    ----------
    W : sparse matrix of shape (n, n)
        The learner's affinity (symmetric, nonnegative).
    labeled : array of int
        The labeled set S (distinct indices).
    tau : float
        Ridge ``>= 0``; must be ``> 0`` when a connected component holds no labeled point
        (the matrix is singular there otherwise).
    gamma : float
        Observation noise (standard deviation) ``> 0``.
    solver, rtol : str, float
        :class:`fastgssl.solvers.LaplacianSolver` method and relative tolerance.

    Attributes
    ----------
    index : ndarray of int
        The points j whose columns ``C_S e_j`` are kept, in the order of :attr:`columns`.
    columns : ndarray of shape (n, m)
        ``C_S e_j`` for j in :attr:`index`.
    labeled : ndarray of int
        The current S (in labeling order).
    n_solved : int
        Columns solved so far (each update is O(n) per kept column instead).
    n_setups : int
        Solver setups so far (one, then one per :data:`MAX_DOWNDATE_RANK` labels added).
    """

    def __init__(self, W, labeled, *, tau, gamma, solver="auto", rtol=1e-8):
        W = sp.csr_matrix(W, dtype=np.float64)
        self.n = W.shape[0]
        self.L = laplacian(W, kind="L_norm")
        self.tau = float(tau)
        self.gamma2 = float(gamma) ** 2
        self.solver = solver
        self.rtol = rtol
        self.labeled = np.asarray(labeled, dtype=np.int64).copy()
        comp, has = labeled_components(W, self.labeled)
        n_comp = has.size
        self._comp = comp
        if self.tau == 0.0:
            if not has.all():
                raise ValueError(
                    f"tau=0 makes the posterior precision L_norm + gamma^-2 P_S singular: "
                    f"{int((~has).sum())} of the graph's {n_comp} connected components hold "
                    f"no labeled point. Use tau > 0 (the prior variance along such a "
                    f"component's degree vector is then 1/tau)."
                )
        self.index = np.empty(0, dtype=np.int64)
        self.columns = np.empty((self.n, 0))
        self.n_solved = 0
        self.n_setups = 0
        self.sketch = None
        self.sketch_columns = None
        self._solver = None                  # set up for the precision of S_0
        self._downdate = np.empty((self.n, 0))   # U: C_S = C_{S_0} - U U^T

    # ------------------------------------------------------------------ solves
    def precision(self):
        """The sparse SPD matrix ``L_norm + tau I + gamma^-2 P_S`` (CSR)."""
        d = np.full(self.n, self.tau)
        d[self.labeled] += 1.0 / self.gamma2
        return (self.L + sp.diags(d)).tocsr()

    def _base_solve(self, B, rtol=None):
        """``C_{S_0} B`` with the kept setup (set up again for the current S, and U
        emptied, when none exists or U has grown past :data:`MAX_DOWNDATE_RANK`), to the
        relative residual ``rtol`` (None: :attr:`rtol`)."""
        if self._solver is None or self._downdate.shape[1] > MAX_DOWNDATE_RANK:
            self._solver = LaplacianSolver(self.precision(), solver=self.solver,
                                           rtol=self.rtol, null_space=None)
            self._downdate = np.empty((self.n, 0))
            self._base_components = np.unique(self._comp[self.labeled])
            self.n_setups += 1
        self._solver.rtol = self.rtol if rtol is None else rtol
        X, _ = self._solver.solve(B)
        self.n_solved += 1 if B.ndim == 1 else B.shape[1]
        return X

    def solve(self, B, rtol=None):
        """``C_S B`` for the current S: one block solve with the kept setup (relative
        residual ``rtol``, None: :attr:`rtol`), minus the downdate ``U (U^T B)``."""
        B = np.asarray(B, dtype=np.float64)
        X = self._base_solve(B, rtol)
        U = self._downdate
        return X - U @ (U.T @ B) if U.shape[1] else X

    def ensure(self, idx):
        """Solve and keep the columns of the points ``idx`` not kept yet."""
        idx = np.asarray(idx, dtype=np.int64)
        new = np.setdiff1d(idx, self.index)
        if new.size:
            B = np.zeros((self.n, new.size))
            B[new, np.arange(new.size)] = 1.0
            X = self._base_solve(B)
            U = self._downdate
            if U.shape[1]:
                X -= U @ U[new].T           # U^T e_j is the row j of U
            self.columns = np.hstack([self.columns, X])
            self.index = np.concatenate([self.index, new])

    def position(self, idx):
        """Positions of the points ``idx`` in :attr:`index` (all must be kept)."""
        order = np.argsort(self.index)
        pos = np.searchsorted(self.index, idx, sorter=order)
        return order[pos]

    def column(self, k):
        return self.columns[:, self.position(np.array([k]))[0]]

    # ------------------------------------------------------------------ labels
    def add_labels(self, new):
        """Add the points ``new`` to S, one rank-one update each (their columns are solved
        first, with the current S, when not kept)."""
        new = np.asarray(new, dtype=np.int64)
        if new.size == 0:
            return
        self.ensure(new)
        downdates = []
        for k in new:
            c = self.column(k).copy()
            denom = self.gamma2 + c[k]
            self.columns -= np.outer(c / denom, self.columns[k])
            if self.sketch_columns is not None:
                self.sketch_columns -= np.outer(c / denom, self.sketch_columns[k])
            downdates.append(c / np.sqrt(denom))
            self.labeled = np.append(self.labeled, k)
        if self._solver is None:
            return                     # the setup will be made for the new S
        if not np.isin(self._comp[new], self._base_components).all():
            # a first label in a component: C_{S_0} has the prior variance 1/tau along it,
            # which C_{S_0} - U U^T would cancel to O(1) (losing log10(1/tau) digits)
            self._solver = None
        else:
            self._downdate = np.column_stack([self._downdate] + downdates)

    def keep_only(self, idx):
        """Forget the kept columns of points outside ``idx`` (bounds the memory)."""
        keep = np.isin(self.index, idx)
        self.index = self.index[keep]
        self.columns = np.ascontiguousarray(self.columns[:, keep])

    # ------------------------------------------------------------------ estimates
    def make_sketch(self, n_sketch, random_state):
        """Solve and keep ``C_S Z`` for ``n_sketch`` Gaussian columns Z (once; updated by
        rank one with the kept columns afterwards), to the relative residual
        ``max(rtol, SKETCH_RTOL)``: these columns only preselect candidates."""
        if self.sketch is None or self.sketch.shape[1] != n_sketch:
            self.sketch = random_state.standard_normal((self.n, int(n_sketch)))
            self.sketch_columns = self.solve(self.sketch, rtol=max(self.rtol, SKETCH_RTOL))

    def sketch_estimates(self, points):
        """``(diag, sq_norm, col_sum)`` estimates of ``C_kk``, ``||C e_k||^2`` and
        ``1^T C e_k`` at ``points`` from the randomized Nystrom approximation
        ``C ~ P (Z^T P)^+ P^T`` of the sketch ``P = C_S Z`` (Z Gaussian, n x p).

        C's spectrum decays as fast as the smallest eigenvalues of L_norm grow (the reason
        an eigenbasis truncation works), so a few tens of columns capture it; these values
        only preselect the candidates on which the criteria are then computed exactly.
        """
        P, Z = self.sketch_columns, self.sketch
        M = np.linalg.pinv(Z.T @ P, rcond=1e-10, hermitian=True)
        Pk = P[points]                    # rows of the sketch at the points, m x p
        G = Pk @ M                        # C e_k ~ P G_k^T
        diag = np.einsum("ij,ij->i", G, Pk)
        sq = np.einsum("ij,ij->i", G @ (P.T @ P), G)
        col_sum = G @ P.sum(axis=0)
        return np.maximum(diag, 0.0), np.maximum(sq, 0.0), col_sum


def criterion_scores(columns, cand, gamma2, criterion, weights=None):
    """The exact criterion of each candidate from its column ``C_S e_k``.

    Parameters
    ----------
    columns : ndarray of shape (n, m)
        ``C_S e_k`` for the m candidates.
    cand : ndarray of int of shape (m,)
        The candidates' indices (the rows of ``columns`` holding ``(C_S)_kk``).
    gamma2 : float
        ``gamma^2``.
    criterion : {"vopt", "sigma_opt", "model_change"}
        ``||C e_k||^2``, ``(1^T C e_k)^2`` or ``w_k ||C e_k||``, over ``gamma^2 + C_kk``.
    weights : ndarray of shape (m,) or None
        ``w_k`` of model change (the learner's uncertainty at k).

    Returns
    -------
    ndarray of shape (m,)
    """
    V = columns
    diag = V[np.asarray(cand), np.arange(V.shape[1])]
    if criterion == "vopt":
        num = np.einsum("ij,ij->j", V, V)
    elif criterion == "sigma_opt":
        num = V.sum(axis=0) ** 2
    elif criterion == "model_change":
        num = np.asarray(weights) * np.sqrt(np.einsum("ij,ij->j", V, V))
    else:
        raise ValueError(f"criterion must be 'vopt', 'sigma_opt' or 'model_change', got "
                         f"{criterion!r}.")
    return num / (gamma2 + diag)


def greedy_batch(columns, cand, batch_size, gamma2, criterion, weights=None):
    """Choose ``batch_size`` candidates one by one, each by the exact criterion of the
    covariance updated for the ones chosen before it (rank one per pick, O(n m)).

    Parameters
    ----------
    columns, cand, gamma2, criterion, weights
        As in :func:`criterion_scores` (``columns`` is not modified).
    batch_size : int

    Returns
    -------
    chosen : ndarray of int of shape (batch_size,)
        Positions in ``cand``, in the order chosen.
    scores : ndarray of shape (batch_size,)
        The criterion of each at the moment it was chosen.
    """
    V = np.array(columns, dtype=np.float64, copy=True)
    rows = np.asarray(cand)
    chosen, scores = [], []
    taken = np.zeros(V.shape[1], dtype=bool)
    for _ in range(batch_size):
        score = criterion_scores(V, rows, gamma2, criterion, weights)
        score[taken] = -np.inf
        j = int(np.argmax(score))
        chosen.append(j)
        scores.append(float(score[j]))
        taken[j] = True
        c = V[:, j].copy()
        V -= np.outer(c / (gamma2 + c[rows[j]]), V[rows[j]])
    return np.array(chosen, dtype=np.int64), np.array(scores)
