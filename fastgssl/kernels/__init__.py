"""Kernels: the papers' RBF kernel, Nystrom factors and data-dependent kernels.

- :func:`rbf_kernel`  exp(-||x - x'||^2 / (2 sigma)) (the source papers' convention), blockwise
- :func:`nystrom`     low-rank factor V with V V^T ~ K, and a transform for new points
- :class:`DataDependentKernel`  K_breve of Lever et al. (2012) from m_hat Laplacian solves
- :class:`DeformedKernel`  K~ of manifold regularization: LapRLS / LapSVM as kernel
  machines on the labeled points (Sindhwani, Niyogi & Belkin 2005)
- :func:`pairwise_kernel`  the base kernels of the learners (rbf, linear, poly, callables)

Names are imported on first access.
"""

from fastgssl._lazy import lazy_exports

_LOCATIONS = {
    "rbf_kernel": "fastgssl.kernels._rbf",
    "default_sigma": "fastgssl.kernels._rbf",
    "nystrom": "fastgssl.kernels._nystrom",
    "NystromFactor": "fastgssl.kernels._nystrom",
    "nystrom_from_gram": "fastgssl.kernels._nystrom",
    "DataDependentKernel": "fastgssl.kernels._data_dependent",
    "DeformedKernel": "fastgssl.kernels._deformed",
    "IllConditionedKernelWarning": "fastgssl.exceptions",
    "pairwise_kernel": "fastgssl.kernels._pairwise",
}

# The other packages import check_kernel and warn_if_ill_conditioned from
# fastgssl.kernels.internal. Until the carve of models/_kernel_machine.py (issue 44) imports
# them from there, the front door still serves them: not in __all__, dir() or the stub.
_INTERNAL = {name: "fastgssl.kernels.internal"
             for name in ("check_kernel", "warn_if_ill_conditioned")}

__getattr__, __dir__, __all__ = lazy_exports(__name__, _LOCATIONS, _INTERNAL)
