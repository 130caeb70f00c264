"""One road from a regularizer specification and a graph to the matrix ``Q``.

Every estimator (the kernel machines, the data-dependent kernel) and, through the
learners' ``CVState.regularizer_factory``, cross-validation build ``Q`` here.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from fastgssl import registry

__all__ = ["build_regularizer"]


def build_regularizer(regularizer, W, *, power=1, ridge=None, params=None,
                      require_sparse=False, name="regularizer"):
    """The regularizer ``Q`` of the affinity ``W``.

    Parameters
    ----------
    regularizer : str or callable
        A name of the ``fastgssl.regularizers`` registry group (``"L"``, ``"L_norm"``,
        plugins), built with ``power`` (left out for a factory without it while it is 1),
        ``ridge`` when given and ``params``; or a callable ``W -> Q`` used as it is.
    W : sparse matrix of shape (n, n)
        Symmetric nonnegative affinity.
    power : int >= 1, default=1
    ridge : float or None, default=None
        Passed to the registry factory only when given.
    params : dict or None, default=None
        The factory's own arguments (the learners' ``regularizer_params``); ``power`` and
        ``ridge`` are set by their own arguments, not here.
    require_sparse : bool, default=False
        Refuse a ``Q`` that is not a sparse matrix (callers that factor or precondition it).
    name : str
        Argument name for messages.

    Returns
    -------
    Q : scipy.sparse.csr_matrix of float64 or a LinearOperator (``L^p`` with ``p > 2``)
    """
    params = dict(params or {})
    for key in ("power", "ridge"):
        if key in params:
            raise ValueError(f"{name}_params must not hold {key!r}; set it with {key}= "
                             f"instead.")
    if isinstance(regularizer, str):
        params["power"] = power
        if ridge is not None:
            params["ridge"] = ridge
        factory = registry.get("fastgssl.regularizers", regularizer, **params)
    elif callable(regularizer):
        if params:
            raise ValueError(
                f"{name}_params={params!r} needs a registered {name} name; a callable "
                f"W -> Q is used as it is (bind its arguments yourself, e.g. with "
                f"functools.partial)."
            )
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
