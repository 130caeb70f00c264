"""Edge weights and symmetrization shared by the kNN and epsilon graph builders.

Weights (the source papers' convention, the design notes): with ``d_ij = ||x_i - x_j||``,

* ``"binary"``:   w_ij = 1;
* ``"gaussian"``: w_ij = exp(-d_ij^2 / (2 sigma_w))   (``sigma_w``: a squared distance, as
  the kernels' ``sigma``);
* ``"distance"``: w_ij = d_ij (edges between exact duplicates get weight 0 and vanish).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

WEIGHTS = ("binary", "gaussian", "distance")
SYMMETRIZE = ("max", "mean", "mutual")


def check_weight(weight, sigma_w):
    """Validate ``weight`` / ``sigma_w``; return ``sigma_w`` as float or None."""
    from fastgssl._validation import check_positive

    if not isinstance(weight, str) or weight not in WEIGHTS:
        raise ValueError(f"weight must be one of {list(WEIGHTS)}, got {weight!r}.")
    if sigma_w is None:
        return None
    sigma_w = check_positive(sigma_w, "sigma_w")
    return sigma_w


def default_sigma_w(sq_distances):
    """Bandwidth heuristic: the mean squared distance over the graph's edges.

    With ``w = exp(-d^2 / (2 sigma_w))`` an edge of average length then gets weight
    ``exp(-1/2) ~ 0.61``.  Falls back to 1.0 when every edge has length 0.
    """
    m = float(np.mean(sq_distances)) if np.size(sq_distances) else 0.0
    return m if m > 0 else 1.0


def edge_weights(sq_distances, weight, sigma_w):
    """Weights of edges with the given squared lengths (see the module docstring)."""
    if weight == "binary":
        return np.ones_like(sq_distances, dtype=np.float64)
    if weight == "gaussian":
        return np.exp(-sq_distances / (2.0 * sigma_w))
    return np.sqrt(sq_distances)


def symmetrize(A, how):
    """Symmetric graph from a directed one.

    ``"max"``: W = max(A, A^T) (an edge if either point lists the other);
    ``"mean"``: W = (A + A^T) / 2 (one-sided edges keep half their weight);
    ``"mutual"``: W = min(A, A^T) (only mutual neighbours).
    """
    if how == "max":
        W = A.maximum(A.T)
    elif how == "mean":
        W = (A + A.T) * 0.5
    elif how == "mutual":
        W = A.minimum(A.T)
    else:
        raise ValueError(f"symmetrize must be one of {list(SYMMETRIZE)}, got {how!r}.")
    W = drop_diagonal(sp.csr_matrix(W, dtype=np.float64))
    W.eliminate_zeros()
    W.sort_indices()
    return W


def drop_diagonal(W):
    """CSR ``W`` without stored diagonal entries (in place when there are none).

    ``setdiag(0)`` on a CSR matrix without a stored diagonal inserts n explicit zeros
    through a COO round trip; a mask over the stored entries costs one pass.
    """
    rows = np.repeat(np.arange(W.shape[0]), np.diff(W.indptr))
    keep = W.indices != rows
    if keep.all():
        return W
    indptr = np.concatenate(([0], np.cumsum(np.bincount(rows[keep], minlength=W.shape[0]))))
    return sp.csr_matrix((W.data[keep], W.indices[keep], indptr), shape=W.shape)


def isolated_count(W):
    """Number of vertices without any edge."""
    return int(np.count_nonzero(np.diff(W.indptr) == 0))
