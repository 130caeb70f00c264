"""Base kernels of the kernel machines: RBF, linear, polynomial, precomputed and callables.

One function, :func:`pairwise_kernel`, gives the kernel matrix between two point sets for
every kernel the learners accept, so that the learners, the deformed kernel and the
cross-validation code evaluate the same function:

========================  ===============================================================
``kernel``                ``k(x, z)``
========================  ===============================================================
``"rbf"``                 ``exp(-||x - z||^2 / (2 sigma))`` (the papers' convention;
                          scikit-learn's ``gamma = 1 / (2 sigma)``)
``"linear"``              ``<x, z>``
``"poly"``                ``(<x, z> / sigma + coef0) ** degree`` (``kernel_params``:
                          ``degree=3``, ``coef0=1.0``)
``callable``              ``kernel(X, Z, **kernel_params)`` returning the (m, n) matrix
``"precomputed"``         the caller passes kernel values; never evaluated here
========================  ===============================================================
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp

from fastgssl._validation import check_finite_result, check_no_complex

__all__ = ["BASE_KERNELS", "check_kernel", "pairwise_kernel"]

BASE_KERNELS = ("rbf", "linear", "poly", "precomputed")
_POLY_DEFAULTS = {"degree": 3, "coef0": 1.0}


def check_kernel(kernel, kernel_params=None):
    """Validate ``kernel`` / ``kernel_params``; return the parameters to use.

    Raises
    ------
    ValueError
        An unknown kernel name, parameters a kernel does not take, a bad degree.
    """
    params = dict(kernel_params or {})
    if callable(kernel):
        return params
    if not isinstance(kernel, str) or kernel not in BASE_KERNELS:
        raise ValueError(
            f"kernel must be one of {list(BASE_KERNELS)} or a callable (X, Z) -> K, got "
            f"{kernel!r}."
        )
    if kernel == "poly":
        unknown = set(params) - set(_POLY_DEFAULTS)
        if unknown:
            raise ValueError(
                f"kernel_params {sorted(unknown)} are not parameters of kernel='poly' "
                f"(it takes {sorted(_POLY_DEFAULTS)})."
            )
        out = {**_POLY_DEFAULTS, **params}
        degree = out["degree"]
        if isinstance(degree, bool) or not isinstance(degree, numbers.Integral) or degree < 1:
            raise ValueError(f"kernel_params['degree'] must be an integer >= 1, got {degree!r}.")
        coef0 = float(out["coef0"])
        if not np.isfinite(coef0):
            raise ValueError(f"kernel_params['coef0'] must be finite, got {coef0!r}.")
        return {"degree": int(degree), "coef0": coef0}
    if params:
        raise ValueError(
            f"kernel={kernel!r} takes no kernel_params, got {sorted(params)}; only 'poly' "
            f"and callables do."
        )
    return params


def _dense_dot(A, B):
    out = A @ B.T
    out = out.toarray() if sp.issparse(out) else np.asarray(out)
    return np.ascontiguousarray(out, dtype=np.float64)


def _callable_values(K, m, n):
    """A kernel callable's result ``K`` as a finite float64 (m, n) array, or a ValueError
    saying what is wrong."""
    check_no_complex(K, "the kernel callable's result")
    K = np.asarray(K.toarray() if sp.issparse(K) else K, dtype=np.float64)
    if K.shape != (m, n):
        raise ValueError(
            f"the kernel callable returned shape {K.shape} for {m} and {n} points; it must "
            f"return ({m}, {n})."
        )
    return check_finite_result(K, "the kernel callable's result",
                               hint="check its parameters and the scale of X")


def pairwise_kernel(X, Z=None, kernel="rbf", *, sigma=1.0, kernel_params=None):
    """Kernel matrix ``K[i, j] = k(x_i, z_j)`` of a base kernel.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (m, d)
    Z : ndarray or sparse matrix of shape (n, d), optional
        Defaults to ``X``.
    kernel : {"rbf", "linear", "poly"} or callable
    sigma : float > 0
        RBF bandwidth, or the scale of the inner product of ``"poly"``.
    kernel_params : dict, optional
        ``degree`` and ``coef0`` of ``"poly"``; keyword arguments of a callable.

    Returns
    -------
    ndarray of shape (m, n)
    """
    params = check_kernel(kernel, kernel_params)
    if (Z is not None and isinstance(X, np.ndarray) and isinstance(Z, np.ndarray)
            and np.may_share_memory(X, Z)):
        # numpy computes ``A @ A.T`` (one buffer) by BLAS syrk and ``A @ B.T`` by gemm, whose
        # round-off differs: without the copy, predict(X_fit) on the training array object
        # and on a copy of it (or on a pickled model) would differ in the last bits.
        X = X.copy()
    Zm = X if Z is None else Z
    if callable(kernel):
        return _callable_values(kernel(X, Zm, **params), X.shape[0], Zm.shape[0])
    if kernel == "rbf":
        from fastgssl.kernels._rbf import rbf_kernel

        return rbf_kernel(X, Z, sigma)
    if kernel == "linear":
        return _dense_dot(X, Zm)
    if kernel == "poly":
        K = _dense_dot(X, Zm)
        K /= float(sigma)
        K += params["coef0"]
        return K ** params["degree"]
    raise ValueError("kernel='precomputed' is never evaluated; pass the kernel values.")
