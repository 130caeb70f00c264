"""Which connected components of a graph hold a labeled vertex.

A graph learner's labels reach only the components that contain one: the harmonic and
Poisson systems are singular on the others (Zhu et al. 2003; Calder et al. 2020), the
manifold term of LapRLS / LapSVM leaves them to the ambient kernel term, and a posterior
covariance with no prior variance is singular there. Every learner asks the same question,
answered here once: the components of the undirected graph
(:func:`scipy.sparse.csgraph.connected_components`) and, per component, whether one of its
vertices is labeled; ``has_label[comp]`` is the mask of the vertices the labels reach.
"""

from __future__ import annotations

import numpy as np
from scipy.sparse.csgraph import connected_components

__all__ = []


def labeled_components(W, labeled):
    """Components of ``W`` and which of them hold a labeled vertex.

    Parameters
    ----------
    W : sparse matrix of shape (n, n)
        Graph (read as undirected: an edge in either direction connects).
    labeled : ndarray of shape (n,) of bool, or of int
        The labeled vertices, as a mask or as indices.

    Returns
    -------
    comp : ndarray of shape (n,), int32
        Component of every vertex, numbered from 0.
    has_label : ndarray of shape (n_components,), bool
        Whether the component holds a labeled vertex; ``has_label[comp]`` marks the vertices
        the labels reach.
    """
    n_comp, comp = connected_components(W, directed=False)
    has_label = np.zeros(n_comp, dtype=bool)
    has_label[comp[labeled]] = True
    return comp, has_label
