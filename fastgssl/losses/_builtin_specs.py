"""The built-in losses as :class:`~fastgssl.losses.LossSpec` objects: ``square``,
``huber_hinge``, ``squared_hinge`` and ``logistic`` (their Numba functions and formulas in
:mod:`fastgssl.losses._builtin`)."""

from __future__ import annotations

import fastgssl.losses._builtin as kernels
from fastgssl.losses._spec import LossSpec

__all__ = ["HUBER_HINGE", "LOGISTIC", "SQUARE", "SQUARED_HINGE"]


SQUARE = LossSpec(
    name="square",
    value=kernels.square_value,
    d1=kernels.square_d1,
    d2=kernels.square_d2,
    y_domain="real",
    convex=True,
    smooth=True,
    description="(y - f)^2",
    _builtin_code=0,
)

HUBER_HINGE = LossSpec(
    name="huber_hinge",
    value=kernels.huber_hinge_value,
    d1=kernels.huber_hinge_d1,
    d2=kernels.huber_hinge_d2,
    param_names=("h",),
    defaults={"h": 0.05},
    constraints={"h": "positive"},
    y_domain="binary",
    convex=True,
    smooth=False,
    kinks=lambda params: (1.0 - params["h"], 1.0 + params["h"]),
    description="Huber-smoothed hinge: 0 / (1+h-yf)^2/(4h) / 1-yf",
    _builtin_code=1,
)

SQUARED_HINGE = LossSpec(
    name="squared_hinge",
    value=kernels.squared_hinge_value,
    d1=kernels.squared_hinge_d1,
    d2=kernels.squared_hinge_d2,
    y_domain="binary",
    convex=True,
    smooth=False,
    kinks=lambda params: (1.0,),
    description="max(0, 1 - y f)^2",
    _builtin_code=2,
)

LOGISTIC = LossSpec(
    name="logistic",
    value=kernels.logistic_value,
    d1=kernels.logistic_d1,
    d2=kernels.logistic_d2,
    y_domain="binary",
    convex=True,
    smooth=True,
    description="log(1 + exp(-y f))",
    _builtin_code=3,
)
