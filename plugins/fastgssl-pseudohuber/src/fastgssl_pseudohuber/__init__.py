"""The pseudo-Huber loss as a fastgssl plugin (entry point group ``fastgssl.losses``).

ell(y, f) = delta^2 (sqrt(1 + r^2 / delta^2) - 1) with r = f - y;
ell' = r / sqrt(1 + r^2 / delta^2);  ell'' = (1 + r^2 / delta^2)^(-3/2).
"""

import math

import numba

from fastgssl.losses import LossSpec

__all__ = ["PSEUDO_HUBER"]


@numba.njit(cache=True)
def pseudo_huber_value(y, f, p):
    delta = p[0]
    r = (f - y) / delta
    return delta * delta * (math.sqrt(1.0 + r * r) - 1.0)


@numba.njit(cache=True)
def pseudo_huber_d1(y, f, p):
    delta = p[0]
    r = f - y
    return r / math.sqrt(1.0 + (r / delta) ** 2)


@numba.njit(cache=True)
def pseudo_huber_d2(y, f, p):
    delta = p[0]
    s = 1.0 + ((f - y) / delta) ** 2
    return 1.0 / (s * math.sqrt(s))


PSEUDO_HUBER = LossSpec(
    name="pseudo_huber",
    value=pseudo_huber_value,
    d1=pseudo_huber_d1,
    d2=pseudo_huber_d2,
    param_names=("delta",),
    defaults={"delta": 1.0},
    constraints={"delta": "positive"},
    y_domain="real",
    convex=True,
    smooth=True,
    description="delta^2 (sqrt(1 + ((f - y)/delta)^2) - 1)",
)
