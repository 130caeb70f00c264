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

from fastgssl._lazy import attach_stub

__version__ = "0.1.0.dev0"

# the subpackages, the CV protocol and two warnings (every name in __init__.pyi)
__getattr__, __dir__, __all__ = attach_stub(__name__, __file__)
