"""The exact assignment of rows to classes with prescribed class sizes.

A transportation problem, max sum_i S_{i, c(i)} over labelings with |{i : c(i) = c}| = m_c,
whose linear relaxation has an integral optimum: the exact class-size rounding of a learner's
scores, which is CombCut's minorize-maximize step (Omati et al., AAAI 2026; DESIGN 3.13).
:func:`exact_size_assignment` solves it exactly for a few classes: dual coordinate ascent
(:func:`fastgssl.models._volume_mbo.bounded_assignment`) to start, successive shortest paths
and negative-cycle cancelling on the k-node residual graph of the classes to finish.
"""

from __future__ import annotations

import numba
import numpy as np
import scipy.sparse as sp

from fastgssl._sparse_blocks import principal_submatrix
from fastgssl.models._volume_mbo import bounded_assignment

__all__ = ["exact_size_assignment", "sized_problem", "unlabeled_class_sizes"]

# chunks of the parallel scan: a fixed number, so that the ties of the minimum resolve the
# same way on any number of threads
_CHUNKS = 16
# sweeps of the dual ascent that starts, at most, in steps that must bring the sizes closer
# (ties stall it; the repair by successive shortest paths finishes)
_START_SWEEPS = 40
_SWEEPS_PER_STEP = 2

# ---------------------------------------------------------------------------------------------
# the exact assignment with class sizes
# ---------------------------------------------------------------------------------------------


@numba.njit(cache=True, parallel=True)
def _class_graph(S, labels, k):  # pragma: no cover - compiled
    """Residual graph of the assignment on the classes: cost[a, b] = min over the rows i of
    class a of S_ia - S_ib (the loss of moving i from a to b), and that row in arg[a, b]."""
    m = S.shape[0]
    size = (m + _CHUNKS - 1) // _CHUNKS
    cost = np.full((_CHUNKS, k, k), np.inf)
    arg = np.full((_CHUNKS, k, k), -1, dtype=np.int64)
    for t in numba.prange(_CHUNKS):
        for i in range(t * size, min(m, (t + 1) * size)):
            a = labels[i]
            for b in range(k):
                if b != a:
                    c = S[i, a] - S[i, b]
                    if c < cost[t, a, b]:
                        cost[t, a, b] = c
                        arg[t, a, b] = i
    best = cost[0].copy()
    at = arg[0].copy()
    for t in range(1, _CHUNKS):
        for a in range(k):
            for b in range(k):
                if cost[t, a, b] < best[a, b]:
                    best[a, b] = cost[t, a, b]
                    at[a, b] = arg[t, a, b]
    return best, at


@numba.njit(cache=True)
def _bellman_ford(cost, dist, tol):  # pragma: no cover - compiled
    """Bellman-Ford from the nodes of finite ``dist`` (updated in place); a relaxation must
    gain more than ``tol``. Returns (pred, x): x = -1 without a negative cycle, else a node
    whose predecessor chain enters one."""
    k = cost.shape[0]
    pred = np.full(k, -1, dtype=np.int64)
    x = -1
    for _ in range(k):
        x = -1
        for u in range(k):
            if dist[u] == np.inf:
                continue
            for v in range(k):
                c = cost[u, v]
                if u != v and c < np.inf and dist[u] + c < dist[v] - tol:
                    dist[v] = dist[u] + c
                    pred[v] = u
                    x = v
        if x == -1:
            break
    return pred, x


def _negative_cycle(cost, tol):
    """A cycle of the class graph of cost below ``-tol`` (list of classes, each followed by
    the next), or None."""
    k = cost.shape[0]
    pred, x = _bellman_ford(cost, np.zeros(k), tol)
    if x == -1:
        return None
    for _ in range(k):
        x = pred[x]
        if x == -1:
            return None
    cycle = [x]
    v = pred[x]
    while v != x and len(cycle) <= k:
        cycle.append(v)
        v = pred[v]
    cycle.reverse()
    total = sum(cost[cycle[t], cycle[(t + 1) % len(cycle)]] for t in range(len(cycle)))
    return cycle if v == x and total < -tol else None


@numba.njit(cache=True)
def _tied_rows(S, labels, path, cost, tol, need):  # pragma: no cover - compiled
    """For each edge (path[t], path[t + 1]) up to ``need`` rows of class path[t] whose move
    costs at most cost[path[t], path[t + 1]] + tol; returns (rows, counts)."""
    L = path.size - 1
    k = cost.shape[0]
    edge = np.full(k, -1, dtype=np.int64)
    for t in range(L):
        edge[path[t]] = t
    rows = np.empty((L, need), dtype=np.int64)
    counts = np.zeros(L, dtype=np.int64)
    for i in range(S.shape[0]):
        t = edge[labels[i]]
        if t < 0 or counts[t] == need:
            continue
        a = path[t]
        b = path[t + 1]
        if S[i, a] - S[i, b] <= cost[a, b] + tol:
            rows[t, counts[t]] = i
            counts[t] += 1
    return rows, counts


def _move_along(path, arg, labels):
    """Move the cheapest row of each edge (u, v) of ``path`` from u to v; the classes of a
    simple path or cycle are distinct, so are the rows."""
    rows = [arg[path[t], path[t + 1]] for t in range(len(path) - 1)]
    for t, i in enumerate(rows):
        labels[i] = path[t + 1]


def exact_size_assignment(scores, sizes):
    """The labeling with class sizes exactly ``sizes`` that maximises the total score.

    Solves, exactly (to round-off)::

        max_c  sum_i scores[i, c(i)]   subject to   |{i : c(i) = c}| = sizes[c],

    a transportation problem whose linear relaxation has an integral optimum.

    Parameters
    ----------
    scores : array-like of shape (n_rows, n_classes)
        Finite scores.
    sizes : array-like of int of shape (n_classes,)
        Nonnegative class sizes summing to ``n_rows``.

    Returns
    -------
    labels : ndarray of int of shape (n_rows,)
        Class index of each row.

    Notes
    -----
    Start: the dual coordinate ascent of :func:`fastgssl.models._volume_mbo.bounded_assignment`
    (labels argmax_c (S_ic - q_c): optimal for the sizes they have, which ties can leave off
    the target; it runs while each step of two sweeps brings the sizes closer). The k-node
    *class graph* has an edge a -> b of cost min_{i in a} (S_ia - S_ib), the cheapest move of
    a row from a to b; it is the residual network of the transportation problem with its
    parallel arcs merged (a simple path or cycle of it moves distinct rows). Repair:
    successive shortest paths (Bellman-Ford) from the classes above their size to those
    below, which keep the labeling optimal for its sizes; when r rows of every edge of the
    path tie with its cheapest, r units go along it at once (the path stays shortest). Check:
    negative cycles of the class graph are cancelled until none is left, the optimality
    criterion of min-cost flow (Ahuja, Magnanti & Orlin 1993, theorem 9.1). Each round is an
    O(n_rows n_classes) scan (Numba, in parallel) and an O(n_classes^3) Bellman-Ford. Cycles
    and paths shorter than 64 eps n_classes max|S| count as zero (round-off). At 10^5 rows and
    10 classes: 0.3 s, 0.5 s with scores rounded to 0.1 (ties everywhere), on 2 shared cores
    (bench/bench_cut_refinement.py --scale).

    Examples
    --------
    >>> import numpy as np
    >>> from fastgssl.models import exact_size_assignment
    >>> S = np.array([[3.0, 0.0], [2.0, 0.0], [1.0, 0.0]])
    >>> exact_size_assignment(S, [1, 2]).tolist()
    [0, 1, 1]
    """
    S = np.ascontiguousarray(scores, dtype=np.float64)
    if S.ndim != 2 or S.shape[1] < 1:
        raise ValueError(f"scores must be a 2-D array (n_rows, n_classes), got shape {S.shape}.")
    if not np.isfinite(S).all():
        raise ValueError("scores must be finite (no NaN or infinity).")
    m, k = S.shape
    target = np.asarray(sizes)
    if target.shape != (k,) or not np.all(target == np.round(target)) or (target < 0).any():
        raise ValueError(
            f"sizes must hold {k} nonnegative integers (one per column of scores), got "
            f"{np.asarray(sizes).tolist()}."
        )
    target = target.astype(np.int64)
    if int(target.sum()) != m:
        raise ValueError(f"sizes must sum to the number of rows {m}, got {int(target.sum())}.")
    if m == 0:
        return np.zeros(0, dtype=np.int64)
    if k == 1:
        return np.zeros(m, dtype=np.int64)
    # the dual ascent, in steps of a few sweeps while it brings the sizes closer
    prices = np.zeros(k)
    off = np.inf
    for _ in range(_START_SWEEPS // _SWEEPS_PER_STEP):
        labels, prices = bounded_assignment(S, target, target, prices=prices,
                                            max_sweeps=_SWEEPS_PER_STEP)
        before, off = off, np.abs(np.bincount(labels, minlength=k) - target).sum()
        if off == 0 or off >= before:
            break
    labels = labels.astype(np.int64)
    # cost differences of rows carry round-off of the order of eps |S|
    tol = 64.0 * np.finfo(np.float64).eps * k * max(1.0, float(np.abs(S).max()))
    _cancel_cycles(S, labels, k, tol)
    while True:
        counts = np.bincount(labels, minlength=k)
        if (counts == target).all():
            break
        cost, arg = _class_graph(S, labels, k)
        dist = np.where(counts > target, 0.0, np.inf)
        pred, _ = _bellman_ford(cost, dist, tol)
        short = np.flatnonzero(counts < target)
        path = [int(short[np.argmin(dist[short])])]
        # back to a class above its size: the roots of the search (no negative cycle)
        while pred[path[-1]] >= 0 and len(path) <= k:
            path.append(int(pred[path[-1]]))
        path.reverse()
        # rows tied with the cheapest of each edge: r successive shortest paths along the
        # same path at once (the path stays shortest while its edges keep a tied row)
        need = int(min(counts[path[0]] - target[path[0]], target[path[-1]] - counts[path[-1]]))
        rows, found = _tied_rows(S, labels, np.asarray(path, dtype=np.int64), cost, tol, need)
        r = max(1, int(found.min()))
        for t in range(len(path) - 1):
            labels[rows[t, :r]] = path[t + 1]
    _cancel_cycles(S, labels, k, tol)
    return labels


def _cancel_cycles(S, labels, k, tol):
    """Cancel negative cycles of the class graph until none is left (in place)."""
    while True:
        cost, arg = _class_graph(S, labels, k)
        cycle = _negative_cycle(cost, tol)
        if cycle is None:
            return
        _move_along(cycle + [cycle[0]], arg, labels)


def unlabeled_class_sizes(class_priors, label_counts, n_samples, classes=None):
    """Integer class sizes m of the unlabeled points: n pi - (labels per class), rounded by
    largest remainders to sum to n - l.

    Parameters
    ----------
    class_priors : array-like of shape (k,) or None
        The class shares pi over all points (sum to 1, nonnegative, positive for every class
        with a label); None: the labels' shares.
    label_counts : array-like of int of shape (k,)
    n_samples : int
    classes : array-like, optional
        Class names for the messages.
    """
    counts = np.asarray(label_counts, dtype=np.int64)
    k = counts.size
    names = np.arange(k).tolist() if classes is None else np.asarray(classes).tolist()
    l = int(counts.sum())  # noqa: E741
    n_free = int(n_samples) - l
    if class_priors is None:
        pi = counts / l
    else:
        pi = np.asarray(class_priors, dtype=np.float64)
        if pi.shape != (k,) or not np.isfinite(pi).all():
            raise ValueError(f"class_priors must hold {k} finite numbers in the order of "
                             f"classes_ {names}, got {np.asarray(class_priors).tolist()}.")
        if (pi < 0).any():
            raise ValueError(f"class_priors must be nonnegative, got {pi.tolist()}.")
        if abs(pi.sum() - 1.0) > 1e-6:
            raise ValueError(f"class_priors must sum to 1 (the class shares), got sum "
                             f"{pi.sum():.6g}; divide them by their sum.")
        zero = np.flatnonzero((pi == 0) & (counts > 0))
        if zero.size:
            raise ValueError(f"class_priors is 0 for class {names[zero[0]]!r}, which has "
                             f"{counts[zero[0]]} label(s): give it a positive share.")
    raw = n_samples * pi - counts
    over = np.flatnonzero(raw < -1e-9 * n_samples)
    if over.size:
        c = over[0]
        raise ValueError(
            f"class {names[c]!r} has {counts[c]} labels, more than n * class_priors = "
            f"{n_samples} * {pi[c]:.6g} = {n_samples * pi[c]:.6g} points: raise its prior or "
            f"label fewer of its points.")
    raw = np.maximum(raw, 0.0)
    sizes = np.floor(raw + 1e-9).astype(np.int64)
    short = n_free - int(sizes.sum())
    if short > 0:
        sizes[np.argsort(sizes - raw, kind="stable")[:short]] += 1
    elif short < 0:
        sizes[np.argsort(raw - sizes, kind="stable")[:-short]] -= 1
    return sizes


def sized_problem(W, labeled, Y, class_priors, classes):
    """The data of a class-size-constrained labeling on the points the labels reach.

    Parameters
    ----------
    W : sparse matrix of shape (n, n)
    labeled : ndarray of bool of shape (n,)
    Y : ndarray of shape (n, k)
        One-hot rows of the labeled points.
    class_priors : array-like of shape (k,) or None
        Checked and normalized (:func:`~fastgssl.models._balance.check_class_priors`); None:
        the labels' shares.
    classes : ndarray
        Class names for the messages.

    Returns
    -------
    priors : ndarray of shape (k,)
    idx : ndarray of int
        The points of the components that hold a label (``reached``: its mask).
    reached : ndarray of bool of shape (n,)
    W_r : csr_matrix
        W restricted to ``idx``.
    sizes : ndarray of int of shape (k,)
        m, the class sizes of the unlabeled points of ``idx`` (:func:`unlabeled_class_sizes`).
    """
    from fastgssl._components import labeled_components
    from fastgssl.models._balance import check_class_priors

    k = Y.shape[1]
    counts = Y[labeled].sum(axis=0).round().astype(np.int64)
    if class_priors is not None:
        priors = check_class_priors(class_priors, k)
    else:
        priors = counts / counts.sum()
    W = sp.csr_matrix(W, dtype=np.float64)
    comp, has_label = labeled_components(W, np.flatnonzero(labeled))
    reached = has_label[comp]
    idx = np.flatnonzero(reached)
    W_r = principal_submatrix(W, idx) if idx.size < W.shape[0] else W
    sizes = unlabeled_class_sizes(priors, counts, idx.size, classes)
    return priors, idx, reached, W_r, sizes
