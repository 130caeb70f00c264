"""Gaussian (RBF) kernel with the source papers' bandwidth convention.

Seed papers 000 and 001 write the Gaussian kernel as

    k(x, x') = exp(-||x - x'||^2 / (2 sigma)),

with ``sigma`` a squared distance (scikit-learn's ``gamma`` is ``1 / (2 sigma)``). The Gram matrix
is computed blockwise: one BLAS product ``X_b Y^T`` per row block, then a Numba kernel that
turns the inner products into ``-(|x|^2 + |y|^2 - 2 <x, y>)^+ / (2 sigma)`` in place, in
parallel, clipping the tiny negative squared distances that cancellation produces, and
numpy's vectorized ``exp`` in place (faster than Numba's scalar ``exp`` without fastmath).
The Gram matrix of dense data (one symmetric product) instead takes one Numba pass over the
upper triangle that mirrors each value: half of the ``exp`` calls, exactly symmetric.

Both operands are centred on the mean of the reference rows before the product
(:mod:`fastgssl._geometry`), so the kernel is translation invariant to round-off and
its error is relative to the spread of the data, not to its offset; data whose squared
distances overflow float64 are refused with an error that says to rescale.
"""

from __future__ import annotations

import math

import numba
import numpy as np
import scipy.sparse as sp

from fastgssl._geometry import centred_pair, check_distance_scale
from fastgssl._threads import default_numba_threads, numba_threads, small_blas
from fastgssl._validation import check_positive, check_random_state, check_X

__all__ = ["default_sigma", "rbf_kernel"]

# Rows per block: bounds the temporaries of the sparse path and keeps blocks cache friendly.
_BLOCK_ELEMENTS = 1 << 22
# A sparse right-hand factor with at most this many entries (dense) is densified once.
_DENSIFY_ELEMENTS = 1 << 25
# Below this many kernel entries the products run on one BLAS thread and the Numba pass on
# one thread: on a 2-core machine with another busy process a 400 x 400 kernel took 20-24 ms
# with two threads (each parallel region waits for the thread without a core) and 1 ms on one.
_SERIAL_ELEMENTS = 1 << 20


# Below this many entries the log-kernel pass is numpy's (the same operations in the same
# order: the same numbers), not the parallel Numba kernel: a few milliseconds at this size,
# and a small job's first run does not compile the kernel (about a second per parallel
# kernel on the 2-core project machine).
_NUMPY_ELEMENTS = 1 << 22


def _log_rbf(G, xx, yy, scale):
    """In place: ``G[i, j] <- -max(xx[i] + yy[j] - 2 G[i, j], 0) * scale``."""
    if G.size > _NUMPY_ELEMENTS:
        _gram_to_log_rbf(G, xx, yy, scale)
        return
    np.multiply(G, 2.0, out=G)
    np.subtract(np.add.outer(xx, yy), G, out=G)
    np.maximum(G, 0.0, out=G)
    np.multiply(G, -scale, out=G)


@numba.njit(parallel=True, cache=True)
def _gram_to_log_rbf(G, xx, yy, scale):
    """In place: G[i, j] <- -max(xx[i] + yy[j] - 2 G[i, j], 0) * scale."""
    n, m = G.shape
    for i in numba.prange(n):
        xi = xx[i]
        for j in range(m):
            d2 = xi + yy[j] - 2.0 * G[i, j]
            if d2 < 0.0:
                d2 = 0.0
            G[i, j] = -d2 * scale


@numba.njit(parallel=True, cache=True)
def _gram_to_rbf_symmetric(G, xx, scale):
    """In place, for a symmetric Gram matrix ``G = X X^T``: ``G[i, j] <- exp(-max(xx[i] +
    xx[j] - 2 G[i, j], 0) * scale)`` from the upper triangle, mirrored to the lower one
    (half of the ``exp`` calls; the result is exactly symmetric). The diagonal is left to
    the caller."""
    n = G.shape[0]
    for i in numba.prange(n):
        xi = xx[i]
        for j in range(i + 1, n):
            d2 = xi + xx[j] - 2.0 * G[i, j]
            if d2 < 0.0:
                d2 = 0.0
            v = math.exp(-d2 * scale)
            G[i, j] = v
            G[j, i] = v


def _row_norms_sq(X):
    if sp.issparse(X):
        return np.asarray(X.multiply(X).sum(axis=1)).ravel()
    return np.einsum("ij,ij->i", X, X)


def _dot_t(A, B):
    """A @ B.T as a dense C-contiguous float64 array (dense or CSR inputs)."""
    if sp.issparse(A) or sp.issparse(B):
        out = A @ B.T
        out = out.toarray() if sp.issparse(out) else np.asarray(out)
        return np.ascontiguousarray(out, dtype=np.float64)
    return A @ B.T


def rbf_kernel(X, Y=None, sigma=1.0, *, out=None):
    """Gaussian kernel matrix ``K[i, j] = exp(-||x_i - y_j||^2 / (2 sigma))``.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n, d)
    Y : array-like or sparse matrix of shape (m, d), optional
        Defaults to ``X`` (then the result is exactly symmetric with a unit diagonal).
    sigma : float > 0
        Width in the papers' convention, a squared distance; scikit-learn's
        ``rbf_kernel(gamma=1 / (2 * sigma))`` is the same kernel.
    out : ndarray of shape (n, m), optional
        Preallocated C-contiguous float64 output.

    Returns
    -------
    K : ndarray of shape (n, m)

    Raises
    ------
    ValueError
        When the data's squared distances overflow float64 (feature ranges beyond ~1e150)
        or underflow it: rescale the data.

    Notes
    -----
    Squared distances come from ``|x - c|^2 + |y - c|^2 - 2 <x - c, y - c>`` with ``c`` the
    mean of ``Y`` (of ``X`` when ``Y`` is None; for sparse data only the columns without
    zeros are shifted, so the sparsity is kept): translating the data leaves the kernel
    unchanged up to round-off, which is relative to the data's spread. One BLAS product per
    block of rows (the cost is that of a matrix product, ``O(n m d)``), followed by a
    parallel Numba pass that clips the negative round-off at 0, then an in-place vectorized
    ``exp``; the Gram matrix of dense ``X`` (``Y=None``) is one symmetric product (BLAS
    syrk: half the flops) and one pass over its upper triangle, mirrored (half the
    ``exp`` calls). Memory beyond the output is ``O((n + m) d)`` for the centred
    copies.

    Examples
    --------
    >>> import numpy as np
    >>> from fastgssl.kernels import rbf_kernel
    >>> X = np.array([[0.0, 0.0], [1.0, 1.0]])
    >>> np.round(rbf_kernel(X, sigma=1.0), 6)
    array([[1.     , 0.367879],
           [0.367879, 1.      ]])
    """
    sigma = check_positive(sigma, "sigma")
    X = check_X(X, "X")
    symmetric = Y is None
    Y = X if symmetric else check_X(Y, "Y")
    if X.shape[1] != Y.shape[1]:
        raise ValueError(
            f"X has {X.shape[1]} features but Y has {Y.shape[1]}; both must have the same "
            f"number of columns."
        )
    n, m = X.shape[0], Y.shape[0]
    if out is None:
        out = np.empty((n, m), dtype=np.float64)
    elif (not isinstance(out, np.ndarray) or out.shape != (n, m) or out.dtype != np.float64
          or not out.flags.c_contiguous):
        raise ValueError(f"out must be a C-contiguous float64 array of shape {(n, m)}.")
    check_distance_scale(X, None if symmetric else Y, name="X", y_name="Y")
    X, Y = centred_pair(X, None if symmetric else Y)
    xx = _row_norms_sq(X)
    yy = xx if symmetric else _row_norms_sq(Y)
    scale = 1.0 / (2.0 * sigma)
    Yt = Y.T
    if sp.issparse(Y) and Y.shape[0] * Y.shape[1] <= _DENSIFY_ELEMENTS:
        # sparse x dense products give dense blocks directly (sparse x sparse would build
        # a sparse result of a dense matrix first)
        Yt = np.ascontiguousarray(Y.T.toarray())
    block = max(1, _BLOCK_ELEMENTS // max(m, 1))
    # the Gram matrix of dense data in one product X X^T: BLAS syrk (numpy detects the
    # transposed operand), half the flops of the blocked gemm and exactly symmetric
    # (MNIST n = 3000, d = 784: 0.19 s against 0.35 s on one thread)
    whole = symmetric and not sp.issparse(X)
    small = n * m <= _SERIAL_ELEMENTS
    # large kernels: BLAS threads as the Numba ones, the cores other jobs leave free (one
    # thread when another job keeps a core of a 2-core machine busy: a two-thread syrk
    # then waits for the thread without a core)
    serial = small or default_numba_threads() == 1
    with small_blas(0.0 if serial else np.inf), numba_threads(1 if small else None):
        _fill_rbf(out, X, Yt, xx, yy, scale, block, whole)
    if symmetric:
        # exp(0) on the diagonal exactly, whatever the cancellation in |x|^2 - 2<x,x> + |x|^2
        np.fill_diagonal(out, 1.0)
    return out


def _fill_rbf(out, X, Yt, xx, yy, scale, block, whole):
    """The blocks of :func:`rbf_kernel`: inner products, then the log-kernel and exp."""
    n = out.shape[0]
    if whole:
        np.matmul(X, X.T, out=out)
        if out.size > _NUMPY_ELEMENTS:
            _gram_to_rbf_symmetric(out, xx, scale)
        else:  # (X X^T is exactly symmetric, and so is its log-kernel: xx[i] + xx[j])
            _log_rbf(out, xx, xx, scale)
            np.exp(out, out=out)
        return
    for start in range(0, n, block):
        stop = min(n, start + block)
        Xb = X[start:stop]
        if sp.issparse(Xb) or sp.issparse(Yt):
            prod = Xb @ Yt
            out[start:stop] = prod.toarray() if sp.issparse(prod) else prod
        else:
            np.matmul(Xb, Yt, out=out[start:stop])
        _log_rbf(out[start:stop], xx[start:stop], yy, scale)
        np.exp(out[start:stop], out=out[start:stop])  # numpy's vectorized exp


class CentredRBFColumns:
    """Kernel columns ``K(X, X[idx])`` of one data set for many small ``idx``.

    The scale check, the centring and the row norms of :func:`rbf_kernel` are done once
    here, not at every call (k-means++ seeding asks for one column at a time, and redoing
    ``O(n d)`` preparation per column would double its cost).  Columns equal
    ``rbf_kernel(X, X[idx], sigma)`` up to round-off, with ``K(x_i, x_i) = 1`` exactly.
    """

    def __init__(self, X, sigma):
        check_distance_scale(X, name="X")
        self.Xc, _ = centred_pair(X)
        self.xx = _row_norms_sq(self.Xc)
        self.scale = 1.0 / (2.0 * sigma)

    def __call__(self, idx):
        idx = np.asarray(idx, dtype=np.intp)
        G = _dot_t(self.Xc, self.Xc[idx])
        _log_rbf(G, self.xx, self.xx[idx], self.scale)
        np.exp(G, out=G)
        G[idx, np.arange(idx.size)] = 1.0
        return G


def default_sigma(X, *, max_samples=1000, random_state=0):
    """Median heuristic for the papers' bandwidth: the median squared pairwise distance.

    With ``sigma = median ||x_i - x_j||^2`` the kernel value at the median distance is
    ``exp(-1/2)``. Computed on at most ``max_samples`` random rows.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n, d)
    max_samples : int
        Size of the random subsample used for the median.
    random_state : int, RandomState or None

    Returns
    -------
    sigma : float > 0
    """
    X = check_X(X, "X", min_samples=2)
    if (isinstance(max_samples, bool) or not isinstance(max_samples, (int, np.integer))
            or max_samples < 2):
        raise ValueError(f"max_samples must be an integer >= 2, got {max_samples!r}.")
    n = X.shape[0]
    if n > max_samples:
        rng = check_random_state(random_state)
        X = X[np.sort(rng.choice(n, max_samples, replace=False))]
    check_distance_scale(X, name="X")
    X, _ = centred_pair(X)
    xx = _row_norms_sq(X)
    G = _dot_t(X, X)
    d2 = np.maximum(xx[:, None] + xx[None, :] - 2.0 * G, 0.0)
    iu = np.triu_indices(X.shape[0], k=1)
    med = float(np.median(d2[iu]))
    if not med > 0:
        positive = d2[iu][d2[iu] > 0]
        med = float(positive.min()) if positive.size else 1.0
    return med
