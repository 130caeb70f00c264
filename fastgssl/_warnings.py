"""Warnings shared by several subpackages."""

__all__ = ["UnlabeledComponentWarning"]


class UnlabeledComponentWarning(UserWarning):
    """Some connected components of the graph (or of a subset system) hold no labeled
    point: there the decision comes from the ambient kernel term, an induction formula or a
    fill policy, not from the labels. Raised by the kernel machines and by label
    propagation (``DisconnectedGraphWarning`` is the same class under its older name)."""
