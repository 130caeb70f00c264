"""Losses with Numba value, first and second derivative in the prediction.

Built-ins: ``square``, ``huber_hinge`` (parameter ``h``), ``squared_hinge``, ``logistic``
(formulas in :mod:`fastgssl.losses._builtin`). Third-party losses register a
:class:`LossSpec` in the ``fastgssl.losses`` entry-point group and are found by name.

>>> import numpy as np
>>> from fastgssl.losses import get_loss
>>> loss = get_loss("huber_hinge", h=0.1)
>>> loss.d1(np.array([1.0]), np.array([1.0]))
array([-0.5])
"""

from fastgssl import registry
from fastgssl.losses._spec import Loss, LossSpec

__all__ = ["Loss", "LossSpec", "available_losses", "get_loss"]

# the built-ins of the registry group named after this package (imported on first use)
registry.register_builtins("fastgssl.losses", {
    "square": "fastgssl.losses._builtin_specs:SQUARE",
    "huber_hinge": "fastgssl.losses._builtin_specs:HUBER_HINGE",
    "squared_hinge": "fastgssl.losses._builtin_specs:SQUARED_HINGE",
    "logistic": "fastgssl.losses._builtin_specs:LOGISTIC",
}, entry_type=LossSpec)


def get_loss(name, **params):
    """Return the loss ``name`` (built-in or plugin) bound to ``params``.

    ``name`` may also be a :class:`Loss` (returned as is, ``params`` must be empty) or a
    :class:`LossSpec` (bound to ``params``).
    """
    if isinstance(name, Loss):
        if params:
            raise ValueError("params cannot be given together with a bound Loss object.")
        return name
    if isinstance(name, LossSpec):
        return name.bind(**params)
    return registry.get("fastgssl.losses", name, **params)


def available_losses():
    """Names, origins and status of every registered loss (no plugin is imported)."""
    return registry.available("fastgssl.losses")
