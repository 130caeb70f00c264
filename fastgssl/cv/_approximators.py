"""Cross-validation methods registered in the ``fastgssl.cv`` entry-point group.

=====================  =========================================================================
name                   class (module)
=====================  =========================================================================
``exact``              :class:`ExactCV` (:mod:`fastgssl.cv._exact`): transductive (deformed-kernel
                       reduction, label-propagation re-solves) or inductive (t refits)
``bif``                :class:`BIF` (:mod:`fastgssl.cv._influence`): t-BIF from one fit
``fbif``               :class:`FBIF` (:mod:`fastgssl.cv._influence`): t-FBIF, Nystrom + Woodbury
``exact-quadratic``    :class:`ExactQuadraticCV` (:mod:`fastgssl.cv._quadratic`): exact t-fold CV
                       of the square loss from one factorization, sum-of-losses form
``newton``             :class:`NewtonCV` (:mod:`fastgssl.cv._newton`): one Newton step per fold
=====================  =========================================================================

This module gathers them (the registry's built-in table points here); each lives in a module
of its own, on the shared base :class:`fastgssl.cv.CVMethod` (:mod:`fastgssl.cv._base`) and
result :class:`fastgssl.cv.CVResult` (:mod:`fastgssl.cv._result`).
"""

from fastgssl.cv._base import (  # noqa: F401
    CVMethod,
    _check_fitted,
    _prepare,
    as_state,
    complement_regularizers,
    estimator_task,
    fold_regularizers,
    labeled_mask_for,
)
from fastgssl.cv._exact import ExactCV
from fastgssl.cv._influence import BIF, FBIF, bif_of_fitted  # noqa: F401
from fastgssl.cv._newton import NewtonCV
from fastgssl.cv._quadratic import ExactQuadraticCV
from fastgssl.cv._result import CVResult, validation_loss  # noqa: F401

__all__ = ["BIF", "FBIF", "CVMethod", "CVResult", "ExactCV", "ExactQuadraticCV", "NewtonCV",
           "estimator_task", "labeled_mask_for"]
