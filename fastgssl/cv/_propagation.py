"""Exact transductive CV of graph propagation from one block solve (DESIGN 3.10).

Hiding the labels of a fold F and refitting on the kept labels K = S \\ F leaves the graph and,
for Poisson learning and local-global consistency, the system matrix unchanged; only the
right-hand side changes. For the harmonic solution and the criterion SS(lambda) the matrix
changes by a rank-|F| term. In every case the refit's values at the held-out points, and the
column sums that class balancing needs, follow from one solve with the l labeled indicator
columns (one solver setup, l right-hand sides) and l x l algebra per fold:

- **Poisson** (Calder et al. 2020): G = L^+ (E_S - c), degree-centred per component; the refit
  is u' = G_{:, K} (Y_K - ybar_K) (c cancels because the weights sum to zero per component),
  so held-out rows need the block G_SS only.
- **LGC** (Zhou et al. 2004): F' = D^1/2 M^-1 D^1/2 E_K Y_K with M = D - alpha W; again the
  block of the l columns at the labeled rows.
- **Harmonic** (Zhu et al. 2003): with U the unlabeled points and Z = L_UU^-1 (-L_US) (the l
  columns), the fold's values solve the |F| x |F| Schur system
  (L_FF + L_FU Z_F) f_F = -(L_FK + L_FU Z_K) Y_K, i.e. H = L_SS + L_SU Z restricted.
- **SS(lambda)** (Bengio et al. 2005): A = lambda Delta_S + L loses lambda E_F E_F^T; by
  Woodbury (A'^-1)_{F,K} = B_FK + B_FF (I / lambda - B_FF)^-1 B_FK with B = A^-1 E_S. The
  capacitance is a difference of terms of order 1/lambda, so the block is solved to
  rtol = min(rtol, 1e-8 / lambda).

A held-out point in a graph component with no kept label has no such algebra: it takes the
value the learner's ``unlabeled_policy`` gives there in the refit (``"abstain"``: a NaN row,
which every CV score counts as an error, as the refit's label -1 is; ``"uniform"``: the
uniform row), and a fold holding such points under ``"nearest"`` (which needs the
coordinates) is refitted (``info["refitted_folds"]``; ``info["policy_folds"]`` lists the folds
whose orphans took the policy's value). For Poisson learning a held-out point in a component
whose kept labels are of a single class takes that class, as the refit does.

Leave-one-label-out (each labeled point its own fold) costs the same block solve as t-fold.
"""

from __future__ import annotations

import contextlib
import time

import numpy as np
import scipy.linalg
import scipy.sparse as sp

from fastgssl._components import labeled_components
from fastgssl._digest import content_digest
from fastgssl.regularizers import laplacian
from fastgssl.solvers import reused_solver

__all__ = ["propagation_predictions", "shared_blocks"]

# the blocks of the systems solved inside a shared_blocks() context (a grid search)
_SHARED = None


@contextlib.contextmanager
def shared_blocks():
    """Within the block, the block solve of one system (graph, kind, lam / alpha, solver,
    tolerance, labeled set) is computed once and reused: candidates on one graph that differ
    only in what happens after the solve (class balancing, class priors) share it. Not
    thread-safe (one process evaluating a grid)."""
    global _SHARED
    previous = _SHARED
    _SHARED = {}
    try:
        yield
    finally:
        _SHARED = previous


def _system_key(system, S, Y_S):
    """The system's identity: a digest of W's entries (a graph equal to another shares its
    block whatever object holds it), the kind and its parameters, the labels."""
    lam = system.lam if system.kind == "ss" else None
    alpha = system.alpha if system.kind == "lgc" else None
    return (content_digest(sp.csr_matrix(system.graph)), content_digest(np.asarray(S)),
            content_digest(np.asarray(Y_S)), system.kind, lam, alpha, system.solver,
            system.rtol)


# columns of the indicator block solved together (bounds the n x block work array)
_MAX_BLOCK_NUMBERS = 1 << 24


def _laplacian(W):
    """L = D - W built as the learners build it (so the fit's solver setup is reused)."""
    return sp.csr_matrix(laplacian(W, kind="L", validate=False))


def _column_blocks(l, n):
    width = max(1, min(l, _MAX_BLOCK_NUMBERS // max(n, 1)))
    return [np.arange(c0, min(l, c0 + width)) for c0 in range(0, l, width)]


def _solver(Q, system, rtol, null_space):
    # the fit solved with the same matrix: its setup (LU, multigrid) is reused
    return reused_solver(Q, solver=system.solver, rtol=rtol, null_space=null_space,
                         check_input=False)  # built from the learner's checked graph


def _blocks(system, S, labeled, comp, regular):
    """(core l x l, column sums (l,), extra) of the block solve for the system's kind.

    ``regular``: mask of the vertices on which the algebra runs (components with a label;
    for Poisson with labels of two classes or more). Rows and columns of labeled points
    outside it are zero.
    """
    W = sp.csr_matrix(system.graph)
    n = W.shape[0]
    l = S.size
    core = np.zeros((l, l))
    colsum = np.zeros(l)
    kind = system.kind
    info = {}
    S_in = np.flatnonzero(regular[S])  # positions (in S) of the labeled points in use
    if kind == "harmonic":
        L = _laplacian(W)
        U = np.flatnonzero(regular & ~labeled)
        SS = L[S][:, S].toarray()
        core[:] = SS
        if U.size and S_in.size:
            L_UU = L[U][:, U].tocsr()
            L_SU = L[S][:, U].tocsr()
            L_US = L_SU.T.tocsc()  # L is symmetric
            solver = _solver(L_UU, system, system.rtol, None)
            for cols in _column_blocks(S_in.size, U.size):
                pos = S_in[cols]
                rhs = -L_US[:, pos].toarray()
                Z, sinfo = solver.solve(rhs)
                core[:, pos] += L_SU @ Z
                colsum[pos] = Z.sum(axis=0)
                info = sinfo
        return core, colsum, info
    if kind == "ss":
        L = _laplacian(W)
        idx = np.flatnonzero(regular)
        pos_of = np.full(n, -1)
        pos_of[idx] = np.arange(idx.size)
        lam = system.lam
        A = (L[idx][:, idx] + sp.diags(lam * labeled[idx].astype(np.float64))).tocsr()
        rtol = max(min(system.rtol, 1e-8 / lam), 1e-14)
        solver = _solver(A, system, rtol, None)
        for cols in _column_blocks(S_in.size, idx.size):
            pos = S_in[cols]
            E = np.zeros((idx.size, pos.size))
            E[pos_of[S[pos]], np.arange(pos.size)] = 1.0
            B, info = solver.solve(E)
            core[np.ix_(S_in, pos)] = B[pos_of[S[S_in]]]
            colsum[pos] = B.sum(axis=0)
        info = {"rtol": rtol, "solve": info}
        return core, colsum, info
    d = np.asarray(W.sum(axis=1)).ravel()
    if kind == "lgc":
        idx = np.flatnonzero(regular & (d > 0))
        Q = (sp.diags(d[idx]) - system.alpha * W[idx][:, idx]).tocsr()
        null = None
    elif kind == "poisson":
        idx = np.flatnonzero(regular)
        Q = _laplacian(W)[idx][:, idx].tocsr()
        null = "auto"
    else:
        raise ValueError(f"unknown propagation system kind {kind!r}.")
    pos_of = np.full(n, -1)
    pos_of[idx] = np.arange(idx.size)
    S_act = S_in[pos_of[S[S_in]] >= 0]
    if S_act.size == 0:  # no component where the algebra runs: every fold is refitted
        return core, colsum, info
    solver = _solver(Q, system, system.rtol, null)
    sd = np.sqrt(d[idx])
    for cols in _column_blocks(S_act.size, idx.size):
        pos = S_act[cols]
        E = np.zeros((idx.size, pos.size))
        E[pos_of[S[pos]], np.arange(pos.size)] = 1.0
        if kind == "lgc":
            G, info = solver.solve(sd[:, None] * E)
            G = sd[:, None] * G
        else:
            from fastgssl.regularizers import degree_centered

            G, info = solver.solve(E)
            G = degree_centered(G, comp[idx], d[idx])  # idx: whole components of W
        core[np.ix_(S_act, pos)] = G[pos_of[S[S_act]]]
        colsum[pos] = G.sum(axis=0)
    return core, colsum, info


def _fold_coefficients(kind, Y_K, comp_K):
    """Weights of the kept labels' columns: Y_K, or Y_K - ybar per component (Poisson)."""
    if kind != "poisson":
        return Y_K
    C = Y_K.copy()
    for c in np.unique(comp_K):
        members = comp_K == c
        C[members] -= Y_K[members].mean(axis=0)
    return C


def _fold_values(kind, core, colsum, lam, F, K, Y_K, comp_S):
    """Raw values at the held-out positions F and column sums over the fold's unlabeled
    points, for the refit on the kept positions K."""
    C = _fold_coefficients(kind, Y_K, comp_S[K])
    if kind in ("poisson", "lgc"):
        rows = core[np.ix_(F, K)] @ C
        mass = (colsum[K] - core[np.ix_(K, K)].sum(axis=0)) @ C
        return rows, mass
    if kind == "harmonic":
        H_FF = core[np.ix_(F, F)]
        rhs = -(core[np.ix_(F, K)] @ C)
        f_F = scipy.linalg.solve(H_FF, rhs, assume_a="pos", check_finite=False)
        mass = colsum[K] @ C + (colsum[F] + 1.0) @ f_F
        return f_F, mass
    # SS(lambda), Woodbury on the removed fit term
    B_FF = core[np.ix_(F, F)]
    B_FK = core[np.ix_(F, K)]
    cap = np.eye(F.size) / lam - B_FF
    X = scipy.linalg.solve(cap, B_FK, check_finite=False)
    rows = lam * ((B_FK + B_FF @ X) @ C)
    total = colsum[K] + colsum[F] @ X
    kept_rows = core[np.ix_(K, K)].sum(axis=0) + core[np.ix_(K, F)].sum(axis=0) @ X
    mass = lam * ((total - kept_rows) @ C)
    return rows, mass


def propagation_predictions(state, folds, n_folds, refit_fold):
    """Exact out-of-fold decision values of a propagation learner (transductive protocol).

    Parameters
    ----------
    state : CVState
        With :attr:`~fastgssl.CVState.propagation` set.
    folds : ndarray of int of shape (n,)
    n_folds : int
    refit_fold : callable
        ``refit_fold(i) -> values of the held-out rows`` (the brute-force re-solve), used
        for folds the algebra cannot handle.

    Returns
    -------
    pred : ndarray of shape (l, k)
        Rows in the order of ``np.flatnonzero(state.labeled)``.
    info : dict
    """
    t0 = time.perf_counter()
    system = state.propagation
    labeled = np.asarray(state.labeled, dtype=bool)
    S = np.flatnonzero(labeled)
    Y, _, _ = state.columns()
    Y_S = Y[S]
    if state.classification:
        Y_S = (Y_S > 0).astype(np.float64)  # +-1 one-vs-rest columns -> one-hot
    W = sp.csr_matrix(system.graph)
    comp, has_label = labeled_components(W, S)
    comp_S = comp[S]
    n_comp = has_label.size
    regular_comp = has_label.copy()
    if system.kind == "poisson":
        n_classes_in = np.zeros(n_comp, dtype=np.int64)
        for c in np.unique(comp_S):
            n_classes_in[c] = np.count_nonzero(Y_S[comp_S == c].sum(axis=0) > 0)
        regular_comp = n_classes_in >= 2
    key = _system_key(system, S, Y_S) if _SHARED is not None else None
    if key is not None and key in _SHARED:
        core, colsum, solve_info = _SHARED[key]
        solve_info = {"shared": True, "solve": solve_info}
    else:
        core, colsum, solve_info = _blocks(system, S, labeled, comp, regular_comp[comp])
        if key is not None:
            _SHARED[key] = (core, colsum, solve_info)
    t1 = time.perf_counter()
    fl = np.asarray(folds)[S]
    pred = np.empty((S.size, Y.shape[1]))
    refitted, policy_folds = [], []
    for i in range(n_folds):
        F = np.flatnonzero(fl == i)
        K = np.flatnonzero(fl != i)
        status = _held_out_status(system.kind, comp_S, F, K, Y_S, regular_comp)
        orphans = F[status == _ORPHAN]
        if orphans.size and system.fill is None:
            pred[F] = refit_fold(i)  # the policy needs the refit (e.g. "nearest")
            refitted.append(i)
            continue
        rows = np.empty((F.size, Y.shape[1]))
        alg = status == _ALGEBRA
        mass = np.zeros(Y.shape[1])
        if alg.any():
            rows[alg], mass = _fold_values(system.kind, core, colsum, system.lam, F[alg], K,
                                           Y_S[K], comp_S)
        single = status == _SINGLE  # Poisson: a component whose kept labels hold one class
        for j in np.flatnonzero(single):
            kept = K[comp_S[K] == comp_S[F[j]]]
            rows[j] = Y_S[kept[0]]
        reached = ~(status == _ORPHAN)
        if system.scores is not None and state.classification and reached.any():
            rows[reached] = system.scores(rows[reached], mass, Y_S[K].sum(axis=0))
        if orphans.size:  # components without a kept label: the learner's fill policy
            rows[~reached] = system.fill(Y_S[K])
            policy_folds.append(i)
        pred[F] = rows
    info = {
        "solver": f"one block solve with {S.size} labeled right-hand sides "
                  f"(LaplacianSolver, {system.solver}), then l x l algebra per fold",
        "reduction": f"{system.kind}: same graph, labels hidden (DESIGN 3.10)",
        "refitted_folds": refitted,
        "policy_folds": policy_folds,
        "block_time": t1 - t0,
        "block_solve": solve_info,
    }
    return pred, info


_ALGEBRA, _SINGLE, _ORPHAN = 0, 1, 2


def _held_out_status(kind, comp_S, F, K, Y_S, regular_comp):
    """Per held-out point: its value follows from the block algebra, or its component keeps
    labels of a single class only (Poisson learning gives it that class), or keeps no
    label (the learner's unlabeled-component policy)."""
    status = np.full(F.size, _ALGEBRA)
    kept_comp = comp_S[K]
    for c in np.unique(comp_S[F]):
        in_c = comp_S[F] == c
        kept = kept_comp == c
        if not kept.any():
            status[in_c] = _ORPHAN
        elif kind == "poisson" and (not regular_comp[c] or np.count_nonzero(
                Y_S[K][kept].sum(axis=0) > 0) < 2):
            status[in_c] = _SINGLE
    return status
