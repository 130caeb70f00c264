"""One road from a regularizer specification and a graph to the matrix ``Q``.

Every estimator (the kernel machines, the data-dependent kernel) and, through the
learners' ``CVState.regularizer_factory``, cross-validation build ``Q`` here.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["build_regularizer"]


def build_regularizer(regularizer, W, *, power=1, ridge=None, require_sparse=False,
                      name="regularizer"):
    """The regularizer ``Q`` of the affinity ``W``.

    Parameters
    ----------
    regularizer : str or callable
        A name of the ``fastgssl.regularizers`` registry group (``"L"``, ``"L_norm"``,
        plugins), built with ``power`` (and ``ridge`` when given); or a callable
        ``W -> Q`` used as it is.
    W : sparse matrix of shape (n, n)
        Symmetric nonnegative affinity.
    power : int >= 1, default=1
    ridge : float or None, default=None
        Passed to the registry factory only when given.
    require_sparse : bool, default=False
        Refuse a ``Q`` that is not a sparse matrix (callers that factor or precondition it).
    name : str
        Argument name for messages.

    Returns
    -------
    Q : scipy.sparse.csr_matrix of float64 or a LinearOperator (``L^p`` with ``p > 2``)
    """
    if isinstance(regularizer, str):
        from fastgssl import registry

        params = {"power": power} if ridge is None else {"power": power, "ridge": ridge}
        factory = registry.get("fastgssl.regularizers", regularizer, **params)
    elif callable(regularizer):
        factory = regularizer
    else:
        raise ValueError(
            f"{name} must be a registered regularizer name ('L', 'L_norm', a plugin) or a "
            f"callable W -> Q, got {type(regularizer).__name__}."
        )
    Q = factory(W)
    if sp.issparse(Q):
        return sp.csr_matrix(Q, dtype=np.float64)
    if require_sparse:
        raise ValueError(
            f"{name} {regularizer!r} must return a sparse matrix here (it is factored or "
            f"preconditioned), got {type(Q).__name__}."
        )
    return Q
