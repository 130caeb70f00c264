"""Warnings shared by several subpackages."""

__all__ = ["ClassShareWarning", "OptimisticCriterionWarning", "UnlabeledComponentWarning"]


class UnlabeledComponentWarning(UserWarning):
    """Some connected components of the graph (or of a subset system) hold no labeled
    point: there the decision comes from the ambient kernel term, an induction formula or a
    fill policy, not from the labels. Raised by the kernel machines and by label
    propagation (``DisconnectedGraphWarning`` is the same class under its older name)."""


class ClassShareWarning(UserWarning):
    """A graph-propagation fit whose predicted class shares on the unlabeled points depart
    grossly from the labeled shares: some class c with labeled share p_c, expected on at
    least 20 unlabeled points (``n_unlabeled * p_c >= 20``), receives less than a quarter of
    it (``q_c < p_c / 4``). Typical of Laplace learning (the harmonic solution) at one or two
    labels per class; :class:`fastgssl.models.PoissonLearning` or class mass normalization
    avoid it."""


class OptimisticCriterionWarning(UserWarning):
    """An unverified first-order CV criterion (t-BIF / t-FBIF, ``verify=None``) selected a
    candidate whose criterion equals its training error: the expansion did not move the
    held-out predictions, typical of nearly interpolating models (small lam and sigma), and
    the selection is then uninformative. ``verify="best"`` re-scores the winner by exact
    CV."""
