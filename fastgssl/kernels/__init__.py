"""Kernels: the papers' RBF kernel, Nystrom factors and data-dependent kernels.

- :func:`rbf_kernel`  exp(-||x - x'||^2 / (2 sigma)) (seed papers' convention), blockwise
- :func:`nystrom`     low-rank factor V with V V^T ~ K, and a transform for new points
- :class:`DataDependentKernel`  K_breve of seed 002 from m_hat Laplacian solves

Names are imported on first access.
"""

import importlib

_LOCATIONS = {
    "rbf_kernel": "fastgssl.kernels._rbf",
    "default_sigma": "fastgssl.kernels._rbf",
    "nystrom": "fastgssl.kernels._nystrom",
    "NystromFactor": "fastgssl.kernels._nystrom",
    "nystrom_from_gram": "fastgssl.kernels._nystrom",
    "DataDependentKernel": "fastgssl.kernels._data_dependent",
}

__all__ = sorted(_LOCATIONS)


def __getattr__(name):
    module = _LOCATIONS.get(name)
    if module is None:
        raise AttributeError(f"module 'fastgssl.kernels' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def __dir__():
    return __all__
