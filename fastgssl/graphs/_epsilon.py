"""Exact epsilon-neighbourhood pairs: every (i, j), i != j, with ||x_i - x_j|| <= eps.

Dense low-dimensional data: :meth:`scipy.spatial.cKDTree.query_pairs` (output-sensitive,
``O(n log n + |E|)``).  Otherwise blocked products give approximate squared distances
``||x||^2 + ||y||^2 - 2 x.y`` of the centred data (:mod:`fastgssl._geometry`) in
float64; every pair within ``eps^2 + delta`` (``delta`` the round-off bound of
:mod:`fastgssl.graphs._knn`) is kept as a candidate and its exact squared distance
recomputed, so the boundary ``d <= eps`` is decided on exact float64 sums.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from fastgssl._geometry import centred_pair

from ._knn import KDTREE_MAX_DIM
from ._knn_kernels import pair_sqdist

_BLOCK = 2048
_U64 = float(np.finfo(np.float64).eps) / 2


def epsilon_pairs(X, eps):
    """Return ``(rows, cols, sq_distances)`` of all pairs i < j within distance ``eps``."""
    n, d = X.shape
    eps2 = eps * eps
    if not sp.issparse(X) and d <= KDTREE_MAX_DIM:
        from scipy.spatial import cKDTree

        pairs = cKDTree(X).query_pairs(eps * (1.0 + 1e-9), output_type="ndarray")
        rows = pairs[:, 0].astype(np.int64)
        cols = pairs[:, 1].astype(np.int64)
    else:
        # centred (translation invariant, see ._geometry); exact sums decide the boundary
        F, _ = centred_pair(X)
        if sp.issparse(F):
            norms = np.asarray(F.multiply(F).sum(axis=1)).ravel()
            XT = F.T.tocsc()
        else:
            norms = np.einsum("ij,ij->i", F, F)
        slack = 8.0 * (d + 8) * _U64 * 2.0 * norms.max()
        rows_l, cols_l = [], []
        for a0 in range(0, n, _BLOCK):
            a1 = min(n, a0 + _BLOCK)
            for b0 in range(a0, n, _BLOCK):
                b1 = min(n, b0 + _BLOCK)
                if sp.issparse(F):
                    gram = (F[a0:a1] @ XT[:, b0:b1]).toarray()
                else:
                    gram = F[a0:a1] @ F[b0:b1].T
                approx = norms[a0:a1, None] + norms[None, b0:b1] - 2.0 * gram
                r, c = np.nonzero(approx <= eps2 + slack)
                r += a0
                c += b0
                keep = r < c
                rows_l.append(r[keep])
                cols_l.append(c[keep])
        rows = np.concatenate(rows_l).astype(np.int64)
        cols = np.concatenate(cols_l).astype(np.int64)
    sq = pair_sqdist(X, rows, cols)
    keep = sq <= eps2
    return rows[keep], cols[keep], sq[keep]
