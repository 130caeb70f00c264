"""The built-in losses as :class:`~fastgssl.losses.LossSpec` objects: ``square``,
``huber_hinge``, ``squared_hinge`` and ``logistic`` (their Numba functions and formulas in
:mod:`fastgssl.losses._builtin`)."""

from __future__ import annotations

import fastgssl.losses._builtin as kernels
from fastgssl.losses._spec import LossSpec

__all__ = ["HUBER_HINGE", "LOGISTIC", "SQUARE", "SQUARED_HINGE"]


def _builtin(code, name, y_domain, smooth, description, **extra):
    """The spec of built-in loss ``code``: its three Numba functions ``<name>_value``,
    ``<name>_d1``, ``<name>_d2`` of :mod:`fastgssl.losses._builtin` (every built-in is
    convex)."""
    return LossSpec(name=name, value=getattr(kernels, f"{name}_value"),
                    d1=getattr(kernels, f"{name}_d1"), d2=getattr(kernels, f"{name}_d2"),
                    y_domain=y_domain, convex=True, smooth=smooth, description=description,
                    _builtin_code=code, **extra)


SQUARE = _builtin(0, "square", "real", True, "(y - f)^2")
HUBER_HINGE = _builtin(
    1, "huber_hinge", "binary", False, "Huber-smoothed hinge: 0 / (1+h-yf)^2/(4h) / 1-yf",
    param_names=("h",), defaults={"h": 0.05}, constraints={"h": "positive"},
    kinks=lambda params: (1.0 - params["h"], 1.0 + params["h"]))
SQUARED_HINGE = _builtin(2, "squared_hinge", "binary", False, "max(0, 1 - y f)^2",
                         kinks=lambda params: (1.0,))
LOGISTIC = _builtin(3, "logistic", "binary", True, "log(1 + exp(-y f))")
