"""The graphs' interface to fastgssl's other packages: not public API.

The names of the edge weights and the self-tuned formula, which the propagation learners'
induction kernel (:mod:`fastgssl.models`) reads to weigh a new point as the graph weighs
training pairs. They may change without a deprecation cycle; the front door
:mod:`fastgssl.graphs` serves only the public names.
"""

from fastgssl.graphs._weights import (
    DEFAULT_SELF_TUNED_CONSTANT,
    SELF_TUNED,
    SYMMETRIZE,
    WEIGHTS,
    check_self_tuned_constant,
    default_symmetrize,
    self_tuned_scale,
    self_tuned_weights,
)

__all__ = [
    "DEFAULT_SELF_TUNED_CONSTANT",
    "SELF_TUNED",
    "SYMMETRIZE",
    "WEIGHTS",
    "check_self_tuned_constant",
    "default_symmetrize",
    "self_tuned_scale",
    "self_tuned_weights",
]
