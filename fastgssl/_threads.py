"""Thread control shared by the Numba kernels and the dense linear algebra.

- :func:`numba_threads`: run the enclosed Numba ``parallel=True`` kernels on ``n_jobs``
  threads (None / -1: all), restoring the previous count afterwards;
- :func:`small_blas`: one BLAS thread for small factorizations, whose per-panel thread
  barriers cost more than they gain (badly so on a machine shared with other jobs).
"""

from __future__ import annotations

import contextlib

import numba
import numpy as np

__all__ = ["numba_threads", "small_blas"]


@contextlib.contextmanager
def numba_threads(n_jobs):
    """Run the enclosed Numba parallel kernels on ``n_jobs`` threads (None / -1: all)."""
    limit = numba.config.NUMBA_NUM_THREADS
    if isinstance(n_jobs, bool) or not (n_jobs is None or isinstance(n_jobs, (int, np.integer))):
        raise ValueError(f"n_jobs must be None, -1 or a positive integer, got {n_jobs!r}.")
    if n_jobs is None or n_jobs == -1:
        wanted = limit
    elif isinstance(n_jobs, (int, np.integer)) and n_jobs >= 1:
        wanted = min(int(n_jobs), limit)
    elif isinstance(n_jobs, (int, np.integer)) and n_jobs < -1:
        wanted = max(1, limit + 1 + int(n_jobs))
    else:
        raise ValueError(f"n_jobs must be None, -1 or a positive integer, got {n_jobs!r}.")
    previous = numba.get_num_threads()
    numba.set_num_threads(wanted)
    try:
        yield wanted
    finally:
        numba.set_num_threads(previous)


# Below this many flops a dense factorization runs on one BLAS thread (see small_blas).
_SMALL_BLAS_FLOPS = 2e9
_blas_controller = None


def small_blas(flops):
    """Context manager: one BLAS thread for an operation of about ``flops`` flops, if small.

    Factorizations of small matrices (c x c eigen-decompositions, Newton steps) synchronize
    their BLAS threads at every panel; on a machine shared with other jobs each barrier waits
    for a time slice, and a 300 x 300 ``eigh`` measured 4 s on two threads against 0.05 s on
    one. Below ``_SMALL_BLAS_FLOPS`` threading gains little even on an idle machine, so these
    operations run single-threaded (threadpoolctl, a scikit-learn dependency); larger ones
    keep the default thread count.
    """
    import contextlib

    if flops > _SMALL_BLAS_FLOPS:
        return contextlib.nullcontext()
    global _blas_controller
    if _blas_controller is None:
        from threadpoolctl import ThreadpoolController

        _blas_controller = ThreadpoolController()
    return _blas_controller.limit(limits=1, user_api="blas")
