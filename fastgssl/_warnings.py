"""Former home of the shared warnings, kept as a re-export: they live in
:mod:`fastgssl.exceptions`."""

from fastgssl.exceptions import (
    ClassShareWarning,
    OptimisticCriterionWarning,
    UnlabeledComponentWarning,
)

__all__ = ["ClassShareWarning", "OptimisticCriterionWarning", "UnlabeledComponentWarning"]
