"""The active-set box QP for the piecewise-quadratic losses without a graph (DESIGN 3.9):
the Huber and squared hinges on ``f = K alpha``, its free set factored and updated in
place (:mod:`fastgssl.solvers._lapack_loops`).
"""

from __future__ import annotations

import numba
import numpy as np

from fastgssl._indexing import take_block
from fastgssl._threads import small_blas
from fastgssl.solvers._active_set_fallback import (
    _NOT_PSD,
    _box_qp_constants,
    _partition_newton,
    _weighted_newton_fallback,
)
from fastgssl.solvers._lapack_loops import _border, _chol_delete, _free_step, _solve_border

__all__ = []


# ---------------------------------------------------------------------------------------------
# Active-set solver for the piecewise-quadratic losses (DESIGN 3.9): no graph, f = K alpha.
# ---------------------------------------------------------------------------------------------
def _piecewise_kind(loss):
    """``(name, h)`` of the built-in piecewise-quadratic losses, else ``(None, None)``."""
    name = getattr(loss, "name", None)
    if name == "huber_hinge":
        h = float(loss.params["h"])
        if not h > 0:
            raise ValueError(f"the Huber hinge needs a width h > 0, got h={h}.")
        return name, h
    if name == "squared_hinge":
        return name, 0.0
    return None, None


def _binary_targets(Y):
    return bool(np.all(np.abs(Y) == 1.0))


# Violators added to the quadratic set per outer iteration: max(_BLOCK, current size), the
# largest KKT violations first (bench/bench_svm_solver.py measured 20-50 alike).
_BLOCK = 32
_GROW = 0.25
# A warm start whose free set exceeds this fraction of the points is replaced by a = 0.
_WARM_FREE_MAX = 0.25
# Trial steps of the projected step on the free set before the ratio-test step.
_PROJECTED_TRIALS = (1.0, 0.5, 0.25)
_TRIALS = np.array(_PROJECTED_TRIALS)


# error_model="numpy": IEEE division (no zero-division checks and their exception code to
# compile; no division below can have a zero denominator).
_njit = numba.njit(cache=True, nogil=True, error_model="numpy")


# --- numba kernels of the active-set solver: no gathers of K rows, O(|F|^2) factor updates ---
# Written for a short cold-start compilation (a first run compiles them; bench/
# bench_coldstart.py --job measures it): plain loops instead of array expressions, slices,
# fancy indexing, np.minimum / np.flatnonzero / ``@`` (each pulls in a Numba implementation
# to compile, and a slice assignment compiles Numba's shape-mismatch error formatting), and
# no constant arguments to compiled callees (a literal argument compiles a callee once per
# value: ``m = 0`` at a call site compiled the factor update and its callees twice).
@_njit
def _top_violators(V, g, k):
    """The ``k`` entries of ``V`` with the largest ``|g[V]|``, in the order of ``V`` (ties
    at the k-th value: the first ones): a quickselect of the threshold, no sort."""
    n = V.shape[0]
    v = np.empty(n)
    for t in range(n):
        v[t] = abs(g[V[t]])
    lo, hi, target = 0, n - 1, k - 1  # Hoare partition, descending
    while lo < hi:
        pivot = v[(lo + hi) // 2]
        i, j = lo, hi
        while i <= j:
            while v[i] > pivot:
                i += 1
            while v[j] < pivot:
                j -= 1
            if i <= j:
                v[i], v[j] = v[j], v[i]
                i += 1
                j -= 1
        if target <= j:
            hi = j
        elif target >= i:
            lo = i
        else:
            break
    threshold = v[target]
    ties = k
    for t in range(n):
        if abs(g[V[t]]) > threshold:
            ties -= 1
    out = np.empty(k, dtype=np.int64)
    m = 0
    for t in range(n):
        a = abs(g[V[t]])
        if a > threshold or (a == threshold and ties > 0):
            if a == threshold:
                ties -= 1
            out[m] = V[t]
            m += 1
    return out


@_njit
def _add_rows(K, idx, w, out):
    """``out += sum_t w[t] K[idx[t], :]`` (= ``K[:, idx] @ w`` for a symmetric K) in place.

    Reads the rows of the C-contiguous K where they lie (four at a time, one pass over
    ``out`` per four rows): the product with the free set costs a read of its rows, never a
    gathered copy of them.
    """
    n = out.shape[0]
    m = idx.shape[0]
    t = 0
    while t + 4 <= m:
        i0, i1, i2, i3 = idx[t], idx[t + 1], idx[t + 2], idx[t + 3]
        w0, w1, w2, w3 = w[t], w[t + 1], w[t + 2], w[t + 3]
        for j in range(n):
            out[j] += w0 * K[i0, j] + w1 * K[i1, j] + w2 * K[i2, j] + w3 * K[i3, j]
        t += 4
    while t < m:
        i0 = idx[t]
        w0 = w[t]
        for j in range(n):
            out[j] += w0 * K[i0, j]
        t += 1


@_njit
def _fac_append(K, y, c, R, idx, m, V):
    """Border the factor of ``H_FF`` (F = ``idx[:m]``) with the points V: ``(R, idx, m)``.

    ``S = R^{-T} H_FV`` (dtrsm), ``R_VV = chol(H_VV - S^T S)`` (dsyrk, dpotrf), all in
    place in R (:func:`_solve_border`, :func:`_border`): O(m^2 k + m k^2 + k^3). The
    buffers double when full (up to the number of points). A Schur complement that is not
    positive definite raises LinAlgError (a kernel that is not PSD).
    """
    k = V.shape[0]
    if k == 0:
        return R, idx, m
    if m + k > R.shape[0]:
        cap = max(m + k, min(max(2 * R.shape[0], 64), y.shape[0]))
        R2 = np.zeros((cap, cap))
        for r in range(m):
            src = R[r]
            dst = R2[r]
            for j in range(r, m):
                dst[j] = src[j]
        idx2 = np.empty(cap, dtype=np.int64)
        for r in range(m):
            idx2[r] = idx[r]
        R, idx = R2, idx2
    for r in range(m):  # H_FV
        i = idx[r]
        yi = y[i]
        Ki = K[i]
        row = R[r]
        for t in range(k):
            row[m + t] = yi * y[V[t]] * Ki[V[t]]
    for s in range(k):  # H_VV, upper triangle
        vs = V[s]
        Kv = K[vs]
        row = R[m + s]
        for t in range(s, k):
            row[m + t] = y[vs] * y[V[t]] * Kv[V[t]]
        row[m + s] += c
    _solve_border(R, m, k)
    _border(R, m, k)
    for t in range(k):
        idx[m + t] = V[t]
    return R, idx, m + k


@_njit
def _fac_delete(K, y, c, R, idx, m, keep, mode=0):
    """Remove the points ``~keep[:m]`` from the factor: ``m'`` (R and idx in place).

    Batched Givens rotations (:func:`_chol_delete`, ~3 (m - p)^2 flops per point at
    position p) or, when cheaper, the trailing refactor from the first position p0 that
    changes: the leading p0 x p0 block does not depend on later points, so
    ``R_TT = chol(H_TT - B^T B)`` with ``B = R[:p0, T]`` for the kept points T after p0
    (p0 |T|^2 + |T|^3 / 3 flops, in BLAS / LAPACK at about 3x the rate). ``mode`` 1 / 2
    forces the rotations / the refactor (tests).
    """
    p0 = 0
    while p0 < m and keep[p0]:
        p0 += 1
    if p0 == m:
        return m
    givens = 0.0
    for p in range(p0, m):
        if not keep[p]:
            givens += 3.0 * (m - p) * (m - p)
    tail = float(m - p0)
    refactor = (p0 * tail * tail + tail**3 / 3.0) / 3.0 + 2.0 * tail * tail
    if mode == 1 or (mode == 0 and givens <= refactor):
        _chol_delete(R, m, keep)
        mk = 0
        for p in range(m):
            if keep[p]:
                idx[mk] = idx[p]
                mk += 1
        return mk
    nT = p0 - p0  # (0, not a constant: a constant argument compiles a callee again)
    for p in range(p0, m):  # kept points after p0: their columns move left, in order
        if keep[p]:
            for r in range(p0):
                R[r, p0 + nT] = R[r, p]
            idx[p0 + nT] = idx[p]
            nT += 1
    for r in range(p0):
        row = R[r]
        for j in range(p0 + nT, m):
            row[j] = 0.0
    for r in range(p0, m):
        row = R[r]
        for j in range(m):
            row[j] = 0.0
    for s in range(nT):  # H_TT, upper triangle
        i = idx[p0 + s]
        Ki = K[i]
        row = R[p0 + s]
        for t in range(s, nT):
            j = idx[p0 + t]
            row[p0 + t] = y[i] * y[j] * Ki[j]
        row[p0 + s] += c
    _border(R, p0, nT)
    return p0 + nT


@_njit
def _box_qp_kernel(K, y, c, b, U, a, f, max_outer, block, grow, trials):
    """The active-set loop of :func:`_box_qp_column` (in place on ``a``; returns the rest).

    ``b`` and ``U`` are per point (arrays of length l), ``c`` is one number.

    Returns ``(f, n_solve, outer, converged, margin, linear, fresh)``; ``fresh``: the
    returned f was summed from scratch (no point ever was on the linear piece, whose
    contribution ``f_E`` is kept up to date incrementally).
    """
    l = y.shape[0]
    bounded = False  # any finite upper bound (the Huber hinge's linear piece)
    for j in range(l):
        if U[j] < np.inf:
            bounded = True
    status = np.zeros(l, dtype=np.int8)  # 0: a = 0; 1: free; 2: a = U
    pending = np.empty(l, dtype=np.int64)  # a warm start's free set, factorized when needed
    n_pending = 0
    idx = np.empty(l, dtype=np.int64)  # scratch: point indices
    wts = np.empty(l)  # scratch: their weights
    nE = 0
    for j in range(l):
        if a[j] >= U[j]:
            status[j] = 2
            idx[nE] = j
            wts[nE] = y[j] * U[j]
            nE += 1
        elif a[j] > 0.0:
            status[j] = 1
            pending[n_pending] = j
            n_pending += 1
    f_E = np.zeros(l)
    touched = nE > 0
    if touched:
        _add_rows(K, idx[:nE], wts[:nE], f_E)
    m = idx.shape[0] - l  # (0, not a constant: a constant argument compiles a callee again)
    R = np.zeros((m, m))
    fidx = np.empty(m, dtype=np.int64)
    g = np.empty(l)
    cand = np.empty(l, dtype=np.int64)
    df = np.empty(l)
    n_solve = 0
    outer = 0
    converged = False
    while outer < max_outer:
        fmax = 0.0
        amax = 0.0
        bmax = 0.0
        for j in range(l):
            fmax = max(fmax, abs(f[j]))
            amax = max(amax, a[j])
            bmax = max(bmax, b[j])
        tau = 1e-11 * (bmax + fmax + c * amax)
        nV = 0
        n_upper = 0
        free_off = False
        for j in range(l):
            gj = y[j] * f[j] + c * a[j] - b[j]
            g[j] = gj
            st = status[j]
            if st == 2:
                n_upper += 1
            if (st == 0 and gj < -tau) or (st == 2 and gj > tau):
                cand[nV] = j
                nV += 1
            elif st == 1 and abs(gj) > tau:
                free_off = True
        if nV == 0 and not free_off:
            converged = True
            break
        outer += 1
        if n_pending:
            R, fidx, m = _fac_append(K, y, c, R, fidx, m, pending[:n_pending])
            n_pending = 0
        # the block: max(block, grow (|F| + |E|)), reached from block by doubling (a warm
        # start's large F needs few additions; a cold start doubles its blocks, also where
        # they all land on the linear piece, as at large lam)
        k = min(max(block, int(grow * (m + n_upper))), block << min(outer - 1, 30))
        if nV > k:  # (V may be empty: a warm start's free set is solved first)
            V = _top_violators(cand[:nV], g, k)
        else:
            V = cand[:nV]
        nV = V.shape[0]
        if bounded:
            # violators at 0 whose own 1-D minimizer -g / H_jj lies beyond U go to U
            # together, without the factor, when that lowers the QP objective (the linear
            # piece fills in blocks at large lam instead of through |V| x |V| factors)
            nS = 0
            for t in range(nV):
                v = V[t]
                if status[v] == 0 and -g[v] >= U[v] * (K[v, v] + c):
                    idx[nS] = v
                    wts[nS] = y[v] * U[v]
                    nS += 1
            if nS:
                for j in range(l):
                    df[j] = 0.0
                _add_rows(K, idx[:nS], wts[:nS], df)  # the change of f, and of the objective
                dq = 0.0
                for t in range(nS):
                    i = idx[t]
                    dq += U[i] * g[i] + 0.5 * U[i] * (y[i] * df[i] + c * U[i])
                if dq < 0.0:
                    touched = True
                    for t in range(nS):
                        i = idx[t]
                        status[i] = 2
                        a[i] = U[i]
                    for j in range(l):
                        f_E[j] += df[j]
                        f[j] += df[j]
                    nrest = 0
                    for t in range(nV):
                        v = V[t]
                        if status[v] != 2:
                            V[nrest] = v
                            nrest += 1
                    nV = nrest
                    if nrest == 0 and m == 0:
                        continue
        for t in range(nV):
            v = V[t]
            if status[v] == 2:
                touched = True
                row = K[v]
                w = y[v] * U[v]
                for j in range(l):
                    f_E[j] -= w * row[j]
            status[v] = 1
        R, fidx, m = _fac_append(K, y, c, R, fidx, m, V[:nV])
        while m:  # solve on the free set until the solution is feasible
            rhs = np.empty(m)
            aF = np.empty(m)
            UF = np.empty(m)
            for r in range(m):
                i = fidx[r]
                rhs[r] = b[i] - y[i] * f_E[i]
                aF[r] = a[i]
                UF[r] = U[i]
            kind, aF_new, code = _free_step(R, m, rhs, aF, UF, trials)
            n_solve += 1
            for r in range(m):
                a[fidx[r]] = aF_new[r]
            if kind == 0:
                break
            keep = np.ones(m, dtype=np.bool_)
            for r in range(m):
                if code[r] == 1:
                    status[fidx[r]] = 0
                    keep[r] = False
                elif code[r] == 2:
                    touched = True
                    j0 = fidx[r]
                    status[j0] = 2
                    keep[r] = False
                    row = K[j0]
                    w = y[j0] * U[j0]
                    for j in range(l):
                        f_E[j] += w * row[j]
            m = _fac_delete(K, y, c, R, fidx, m, keep)
        for j in range(l):
            f[j] = f_E[j]
        if m:
            for r in range(m):
                i = fidx[r]
                wts[r] = y[i] * a[i]
            _add_rows(K, fidx[:m], wts[:m], f)
    margin = 0
    linear = 0
    for j in range(l):
        if status[j] == 1:
            margin += 1
        elif status[j] == 2:
            linear += 1
    return f, n_solve, outer, converged, margin, linear, not touched


def _box_qp_column(K, y, c, b, U, a, f, max_outer, info):
    """Primal active-set method for the box QP dual to one column of the kernel machine.

    With ``a = y * alpha`` (``y`` in {-1, +1}) the stationarity condition of
    ``(1/l) sum ell(y_j, f_j) + gamma_a alpha^T K alpha`` (``alpha = -ell'(f) / (2 gamma_a
    l)``) is the KKT system of::

        min_a  1/2 a^T (Y K Y + c I) a - b 1^T a    subject to  0 <= a <= U,

    Huber hinge: ``c = 4 h gamma_a l``, ``b = 1 + h``, ``U = 1 / (2 gamma_a l)``; squared
    hinge: ``c = gamma_a l``, ``b = 1``, ``U = inf``. The three pieces of the loss are the
    three states of a point: ``a = 0`` (rest, ``y f > 1 + h``), ``0 < a < U`` (margin band M)
    and ``a = U`` (linear piece E). On the free set M the solution is the |M| x |M| system
    ``(K_MM + c I) alpha_M = b y_M - K_ME alpha_E`` (DESIGN 3.9).

    Each outer iteration adds the largest KKT violators (bound points whose gradient
    ``g = y f + c a - b`` points into the box; at most ``max(_BLOCK, _GROW |F|)``) to the
    free set F, bordering the Cholesky factor of ``H_FF = Y_F K_FF Y_F + c I``
    (:func:`_fac_append`), then solves on the free set until the solution is feasible: a
    projected step onto the box if it lowers the QP objective (its change is
    ``1/2 |R d|^2 - (R d)^T R p``, O(|F|^2); :func:`_free_step`), else the ratio-test step to
    the first bound hit; the points that reach a bound leave the factor (Givens rotations or
    a trailing refactor, :func:`_fac_delete`). The inner iterations touch no n-vector except
    the contribution ``f_E = K_{:,E} y_E U`` of the linear piece (one row of K per point that
    joins or leaves E); ``f = f_E + K_{:,F} (y a)_F`` is recomputed once per outer iteration
    by one pass over the free set's rows of K (:func:`_add_rows`). The QP objective decreases
    monotonically and no free set repeats, so the method terminates; it stops when no
    violator is left (the KKT conditions hold to round-off). The loop is compiled
    (:func:`_box_qp_kernel`): a small problem costs microseconds per iteration, which the
    exact CV's many refits need.
    """
    try:
        f, n_solve, outer, converged, margin, linear, fresh = _box_qp_kernel(
            K, y, float(c), b, U, a, f, int(max_outer), _BLOCK, float(_GROW), _TRIALS)
    except np.linalg.LinAlgError:
        raise ValueError(_NOT_PSD) from None
    info["n_iter"] += n_solve
    info["outer"] += outer
    info["converged"] = bool(converged)
    info["margin"] = int(margin)
    info["linear"] = int(linear)
    return a, f, bool(fresh)


def _fit_active_set(K, Y, loss, kind, h, gamma_a, init, tol, max_iter, weights=None):
    """All points labeled (targets +-1); one active-set solve per column. (alpha, infos).

    ``weights``: the loss weights w (mean 1, see :func:`_loss_weights`) or None. With
    weights the stationarity condition is ``a_j = w_j (-ell'(f_j) y_j) / (2 gamma_a l)``: the
    box QP has ``c_j = c / w_j`` and ``U_j = U w_j``. In the variables ``a^_j = a_j / s_j``,
    ``s_j = sqrt(w_j)``, it is the unweighted QP on the kernel ``S K S`` with one ``c`` again,
    ``b_j = b s_j`` and ``U_j = U s_j`` (``f^ = S f``); points of weight 0 have ``alpha_j =
    0`` and are left out.
    """
    K = np.ascontiguousarray(K, dtype=np.float64)  # the compiled loops read rows of K
    l, k = Y.shape
    c, b, U = _box_qp_constants(kind, h, gamma_a, l)
    alpha = np.zeros_like(Y)
    keep = None
    if weights is not None:
        keep = np.flatnonzero(weights > 0)
        root = np.sqrt(weights[keep])
        K_w = take_block(K, keep)
        K_w *= root[:, None]
        K_w *= root[None, :]
        bvec, Uvec = b * root, U * root
        Y_w = Y[keep]
    else:
        root = None
        K_w, Y_w = K, Y
        bvec, Uvec = np.full(l, b), np.full(l, U)
    m = Y_w.shape[0]
    if init is not None:
        # a = y * alpha of the warm start, projected onto the box (a fold refit's start is
        # the full fit's alpha rescaled by l / (l - m): its linear piece lands on U)
        A0 = Y_w * np.asarray(init if keep is None else init[keep], dtype=np.float64)
        if root is not None:
            A0 = A0 / root[:, None]
        A0 = np.clip(A0, 0.0, Uvec[:, None])
        A0 = np.where(A0 >= Uvec[:, None] * (1.0 - 1e-12), Uvec[:, None], A0)
    infos = []
    # one BLAS thread for the column loop whatever l: its operations are gemv's and
    # factorizations of the |M| x |M| block, and on a loaded 2-core machine two threads made
    # a 3000-point fit 27x slower (4.7 s against 0.17 s for two columns of MNIST)
    with small_blas(0.0):
        for j in range(k):
            y = np.ascontiguousarray(Y_w[:, j])
            info = {"n_iter": 0, "outer": 0, "converged": False, "solver": "active-set",
                    "step": np.nan, "t": 1.0, "slope": np.nan, "margin": 0, "linear": 0,
                    "warm_start": init is not None}
            a = np.zeros(m) if init is None else np.ascontiguousarray(A0[:, j])
            if init is not None:
                n_free = int(np.count_nonzero((a > 0) & (a < Uvec)))
                if n_free > max(4 * _BLOCK, _WARM_FREE_MAX * m):
                    # a start from another lam (a regularization path) puts most of the
                    # previous support strictly inside the new box: factorizing it and
                    # removing the points one ratio test at a time cost 200x a cold start
                    # (MNIST, n = 3000, lam 1 -> 1e-2); cold is never far from the best
                    a = np.zeros(m)
                    info["warm_start"] = False
                    info["warm_start_rejected"] = n_free
            f = np.zeros(m)
            sup = np.flatnonzero(a > 0)
            if sup.size:
                _add_rows(K_w, sup, y[sup] * a[sup], f)
            a, f, fresh = _box_qp_column(K_w, y, c, bvec, Uvec, a, f, max_iter, info)
            if not (fresh and info["converged"]):
                # certificate: f from scratch (the linear piece's contribution was updated
                # incrementally and carries round-off), the KKT conditions again
                sup = np.flatnonzero(a > 0)
                f = np.zeros(m)
                _add_rows(K_w, sup, y[sup] * a[sup], f)
                a, f, _ = _box_qp_column(K_w, y, c, bvec, Uvec, a, f, max_iter, info)
            if root is None:
                a_j = y * a
            else:  # back from the scaled variables: alpha = y s a^, f on all points
                a_j = np.zeros(l)
                a_j[keep] = y * root * a
                f = np.zeros(l)
                _add_rows(K, keep, a_j[keep], f)  # K[:, keep] a_keep without copying K
            if not info["converged"]:
                if root is None:
                    info["fallback"] = "partition Newton with line search"
                    a_j, f = _partition_newton(K, y, kind, h, gamma_a, a_j, f, loss, tol,
                                               max_iter, info)
                else:
                    info["fallback"] = "weighted Newton with line search"
                    a_j, f = _weighted_newton_fallback(K, Y[:, j], loss, weights, gamma_a,
                                                       a_j, tol, max_iter, info)
            alpha[:, j] = a_j
            y_full = Y[:, j]
            w_full = 1.0 if weights is None else weights
            g = w_full * loss.d1(y_full, f)
            scale = np.abs(a_j).max()
            resid = np.abs(a_j + g / (2.0 * gamma_a * l)).max()
            info.update(objective=float((w_full * loss.value(y_full, f)).mean()
                                        + gamma_a * (a_j @ f)),
                        kkt=float(resid / scale) if scale > 0 else float(resid))
            infos.append(info)
    return alpha, infos
