"""The kernels' interface to fastgssl's other packages: not public API.

The kernel machines (:mod:`fastgssl.models`) validate a kernel argument and warn about an
ill-conditioned deformed kernel through these; they may change without a deprecation cycle,
and the front door :mod:`fastgssl.kernels` serves only the public names.
"""

from fastgssl.kernels._deformed import warn_if_ill_conditioned
from fastgssl.kernels._pairwise import check_kernel

__all__ = ["check_kernel", "warn_if_ill_conditioned"]
