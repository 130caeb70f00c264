"""Losses by name: the registry's ``fastgssl.losses`` group, built-in or plugin."""

from __future__ import annotations

from fastgssl import registry
from fastgssl.losses._spec import Loss, LossSpec

__all__ = ["available_losses", "get_loss"]


def get_loss(name, **params):
    """Return the loss ``name`` (built-in or plugin) bound to ``params``.

    ``name`` may also be a :class:`Loss` (returned as is, ``params`` must be empty) or a
    :class:`LossSpec` (bound to ``params``).
    """
    if isinstance(name, Loss):
        if params:
            raise ValueError("params cannot be given together with a bound Loss object.")
        return name
    if isinstance(name, LossSpec):
        return name.bind(**params)
    return registry.get("fastgssl.losses", name, **params)


def available_losses():
    """Names, origins and status of every registered loss (no plugin is imported)."""
    return registry.available("fastgssl.losses")
