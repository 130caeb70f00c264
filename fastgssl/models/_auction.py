"""The forward-reverse auction with epsilon scaling, for the assignment with class-size bounds.

Jacobs, Merkurjev & Esedoglu (2018) threshold each volume-constrained MBO step by solving

    max sum_i U_{i, c(i)}   subject to   lower_c <= |{i : c(i) = c}| <= upper_c

with Bertsekas' auction: in a *forward* phase every unassigned row bids for its best class
(the value U_ic - p_c, p the prices) the price plus epsilon plus its margin over the second
best; a class holds at most ``upper_c`` rows (a min-heap of bids), and a bid into a full class
evicts the lowest bid and sets the price to the new lowest. A *reverse* phase fills the
classes below ``lower_c``: it moves in the rows that lose least by the move and lowers the
class's price by that loss (plus epsilon). Epsilon starts at 1 and is divided by 4 until it is
below ``eps_min``.

This module follows graphlearning's C routine (v1.7.5,
``volume_preserving_forward_reverse_auction``) step by step, including three traits that
make its result differ from the exact optimum
(:func:`fastgssl.models._volume_mbo.bounded_assignment`):

- prices persist from phase to phase and a forward phase only raises them, so a class whose
  price rose while epsilon was large (epsilon starts at 1, the scale of the scores) keeps
  that price when it is no longer full: it ends below its upper bound with rows that would
  score more in it (the optimum has p_c > 0 only for a class at its upper bound);
- the class counts that decide whether a round is feasible are those of the last reverse
  phase, so once a reverse phase has met every bound the later forward phases are accepted
  without checking the lower bounds (they hold up to the rows near a tie in practice);
- the prices start at zero at every call (no warm start across MBO steps).

They matter for VolumeMBO's accuracy: on the MNIST test images (graphlearning's 10-NN graph,
20 label draws, each run given graphlearning's own noise, ``bench/repro_volume_mbo_gl_noise.py``)
VolumeMBO with this auction is within 0.07 points of ``gl.ssl.volume_mbo`` (98-99.9% of the
points predicted alike), with the exact assignment 0.4 points below it at 1 and at 5 labels
per class.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["auction_assignment"]


@numba.njit(cache=True)
def _sift_down(keys, items, count, i):  # pragma: no cover - compiled
    """Restore the min-heap order of ``keys[:count]`` below node i."""
    while True:
        left = 2 * i + 1
        small = i
        if left < count and keys[left] < keys[small]:
            small = left
        if left + 1 < count and keys[left + 1] < keys[small]:
            small = left + 1
        if small == i:
            return
        keys[i], keys[small] = keys[small], keys[i]
        items[i], items[small] = items[small], items[i]
        i = small


@numba.njit(cache=True)
def _push(keys, items, count, key, item):  # pragma: no cover - compiled
    """Insert (key, item) into the min-heap of ``count`` nodes; returns the new count."""
    i = count
    keys[i], items[i] = key, item
    while i > 0:
        parent = (i - 1) // 2
        if keys[parent] <= keys[i]:
            break
        keys[i], keys[parent] = keys[parent], keys[i]
        items[i], items[parent] = items[parent], items[i]
        i = parent
    return count + 1


@numba.njit(cache=True)
def _forward(U, prices, labels, upper, eps, keys, items, filled, queue):  # pragma: no cover
    """One forward phase: every row unassigned, bids until each holds a class; returns the
    number of evictions (0: the labels are argmax_c (U_ic - p_c) and no price moved)."""
    m, k = U.shape
    filled[:] = 0
    evictions = 0
    waiting = m
    for i in range(m):
        queue[i] = i
    while waiting > 0:
        evicted = 0
        for t in range(waiting):
            i = queue[t]
            best = -np.inf
            second = -np.inf
            item = -1
            for c in range(k):
                if upper[c] == 0:
                    continue
                v = U[i, c] - prices[c]
                if v > best:
                    second, best, item = best, v, c
                elif v > second:
                    second = v
            bid = prices[item] + eps + (best - second if second > -np.inf else 0.0)
            labels[i] = item
            if filled[item] < upper[item]:
                filled[item] = _push(keys[item], items[item], filled[item], bid, i)
            else:
                out = items[item, 0]
                labels[out] = -1
                keys[item, 0], items[item, 0] = bid, i
                _sift_down(keys[item], items[item], filled[item], 0)
                prices[item] = keys[item, 0]
                queue[evicted] = out
                evicted += 1
        evictions += evicted
        waiting = evicted
    return evictions


@numba.njit(cache=True)
def _argmax_counts(U, prices, labels, counts):  # pragma: no cover - compiled
    """Each row to argmax_c (U_ic - p_c); the class counts into ``counts``."""
    m, k = U.shape
    counts[:] = 0
    for i in range(m):
        best = -np.inf
        item = 0
        for c in range(k):
            v = U[i, c] - prices[c]
            if v > best:
                best, item = v, c
        labels[i] = item
        counts[item] += 1


@numba.njit(cache=True)
def _reverse(U, prices, labels, lower, counts, eps, keys, items):  # pragma: no cover
    """One reverse pass: each class below its lower bound takes the rows that lose least by
    joining it, its price lowered by the largest such loss plus epsilon."""
    m, k = U.shape
    for c in range(k):
        missing = lower[c] - counts[c]
        if missing <= 0:
            continue
        held = 0
        for i in range(m):
            if labels[i] == c:
                continue
            delta = (U[i, c] - prices[c]) - (U[i, labels[i]] - prices[labels[i]])
            if held < missing:
                held = _push(keys, items, held, delta, i)
            elif keys[0] < delta:
                keys[0], items[0] = delta, i
                _sift_down(keys, items, held, 0)
        if held == 0:
            continue
        if keys[0] <= 0.0:
            prices[c] += keys[0] - eps
        for t in range(held):
            i = items[t]
            counts[labels[i]] -= 1
            counts[c] += 1
            labels[i] = c


@numba.njit(cache=True)
def _short(counts, lower):  # pragma: no cover - compiled
    """Whether a class count is below its lower bound."""
    for c in range(counts.size):
        if counts[c] < lower[c]:
            return True
    return False


@numba.njit(cache=True)
def _within(counts, lower, upper):  # pragma: no cover - compiled
    if _short(counts, lower):
        return False
    for c in range(counts.size):
        if counts[c] > upper[c]:
            return False
    return True


@numba.njit(cache=True)
def _auction(U, lower, upper, eps_min, max_rounds):  # pragma: no cover - compiled
    """graphlearning's forward-reverse auction; returns (labels, prices, rounds), rounds -1
    when a feasibility loop ran ``max_rounds`` times without meeting the bounds.

    When the argmax of every row (at zero prices) already meets the bounds, the phases
    evict nothing and return that argmax at zero prices after one round (every lower bound
    zero) or two: it is computed in one pass instead of two forward phases (the common
    case in VolumeMBO's later steps; equal to the phases, labels and prices, tested)."""
    k = U.shape[1]
    prices = np.zeros(k)
    labels = np.empty(U.shape[0], dtype=np.int64)
    counts = np.zeros(k, dtype=np.int64)
    _argmax_counts(U, prices, labels, counts)
    if _within(counts, lower, upper):
        return labels, prices, 1 if lower.max() <= 0 else 2
    return _auction_phases(U, lower, upper, eps_min, max_rounds)


@numba.njit(cache=True)
def _auction_phases(U, lower, upper, eps_min, max_rounds):  # pragma: no cover - compiled
    """The phases of :func:`_auction`, from zero prices and no row assigned."""
    m, k = U.shape
    prices = np.zeros(k)
    labels = np.full(m, -1, dtype=np.int64)
    counts = np.zeros(k, dtype=np.int64)  # of the last reverse phase, as graphlearning's
    cap = max(1, int(upper.max()))
    keys = np.empty((k, cap))
    items = np.empty((k, cap), dtype=np.int64)
    filled = np.zeros(k, dtype=np.int64)
    queue = np.empty(m, dtype=np.int64)
    rkeys = np.empty(max(m, 1))
    ritems = np.empty(max(m, 1), dtype=np.int64)
    eps = max(1.0, eps_min * 1.01 * 4.0)
    rounds = 0
    while eps > eps_min:
        feasible = False
        while not feasible:
            rounds += 1
            if rounds > max_rounds:
                return labels, prices, -1
            moved = _forward(U, prices, labels, upper, eps, keys, items, filled, queue)
            eps = max(eps / 4.0, eps_min)
            feasible = _within(counts, lower, upper)
            if feasible and moved == 0:
                # no price moved and the (stale) counts pass: every later phase repeats this
                # one exactly (epsilon enters only the bids that evict), so stop here
                return labels, prices, rounds
            if feasible:
                continue
            _argmax_counts(U, prices, labels, counts)
            passes = 0
            while _short(counts, lower):
                passes += 1
                if passes > max_rounds:
                    return labels, prices, -1
                _reverse(U, prices, labels, lower, counts, eps, rkeys, ritems)
            feasible = _within(counts, lower, upper)
        eps /= 4.0
    return labels, prices, rounds


def auction_assignment(U, lower, upper, *, eps_min=1e-7, max_rounds=1000):
    """Assign the rows of ``U`` to classes with sizes between ``lower`` and ``upper`` by
    graphlearning's forward-reverse auction (Jacobs, Merkurjev & Esedoglu 2018).

    Parameters
    ----------
    U : ndarray of shape (m, k)
        Scores (each row prefers its larger entries).
    lower, upper : ndarray of int of shape (k,)
        Class-size bounds, ``sum(lower) <= m <= sum(upper)``.
    eps_min : float, default=1e-7
        The last epsilon (graphlearning's); epsilon starts at max(1, 4.04 eps_min).
    max_rounds : int, default=1000
        Cap on the forward-reverse rounds of one epsilon and on the reverse passes of one
        round (graphlearning has none); reaching it returns ``labels`` None.

    Returns
    -------
    labels : ndarray of int of shape (m,) or None
    prices : ndarray of shape (k,)
    """
    U = np.ascontiguousarray(U, dtype=np.float64)
    labels, prices, rounds = _auction(U, np.asarray(lower, dtype=np.int64),
                                      np.asarray(upper, dtype=np.int64), float(eps_min),
                                      int(max_rounds))
    return (labels if rounds >= 0 else None), prices
