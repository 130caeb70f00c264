"""The matrix of a :class:`fastgssl.solvers.LaplacianSolver`: checked (finite, symmetric,
nonnegative diagonal), in CSR with sorted indices, put in a locality order (reverse
Cuthill-McKee, so that neighbours sit close in index order and a block of right-hand sides
stays in cache) and given a null space to project out (a caller's, checked against ``Q``
and orthonormalized).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import reverse_cuthill_mckee

from fastgssl import _sparse_blocks as K
from fastgssl._validation import check_no_complex

from ._null_space import is_null

__all__ = []


def _as_csr(Q):
    check_no_complex(Q, "Q")
    if sp.issparse(Q):
        Q = sp.csr_matrix(Q, dtype=np.float64)
    else:
        Q = sp.csr_matrix(np.asarray(Q, dtype=np.float64))
    Q.sum_duplicates()
    Q.sort_indices()
    return Q


def _check_matrix(Q, diag):
    if not np.isfinite(Q.data).all():
        raise ValueError("Q contains NaN or infinite entries.")
    if (diag < 0).any():
        raise ValueError(
            f"Q has {int((diag < 0).sum())} negative diagonal entries; it must be "
            f"positive semi-definite (a Laplacian, possibly shifted)."
        )
    asym = abs(Q - Q.T)
    if asym.nnz and asym.max() > 1e-10 * abs(Q).max():
        raise ValueError(f"Q is not symmetric (max |Q - Q^T| = {asym.max():.3g}).")


def _locality_order(Q):
    """Reverse Cuthill-McKee order of Q's graph (neighbours close in index order)."""
    return np.asarray(reverse_cuthill_mckee(Q, symmetric_mode=True), dtype=np.int64)


def _permuted(Q, order, inverse):
    """``Q[order][:, order]`` as a CSR matrix with sorted indices (one parallel pass)."""
    indptr, indices, data = K.permute_symmetric(Q.indptr, Q.indices, Q.data, order, inverse)
    P = sp.csr_matrix((data, indices, indptr), shape=Q.shape)
    P.has_sorted_indices = True
    return P


def _checked_null_space(Q, null_space):
    """A given null space, validated and orthonormalized (n, m)."""
    check_no_complex(null_space, "null_space")
    n = Q.shape[0]
    try:
        N = np.asarray(null_space, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"null_space must be 'auto', None or a numeric array of shape (n, m): {exc}"
        ) from None
    if N.ndim == 1:
        N = N[:, None]
    if N.ndim != 2 or N.shape[0] != n or N.shape[1] == 0:
        raise ValueError(
            f"null_space must be 'auto', None or an array of shape ({n},) or ({n}, m) "
            f"with m >= 1; got shape {N.shape}."
        )
    if not np.isfinite(N).all():
        raise ValueError("null_space contains NaN or infinite values.")
    Nq, _ = np.linalg.qr(N)
    if not is_null(Q, Nq, slack=1e3).all():
        worst = float(np.max(np.linalg.norm(Q @ Nq, axis=0)))
        raise ValueError(
            f"null_space is not a null space of Q (max ||Q n|| = {worst:.3g} for its "
            f"orthonormalized columns); pass null_space='auto' or None for a "
            f"nonsingular (e.g. ridged) Q."
        )
    return Nq
