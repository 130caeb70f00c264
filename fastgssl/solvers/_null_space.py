"""Null spaces of singular ``Q`` in :class:`~fastgssl.solvers.LaplacianSolver`.

For ``Q = L`` (or any ``Q`` whose rows sum to zero on some connected components) the null
space is spanned by the normalized indicators ``1_c / sqrt(|c|)`` of those components;
:class:`ComponentNullSpace` keeps the component labels instead of the dense n x m basis:
the projection ``B - N N^T B`` subtracts every component's column means (one pass for the
sums, one for the subtraction), and the test that a component's constant is a null vector
needs the row sums of ``Q`` and ``|Q|`` only. :class:`DenseNullSpace` holds a given basis
(e.g. ``D^{1/2} 1_c`` for ``L_norm``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from fastgssl import _sparse_blocks as K
from fastgssl._components import component_labels


@njit(cache=True)
def _group_max(labels, values, m):  # pragma: no cover - compiled
    """Largest value per label (0 for a label without values); np.maximum.at, one pass."""
    out = np.zeros(m)
    for i in range(labels.shape[0]):
        if values[i] > out[labels[i]]:
            out[labels[i]] = values[i]
    return out


def is_null(Q, N, slack=4.0):
    """Columns of N with ||Q n|| at the round-off level of the product (boolean mask)."""
    QN = Q @ N
    bound = abs(Q) @ np.abs(N)
    # both scaled by the bound's largest entry: weights of 1e300 would overflow the norms
    scale = np.max(bound, axis=0) if bound.size else np.ones(N.shape[1])
    scale = np.where(scale > 0, scale, 1.0)
    row_nnz = int(np.diff(Q.indptr).max()) if Q.nnz else 1
    eps = np.finfo(np.float64).eps
    return (np.linalg.norm(QN / scale, axis=0)
            <= slack * row_nnz * eps * np.linalg.norm(bound / scale, axis=0))


class DenseNullSpace:
    """An orthonormal basis N (n x m) of the null space, in the solver's order."""

    def __init__(self, N):
        self.N = np.ascontiguousarray(N)
        self.m = N.shape[1]

    def project(self, B):
        return np.ascontiguousarray(B - self.N @ (self.N.T @ B))

    def dense(self):
        return self.N

    def permuted(self, order):
        return DenseNullSpace(self.N[order])

    def grounds(self):
        """One vertex per null vector (its largest entry among those not yet taken)."""
        keep = np.ones(self.N.shape[0], dtype=bool)
        out = []
        for c in range(self.m):
            out.append(int(np.argmax(np.abs(self.N[:, c]) * keep)))
            keep[out[-1]] = False
        return np.asarray(out, dtype=np.int64)


class ComponentNullSpace:
    """The constants of the components of Q whose rows sum to zero, kept as labels.

    ``labels[i]`` is the null component of vertex i (0..m-1) or -1.
    """

    def __init__(self, labels, m):
        self.labels = np.asarray(labels, dtype=np.int64)
        self.m = int(m)
        self.counts = np.bincount(self.labels[self.labels >= 0], minlength=self.m)
        self._ones = np.ones(self.labels.shape[0])

    @classmethod
    def detect(cls, Q, slack=4.0, sums=None):
        """The components of Q whose constant vector Q annihilates up to the round-off of
        forming the product (``is_null`` of the dense basis, from the row sums of ``Q``
        and ``|Q|``: a component's rows of ``Q 1_c`` are its rows' sums); None when none.
        ``sums``: the row sums of ``Q`` and ``|Q|`` when known.

        Component c is null when ``||s_c|| <= t ||a_c||`` (t = slack * row nnz * eps),
        so only if ``s_i^2 <= t^2 a_i^2`` on one of its rows at least: when every row has
        ``|s_i| > 2 t a_i`` (a ridge above round-off; the 2 covers the rounding of the
        norms) there is none, and the components are not labeled (a union-find pass, 23 ms
        at 2x10^5 vertices)."""
        s, a = K.row_summary(Q.indptr, Q.indices, Q.data)[:2] if sums is None else sums
        row_nnz = int(np.diff(Q.indptr).max()) if Q.nnz else 1
        tol = slack * row_nnz * np.finfo(np.float64).eps
        if (np.abs(s) > 2.0 * tol * a).all():
            return None  # (a NaN or an infinity compares false: the full test decides)
        n_comp, comp = component_labels(Q)
        # per component, scaled by the largest |Q| row sum: no overflow at weights of 1e300
        scale = _group_max(comp.astype(np.int64), a, n_comp)
        scale = np.where(scale > 0, scale, 1.0)[comp]
        num = np.sqrt(np.bincount(comp, (s / scale) ** 2, minlength=n_comp))
        den = np.sqrt(np.bincount(comp, (a / scale) ** 2, minlength=n_comp))
        null = num <= tol * den
        if not null.any():
            return None
        renumber = np.full(n_comp, -1, dtype=np.int64)
        renumber[null] = np.arange(int(null.sum()))
        return cls(renumber[comp], int(null.sum()))

    def project(self, B):
        means = K.aggregate_sums(self.labels, self.m, B) / self.counts[:, None]
        out = np.empty_like(B)
        K.jacobi_coarse_dot(self._ones, self.labels, np.ascontiguousarray(-means), B, out)
        return out

    def dense(self):
        N = np.zeros((self.labels.shape[0], self.m))
        rows = np.flatnonzero(self.labels >= 0)
        N[rows, self.labels[rows]] = 1.0 / np.sqrt(self.counts[self.labels[rows]])
        return N

    def permuted(self, order):
        return ComponentNullSpace(self.labels[order], self.m)

    def grounds(self):
        """The first vertex of every null component."""
        first = np.full(self.m, -1, dtype=np.int64)
        rows = np.flatnonzero(self.labels >= 0)[::-1]
        first[self.labels[rows]] = rows
        return first
