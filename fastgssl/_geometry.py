"""Translation-invariant, overflow-safe squared distances through the norm expansion.

Every fast distance in fastgssl (RBF Gram blocks, Nystrom columns, the BLAS filter of the
exact kNN search, epsilon-graph candidates, the median bandwidth heuristic) is formed as

    ||x - y||^2 = ||x||^2 + ||y||^2 - 2 <x, y>,

one matrix product per block.  Its round-off is about ``u (||x||^2 + ||y||^2)``, relative to
the *norms*, not to the distance: features with a large common offset (coordinates in
metres, timestamps in seconds) make the expansion cancel catastrophically, and values beyond
~1e154 overflow it.  Two rules make it safe:

1. **Centre first.**  The expansion is applied to ``x - c`` and ``y - c`` with ``c`` the mean
   of the reference rows (computed as ``x_0 + mean(x - x_0)``, which cannot overflow when
   the data's spread is representable).  The result is then invariant, to round-off, under
   translations of the data, and the round-off is relative to the spread of the data.
   Sparse data are centred only in the columns whose range (over both operands) excludes 0:
   every entry of such a column is nonzero, hence stored, so the shifted matrix keeps
   exactly its sparsity; the other columns contain zeros, so their offset is at most their
   spread and centring them would buy at most a factor ~4 in the norms.  Translating a sparse
   matrix makes its columns nonzero, so it is then fully centred.
2. **Refuse what float64 cannot hold.**  :func:`check_distance_scale` bounds every squared
   distance by ``sum_j range_j^2`` (ranges over the rows of both operands) and refuses data
   for which it exceeds ``MAX_SQDIST = 1e300`` (squared distances would overflow, and the
   expansion with them) or is positive but below ``MIN_SQDIST`` (squared distances would
   underflow to subnormal numbers or zero), with an error that says to rescale.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit

__all__ = [
    "MAX_SQDIST",
    "MIN_SQDIST",
    "apply_centre",
    "centre_vector",
    "centred_pair",
    "check_distance_scale",
    "squared_spread",
]

# Squared distances are refused above this bound: the expansion adds norms and products of
# up to ~4x this size, which must stay below float64's largest number (1.8e308).
MAX_SQDIST = 1e300
# ... and below this one (when not zero): the smallest normal float64 over the unit
# round-off, so that squared distances keep full precision.
MIN_SQDIST = float(np.finfo(np.float64).tiny / np.finfo(np.float64).eps)


@njit(cache=True, nogil=True)
def _dense_column_range(A, lo, hi):
    """``lo`` / ``hi`` = the column minima / maxima of a dense ``A`` with at least one row,
    in one pass (float64 whatever ``A``'s dtype); returns whether ``A`` holds a NaN (then
    the caller uses numpy's NaN-propagating reductions)."""
    n, d = A.shape
    for t in range(d):
        lo[t] = A[0, t]
        hi[t] = A[0, t]
    nan = False
    for i in range(n):
        for t in range(d):
            v = np.float64(A[i, t])
            if v < lo[t]:
                lo[t] = v
            if v > hi[t]:
                hi[t] = v
            nan |= v != v
    return nan


def _column_range(A):
    """Column minima and maxima (implicit zeros included for sparse input)."""
    if sp.issparse(A):
        lo = np.asarray(A.min(axis=0).toarray()).ravel().astype(np.float64)
        hi = np.asarray(A.max(axis=0).toarray()).ravel().astype(np.float64)
        return lo, hi
    # float64 whatever the input's dtype: the squares of float32 ranges overflow float32
    A = np.asarray(A)
    if A.ndim == 2 and A.shape[0] and A.dtype in (np.float64, np.float32):
        lo, hi = np.empty(A.shape[1]), np.empty(A.shape[1])
        if not _dense_column_range(A, lo, hi):
            return lo, hi
    return A.min(axis=0).astype(np.float64), A.max(axis=0).astype(np.float64)


def _union_range(X, Y=None):
    lo, hi = _column_range(X)
    if Y is not None and Y is not X:
        lo_y, hi_y = _column_range(Y)
        lo, hi = np.minimum(lo, lo_y), np.maximum(hi, hi_y)
    return lo, hi


def _spread(X, Y=None):
    """(largest half range, ``sum_j range_j^2``); the sum is inf on overflow, 0 on
    underflow."""
    if X.shape[0] == 0 or X.shape[1] == 0:
        return 0.0, 0.0
    lo, hi = _union_range(X, Y)
    half = hi * 0.5 - lo * 0.5  # half ranges: never overflow
    m = float(half.max())
    if not m > 0:
        return 0.0, 0.0
    with np.errstate(over="ignore", under="ignore"):
        return m, float(4.0 * (m * m) * np.sum((half / m) ** 2))


def squared_spread(X, Y=None):
    """``sum_j (max_j - min_j)^2`` over the rows of ``X`` (and ``Y``): a bound on every
    squared distance between them.  ``inf`` when it overflows."""
    return _spread(X, Y)[1]


def check_distance_scale(X, Y=None, *, name="X", y_name="Y"):
    """Refuse data whose squared distances overflow or underflow float64.

    Returns the bound :func:`squared_spread` on the squared distances.

    Raises
    ------
    ValueError
        Naming the argument(s), the bound found and what to do (rescale the data).
    """
    m, bound = _spread(X, Y)
    pair = not (Y is None or Y is X)
    what = f"{name} and {y_name}" if pair else name
    span = "span" if pair else "spans"
    have = "have" if pair else "has"
    if not bound <= MAX_SQDIST:
        widest = m * 2.0
        raise ValueError(
            f"{what} {span} a range of about {widest:.3g} in some feature, so squared "
            f"Euclidean distances (up to ~{bound:.3g}) overflow or come within a factor 1e8 "
            f"of float64's largest number (1.8e308) and every kernel value, distance and "
            f"graph weight computed from them would be inf or NaN. Rescale {what} (for "
            f"example with sklearn.preprocessing.StandardScaler or by dividing by a "
            f"constant) so that feature ranges are below ~1e150."
        )
    if m > 0 and bound < MIN_SQDIST:
        raise ValueError(
            f"{what} {have} a spread so small (no feature spans more than {2.0 * m:.3g}) "
            f"that squared Euclidean distances (at most {bound:.3g}) underflow to subnormal "
            f"numbers or zero and lose their precision. Rescale {what} (for example with "
            f"sklearn.preprocessing.StandardScaler or by multiplying by a constant)."
        )
    return bound


def centre_vector(X, Y=None):
    """The shift ``c`` applied to both operands before the norm expansion.

    Dense operands: the mean of the reference rows (``Y``, or ``X`` when ``Y`` is None),
    computed as ``r_0 + mean(R - r_0)`` so that it cannot overflow.  With a sparse operand:
    the same, but only in the columns whose range over both operands excludes 0 (all their
    entries are stored), 0 elsewhere, so that :func:`apply_centre` keeps the sparsity.
    """
    R = X if Y is None else Y
    d = R.shape[1]
    if R.shape[0] == 0:
        return np.zeros(d)
    if not (sp.issparse(X) or (Y is not None and sp.issparse(Y))):
        pivot = np.array(R[0], dtype=np.float64)
        return pivot + (R - pivot).mean(axis=0)
    lo, hi = _union_range(X, Y)
    offset = (lo > 0) | (hi < 0)
    c = np.zeros(d)
    if not offset.any():
        return c
    mid = lo * 0.5 + hi * 0.5
    if sp.issparse(R):
        Rc = sp.csr_matrix(R)
        cols = Rc.indices
        on = offset[cols]
        # every entry of an offset column is stored: the column mean is its stored mean
        sums = np.bincount(cols[on], weights=Rc.data[on] - mid[cols[on]], minlength=d)
        c[offset] = mid[offset] + sums[offset] / R.shape[0]
    else:
        c[offset] = mid[offset] + (R[:, offset] - mid[offset]).mean(axis=0)
    return c


def apply_centre(A, c):
    """``A - c`` (row-wise).  CSR input stays CSR: only stored entries of the columns with
    ``c_j != 0`` change, which by construction (:func:`centre_vector`) are all stored."""
    if not sp.issparse(A):
        return np.asarray(A, dtype=np.float64) - c
    if not c.any():
        return A
    A = sp.csr_matrix(A, dtype=np.float64, copy=True)
    A.data -= c[A.indices]
    return A


def centred_pair(X, Y=None):
    """``(X - c, Y - c)`` (``Y - c`` is ``X - c`` itself when ``Y`` is None)."""
    if Y is None and not sp.issparse(X):
        if X.shape[0] == 0:
            return X, X
        Xc = X - X[0]  # one temporary: shift by a data row, then by the mean of the rest
        Xc -= Xc.mean(axis=0)
        return Xc, Xc
    c = centre_vector(X, Y)
    Xc = apply_centre(X, c)
    if Y is None:
        return Xc, Xc
    return Xc, apply_centre(Y, c)
