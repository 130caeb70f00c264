"""Volume MBO: graph MBO with class volumes held between bounds, by auction dynamics.

Implements Jacobs, Merkurjev & Esedoglu (2018), *Auction dynamics: a volume constrained MBO
scheme* (J. Comput. Phys. 354), as graphlearning's ``gl.ssl.volume_mbo`` runs it (v1.7.5,
its C routine ``mbo_main`` with the "dvn" mode): Voronoi initialization from the labeled points,
diffusion by two steps of the normalized weight matrix, and a thresholding that is the
assignment problem with lower and upper bounds on the class sizes, under a Gaussian
"temperature" perturbation; the assignment of least MBO energy seen is returned.

The thresholding is graphlearning's forward-reverse auction with epsilon scaling by default
(:mod:`fastgssl.models._auction`; fed graphlearning's noise, VolumeMBO returns its labels,
tested), which stops short of the optimum of the assignment problem; ``assignment="exact"``
solves it exactly instead (:func:`bounded_assignment`: dual coordinate descent to
complementary slackness, Numba).
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numba
import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import dijkstra
from sklearn.utils._param_validation import Interval, StrOptions

from fastgssl._doc_examples import blobs_example
from fastgssl._sparse_blocks import diagonal_scaled, principal_submatrix, spmm
from fastgssl._threads import numba_threads
from fastgssl._validation import check_random_state, store_init_arguments
from fastgssl.models._auction import auction_assignment
from fastgssl.models._balance import check_class_priors
from fastgssl.models._propagation_base import _GraphPropagation, _PropagationClassifier
from fastgssl.models._propagation_docs import (
    N_JOBS_PARAM,
    POLICY_PARAM,
    SELF_TUNED_NOTE,
    VOLUME_MBO_NOTE,
    graph_params,
)

__all__ = ["VolumeMBO", "bounded_assignment", "volume_bounds"]


# ---------------------------------------------------------------------------------------------
# the thresholding: assignment with class sizes between bounds
# ---------------------------------------------------------------------------------------------


@numba.njit(cache=True)
def _top_two(U, q, i, v, j):  # pragma: no cover - compiled
    """Largest and second largest U_ij - q_j of row i, into v[i, 0:2] and j[i, 0:2]."""
    b1 = -np.inf
    b2 = -np.inf
    a1 = -1
    a2 = -1
    for c in range(U.shape[1]):
        x = U[i, c] - q[c]
        if x > b1:
            b2, a2 = b1, a1
            b1, a1 = x, c
        elif x > b2:
            b2, a2 = x, c
    v[i, 0], v[i, 1] = b1, b2
    j[i, 0], j[i, 1] = a1, a2


@numba.njit(cache=True)
def _satisfied(j, q, lower, upper, tol, counts):  # pragma: no cover - compiled
    """Whether the argmax assignment (column 0 of ``j``) meets the bounds and complementary
    slackness within ``tol``; fills ``counts``."""
    counts[:] = 0
    for i in range(j.shape[0]):
        counts[j[i, 0]] += 1
    for c in range(q.size):
        if counts[c] < lower[c] - tol or counts[c] > upper[c] + tol:
            return False
        if q[c] > 0.0 and counts[c] < upper[c] - tol:
            return False
        if q[c] < 0.0 and counts[c] > lower[c] + tol:
            return False
    return True


@numba.njit(cache=True)
def _bounded_sweeps(U, q, lower, upper, tol, max_sweeps):  # pragma: no cover - compiled
    """Cyclic exact coordinate descent on the dual of

        max sum_i U_{i, c(i)}   subject to  lower_c <= |{i : c(i) = c}| <= upper_c,

    whose dual function is sum_i max_c (U_ic - q_c) + sum_c max(lower_c q_c, upper_c q_c).
    Given the other prices, the best q_c is 0 when class c's count at q_c = 0 lies within
    its bounds, else the midpoint between the t-th and (t+1)-th largest margins (t the
    violated bound). Stops when the argmax assignment meets the bounds and complementary
    slackness (q_c > 0 only at the upper bound, q_c < 0 only at the lower), within ``tol``
    points per class: the assignment is then optimal. Each row's two best classes are kept
    up to date, so a sweep costs O(m k). Returns (labels, sweeps)."""
    m, k = U.shape
    margin = np.empty(m)
    v = np.empty((m, 2))
    j = np.empty((m, 2), dtype=np.int64)
    counts = np.zeros(k, dtype=np.int64)
    for i in range(m):
        _top_two(U, q, i, v, j)
    sweeps = 0
    while sweeps < max_sweeps and not _satisfied(j, q, lower, upper, tol, counts):
        sweeps += 1
        for c in range(k):
            cnt = 0
            for i in range(m):
                other = v[i, 1] if j[i, 0] == c else v[i, 0]
                margin[i] = U[i, c] - other
                if margin[i] > 0.0:
                    cnt += 1
            if cnt > upper[c]:
                t = upper[c]
            elif cnt < lower[c]:
                t = lower[c]
            else:
                t = -1
            old = q[c]
            if t == -1:
                q[c] = 0.0
            elif t <= 0:
                q[c] = np.max(margin) + 1.0
            elif t >= m:
                q[c] = np.min(margin) - 1.0
            else:
                part = np.partition(-margin, t)  # part[:t]: the t largest margins, negated
                q[c] = 0.5 * (-np.max(part[:t]) - part[t])
            if q[c] == old:
                continue
            for i in range(m):
                if j[i, 0] == c or j[i, 1] == c:
                    _top_two(U, q, i, v, j)
                else:
                    x = U[i, c] - q[c]
                    if x > v[i, 0]:
                        v[i, 1], j[i, 1] = v[i, 0], j[i, 0]
                        v[i, 0], j[i, 0] = x, c
                    elif x > v[i, 1]:
                        v[i, 1], j[i, 1] = x, c
    return j[:, 0].copy(), sweeps


@numba.njit(cache=True, parallel=True)
def _one_hot_product(indptr, indices, data, labels, k):  # pragma: no cover - compiled
    """``K U`` for the one-hot U of ``labels`` (K in CSR), rows in parallel."""
    n = indptr.size - 1
    KU = np.zeros((n, k))
    for i in numba.prange(n):
        for p in range(numba.uint64(indptr[i]), numba.uint64(indptr[i + 1])):
            # (unsigned indices: no negative-index wraparound, _sparse_blocks' note)
            KU[i, numba.uint64(labels[numba.uint64(indices[p])])] += data[p]
    return KU


@numba.njit(cache=True)
def _cut_energy(C, labels):  # pragma: no cover - compiled
    """sum_i sum_{c != c(i)} C_ic, summed in row order (independent of the thread count)."""
    energy = 0.0
    for i in range(C.shape[0]):
        for c in range(C.shape[1]):
            if c != labels[i]:
                energy += C[i, c]
    return energy


def _diffused(indptr, indices, data, labels, k):
    """C = K (K U) for the one-hot U of ``labels`` (K in CSR) and the energy
    sum_i sum_{c != c(i)} C_ic. The second product is the block product compiled for k
    columns (:mod:`fastgssl._sparse_blocks`), each entry summed in the row's entry order."""
    KU = _one_hot_product(indptr, indices, data, labels, k)
    C = np.empty_like(KU)
    spmm(indptr, indices, data, KU, C)
    return C, _cut_energy(C, labels)


def bounded_assignment(U, lower, upper, *, prices=None, tol=0, max_sweeps=200):
    """Assign the rows of ``U`` to classes maximising sum_i U_{i, c(i)} with every class
    size between ``lower`` and ``upper``.

    Parameters
    ----------
    U : ndarray of shape (m, k)
    lower, upper : ndarray of int of shape (k,)
        Bounds on the class sizes; ``sum(lower) <= m <= sum(upper)``.
    prices : ndarray of shape (k,), optional
        Warm start of the dual prices q (updated in place).
    tol : int, default=0
        Accepted violation of a bound (points per class); 0 asks for the exact optimum,
        which ties between rows can prevent (``max_sweeps`` then ends the descent).
    max_sweeps : int, default=200

    Returns
    -------
    labels : ndarray of int of shape (m,)
        argmax_c (U_ic - q_c).
    prices : ndarray of shape (k,)
    """
    U = np.ascontiguousarray(U, dtype=np.float64)
    k = U.shape[1]
    q = np.zeros(k) if prices is None else prices
    labels, _ = _bounded_sweeps(U, q, np.asarray(lower, dtype=np.int64),
                                np.asarray(upper, dtype=np.int64), int(tol), int(max_sweeps))
    return labels, q


def volume_bounds(sizes, n_free, volume_constraint):
    """graphlearning's bounds: floor(v_c * b) <= size_c <= floor(v_c * (2 - b)), v_c the class
    size minus its labeled points, widened by single points where they would make the
    problem infeasible (sum of lower bounds above, or of upper bounds below, ``n_free``)."""
    v = np.maximum(np.asarray(sizes, dtype=np.int64), 0)
    lower = np.floor(v * volume_constraint).astype(np.int64)
    upper = np.floor(v * (2.0 - volume_constraint)).astype(np.int64)
    while upper.sum() < n_free:
        upper[np.argmax(v - upper)] += 1
    while lower.sum() > n_free:
        lower[np.argmax(lower)] -= 1
    return lower, upper


# ---------------------------------------------------------------------------------------------
# the estimator
# ---------------------------------------------------------------------------------------------


class VolumeMBO(_PropagationClassifier):
    __doc__ = """Volume MBO (Jacobs, Merkurjev & Esedoglu 2018): graph MBO whose class volumes
    stay within bounds around the class priors, by auction dynamics, as graphlearning's
    ``volume_mbo``.

    Parameters
    ----------
    class_priors : array-like of shape (n_classes,) or None, default=None
        Class shares in the order of ``classes_`` (normalized to sum to one); class c's
        volume v_c is floor(n p_c) over the n points of labeled components, less its labeled
        points. None: the shares of the labels (graphlearning requires the priors).
    temperature : float, default=0.1
        Standard deviation of the Gaussian noise added to the diffused class scores before
        each thresholding (0: plain volume-constrained MBO).
    volume_constraint : float in (0, 1], default=0.5
        b: every class size lies between floor(b v_c) and floor((2 - b) v_c); 1 asks for the
        volumes themselves.
    max_iter : int, default=100
        MBO iterations (diffusion and thresholding), as graphlearning's 100.
    assignment : {"auction", "exact"}, default="auction"
        How each thresholding assigns the free points under the class-size bounds:
        ``"auction"`` by graphlearning's forward-reverse auction with epsilon scaling
        (:func:`~fastgssl.models._auction.auction_assignment`; given graphlearning's noise
        it returns graphlearning's labels, tested), which stops short of the optimum;
        ``"exact"`` the optimum (:func:`bounded_assignment`).
    random_state : int, RandomState or None, default=None
        Draws the temperature noise.
""" + graph_params("self_tuned", SELF_TUNED_NOTE + VOLUME_MBO_NOTE) + POLICY_PARAM + N_JOBS_PARAM \
    + """
    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    transduction_ : ndarray of shape (n_samples,)
        The assignment of least energy among those within the volume bounds (labeled points
        keep their labels; -1 where abstaining). The Voronoi start counts only when its
        sizes lie within the bounds (graphlearning's ``volume_mbo`` returns it regardless,
        e.g. on separated clusters, whose start cuts no edge); with ``max_iter=1`` it is
        returned as is, with a ``RuntimeWarning`` when it leaves them.
    label_distributions_ : ndarray of shape (n_samples, n_classes)
        One-hot rows of ``transduction_`` (uniform where abstaining).
    class_priors_ : ndarray of shape (n_classes,)
    energy_ : float
        The MBO energy of ``transduction_``.
    n_iter_ : int
        MBO iterations run (energy evaluations).
    n_changed_ : list of int
        Points whose class changed in each thresholding.
    graph_, n_unreached_, graph_recall_, n_threads_
        As in :class:`LabelPropagation`.
    solver_info_ : None
        No linear system is solved.
    feature_names_in_ : ndarray of str
        Column names of a DataFrame ``X``.

    Notes
    -----
    With d = W 1 and the normalized weights K = D^-1/2 W D^-1/2, on the components that hold
    a label:

    1. Initialization: each unlabeled point takes the class of the labeled point nearest in
       the shortest-path metric whose edge lengths are the weights w_ij themselves
       (graphlearning's choice: its C routine reads the similarities as lengths).
    2. For t = 1, ..., T: the diffused indicators C = K (K U), U = one-hot(labels), and the
       energy E = sum_i sum_{c != c(i)} C_ic (the MBO approximation of the weighted cut); the
       assignment of least E is kept. Then C~ = C + temperature * N(0, 1) entrywise and the
       free points are assigned by::

           max sum_i C~_{i, c(i)}   with  floor(b v_c) <= |{i free : c(i) = c}| <=
           floor((2 - b) v_c),

       by graphlearning's forward-reverse auction (``assignment="auction"``, the paper's
       method as graphlearning runs it: epsilon from 1 down to 1e-7, prices kept between the
       phases, which leaves a class whose price rose early below its upper bound) or to
       optimality (``assignment="exact"``).

    graphlearning skips the thresholding after the last energy evaluation and returns the
    least-energy assignment, as here. Its noise comes from C's ``rand()``: given that stream
    (``tests/gl_noise.py``) VolumeMBO returns graphlearning's labels; with its own
    ``random_state`` the two agree in distribution, not draw by draw. Not linear in the
    labels: exact cross-validation refits per fold.

    See Also
    --------
    PoissonMBO : Poisson learning refined by volume-constrained MBO steps.
    PoissonLearning : linear, exact CV from one block solve.

    References
    ----------
    Jacobs, Merkurjev & Esedoglu (2018). Auction dynamics: a volume constrained MBO scheme.
    Journal of Computational Physics 354:288-310.
    Calder, Cook, Thorpe & Slepcev (2020). Poisson learning: graph based semi-supervised
    learning at very low label rates. ICML (VolumeMBO as a baseline, graphlearning).

    Examples
    --------
""" + blobs_example(2) + """\
    >>> from fastgssl.models import VolumeMBO
    >>> model = VolumeMBO(class_priors=[1/3, 1/3, 1/3], n_neighbors=20,
    ...                   random_state=0).fit(X, y_ssl)
    >>> float(np.mean(model.transduction_ == y)) > 0.85
    True
    """

    _parameter_constraints = {
        **_GraphPropagation._parameter_constraints,
        "class_priors": ["array-like", None],
        "temperature": [Interval(Real, 0, None, closed="left")],
        "volume_constraint": [Interval(Real, 0, 1, closed="right")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "assignment": [StrOptions({"auction", "exact"})],
    }

    def __init__(self, class_priors=None, *, temperature=0.1, volume_constraint=0.5,
                 max_iter=100, assignment="auction", graph="knn", n_neighbors=10,
                 graph_weight="self_tuned", graph_symmetrize="max", sigma_w=None,
                 self_tuned_constant=3.0,
                 unlabeled_policy="auto",
                 random_state=None, n_jobs=None):
        store_init_arguments(self, locals())

    _share_hint = "Check the graph (n_neighbors, connectivity) and class_priors."

    def _solve_full(self, W, labeled, Y):
        k = Y.shape[1]
        if self.class_priors is not None:
            self.class_priors_ = check_class_priors(self.class_priors, k)
        else:
            counts = Y[labeled].sum(axis=0)
            self.class_priors_ = counts / counts.sum()
        lab = np.flatnonzero(labeled)
        lab_class = np.argmax(Y[lab], axis=1)
        W = sp.csr_matrix(W)
        # Voronoi cells of the labels (edge length = weight, as graphlearning); unreachable
        # rows are the components without a label
        dist, _, source = dijkstra(W, directed=False, indices=lab, min_only=True,
                                   return_predecessors=True)
        reached = np.isfinite(dist)
        labels = np.full(W.shape[0], -1, dtype=np.int64)
        labels[reached] = lab_class[_positions(lab, W.shape[0])[source[reached]]]
        labels[lab] = lab_class
        idx = np.flatnonzero(reached)
        self.n_changed_ = []
        self.energy_ = None
        self.n_iter_ = 0
        if idx.size:
            labels[idx] = self._mbo(principal_submatrix(W, idx), _positions(idx, W.shape[0])[lab],
                                    lab_class, labels[idx], k)
        F = np.zeros(Y.shape)
        F[idx, labels[idx]] = 1.0
        return F, reached, None

    def _mbo(self, W, lab, lab_class, labels, k):
        """The MBO iterations on one labeled part of the graph (``lab``: its labeled rows)."""
        n = W.shape[0]
        d = np.asarray(W.sum(axis=1)).ravel()
        s = 1.0 / np.sqrt(np.where(d > 0, d, 1.0))
        K = diagonal_scaled(W, s)  # D^-1/2 W D^-1/2: scipy's products' entries, one pass
        free = np.ones(n, dtype=bool)
        free[lab] = False
        sizes = np.floor(n * self.class_priors_).astype(np.int64)
        sizes -= np.bincount(lab_class, minlength=k)
        lower, upper = volume_bounds(sizes, int(free.sum()), float(self.volume_constraint))
        # Gaussian noise by numpy's Generator (ziggurat), seeded from random_state
        noise = np.random.default_rng(
            check_random_state(self.random_state).randint(np.iinfo(np.int32).max))
        prices = np.zeros(k)
        fallbacks = 0
        best, best_labels = np.inf, labels.copy()
        K.sort_indices()
        free_rows = np.flatnonzero(free)
        start_sizes = np.bincount(labels[free_rows], minlength=k)
        # the Voronoi start competes for the least energy only within the bounds (graphlearning
        # keeps it regardless: on separated clusters its zero cut then wins from outside them)
        start_in = bool(((start_sizes >= lower) & (start_sizes <= upper)).all())
        for t in range(int(self.max_iter)):
            with numba_threads(self.n_jobs):
                C, energy = _diffused(K.indptr, K.indices, K.data, labels, k)
            self.n_iter_ = t + 1
            if energy < best and (t > 0 or start_in):
                best, best_labels = energy, labels.copy()
            if t == self.max_iter - 1 or not free.any():
                break
            Cf = C[free_rows]
            if self.temperature > 0:
                Cf += self.temperature * self._standard_normal(noise, n, free_rows, k)
            new = None
            if self.assignment == "auction":
                new, _ = auction_assignment(Cf, lower, upper)
                fallbacks += new is None
            if new is None:
                new, prices = bounded_assignment(Cf, lower, upper, prices=prices)
            self.n_changed_.append(int(np.count_nonzero(new != labels[free_rows])))
            labels = labels.copy()
            labels[free_rows] = new
        if fallbacks:
            warnings.warn(
                f"the auction did not meet the class-size bounds within its round cap in "
                f"{fallbacks} of {len(self.n_changed_)} thresholdings; those were solved "
                f"exactly instead (assignment='exact' solves every one exactly).",
                RuntimeWarning, stacklevel=4)
        if not np.isfinite(best):  # max_iter=1: no thresholding ran, the start is all there is
            best = energy
            warnings.warn(
                f"VolumeMBO returns its Voronoi start, whose class sizes on the free points "
                f"{start_sizes.tolist()} leave the volume bounds {lower.tolist()} - "
                f"{upper.tolist()}: max_iter={self.max_iter} leaves no thresholding to enforce "
                f"them; raise max_iter.", RuntimeWarning, stacklevel=4)
        self.energy_ = best
        return best_labels

    def _standard_normal(self, rng, n, free_rows, k):
        """The N(0, 1) draws of one thresholding, shape (free_rows.size, k), on a labeled part
        of n rows (a seam: tests feed graphlearning's own noise stream here)."""
        return rng.standard_normal((free_rows.size, k))

    def _propagation_system(self):
        return None  # not linear in the labels: exact CV refits per fold


def _positions(idx, n):
    """Position of every row of ``idx`` within it (-1 for the others), an array of size n."""
    pos = np.full(n, -1)
    pos[idx] = np.arange(idx.size)
    return pos
