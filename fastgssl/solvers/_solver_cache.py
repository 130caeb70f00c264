"""The process-wide setup cache of :class:`LaplacianSolver`: :func:`reused_solver` and
:func:`clear_solver_cache`.

A solver's setup (a sparse LU, a multigrid hierarchy, a coarse space, what ``"auto"``
learned) depends on the matrix, the solve method and the null-space mode only, not on the
right-hand sides or the tolerance; a propagation learner's fit, its exact CV and grid
candidates on one graph solve with the same matrix and share one setup, found by a digest
of the matrix's entries. The cache is bounded in count and in bytes of arrays.
"""

from __future__ import annotations

import os

import numpy as np

from fastgssl._deprecation import renamed
from fastgssl._digest import content_digest
from fastgssl._validation import check_positive

from ._laplacian_matrix import _as_csr
from ._laplacian_solver import LaplacianSolver

__all__ = ["clear_solver_cache", "reused_solver"]

# A few recent setups, keyed by the matrix's entries: the fit of a propagation learner and
# its exact CV (and grid candidates on one graph) solve with the same matrix. Bounded in
# count and in bytes (the matrix in the solver's order, the factor or hierarchy, the
# coarse space: at 10^6 points of a kNN graph a few hundred MB per setup).
_RECENT = {}
_RECENT_SIZE = 4
#: default bound of the process-wide setup cache, in bytes (environment variable
#: ``FASTGSSL_SOLVER_CACHE_BYTES`` overrides it; 0 disables the cache)
SOLVER_CACHE_BYTES = 1 << 30
_CACHE_ENV = "FASTGSSL_SOLVER_CACHE_BYTES"


def _cache_bytes():
    value = os.environ.get(_CACHE_ENV)
    if value is None:
        return SOLVER_CACHE_BYTES
    try:
        out = int(float(value))
    except ValueError:
        raise ValueError(f"{_CACHE_ENV} must be a number of bytes, got {value!r}.") from None
    if out < 0:
        raise ValueError(f"{_CACHE_ENV} must be >= 0 bytes, got {value!r}.")
    return out


def _nbytes(obj, seen=None):
    """Bytes held by the arrays of a solver setup (arrays, sparse matrices, SuperLU
    factors, and the containers and fastgssl / pyamg objects holding them)."""
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return 0
    seen.add(id(obj))
    if isinstance(obj, np.ndarray):
        return obj.nbytes if obj.base is None or id(obj.base) not in seen else 0
    if hasattr(obj, "indptr") and hasattr(obj, "data"):  # CSR / CSC
        return sum(_nbytes(a, seen) for a in (obj.data, obj.indices, obj.indptr))
    if type(obj).__name__ == "SuperLU":
        return int(obj.nnz) * 12 + obj.shape[0] * 16
    if isinstance(obj, dict):
        return sum(_nbytes(v, seen) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return sum(_nbytes(v, seen) for v in obj)
    module = type(obj).__module__ or ""
    if hasattr(obj, "__dict__") and module.split(".")[0] in ("fastgssl", "pyamg"):
        return _nbytes(vars(obj), seen)
    return 0


def clear_solver_cache():
    """Forget every solver setup kept by :func:`reused_solver` (their memory is freed once
    no fitted model refers to them); returns the number of setups dropped.

    Examples
    --------
    >>> from fastgssl.solvers import clear_solver_cache
    >>> clear_solver_cache() >= 0
    True
    """
    count = len(_RECENT)
    _RECENT.clear()
    return count


def _matrix_digest(Q):
    Q = _as_csr(Q)
    return Q, content_digest(Q)


def reused_solver(Q, solver="auto", rtol=1e-8, null_space="auto", check_input=True, *,
                  method=None):
    """A :class:`LaplacianSolver` of ``Q``, its setup reused from a recent call with the
    same matrix entries, solve method (``solver``; ``method`` is its former name, deprecated)
    and null-space mode (``"auto"`` or None).

    The setup (a sparse LU, a multigrid hierarchy, or what ``"auto"`` learned: that Jacobi
    CG needed more than ``switch_iterations`` and multigrid took over) does not depend on
    the right-hand sides or the tolerance, so a label-propagation fit, its exact CV and grid
    candidates on one graph share it. The returned solver has ``rtol`` set for this call.
    ``check_input=False``: the caller built ``Q`` from a checked graph (see
    :class:`LaplacianSolver`).

    The setups are kept process-wide: the last four, and no more than
    ``SOLVER_CACHE_BYTES`` (1 GiB; the environment variable
    ``FASTGSSL_SOLVER_CACHE_BYTES`` sets another bound, 0 keeps none) of arrays in all,
    the oldest dropped first; :func:`clear_solver_cache` drops them all.
    """
    if not (null_space is None or (isinstance(null_space, str) and null_space == "auto")):
        raise ValueError("reused_solver takes null_space='auto' or None.")
    solver = renamed("reused_solver", "method", "solver", method, solver, "auto")
    Q, key = _matrix_digest(Q)
    key = key + (solver, null_space)
    reused = _RECENT.pop(key, None)
    if reused is None:
        reused = LaplacianSolver(Q, solver=solver, rtol=rtol, null_space=null_space,
                                 check_input=check_input)
    # most recent last; the oldest go first while over the count or the bytes, and a
    # setup larger than the whole bound is not kept
    _RECENT[key] = reused
    budget = _cache_bytes()
    sizes = {k: _nbytes(v) for k, v in _RECENT.items()}
    while _RECENT and (len(_RECENT) > _RECENT_SIZE or sum(sizes[k] for k in _RECENT) > budget):
        _RECENT.pop(next(iter(_RECENT)))

    reused.rtol = check_positive(rtol, "rtol")
    return reused
