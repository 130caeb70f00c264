"""fastgssl: fast graph-based semi-supervised learning.

Subpackages (imported on first attribute access, so ``import fastgssl`` is cheap: it loads
no plugin, does not import pyamg and compiles no Numba kernel):

- :mod:`fastgssl.registry`     entry-point registry for losses, regularizers, graphs, CV
- :mod:`fastgssl.losses`       loss specs with Numba value / first / second derivative
- :mod:`fastgssl.graphs`       exact kNN and epsilon graphs (Numba), approximate kNN
- :mod:`fastgssl.regularizers` graph Laplacians L, L_norm and powers L^p
- :mod:`fastgssl.solvers`      multigrid-preconditioned Laplacian solvers
- :mod:`fastgssl.kernels`      RBF kernel, Nystrom factors, data-dependent kernels
- :mod:`fastgssl.models`       KRR, SVM, LapRLS, LapSVM, label propagation, kernel k-means
- :mod:`fastgssl.cv`           folds, exact CV, t-BIF / t-FBIF, model selection
- :mod:`fastgssl.active`       graph active learning: which points to label next
- :mod:`fastgssl.datasets`     bundled and LIBSVM datasets
- :mod:`fastgssl.exceptions`   every warning and exception class of the package
- :mod:`fastgssl.testing`      conformance checks for plugin authors
"""

import importlib

__version__ = "0.1.0.dev0"

_SUBMODULES = (
    "active",
    "cv",
    "datasets",
    "exceptions",
    "graphs",
    "kernels",
    "losses",
    "models",
    "registry",
    "regularizers",
    "solvers",
    "testing",
)

__all__ = list(_SUBMODULES) + ["CVObjective", "CVState", "ClassShareWarning", "GraphPart",
                                "KernelPart", "OptimisticCriterionWarning",
                                "PropagationSystem", "RefitPart", "__version__",
                                "sharing_key"]


def __getattr__(name):
    if name in _SUBMODULES:
        return importlib.import_module(f"fastgssl.{name}")
    if name in ("CVObjective", "CVState", "GraphPart", "KernelPart", "PropagationSystem",
                "RefitPart", "sharing_key"):  # the CV protocol
        from fastgssl import _protocol

        return getattr(_protocol, name)
    if name in ("ClassShareWarning", "OptimisticCriterionWarning"):
        from fastgssl import exceptions

        return getattr(exceptions, name)
    raise AttributeError(f"module 'fastgssl' has no attribute {name!r}")


def __dir__():
    return sorted(__all__)
