"""Built-in losses: square, Huber-smoothed hinge, squared hinge, logistic.

Formulas (derivatives in the prediction ``f``; for classification ``y`` is -1 / +1 and
``z = y f`` is the margin):

* ``square``:        ell = (y - f)^2,  ell' = 2 (f - y),  ell'' = 2.
* ``huber_hinge`` (the papers' objective, Liu et al. (2018, 2019)), parameter ``h > 0``::

      ell = 0                      if z > 1 + h
            (1 + h - z)^2 / (4 h)  if |1 - z| <= h
            1 - z                  if z < 1 - h
      ell' = 0, -y (1 + h - z) / (2 h), -y;     ell'' = 0, 1 / (2 h), 0

  It tends to the hinge loss as ``h -> 0``; ``ell''`` jumps at ``z = 1 +- h``.
* ``squared_hinge``: ell = max(0, 1 - z)^2, ell' = -2 y max(0, 1 - z), ell'' = 2 [z < 1].
* ``logistic``:      ell = log(1 + exp(-z)), ell' = -y sigma(-z),
  ell'' = sigma(z) sigma(-z) (y^2 = 1).

All scalar functions are module-level ``@njit(cache=True)`` so that other kernels (Newton
solvers, BIF) can call them; :func:`apply_builtin` evaluates any of them on arrays with a
disk-cached kernel per loss (serial, or parallel for long arrays).
"""

from __future__ import annotations

import math

import numba

__all__ = ["PARALLEL_MIN_SIZE", "apply_builtin"]

# error_model="numpy": IEEE semantics (x / 0 gives inf, never raises), which lets the
# dispatching loop run without per-element exception checks (measured 5x faster).
_jit = numba.njit(cache=True, nogil=True, error_model="numpy")


# --- square -------------------------------------------------------------------------------
@_jit
def square_value(y, f, p):
    r = y - f
    return r * r


@_jit
def square_d1(y, f, p):
    return 2.0 * (f - y)


@_jit
def square_d2(y, f, p):
    return 2.0


# --- Huber-smoothed hinge -----------------------------------------------------------------
@_jit
def _huber_hinge(order, y, f, h):
    """The Huber hinge's ``ell`` (``order`` 0), ``ell'`` (1) or ``ell''`` (2) of half-width
    ``h``, one case analysis of the margin ``z = y f`` for the three."""
    z = y * f
    if z > 1.0 + h:
        return 0.0
    if z < 1.0 - h:
        return 1.0 - z if order == 0 else (-y if order == 1 else 0.0)
    t = 1.0 + h - z
    if order == 0:
        return t * t / (4.0 * h)
    return -y * t / (2.0 * h) if order == 1 else y * y / (2.0 * h)


@_jit
def huber_hinge_value(y, f, p):
    return _huber_hinge(0, y, f, p[0])


@_jit
def huber_hinge_d1(y, f, p):
    return _huber_hinge(1, y, f, p[0])


@_jit
def huber_hinge_d2(y, f, p):
    return _huber_hinge(2, y, f, p[0])


# --- squared hinge ------------------------------------------------------------------------
@_jit
def squared_hinge_value(y, f, p):
    t = 1.0 - y * f
    return t * t if t > 0.0 else 0.0


@_jit
def squared_hinge_d1(y, f, p):
    t = 1.0 - y * f
    return -2.0 * y * t if t > 0.0 else 0.0


@_jit
def squared_hinge_d2(y, f, p):
    return 2.0 * y * y if y * f < 1.0 else 0.0


# --- logistic -----------------------------------------------------------------------------
@_jit
def _sigmoid(x):
    if x >= 0.0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


@_jit
def logistic_value(y, f, p):
    z = y * f
    if z > 0.0:
        return math.log1p(math.exp(-z))
    return -z + math.log1p(math.exp(z))


@_jit
def logistic_d1(y, f, p):
    return -y * _sigmoid(-y * f)


@_jit
def logistic_d2(y, f, p):
    z = y * f
    return y * y * _sigmoid(z) * _sigmoid(-z)


# --- array kernels: one per loss, so a run compiles only the losses it evaluates ----------
# (one kernel dispatching on a loss code compiled all twelve scalar functions on first use)
@_jit
def _square_serial(order, y, f, p, out):
    for i in range(y.shape[0]):
        out[i] = square_value(y[i], f[i], p) if order == 0 else (
            square_d1(y[i], f[i], p) if order == 1 else square_d2(y[i], f[i], p))


@_jit
def _huber_hinge_serial(order, y, f, p, out):
    for i in range(y.shape[0]):
        out[i] = huber_hinge_value(y[i], f[i], p) if order == 0 else (
            huber_hinge_d1(y[i], f[i], p) if order == 1 else huber_hinge_d2(y[i], f[i], p))


@_jit
def _squared_hinge_serial(order, y, f, p, out):
    for i in range(y.shape[0]):
        out[i] = squared_hinge_value(y[i], f[i], p) if order == 0 else (
            squared_hinge_d1(y[i], f[i], p) if order == 1 else
            squared_hinge_d2(y[i], f[i], p))


@_jit
def _logistic_serial(order, y, f, p, out):
    for i in range(y.shape[0]):
        out[i] = logistic_value(y[i], f[i], p) if order == 0 else (
            logistic_d1(y[i], f[i], p) if order == 1 else logistic_d2(y[i], f[i], p))


_pjit = numba.njit(cache=True, parallel=True, error_model="numpy")


@_pjit
def _square_parallel(order, y, f, p, out):
    for i in numba.prange(y.shape[0]):
        out[i] = square_value(y[i], f[i], p) if order == 0 else (
            square_d1(y[i], f[i], p) if order == 1 else square_d2(y[i], f[i], p))


@_pjit
def _huber_hinge_parallel(order, y, f, p, out):
    for i in numba.prange(y.shape[0]):
        out[i] = huber_hinge_value(y[i], f[i], p) if order == 0 else (
            huber_hinge_d1(y[i], f[i], p) if order == 1 else huber_hinge_d2(y[i], f[i], p))


@_pjit
def _squared_hinge_parallel(order, y, f, p, out):
    for i in numba.prange(y.shape[0]):
        out[i] = squared_hinge_value(y[i], f[i], p) if order == 0 else (
            squared_hinge_d1(y[i], f[i], p) if order == 1 else
            squared_hinge_d2(y[i], f[i], p))


@_pjit
def _logistic_parallel(order, y, f, p, out):
    for i in numba.prange(y.shape[0]):
        out[i] = logistic_value(y[i], f[i], p) if order == 0 else (
            logistic_d1(y[i], f[i], p) if order == 1 else logistic_d2(y[i], f[i], p))


# by loss code (the LossSpec's _builtin_code): (serial, parallel)
_KERNELS = (
    (_square_serial, _square_parallel),
    (_huber_hinge_serial, _huber_hinge_parallel),
    (_squared_hinge_serial, _squared_hinge_parallel),
    (_logistic_serial, _logistic_parallel),
)

# Below this size, waking the thread pool costs more than the loop (measured: a parallel
# launch on 10^4 elements took milliseconds on a loaded 2-core machine).
PARALLEL_MIN_SIZE = 100_000


def apply_builtin(code, order, y, f, p, out):
    """``out[i] = loss_code^(order)(y[i], f[i])`` for a built-in loss ``code``."""
    serial, parallel = _KERNELS[code]
    (parallel if y.shape[0] >= PARALLEL_MIN_SIZE else serial)(order, y, f, p, out)

