"""Stub of the lazy front door beside it: its public names where they live, for editors and
type checkers (tests/test_front_doors.py checks it against ``__all__``)."""

from fastgssl.losses._lookup import available_losses as available_losses
from fastgssl.losses._lookup import get_loss as get_loss
from fastgssl.losses._spec import Loss as Loss
from fastgssl.losses._spec import LossSpec as LossSpec

__all__ = [
    "Loss",
    "LossSpec",
    "available_losses",
    "get_loss",
]
