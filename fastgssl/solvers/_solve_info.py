"""The outcome of a Laplacian solve, per right-hand side (:class:`SolveInfo`)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from fastgssl._deprecation import renamed_attribute

__all__ = ["SolveInfo"]


@dataclass
class SolveInfo:
    """Per-column outcome of :meth:`LaplacianSolver.solve` (scipy / pyamg conventions).

    Attributes
    ----------
    status : ndarray of int (or int for a 1-D right-hand side)
        0 when column j converged, else the number of iterations spent (> 0).
    iterations : ndarray of int
        Iterations per column (summed over the ``power`` chained solves; 0 for "direct").
    relative_residuals : ndarray of float
        ``||B_j - Q X_j|| / ||B_j||`` of the returned solution, recomputed (for the chained
        solves of ``Q = R^p``: the residual of the last solve).
    solver : str
        Method that produced the solution ("cg", "amg", "cg+amg" or "direct"); ``method``
        is its former name (deprecated).
    time : float
        Wall time of the solve in seconds.
    extra : dict
        ``panels`` (column blocks solved one after the other) and ``panel_width``; a
        solve that needed more than one panel for memory also warns.

    ``bool(info)`` is True when some column did not converge, like scipy's nonzero info.
    """

    status: object
    iterations: np.ndarray
    relative_residuals: np.ndarray
    solver: str
    time: float = 0.0
    extra: dict = field(default_factory=dict)

    def __bool__(self):
        return bool(np.any(np.asarray(self.status) != 0))

    def __int__(self):
        return int(np.max(self.status))

    method = renamed_attribute("SolveInfo", "method", "solver")
