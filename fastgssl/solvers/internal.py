"""The solvers' interface to fastgssl's other packages: not public API.

The kernel machines (:mod:`fastgssl.models`) fit through these: damped Newton with an exact
line search, the active-set box QP of the piecewise-quadratic losses, and the batched fold
refits. They are documented where they are defined and may change without a deprecation
cycle; the front door :mod:`fastgssl.solvers` serves only the public names.
"""

from fastgssl.solvers._kernel_fits import (
    SOLVERS,
    fit_dense,
    fit_nystrom,
    fold_refits,
    has_fold_refits,
    objective_dense,
    objective_nystrom,
)

__all__ = [
    "SOLVERS",
    "fit_dense",
    "fit_nystrom",
    "fold_refits",
    "has_fold_refits",
    "objective_dense",
    "objective_nystrom",
]
