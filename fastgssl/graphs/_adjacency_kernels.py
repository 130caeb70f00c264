"""A given graph checked in one compiled pass (issue 54).

A weight matrix that a user passes (``graph=W``) is checked (:func:`check_adjacency`) once
per fit. With scipy that is about ten passes over the entries: a copy, the finiteness and
sign checks, the diagonal, the duplicates, the zeros, the sort, a transpose compared entry
for entry. For a matrix that is already canonical (CSR, sorted indices without duplicates,
no stored diagonal, no stored zeros) and exactly symmetric, as graph builders return it,
:func:`canonical_symmetric_scan` proves all of that in one pass: it matches every stored
``(i, j, w)`` above the diagonal with ``(j, i)`` (a cursor per row) and compares the
weights exactly. Anything else (unsorted rows, a stored diagonal, round-off asymmetry, a
NaN) goes the general scipy way, whose errors name the problem.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["canonical_symmetric_scan"]


@njit(cache=True)
def _scan_rows(indptr, indices, data):
    n = indptr.shape[0] - 1
    # cursor[j]: the first entry of row j left of the diagonal that no entry (i, j) above
    # the diagonal has matched yet. Rows i run in increasing order, so the entries (i, j),
    # i < j, ask for row j's entries left of the diagonal in their stored (increasing) order
    cursor = indptr[:-1].copy()
    for i in range(n):
        prev = -1
        for jj in range(indptr[i], indptr[i + 1]):
            j = indices[jj]
            w = data[jj]
            # sorted without duplicates, off the diagonal, finite and positive
            if j <= prev or j == i or j < 0 or j >= n or not (w > 0.0 and w < np.inf):
                return False
            prev = j
            if j > i:
                c = cursor[j]
                if c >= indptr[j + 1] or indices[c] != i or data[c] != w:
                    return False
                cursor[j] = c + 1
    for j in range(n):  # every entry left of a diagonal was matched
        c = cursor[j]
        if c < indptr[j + 1] and indices[c] < j:
            return False
    return True


def canonical_symmetric_scan(W):
    """Whether CSR ``W`` is canonical (each row's indices strictly increasing, no stored
    diagonal), every weight finite and > 0, and ``W`` exactly symmetric (pattern and
    values): one sequential pass over the entries with a cursor per row (an entry (i, j)
    above the diagonal must be the next unmatched entry left of row j's diagonal), no
    copy; 0.2 ms for 80,000 entries where a transpose and its comparison cost 1 ms."""
    return bool(_scan_rows(W.indptr, W.indices, W.data))
