"""Nystrom low-rank factors ``V`` with ``V V^T ~ K`` (Liu et al. (2018), t-FBIF).

From c landmark columns ``C = K[:, S]`` and the landmark block ``W = K[S, S] = U diag(lam) U^T``,
the Nystrom approximation is ``K ~ C W^+ C^T = V V^T`` with

    V = C U_r diag(lam_r)^(-1/2),

where the pseudo-inverse keeps the ``r`` eigenvalues above ``eig_rtol * max(lam)`` (an
eigen-thresholded pseudo-inverse: landmark blocks of smooth kernels are numerically singular).
A model linear in the ``r`` features, ``f = V w``, is a kernel expansion on the landmarks with
coefficients ``U_r diag(lam_r)^(-1/2) w`` and RKHS norm ``||w||``; new points get the features
``k(x, S) U_r diag(lam_r)^(-1/2)``. With all n columns (c = n) ``V V^T = K K^+ K = K``.

Landmarks: ``"uniform"`` (without replacement) or ``"kmeans++"`` (D^2 sampling of Arthur &
Vassilvitskii, 2007, with distances measured in the kernel's feature space,
``d^2(x, z) = k(x, x) + k(z, z) - 2 k(x, z)``, as Oglic & Gaertner, 2017): the columns it
evaluates are the columns ``C`` needs, so the seeding costs no extra kernel evaluations.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg as sla

from fastgssl._geometry import check_distance_scale
from fastgssl._threads import small_blas  # noqa: E402
from fastgssl._validation import check_positive, check_random_state, check_X
from fastgssl.kernels._rbf import CentredRBFColumns, rbf_kernel

__all__ = ["NystromFactor", "nystrom", "nystrom_from_gram"]


_LANDMARKS = ("uniform", "kmeans++")
_KERNELS = ("rbf", "precomputed")
_BLOCK_ROWS = 8192


class NystromFactor:
    """A fitted Nystrom factor: ``features_`` ``V`` (n x r) with ``V V^T ~ K``.

    Attributes
    ----------
    features_ : ndarray of shape (n_samples, n_components_)
        The factor ``V`` for the training points.
    landmarks_ : ndarray of int, shape (c,)
        Indices of the landmark points among the training points.
    landmark_points_ : ndarray or sparse matrix of shape (c, d), or None
        The landmark rows of ``X`` (``None`` for a precomputed kernel).
    eigenvalues_ : ndarray of shape (n_components_,)
        Kept eigenvalues of the landmark block, in decreasing order.
    normalization_ : ndarray of shape (c, n_components_)
        ``U_r diag(lam_r)^(-1/2)``: features of any point are ``k(x, landmarks) @ normalization_``.
    n_components_ : int
        Rank kept by the eigen-threshold (at most the number of landmarks).
    kernel : {"rbf", "precomputed"}
    sigma : float or None
        RBF bandwidth (papers' convention), None for a precomputed kernel.
    """

    def __init__(self, features, landmarks, landmark_points, eigenvalues, normalization,
                 kernel, sigma):
        self.features_ = features
        self.landmarks_ = landmarks
        self.landmark_points_ = landmark_points
        self.eigenvalues_ = eigenvalues
        self.normalization_ = normalization
        self.n_components_ = normalization.shape[1]
        self.kernel = kernel
        self.sigma = sigma

    # The factor stands in for the (n, r) array V where an array is expected:
    # np.asarray(factor), factor.shape, factor @ factor.T.
    def __array__(self, dtype=None, copy=None):
        return np.asarray(self.features_, dtype=dtype)

    @property
    def shape(self):
        return self.features_.shape

    @property
    def T(self):
        return self.features_.T

    def __matmul__(self, other):
        return self.features_ @ np.asarray(other)

    def __rmatmul__(self, other):
        return np.asarray(other) @ self.features_

    def __repr__(self):
        n = self.features_.shape[0]
        return (f"NystromFactor(n_samples={n}, landmarks={len(self.landmarks_)}, "
                f"rank={self.n_components_}, kernel={self.kernel!r})")

    def kernel_to_landmarks(self, X_new):
        """Kernel values ``k(X_new, landmarks)`` of shape (m, c).

        For ``kernel="precomputed"``, ``X_new`` is the kernel between the new points and
        *all* training points (m x n, scikit-learn's precomputed convention).
        """
        if self.kernel == "precomputed":
            X_new = check_X(X_new, "X")
            n_train = self.features_.shape[0]
            if X_new.shape[1] != n_train:
                raise ValueError(
                    f"with kernel='precomputed', X must be the kernel between the new points "
                    f"and the {n_train} training points; got {X_new.shape[1]} columns."
                )
            C = X_new[:, self.landmarks_]
            return C.toarray() if hasattr(C, "toarray") else np.asarray(C)
        return rbf_kernel(X_new, self.landmark_points_, self.sigma)

    def transform(self, X_new):
        """Nystrom features ``k(X_new, landmarks) U_r diag(lam_r)^(-1/2)`` (m x r).

        Computed in row blocks, so memory beyond the result is O(block x c).
        """
        X_new = check_X(X_new, "X")
        m = X_new.shape[0]
        out = np.empty((m, self.n_components_))
        for start in range(0, m, _BLOCK_ROWS):
            stop = min(m, start + _BLOCK_ROWS)
            out[start:stop] = self.kernel_to_landmarks(X_new[start:stop]) @ self.normalization_
        return out

    def approximate_kernel(self, rows=None):
        """``V[rows] V^T``: the low-rank kernel (small problems and tests only)."""
        V = self.features_
        return (V if rows is None else V[rows]) @ V.T


def _kernel_columns(X, idx, kernel, sigma):
    """K[:, idx] (n x len(idx))."""
    if kernel == "precomputed":
        C = X[:, idx]
        return np.array(C.toarray() if hasattr(C, "toarray") else C, dtype=np.float64)
    return rbf_kernel(X, X[idx], sigma)


def _kernel_diagonal(X, kernel):
    if kernel == "precomputed":
        return np.asarray(X.diagonal(), dtype=np.float64).copy()
    return np.ones(X.shape[0])


def _kmeanspp(X, c, kernel, sigma, rng):
    """Kernel-space k-means++ seeding; returns (indices, C = K[:, indices])."""
    n = X.shape[0]
    diag = _kernel_diagonal(X, kernel)
    if kernel == "rbf":
        columns = CentredRBFColumns(X, sigma)  # centred once, not once per column
    else:
        def columns(ids):
            return _kernel_columns(X, ids, kernel, sigma)
    C = np.empty((n, c), dtype=np.float64)
    idx = np.empty(c, dtype=np.intp)
    idx[0] = rng.randint(n)
    C[:, 0] = columns(idx[:1])[:, 0]
    d2 = np.maximum(diag + diag[idx[0]] - 2.0 * C[:, 0], 0.0)
    chosen = np.zeros(n, dtype=bool)
    chosen[idx[0]] = True
    for k in range(1, c):
        weights = np.where(chosen, 0.0, d2)
        total = weights.sum()
        if total > 0:
            nxt = int(np.searchsorted(np.cumsum(weights), rng.uniform(0, total), side="right"))
            nxt = min(nxt, n - 1)
            if chosen[nxt]:  # round-off at the cumulative sum's end
                nxt = int(np.flatnonzero(~chosen & (weights > 0))[-1])
        else:  # every remaining point coincides with a landmark: uniform among the rest
            nxt = int(rng.choice(np.flatnonzero(~chosen)))
        idx[k] = nxt
        chosen[nxt] = True
        C[:, k] = columns(idx[k:k + 1])[:, 0]
        np.minimum(d2, np.maximum(diag + diag[nxt] - 2.0 * C[:, k], 0.0), out=d2)
    return idx, C


def nystrom(X, n_components, sigma=1.0, landmarks="uniform", random_state=None, *,
            kernel="rbf", eig_rtol=None):
    """Nystrom factor ``V`` (n x r) of the kernel matrix of ``X``: ``V V^T ~ K``.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n, d), or (n, n) Gram matrix
        Data; with ``kernel="precomputed"`` the full kernel matrix.
    n_components : int >= 1
        Number of landmarks c (clipped to n with a warning).
    sigma : float > 0
        RBF bandwidth, papers' convention ``exp(-||x - x'||^2 / (2 sigma))``; ignored for a
        precomputed kernel.
    landmarks : {"uniform", "kmeans++"}
        Landmark sampling: uniform without replacement, or kernel-space k-means++ seeding.
    random_state : int, RandomState or None
    kernel : {"rbf", "precomputed"}
    eig_rtol : float, optional
        Eigenvalues of the landmark block below ``eig_rtol * max eigenvalue`` are dropped
        from the pseudo-inverse; default ``c * machine epsilon`` (numpy's ``pinv`` rule).

    Returns
    -------
    NystromFactor

    Notes
    -----
    ``V = K[:, S] U_r diag(lam_r)^(-1/2)`` with ``K[S, S] = U diag(lam) U^T``; so
    ``V V^T = K[:, S] K[S, S]^+ K[S, :]``, which equals ``K`` when ``S`` holds every point.
    Cost ``O(n c d + c^3 + n c r)``, memory ``O(n c)``; ``V`` is formed block by block so the
    uniform path never holds ``K[:, S]`` and ``V`` at once.

    Examples
    --------
    >>> import numpy as np
    >>> from fastgssl.kernels import nystrom, rbf_kernel
    >>> X = np.random.default_rng(0).normal(size=(50, 3))
    >>> fac = nystrom(X, 50, sigma=2.0, random_state=0)
    >>> bool(np.allclose(fac.features_ @ fac.features_.T, rbf_kernel(X, sigma=2.0)))
    True
    """
    if not isinstance(kernel, str) or kernel not in _KERNELS:
        raise ValueError(f"kernel must be one of {_KERNELS}, got {kernel!r}.")
    if not isinstance(landmarks, str) or landmarks not in _LANDMARKS:
        raise ValueError(f"landmarks must be one of {_LANDMARKS}, got {landmarks!r}.")
    X = check_X(X, "X")
    n = X.shape[0]
    if kernel == "precomputed":
        if X.shape[0] != X.shape[1]:
            raise ValueError(
                f"with kernel='precomputed', X must be the square Gram matrix; got shape "
                f"{X.shape}."
            )
        sigma = None
    else:
        sigma = check_positive(sigma, "sigma")
    if isinstance(n_components, bool) or not isinstance(n_components, (int, np.integer)):
        raise ValueError(f"n_components must be an integer, got {n_components!r}.")
    if n_components < 1:
        raise ValueError(f"n_components must be >= 1, got {n_components}.")
    c = int(n_components)
    if c > n:
        warnings.warn(
            f"n_components={c} is larger than n_samples={n}; using all {n} points as "
            f"landmarks (the factor is then exact).",
            UserWarning,
            stacklevel=2,
        )
        c = n
    if eig_rtol is not None:
        eig_rtol = check_positive(eig_rtol, "eig_rtol", strict=False)
        if not eig_rtol < 1:
            raise ValueError(
                f"eig_rtol must be in [0, 1) (a fraction of the largest eigenvalue of the "
                f"landmark block; 1 or more would drop every eigenvalue), got {eig_rtol}."
            )
    rng = check_random_state(random_state)
    if kernel == "rbf":
        # refused here rather than in the first of many kernel blocks
        check_distance_scale(X, name="X")

    C = None
    if landmarks == "uniform":
        idx = np.sort(rng.choice(n, c, replace=False)) if c < n else np.arange(n)
        if kernel == "rbf":
            W = rbf_kernel(X[idx], sigma=sigma)
        else:
            W = np.array(_dense(X[idx][:, idx]), dtype=np.float64)
    else:
        idx, C = _kmeanspp(X, c, kernel, sigma, rng)
        W = C[idx]
    W = 0.5 * (W + W.T)
    with small_blas(10.0 * c**3):
        lam, U = sla.eigh(W, check_finite=False)
    lam, U = lam[::-1], U[:, ::-1]
    rtol = c * np.finfo(np.float64).eps if eig_rtol is None else eig_rtol
    top = lam[0] if lam.size else 0.0
    if not top > 0:
        raise ValueError(
            "the landmark kernel block has no positive eigenvalue; the kernel matrix is not "
            "positive semi-definite or is zero."
        )
    keep = lam > rtol * top
    normalization = np.ascontiguousarray(U[:, keep] / np.sqrt(lam[keep]))
    r = normalization.shape[1]

    V = np.empty((n, r), dtype=np.float64)
    for start in range(0, n, _BLOCK_ROWS):
        stop = min(n, start + _BLOCK_ROWS)
        if C is not None:
            Cb = C[start:stop]
        elif kernel == "precomputed":
            Cb = _dense(X[start:stop][:, idx])
        else:
            Cb = rbf_kernel(X[start:stop], X[idx], sigma)
        V[start:stop] = Cb @ normalization
    landmark_points = None if kernel == "precomputed" else X[idx]
    return NystromFactor(V, idx, landmark_points, lam[keep].copy(), normalization, kernel, sigma)


def _dense(A):
    return A.toarray() if hasattr(A, "toarray") else np.asarray(A)


def nystrom_from_gram(K, n_components, random_state=None, *, landmarks="uniform",
                      eig_rtol=None):
    """Nystrom factor of a given Gram matrix by sampling its columns.

    Same as ``nystrom(K, n_components, landmarks=..., random_state=..., kernel="precomputed")``;
    :meth:`NystromFactor.transform` then takes the kernel between new points and all training
    points (m x n).
    """
    return nystrom(K, n_components, landmarks=landmarks, random_state=random_state,
                   kernel="precomputed", eig_rtol=eig_rtol)
