"""The graph value: the affinity W with what its builder knows about it.

A builder's ``build(X)`` returns a :class:`Graph`; ``builder(X)`` returns its ``W`` alone
(the sparse matrix users and outside code expect). The learners read the value, not the
builder's attributes: the weight and its parameters as used (the Gaussian bandwidth the
builder chose, the symmetrization its weight implies), the neighbour lists and the squared
k-th neighbour distances ``d_k(x_i)^2`` of the kNN builders (the scale of the self-tuned
weights and of the induction formula at new points), and the recall of the approximate
builders when it was measured.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

__all__ = ["Graph"]


@dataclass(frozen=True, eq=False)
class Graph:
    """A built graph.

    Attributes
    ----------
    W : scipy.sparse.csr_matrix of shape (n, n)
        The symmetric, nonnegative affinity with an empty diagonal.
    weight : str or None
        The edge weight (``"binary"``, ``"gaussian"``, ``"distance"``, ``"self_tuned"``,
        ``"self_tuned_sym"``); None when unknown (a plugin that does not name it).
    sigma_w : float or None
        The Gaussian bandwidth used, ``w = exp(-d^2 / (2 sigma_w))`` (the builder's default
        when it chose it); None for the other weights or when unknown.
    self_tuned_constant : float or None
        The constant of the self-tuned weights; None when unknown.
    symmetrize : str or None
        How the one-sided lists were made symmetric (``"max"``, ``"mean"``, ...; None for a
        graph without lists, e.g. epsilon, or when unknown).
    n_neighbors : int or None
        k of a kNN graph; None for a graph without neighbour lists.
    neighbors : ndarray of shape (n, k) or None
        The neighbour lists (``-1`` where a list has fewer than k entries), when the builder
        keeps them.
    kth_sq_distances : ndarray of shape (n,) or None
        ``d_k(x_i)^2``, the squared distance from each point to its k-th listed neighbour.
    recall : float or None
        Recall@k of approximate lists on sampled points; None where not measured.
    """

    W: sp.csr_matrix
    weight: str | None = None
    sigma_w: float | None = None
    self_tuned_constant: float | None = None
    symmetrize: str | None = None
    n_neighbors: int | None = None
    neighbors: np.ndarray | None = None
    kth_sq_distances: np.ndarray | None = None
    recall: float | None = None
