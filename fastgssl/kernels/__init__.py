"""Kernels: the papers' RBF kernel, Nystrom factors and data-dependent kernels.

- :func:`rbf_kernel`  exp(-||x - x'||^2 / (2 sigma)) (the source papers' convention), blockwise
- :func:`nystrom`     low-rank factor V with V V^T ~ K, and a transform for new points
- :class:`DataDependentKernel`  K_breve of Lever et al. (2012) from m_hat Laplacian solves
- :class:`DeformedKernel`  K~ of manifold regularization: LapRLS / LapSVM as kernel
  machines on the labeled points (Sindhwani, Niyogi & Belkin 2005)
- :func:`pairwise_kernel`  the base kernels of the learners (rbf, linear, poly, callables)

Names are imported on first access.
"""

from fastgssl._lazy import attach_stub

__getattr__, __dir__, __all__ = attach_stub(__name__, __file__)
