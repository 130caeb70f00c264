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
from fastgssl._lazy import attach_stub

# the built-ins of the registry group named after this package (imported on first use)
registry.register_builtins("fastgssl.losses", {
    "square": "fastgssl.losses._builtin_specs:SQUARE",
    "huber_hinge": "fastgssl.losses._builtin_specs:HUBER_HINGE",
    "squared_hinge": "fastgssl.losses._builtin_specs:SQUARED_HINGE",
    "logistic": "fastgssl.losses._builtin_specs:LOGISTIC",
}, entry_type="fastgssl.losses._spec:LossSpec")

__getattr__, __dir__, __all__ = attach_stub(__name__, __file__)
