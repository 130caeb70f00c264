"""Graph regularizers: Laplacians L = D - W, L_norm = I - D^{-1/2} W D^{-1/2}, powers.

- :func:`laplacian`              ``Q = (L + ridge I)^p`` or with ``L_norm``; CSR for
  ``p <= 2``, matrix-free :class:`LaplacianPower` above (or on request)
- :func:`laplacian_null_space`   orthonormal null-space basis (one vector per component)
- :func:`connected_components`   ``(n_components, labels)`` of a graph
- :func:`degree_centered`        columns shifted to degree-weighted mean zero per component
- :func:`build_regularizer`      ``Q`` from a registry name or a callable and a graph W
  (the one road every estimator takes)
- registry factories (group ``fastgssl.regularizers``): :class:`LaplacianRegularizer`
  (``"L"``) and :class:`NormalizedLaplacianRegularizer` (``"L_norm"``), callables
  ``reg(W) -> Q`` with attributes ``kind``, ``power``, ``ridge``.
"""

from fastgssl import registry
from fastgssl._lazy import attach_stub

# the built-ins of the registry group named after this package; the learners pass power to
# every regularizer, and a factory without that parameter is called without it at power=1
registry.register_builtins("fastgssl.regularizers", {
    "L": "fastgssl.regularizers._laplacian:LaplacianRegularizer",
    "L_norm": "fastgssl.regularizers._laplacian:NormalizedLaplacianRegularizer",
}, context_defaults={"power": 1})

__getattr__, __dir__, __all__ = attach_stub(__name__, __file__)
