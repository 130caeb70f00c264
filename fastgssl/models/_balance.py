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

# the rule of ClassShareWarning (check_class_shares): a class whose reference share would cover
# MIN_EXPECTED unlabeled points is predicted on less than its warning line: the given prior over
# PRIOR_FACTOR or, from the labels, the larger of LABEL_FRACTION of the labels' Wilson lower
# bound at WILSON_Z and the labels' share over LABEL_FACTOR (bench/bench_class_share_warning.py
# measured the fraction: a half raised false alarms, a quarter missed more collapses)
PRIOR_FACTOR = 4.0
WILSON_Z = 3.0
LABEL_FRACTION = 1 / 3
LABEL_FACTOR = 10.0
MIN_EXPECTED = 20.0


def wilson_lower(counts, z=WILSON_Z):
    """Wilson's (1927) lower confidence bound on each class's share from its label counts.

    With n labels of which n_c are of class c (p = n_c / n),

        L_c = (p + z^2 / 2n - z sqrt(p (1 - p) / n + z^2 / 4n^2)) / (1 + z^2 / n),

    the score interval recommended for small n by Brown, Cai & DasGupta (2001, Statist. Sci.
    16, 101-133); at ``z = 3`` a true share below L_c yields shares as high as p in the labels
    with probability about 0.1 %.
    """
    counts = np.asarray(counts, dtype=np.float64)
    n = counts.sum()
    p = counts / n
    z2 = z * z
    half = z * np.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    return np.clip((p + z2 / (2 * n) - half) / (1 + z2 / n), 0.0, None)


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
        The class shares the user gave (``class_priors``).

    Notes
    -----
    Class c, with reference share p_c, warns when p_c n_u >= :data:`MIN_EXPECTED` (a class
    expected on at least 20 of the n_u decided unlabeled points) and its predicted share q_c
    falls below its warning line:

    - with given priors, ``q_c < p_c / PRIOR_FACTOR`` (a quarter of the prior);
    - from the labels, ``q_c < max(LABEL_FRACTION * L_c, p_c / LABEL_FACTOR)``: a third of
      L_c, the Wilson lower bound (:func:`wilson_lower`, z = 3) on the class's share given
      its label count, the smallest share the labels make plausible; and never looser than a
      tenth of the labels' share.

    The bound makes the line follow the number of labels behind a share: 10.6 % / 12.1 % from
    38 / 42 random labels (issue 51's 94 / 6 collapse warns, and so does class mass
    normalization's 89.5 / 10.5 on the same draw), 12.7 % from 75 / 75, 15.1 % from 500 /
    500. With few labels the bound says
    little (from one label per class, or labels drawn per class, nothing about the true
    shares) and the tenth of the labels' share holds the line: 5 % from one label in each of
    two classes (a correct 90 / 10 answer is quiet, 98 / 2 warns), 1 % from one or two labels
    in each of ten classes.
    """
    n_u = decided.size
    if n_u == 0:
        return
    counts = np.asarray(labeled_counts, dtype=np.float64)
    if priors is None:
        p, source = counts / counts.sum(), "labels"
        line = np.maximum(LABEL_FRACTION * wilson_lower(counts), p / LABEL_FACTOR)
    else:
        p, source = np.asarray(priors, dtype=np.float64), "priors"
        line = p / PRIOR_FACTOR
    q = np.bincount(decided, minlength=p.size) / n_u
    bad = (p * n_u >= MIN_EXPECTED) & (q < line)
    if not bad.any():
        return
    worst = np.flatnonzero(bad)[np.argsort(q[bad] / p[bad])][:5]
    names = np.asarray(classes).tolist()
    detail = ", ".join(f"class {names[c]!r} {q[c]:.1%} ({source} {p[c]:.1%}, warning line "
                       f"{line[c]:.1%})" for c in worst)
    top = int(np.argmax(q))
    warnings.warn(
        f"{estimator} predicted class shares on the {n_u} unlabeled points far below the "
        f"{'given class priors' if priors is not None else 'labeled shares'}: {detail}; "
        f"class {names[top]!r} takes {q[top]:.1%}. At low label rates the solution is nearly "
        f"constant away from the labels and its argmax collapses. {hint}",
        ClassShareWarning,
        stacklevel=3,
    )
