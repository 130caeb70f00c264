"""The constrained cut, and a descent that lowers it at fixed class sizes.

With W the graph (symmetric, nonnegative), the labeled points' classes fixed and the class
sizes m of the M unlabeled points given, the *constrained cut* of a full labeling is the
total weight of the edges whose ends are in different classes (labeled points included). Its
relaxation over the transportation polytope {X >= 0, X 1 = 1, X^T 1 = m} is the problem of
CutSSL (Holtz et al., NeurIPS 2024) and of CombCut (Omati et al., AAAI 2026). This module holds
what needs no continuous solver (DESIGN 3.13), with the exact class-size rounding of scores in
:mod:`._size_assignment` (CombCut's minorize-maximize step from a fractional start; from a
labeling that already has sizes m that step never moves a point: DESIGN 3.13, "Caveat"):

- :func:`refine_cut`, a descent on the cut itself that moves unlabeled points at fixed
  sizes: two-point swaps, searched exhaustively per pair of classes, and three-point exchange
  cycles a -> b -> c -> a, each with its exact cut change, until none improves.
- :func:`constrained_cut`, the objective.
- :class:`CutRefinement`, a wrapper of any fastgssl propagation learner that rounds its scores
  exactly to the class sizes and refines the cut.
"""

from __future__ import annotations

import warnings
from numbers import Integral

import numba
import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import HasMethods, Interval
from sklearn.utils.validation import check_is_fitted

from fastgssl._validation import check_random_state
from fastgssl.models._label_propagation import LabelPropagation
from fastgssl.models._size_assignment import exact_size_assignment, unlabeled_class_sizes

__all__ = ["CutRefinement", "constrained_cut", "refine_cut"]

# candidates per ordered pair of classes for the exchange cycles of three points
_CYCLE_CANDIDATES = 4

# ---------------------------------------------------------------------------------------------
# the cut and its descent at fixed class sizes
# ---------------------------------------------------------------------------------------------


def _check_graph(W, n=None):
    if not sp.issparse(W):
        W = sp.csr_matrix(np.asarray(W, dtype=np.float64))
    W = sp.csr_matrix(W, dtype=np.float64, copy=True)  # the caller's matrix stays as it is
    W.sum_duplicates()
    if W.shape[0] != W.shape[1] or (n is not None and W.shape[0] != n):
        raise ValueError(f"W must be a square (n, n) matrix over the labeling's {n} points, "
                         f"got shape {W.shape}.")
    if W.nnz and (not np.isfinite(W.data).all() or W.data.min() < 0):
        raise ValueError("W must hold finite nonnegative weights.")
    diff = abs(W - W.T)
    if diff.nnz and diff.max() > 1e-10 * max(1.0, abs(W).max()):
        raise ValueError("W must be symmetric (an undirected graph); symmetrize it first, "
                         "e.g. (W + W.T) / 2.")
    W.sort_indices()
    return W


def constrained_cut(W, labels):
    """Total weight of the edges of ``W`` whose ends have different labels.

    Parameters
    ----------
    W : sparse matrix of shape (n, n)
        Symmetric nonnegative weights (self-loops are never cut).
    labels : array-like of shape (n,)
        A class for every point, labeled points included.

    Returns
    -------
    cut : float
        sum_{i < j} w_ij [labels_i != labels_j].
    """
    labels = np.asarray(labels)
    W = _check_graph(W, labels.shape[0])
    coo = W.tocoo()
    return float(0.5 * coo.data[labels[coo.row] != labels[coo.col]].sum())


@numba.njit(cache=True, parallel=True)
def _neighbour_weights(indptr, indices, data, labels, k):  # pragma: no cover - compiled
    """N_ic = sum_{j != i} w_ij [labels_j = c]."""
    n = indptr.size - 1
    N = np.zeros((n, k))
    for i in numba.prange(n):
        for p in range(indptr[i], indptr[i + 1]):
            j = indices[p]
            if j != i:
                N[i, labels[j]] += data[p]
    return N


@numba.njit(cache=True)
def _move(i, new, labels, N, indptr, indices, data):  # pragma: no cover - compiled
    old = labels[i]
    for p in range(indptr[i], indptr[i + 1]):
        j = indices[p]
        if j != i:
            N[j, old] -= data[p]
            N[j, new] += data[p]
    labels[i] = new


@numba.njit(cache=True)
def _weight(i, j, indptr, indices, data):  # pragma: no cover - compiled
    """w_ij (the row's indices sorted)."""
    lo = indptr[i]
    hi = indptr[i + 1]
    while lo < hi:
        mid = (lo + hi) // 2
        if indices[mid] < j:
            lo = mid + 1
        else:
            hi = mid
    w = 0.0
    while lo < indptr[i + 1] and indices[lo] == j:
        w += data[lo]
        lo += 1
    return w


@numba.njit(cache=True)
def _side_gains(c, other, labels, free, N):  # pragma: no cover - compiled
    """The free points of class ``c``, in the order of ``free``, with their gains from a move
    to class ``other`` (g_i = N_i,other - N_ic): (indices, gains, largest gain or -inf)."""
    m = free.size
    g = np.empty(m)
    idx = np.empty(m, dtype=np.int64)
    n = 0
    top = -np.inf
    for t in range(m):
        i = free[t]
        if labels[i] == c:
            g[n] = N[i, other] - N[i, c]
            idx[n] = i
            top = max(top, g[n])
            n += 1
    return idx[:n], g[:n], top


@numba.njit(cache=True)
def _by_gain(idx, g, floor):  # pragma: no cover - compiled
    """The entries with a gain above ``floor``, by decreasing gain (ties in list order)."""
    keep = g > floor
    idx, g = idx[keep], g[keep]
    order = np.argsort(-g, kind="mergesort")
    return idx[order], g[order]


@numba.njit(cache=True)
def _swap_candidates(a, b, labels, free, N, tol):  # pragma: no cover - compiled
    """The points of class a and of class b that can take part in a swap lowering the cut by
    more than ``tol``, each side sorted by its gain (g_i = N_ib - N_ia, g_j = N_ja - N_jb)
    in decreasing order: (iA, gA, iB, gB). A swap lowers the cut by g_i + g_j - 2 w_ij, at
    most g_i + max g_j: only rows with g_i > tol - max g_j can take part."""
    iA, gA, maxA = _side_gains(a, b, labels, free, N)
    iB, gB, maxB = _side_gains(b, a, labels, free, N)
    if iA.size == 0 or iB.size == 0 or maxA + maxB <= tol:
        return iA[:0], gA[:0], iB[:0], gB[:0]
    iA, gA = _by_gain(iA, gA, tol - maxB)
    iB, gB = _by_gain(iB, gB, tol - maxA)
    return iA, gA, iB, gB


@numba.njit(cache=True)
def _best_swap(a, b, iA, gA, iB, gB, labels, N, indptr, indices, data, wrow, tol):
    # pragma: no cover - compiled
    """The swap of i in ``iA`` (class a) with j in ``iB`` (class b) that lowers the cut most,
    by more than ``tol``, with the gains of N as it is now; the lists' gains ``gA``, ``gB``
    (from when they were drawn up) order and bound the search, which is exhaustive while
    they are current. Returns the positions (s, t) of i and j in the lists and the fall,
    s = -1 when none is found."""
    best = tol
    bi = -1
    bj = -1
    if gA.size == 0 or gB.size == 0:
        return bi, bj, best
    for s in range(gA.size):
        if gA[s] + gB[0] <= best:
            break
        i = iA[s]
        if labels[i] != a:
            continue
        gi = N[i, b] - N[i, a]
        for p in range(indptr[i], indptr[i + 1]):
            wrow[indices[p]] += data[p]
        for t in range(gB.size):
            if gA[s] + gB[t] <= best:
                break
            j = iB[t]
            if labels[j] != b:
                continue
            w = wrow[j]
            fall = gi + N[j, a] - N[j, b] - 2.0 * w
            if fall > best:
                best = fall
                bi = s
                bj = t
            if w == 0.0:
                break  # the next j gain less and have no edge to lower
        for p in range(indptr[i], indptr[i + 1]):
            wrow[indices[p]] = 0.0
    return bi, bj, best


@numba.njit(cache=True)
def _swap_round(pairs, labels, free, N, indptr, indices, data, tol):
    # pragma: no cover - compiled
    """For each pair of classes in turn, the best swap while one lowers the cut, among the
    candidates of one scan (a point whose gain rose after it waits for the next round).
    Returns the number of swaps and the total fall of the cut."""
    wrow = np.zeros(labels.size)
    swaps = 0
    total = 0.0
    for t in range(pairs.shape[0]):
        a = pairs[t, 0]
        b = pairs[t, 1]
        iA, gA, iB, gB = _swap_candidates(a, b, labels, free, N, tol)
        while True:
            s, r, fall = _best_swap(a, b, iA, gA, iB, gB, labels, N, indptr, indices, data,
                                    wrow, tol)
            if s < 0:
                break
            _move(iA[s], b, labels, N, indptr, indices, data)
            _move(iB[r], a, labels, N, indptr, indices, data)
            # the two leave the lists (the others keep their order)
            iA = np.concatenate((iA[:s], iA[s + 1:]))
            gA = np.concatenate((gA[:s], gA[s + 1:]))
            iB = np.concatenate((iB[:r], iB[r + 1:]))
            gB = np.concatenate((gB[:r], gB[r + 1:]))
            swaps += 1
            total += fall
    return swaps, total


@numba.njit(cache=True)
def _cycle_candidates(labels, free, N, k, T):  # pragma: no cover - compiled
    """The T points of largest gain N_ib - N_ia of each ordered pair (a, b), a their class."""
    g = np.full((k, k, T), -np.inf)
    at = np.full((k, k, T), -1, dtype=np.int64)
    for t in range(free.size):
        i = free[t]
        a = labels[i]
        for b in range(k):
            if b == a:
                continue
            x = N[i, b] - N[i, a]
            if x <= g[a, b, T - 1]:
                continue
            s = T - 1
            while s > 0 and g[a, b, s - 1] < x:
                g[a, b, s] = g[a, b, s - 1]
                at[a, b, s] = at[a, b, s - 1]
                s -= 1
            g[a, b, s] = x
            at[a, b, s] = i
    return g, at


@numba.njit(cache=True)
def _cycle_round(triples, labels, free, N, k, indptr, indices, data, tol, T):
    # pragma: no cover - compiled
    """Exchange cycles a -> b -> c -> a of one point each (i of a to b, j of b to c, l of c
    to a) among the T best candidates of each edge, applied when the cut falls by more than
    ``tol``: it falls by g_i + g_j + g_l - w_ij - w_jl - w_li (each edge between two moved
    points keeps its state, which the three gains count as uncut). Returns (cycles, fall)."""
    g, at = _cycle_candidates(labels, free, N, k, T)
    cycles = 0
    total = 0.0
    for t in range(triples.shape[0]):
        a = triples[t, 0]
        b = triples[t, 1]
        c = triples[t, 2]
        if g[a, b, 0] + g[b, c, 0] + g[c, a, 0] <= tol:
            continue
        best = tol
        bi = -1
        bj = -1
        bl = -1
        for s in range(T):
            i = at[a, b, s]
            if i < 0 or labels[i] != a:
                continue
            gi = N[i, b] - N[i, a]
            for r in range(T):
                j = at[b, c, r]
                if j < 0 or labels[j] != b:
                    continue
                gj = N[j, c] - N[j, b]
                for q in range(T):
                    l = at[c, a, q]  # noqa: E741
                    if l < 0 or labels[l] != c:
                        continue
                    fall = (gi + gj + N[l, a] - N[l, c] - _weight(i, j, indptr, indices, data)
                            - _weight(j, l, indptr, indices, data)
                            - _weight(l, i, indptr, indices, data))
                    if fall > best:
                        best = fall
                        bi, bj, bl = i, j, l
        if bi >= 0:
            _move(bi, b, labels, N, indptr, indices, data)
            _move(bj, c, labels, N, indptr, indices, data)
            _move(bl, a, labels, N, indptr, indices, data)
            cycles += 1
            total += best
    return cycles, total


def refine_cut(W, labels, labeled, *, max_iter=100, random_state=None):
    """Lower the constrained cut of a labeling by moving unlabeled points at fixed class sizes.

    Parameters
    ----------
    W : sparse matrix of shape (n, n)
        Symmetric nonnegative weights.
    labels : array-like of shape (n,)
        The starting labeling of every point (any hashable labels).
    labeled : array-like of bool of shape (n,)
        Points whose class is fixed (they never move).
    max_iter : int, default=100
        Rounds at most (a round: the swaps of every pair of classes, then the exchange cycles
        of every triple); a :class:`~sklearn.exceptions.ConvergenceWarning` names it when the
        last round still moved points.
    random_state : int, RandomState instance or None, default=None
        Order of the pairs and triples of classes in each round.

    Returns
    -------
    labels : ndarray of shape (n,)
        The refined labeling (same encoding as the input): the class sizes are unchanged.
    info : dict
        ``cut_before``, ``cut_after`` (:func:`constrained_cut`), ``n_moved`` (points whose
        class changed), ``n_swaps``, ``n_cycles``, ``n_iter`` (rounds) and ``converged`` (a
        round found no improving move).

    Notes
    -----
    With N_ic the weight from i to the points of class c (labeled points included; kept up
    to date by sparse row updates, recomputed each round), moving i alone from a to b changes
    the cut by N_ia - N_ib, which changes the sizes. The moves kept are those that keep
    them:

    - a swap of i (a -> b) with j (b -> a) changes the cut by
      N_ia - N_ib + N_jb - N_ja + 2 w_ij; for each pair of classes one scan lists the points
      that can take part (a pair is bounded by the sum of its gains), both sides sorted by
      gain, and the best swap among them is applied while one lowers the cut (each with its
      exact change at that moment; a point whose gain rose after the scan waits for the next
      round). The first search of a pair in a round is exhaustive;
    - an exchange cycle a -> b -> c -> a of one point each changes it by the three moves'
      changes plus the weights between the moved points (each such edge keeps its state);
      each triple of classes tries the four best candidates of each of its edges.

    Every move applied lowers the cut, so the cut never increases; the descent stops when a
    round finds no improving move, and the result then admits no improving swap of two points.
    This is the local search CombCut's convex minorizer cannot do: its step at
    s >= lambda_max(L_uu) never moves a point of a labeling with sizes m (DESIGN 3.13).
    Cost of a round: O(nnz(W) + n k^2) for N and the scans, plus the searches (short: a
    pair's search stops at the first non-adjacent partner of each candidate) and the
    k^3 / 3 triples. At 10^5 points, 10 classes and 5% of them misplaced in a planted graph:
    0.5-2 s on 2 shared cores (bench/bench_cut_refinement.py --scale).
    """
    labels_in = np.asarray(labels)
    labeled = np.asarray(labeled, dtype=bool)
    n = labels_in.shape[0]
    if labels_in.ndim != 1 or labeled.shape != (n,):
        raise ValueError(f"labels and labeled must be 1-D of one length, got shapes "
                         f"{labels_in.shape} and {labeled.shape}.")
    if isinstance(max_iter, bool) or not isinstance(max_iter, Integral) or max_iter < 0:
        raise ValueError(f"max_iter must be a nonnegative integer, got {max_iter!r}.")
    W = _check_graph(W, n)
    rng = check_random_state(random_state)
    classes, cur = np.unique(labels_in, return_inverse=True)
    cur = cur.astype(np.int64).ravel()
    k = classes.size
    start = cur.copy()
    free = np.flatnonzero(~labeled).astype(np.int64)
    indptr = W.indptr.astype(np.int64)
    indices = W.indices.astype(np.int64)
    data = W.data
    deg = np.asarray(W.sum(axis=1)).ravel()
    tol = 1e-9 * max(float(deg.max()) if n else 0.0, np.finfo(np.float64).tiny)
    cut_before = constrained_cut(W, cur)
    pairs = np.array([(a, b) for a in range(k) for b in range(a + 1, k)],
                     dtype=np.int64).reshape(-1, 2)
    triples = np.array([(a, b, c) for a in range(k) for b in range(k) for c in range(k)
                        if a < b and a < c and b != c], dtype=np.int64).reshape(-1, 3)
    n_swaps = n_cycles = n_iter = 0
    converged = free.size == 0 or k < 2
    while not converged and n_iter < max_iter:
        n_iter += 1
        N = _neighbour_weights(indptr, indices, data, cur, k)
        s, _ = _swap_round(pairs[rng.permutation(len(pairs))], cur, free, N, indptr, indices,
                           data, tol)
        c = 0
        if len(triples):
            c, _ = _cycle_round(triples[rng.permutation(len(triples))], cur, free, N, k,
                                indptr, indices, data, tol, _CYCLE_CANDIDATES)
        n_swaps += int(s)
        n_cycles += int(c)
        converged = s == 0 and c == 0
    if not converged and max_iter > 0:
        warnings.warn(
            f"refine_cut: the cut still fell in the last of max_iter={max_iter} rounds "
            f"({n_swaps} swaps and {n_cycles} exchange cycles so far); raise max_iter.",
            ConvergenceWarning, stacklevel=2)
    info = {"cut_before": cut_before, "cut_after": constrained_cut(W, cur),
            "n_moved": int(np.count_nonzero(cur != start)), "n_swaps": n_swaps,
            "n_cycles": n_cycles, "n_iter": n_iter, "converged": bool(converged)}
    return classes[cur], info


# ---------------------------------------------------------------------------------------------
# class sizes from priors
# ---------------------------------------------------------------------------------------------


# ---------------------------------------------------------------------------------------------
# the wrapper
# ---------------------------------------------------------------------------------------------

# the graph parameters of the propagation family, read by the induction over the result
_GRAPH_PARAMS = ("n_neighbors", "graph_weight", "graph_symmetrize", "sigma_w",
                 "self_tuned_constant", "n_jobs")


def _learner_scores(est, n):
    """The fitted learner's continuous scores: ``scores_`` when it has them, else
    ``label_distributions_``; a learner with ``poisson_scores_`` (PoissonMBO, whose
    distributions are one-hot) has its ties broken by them, with a weight small enough
    (1 / (2 n span)) that the one-hot rows decide first."""
    S = getattr(est, "scores_", None)
    if S is None:
        S = getattr(est, "label_distributions_", None)
    if S is None:
        raise ValueError(f"estimator {type(est).__name__} has neither scores_ nor "
                         f"label_distributions_ after fit: wrap a propagation learner.")
    S = np.array(S, dtype=np.float64)
    tie = getattr(est, "poisson_scores_", None)
    if tie is not None:
        tie = np.asarray(tie, dtype=np.float64)
        span = float(np.ptp(tie)) if tie.size else 0.0
        if span > 0 and np.isfinite(span):
            S += (tie - tie.min()) * (0.5 / (n * span))
    return S


class CutRefinement(ClassifierMixin, BaseEstimator):
    """Exact class-size rounding and cut refinement of a propagation learner's labeling.

    Fits a clone of ``estimator``, rounds its scores exactly to the class sizes of the
    priors (:func:`exact_size_assignment`), then lowers the constrained cut of that labeling
    on the learner's graph at fixed sizes (:func:`refine_cut`).

    Parameters
    ----------
    estimator : fastgssl propagation classifier
        Any learner with ``graph_`` after fit and ``scores_`` or ``label_distributions_``
        (PoissonLearning, PoissonMBO, LabelPropagation, VolumeMBO, ...). It is fitted as
        configured: give it the same ``class_priors`` when it takes them.
    class_priors : array-like of shape (n_classes,) or None, default=None
        Class shares pi over all points, in the order of ``classes_``; they must sum to 1,
        be nonnegative and positive for every class with a label. None: the labels' shares.
    max_iter : int, default=100
        Rounds of :func:`refine_cut` at most (0: the exact rounding alone).
    random_state : int, RandomState instance or None, default=None
        Order in which :func:`refine_cut` visits the pairs and triples of classes.

    Attributes
    ----------
    estimator_ : the fitted clone of ``estimator``
    classes_ : ndarray of shape (n_classes,)
    graph_ : sparse matrix of shape (n_samples, n_samples)
        The learner's graph W.
    class_sizes_ : ndarray of int of shape (n_classes,)
        The sizes m of the unlabeled points' classes.
    start_transduction_ : ndarray of shape (n_samples,)
        The exact rounding of the learner's scores (labeled points keep their labels).
    transduction_ : ndarray of shape (n_samples,)
        The refined labeling.
    label_distributions_ : ndarray of shape (n_samples, n_classes)
        One-hot rows of ``transduction_``.
    cut_start_, cut_ : float
        Constrained cut of ``start_transduction_`` and of ``transduction_`` (never above).
    n_moved_ : int
        Points whose class the refinement changed.
    refine_info_ : dict
        The ``info`` of :func:`refine_cut`.

    Notes
    -----
    With W the graph, F the labels' one-hot rows, l labeled of n points and M = n - l, the
    unlabeled points' class sizes are m = n pi - F^T 1, rounded to integers summing to M by
    largest remainders (a class with more labels than n pi_c is an error naming it). The
    constrained cut of a labeling is the weight of the edges between classes (labeled points
    included); on one-hot X with X^T 1 = m it equals 1/2 tr(X^T L_uu X) - tr(X^T W_ul F) up
    to a constant, the objective CutSSL relaxes (Holtz et al. 2024) and CombCut minorizes
    (Omati et al. 2026). The start is the exact maximiser of sum_i S_{i, c(i)} over
    labelings with sizes m, S the learner's scores (``scores_`` if it has them, else
    ``label_distributions_``; PoissonMBO's one-hot rows with ties broken by its
    ``poisson_scores_``): CombCut's step X <- argmax <(sI - L_uu) X_t + B, X> from a
    fractional X_t. That step cannot refine a labeling (at s >= lambda_max(L_uu) it moves no
    point of one with sizes m; DESIGN 3.13), so the refinement is a descent by two-point swaps
    and three-point exchange cycles with their exact cut change (:func:`refine_cut`).

    Every unlabeled point gets a class, including those of graph components without a
    label (the learner warns about them; their scores are its ``unlabeled_policy``'s and
    the cut does not tie them to any label, so only the sizes place them).

    ``predict`` and ``predict_proba`` apply the family's induction formula to the one-hot
    rows of the refined labeling: f(x) = sum_j K(x, x_j) e_{c(j)} / sum_j K(x, x_j) over the
    ``n_neighbors`` nearest training points, with the learner's graph kernel
    (``graph_weight``, ``sigma_w``, ...: a :class:`LabelPropagation` on ``graph_`` fitted
    with every point labeled). With ``graph="precomputed"``, X holds the new points'
    affinities to the training points. A learner built with a graph builder object has the
    kernel of its ``graph_weight`` parameter here.

    References
    ----------
    Holtz, Chen, Wan, Cheng & Mishne (2024). Continuous partitioning for graph-based
    semi-supervised learning (CutSSL). NeurIPS.
    Omati et al. (2026). CombCut (the multi-class cut with class sizes, minorize-maximize
    over the transportation polytope). AAAI.
    Ahuja, Magnanti & Orlin (1993). Network Flows. Prentice Hall (negative-cycle optimality).

    Examples
    --------
    >>> import numpy as np
    >>> from fastgssl.models import CutRefinement, PoissonLearning
    >>> rng = np.random.RandomState(0)
    >>> X = np.r_[rng.normal(-3, 1, (60, 2)), rng.normal(3, 1, (60, 2))]
    >>> y = np.full(120, -1); y[0] = 0; y[60] = 1
    >>> model = CutRefinement(PoissonLearning(n_neighbors=8)).fit(X, y)
    >>> np.bincount(model.transduction_).tolist(), model.cut_ <= model.cut_start_
    ([60, 60], True)
    """

    _parameter_constraints = {
        "estimator": [HasMethods(["fit"])],
        "class_priors": ["array-like", None],
        "max_iter": [Interval(Integral, 0, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(self, estimator, class_priors=None, *, max_iter=100, random_state=None):
        self.estimator = estimator
        self.class_priors = class_priors
        self.max_iter = max_iter
        self.random_state = random_state

    def fit(self, X, y):
        """Fit the learner, round its scores to the class sizes and refine the cut.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            As the learner takes it (the affinity with ``graph="precomputed"``).
        y : array-like of shape (n_samples,)
            Class labels, ``-1`` for unlabeled points.

        Returns
        -------
        self
        """
        self._validate_params()
        est = clone(self.estimator).fit(X, y)
        W = getattr(est, "graph_", None)
        if W is None or not hasattr(est, "classes_"):
            raise ValueError(f"estimator {type(est).__name__} has no graph_ after fit: "
                             f"CutRefinement wraps a graph propagation classifier.")
        y = np.asarray(y)
        n = y.shape[0]
        W = _check_graph(W, n)
        classes = np.asarray(est.classes_)
        labeled = (y != -1) if y.dtype.kind in "fiu" else np.array(
            [str(v) != "-1" for v in y], dtype=bool)
        lab_class = np.searchsorted(classes, y[labeled])
        counts = np.bincount(lab_class, minlength=classes.size)
        sizes = unlabeled_class_sizes(self.class_priors, counts, n, classes)
        S = _learner_scores(est, n)
        start = np.empty(n, dtype=np.int64)
        start[labeled] = lab_class
        start[~labeled] = exact_size_assignment(S[~labeled], sizes)
        refined, info = refine_cut(W, start, labeled, max_iter=self.max_iter,
                                   random_state=self.random_state)
        self.estimator_ = est
        self.classes_ = classes
        self.graph_ = W
        self.class_sizes_ = sizes
        self.start_transduction_ = classes[start]
        self.transduction_ = classes[refined]
        self.label_distributions_ = np.eye(classes.size)[refined]
        self.cut_start_ = info["cut_before"]
        self.cut_ = info["cut_after"]
        self.n_moved_ = info["n_moved"]
        self.refine_info_ = info
        if hasattr(est, "n_features_in_"):
            self.n_features_in_ = est.n_features_in_
        params = est.get_params(deep=False)
        precomputed = isinstance(params.get("graph"), str) and params["graph"] == "precomputed"
        self._induction = LabelPropagation(
            graph="precomputed" if precomputed else W,
            **{p: params[p] for p in _GRAPH_PARAMS if p in params},
        ).fit(X, self.transduction_)
        return self

    def predict_proba(self, X):
        """Class distributions of new points: the induction formula over the one-hot rows of
        ``transduction_`` (rows sum to 1, in the order of ``classes_``)."""
        check_is_fitted(self, "transduction_")
        return self._induction.predict_proba(X)

    def predict(self, X):
        """Classes of new points by the induction formula over ``transduction_``."""
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]
