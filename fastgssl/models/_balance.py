"""Class balancing of graph-propagation scores, and the warning for collapsed predictions.

At low label rates the harmonic solution of Laplace learning is nearly constant away from the
labeled points (Calder, Cook, Thorpe & Slepcev 2020; Nadler, Srebro & Zhou 2009), so its argmax
puts most points in one class. Two corrections are classical:

- **class mass normalization** (Zhu, Ghahramani & Lafferty 2003, section 4): rescale the
  score of class c so that its mass over the unlabeled points equals the class's share q_c,

      F_ic <- q_c F_ic / sum_{j unlabeled} F_jc;

- **class-prior weighting** (Poisson learning, Calder et al. 2020): decide by
  argmax_c (p_c u_ic) with the class priors p_c.

Both are functions of the raw solution's rows, its column sums over the unlabeled points and
the class counts of the labels in the fit, so cross-validation applies them per fold
(:class:`fastgssl.PropagationSystem`).

:class:`ClassShareWarning` reports a fit whose predicted class shares on the unlabeled points
depart grossly from the labeled shares (the rule is in its docstring).
"""

from __future__ import annotations

import warnings

import numpy as np

from fastgssl.exceptions import ClassShareWarning

__all__ = ["check_class_priors", "check_class_shares", "class_mass_normalize",
           "prior_weighted"]

# the rule of ClassShareWarning: a class expected on MIN_EXPECTED unlabeled points gets less
# than its reference share over PRIOR_FACTOR (given class priors) or LABEL_FACTOR (the labels'
# shares, a weak estimate when labels are drawn per class: only a collapse warns)
PRIOR_FACTOR = 4.0
LABEL_FACTOR = 10.0
MIN_EXPECTED = 20.0


def class_mass_normalize(F, mass, shares):
    """Zhu et al. (2003)'s class mass normalization: column c times ``shares[c] / mass[c]``.

    Columns without positive mass keep their values (no point is decided for such a class
    by its mass anyway)."""
    mass = np.asarray(mass, dtype=np.float64)
    scale = np.ones_like(mass)
    pos = mass > 0
    scale[pos] = np.asarray(shares, dtype=np.float64)[pos] / mass[pos]
    return F * scale


def prior_weighted(F, priors):
    """Scores weighted by the class priors, ``F * priors`` (Calder et al. 2020)."""
    return F * np.asarray(priors, dtype=np.float64)


def check_class_priors(class_priors, n_classes):
    """``class_priors`` as a float array of shape (n_classes,) summing to one."""
    try:
        p = np.asarray(class_priors, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(
            f"class_priors must be None or an array of {n_classes} nonnegative numbers in the "
            f"order of classes_, got {class_priors!r}."
        ) from None
    if p.shape != (n_classes,):
        raise ValueError(
            f"class_priors must have one entry per class in the order of classes_ "
            f"({n_classes}), got shape {p.shape}."
        )
    if not np.isfinite(p).all() or (p < 0).any() or not p.sum() > 0:
        raise ValueError(
            f"class_priors must be finite, nonnegative and not all zero, got {p.tolist()}."
        )
    return p / p.sum()


def check_class_shares(decided, labeled_counts, classes, estimator, hint, priors=None):
    """Warn (:class:`ClassShareWarning`) when the predicted shares collapse.

    Parameters
    ----------
    decided : ndarray of int
        Class index (into ``classes``) of every unlabeled point that was decided.
    labeled_counts : ndarray of shape (k,)
        Labels per class in the fit.
    classes : ndarray
    estimator : str
        Name for the message.
    hint : str
        What to do instead (named in the message).
    priors : ndarray of shape (k,), optional
        The class shares the user gave (``class_priors``): the reference, with a factor
        :data:`PRIOR_FACTOR`. Without them the labels' shares are the reference with the
        wider factor :data:`LABEL_FACTOR` (at one or two labels per class the labels' shares
        say little about the true ones: a correct 90 / 10 answer from balanced labels must
        not warn).
    """
    n_u = decided.size
    if n_u == 0:
        return
    if priors is None:
        p, factor, source = labeled_counts / labeled_counts.sum(), LABEL_FACTOR, "labels"
    else:
        p, factor, source = np.asarray(priors, dtype=np.float64), PRIOR_FACTOR, "priors"
    q = np.bincount(decided, minlength=p.size) / n_u
    bad = (p * n_u >= MIN_EXPECTED) & (q < p / factor)
    if not bad.any():
        return
    worst = np.flatnonzero(bad)[np.argsort(q[bad] / p[bad])][:5]
    names = np.asarray(classes).tolist()
    detail = ", ".join(f"class {names[c]!r} {q[c]:.1%} ({source} {p[c]:.1%})" for c in worst)
    top = int(np.argmax(q))
    warnings.warn(
        f"{estimator} predicted class shares on the {n_u} unlabeled points far below the "
        f"{'given class priors' if priors is not None else 'labeled shares'}: {detail}; "
        f"class {names[top]!r} takes {q[top]:.1%}. At low label rates the solution is nearly "
        f"constant away from the labels and its argmax collapses. {hint}",
        ClassShareWarning,
        stacklevel=3,
    )
