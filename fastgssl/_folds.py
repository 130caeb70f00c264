"""Fold assignment for (semi-supervised) t-fold cross-validation.

Seed 000 (Liu et al., *Efficient Cross-Validation for Semi-Supervised Learning*) splits the
labeled set L into L_1..L_t and the unlabeled set U into U_1..U_t and validates fold i only on
the labeled points of S_i = L_i u U_i.  This module builds such assignments (labeled points
stratified by class with a ``random_state``, unlabeled points split at random) and checks
assignments given by the user.
"""

from __future__ import annotations

import numbers

import numpy as np

from fastgssl._validation import check_class_counts, check_random_state, check_target

__all__ = ["labeled_mask_from_y", "make_folds", "check_folds", "folds_for_labels"]

# the classifiers' folds (made or given) need labeled points of two classes at least
_SINGLE_CLASS = ("the labeled points hold a single class ({classes}); cross-validating a "
                 "classifier needs at least two.")


def labeled_mask_from_y(y, *, classification=None):
    """Return the mask of labeled entries of ``y`` (``-1`` or ``NaN`` mark unlabeled points).

    Parameters
    ----------
    y : array-like of shape (n_samples,)
    classification : bool or None
        ``True``: ``-1`` marks unlabeled points; ``False``: ``NaN`` does (a target equal to
        ``-1`` is then a real label); ``None``: ``NaN`` if ``y`` contains any, else ``-1``.
    """
    y = np.asarray(y)
    if y.dtype.kind == "f" and np.isnan(y).any():
        return ~np.isnan(y)
    if classification is False:
        return np.ones(len(y), dtype=bool)
    if y.dtype.kind in "fiub":
        return y != -1
    return np.array([str(v) != "-1" for v in y], dtype=bool)


def _check_n_folds(n_folds):
    if isinstance(n_folds, bool) or not isinstance(n_folds, numbers.Integral):
        raise ValueError(f"n_folds (cv) must be an integer >= 2, got {n_folds!r}.")
    if n_folds < 2:
        raise ValueError(
            f"n_folds (cv) must be >= 2, got {n_folds}; t-fold cross-validation needs at "
            f"least two folds."
        )
    return int(n_folds)


def make_folds(y, n_folds=10, *, labeled=None, classification=True, random_state=None):
    """Assign every training point to one of ``n_folds`` folds.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Targets; unlabeled points are marked as in :func:`labeled_mask_from_y`.
    n_folds : int
        Number of folds t >= 2.
    labeled : array-like of bool, optional
        Mask of labeled points (default: derived from ``y``).
    classification : bool
        Stratify the labeled points by class (``True``) or split them at random.
    random_state : int, RandomState or None

    Returns
    -------
    folds : ndarray of int of shape (n_samples,)
        Fold id in ``0..n_folds-1`` of every point, labeled or not.

    Notes
    -----
    Labeled points of each class are shuffled and dealt round-robin over the folds, the
    dealing continuing from class to class (as :class:`sklearn.model_selection.StratifiedKFold`
    balances sizes), so fold sizes differ by at most one and every fold holds every class
    when ``n_folds`` does not exceed the smallest class count.  Unlabeled points are shuffled
    and dealt the same way, starting where the labeled dealing stopped.
    """
    n_folds = _check_n_folds(n_folds)
    y = check_target(y, name="y")
    if labeled is None:
        labeled = labeled_mask_from_y(y, classification=classification)
    labeled = np.asarray(labeled, dtype=bool)
    if labeled.shape != (len(y),):
        raise ValueError(f"labeled must be a boolean mask of length {len(y)}, got shape "
                         f"{labeled.shape}.")
    if y.dtype.kind == "f" and not np.isfinite(y[labeled]).all():
        at = int(np.flatnonzero(labeled)[~np.isfinite(y[labeled])][0])
        raise ValueError(f"y holds the non-finite label {y[at]} at index {at}; labels must be "
                         f"finite (-1, or NaN, marks an unlabeled point).")
    rng = check_random_state(random_state)
    lab_idx = np.flatnonzero(labeled)
    n_lab = len(lab_idx)
    if n_lab < n_folds:
        raise ValueError(
            f"only {n_lab} labeled point(s) for n_folds={n_folds}: every fold needs a "
            f"labeled point to validate on; use n_folds <= {n_lab} or label more points."
        )
    folds = np.empty(len(y), dtype=np.intp)
    if classification:
        classes, inverse, counts = np.unique(
            y[lab_idx], return_inverse=True, return_counts=True
        )
        check_class_counts(
            classes, counts, min_per_class=n_folds, too_few_classes=_SINGLE_CLASS,
            too_few_points="n_folds={n_folds} is larger than the labeled count {smallest} of "
                           "class(es) {bad}: stratified folds need n_folds <= the smallest class "
                           "count; lower n_folds or label more points of those classes.",
            n_folds=n_folds,
        )
        order = []
        for k in range(len(classes)):
            members = lab_idx[inverse == k]
            order.append(members[rng.permutation(len(members))])
        order = np.concatenate(order)
    else:
        order = lab_idx[rng.permutation(n_lab)]
    folds[order] = np.arange(n_lab) % n_folds
    unl_idx = np.flatnonzero(~labeled)
    if len(unl_idx):
        unl_idx = unl_idx[rng.permutation(len(unl_idx))]
        folds[unl_idx] = (np.arange(len(unl_idx)) + n_lab) % n_folds
    return folds


def check_folds(folds, labeled, y=None, *, classification=True):
    """Validate a fold assignment and return it as ``(folds, n_folds)``.

    Parameters
    ----------
    folds : array-like of int of shape (n_samples,)
        Fold id per training point (labeled and unlabeled); ids are relabeled to 0..t-1.
    labeled : ndarray of bool of shape (n_samples,)
    y : array-like, optional
        Targets; with ``classification`` every fold and every training complement is
        checked to contain at least two classes.

    Raises
    ------
    ValueError
        Fewer than two folds, a fold without labeled points, or a fold that holds every
        labeled point of some class (its refit could not learn that class). A fold may hold
        a single class: leave-one-label-out (each labeled point its own fold) is valid.
    """
    folds = np.asarray(folds)
    labeled = np.asarray(labeled, dtype=bool)
    if folds.ndim != 1 or len(folds) != len(labeled):
        raise ValueError(
            f"folds must give one fold id per training point ({len(labeled)} entries), "
            f"got shape {folds.shape}."
        )
    if folds.dtype.kind not in "iu":
        if folds.dtype.kind == "f" and np.all(np.isfinite(folds)) and np.all(
            folds == np.round(folds)
        ):
            folds = folds.astype(np.intp)
        else:
            raise ValueError("folds must hold integer fold ids.")
    ids, folds = np.unique(folds, return_inverse=True)
    n_folds = len(ids)
    if n_folds < 2:
        raise ValueError(
            f"folds holds {n_folds} fold id(s); cross-validation needs at least two folds."
        )
    lab_counts = np.bincount(folds[labeled], minlength=n_folds)
    if lab_counts.min() == 0:
        empty = ids[lab_counts == 0].tolist()
        raise ValueError(
            f"fold(s) {empty} contain no labeled point, so they cannot be validated; "
            f"assign labeled points to every fold (make_folds stratifies them)."
        )
    if classification and y is not None:
        y = np.asarray(y)
        y_lab = y[labeled]
        f_lab = folds[labeled]
        all_classes, counts = np.unique(y_lab, return_counts=True)
        check_class_counts(all_classes, counts, too_few_classes=_SINGLE_CLASS)
        # A fold may hold a single class (leave-one-label-out gives every labeled point its
        # own fold); what no refit can do is predict a class whose every label it lost.
        for i in range(n_folds):
            rest = np.unique(y_lab[f_lab != i])
            if len(rest) < len(all_classes):
                lost = np.setdiff1d(all_classes, rest).tolist()
                raise ValueError(
                    f"holding out fold {ids[i]} hides every label of class(es) {lost} and "
                    f"leaves the labeled classes {rest.tolist()} only (all: "
                    f"{all_classes.tolist()}); the refit could not learn those classes, so no "
                    f"cross-validation can score them (with one label per class, none can). "
                    f"Use stratified folds (fastgssl.cv.make_folds), fewer folds, or label "
                    f"more points of those classes."
                )
    return folds.astype(np.intp), n_folds


# where the few-labels guide lives (the one-label refusal names it)
LOW_LABEL_GUIDE = "docs/guide/low_labels.md (the user guide's 'Few labels' page)"


def folds_for_labels(y, n_folds=10, *, labeled=None, classification=True, random_state=None):
    """Folds for ``n_folds``-fold CV lowered to what the labels allow: ``(folds, note)``.

    The rule that the grid search, :func:`fastgssl.cv.cv_result` and the command line share
    for an integer number of folds:

    - every class (classification) has at least ``n_folds`` labeled points: stratified
      ``n_folds`` folds (:func:`make_folds`), ``note`` None;
    - the smallest class has m labels, 3 <= m < ``n_folds``: stratified m folds;
    - m = 2: leave-one-label-out (each labeled point its own fold; unlabeled points dealt
      over them): every refit keeps l - 1 labels, one of the held-out class, where two
      stratified folds would keep one label per class and score a model of half the
      labels;
    - m = 1: an error (no fold can hide a label without hiding its class, so no CV can
      score a choice) naming the few-labels guide and active learning;
    - regression: the labeled count caps the folds (leave-one-out at most).

    ``note`` says what was lowered and why (None when nothing was).
    """
    n_folds = _check_n_folds(n_folds)
    y = check_target(y, name="y")
    if labeled is None:
        labeled = labeled_mask_from_y(y, classification=classification)
    labeled = np.asarray(labeled, dtype=bool)
    lab_idx = np.flatnonzero(labeled)
    if classification:
        classes, counts = np.unique(y[lab_idx], return_counts=True)
        check_class_counts(classes, counts, too_few_classes=_SINGLE_CLASS)
        m = int(counts.min())
        smallest = classes[np.argmin(counts)]
        smallest = smallest.item() if hasattr(smallest, "item") else smallest
        if isinstance(smallest, float) and smallest.is_integer():
            smallest = int(smallest)  # a LIBSVM file's labels are read as floats
        why = f"the smallest class ({smallest}) has {m} labeled point(s)"
        if m >= n_folds:
            return make_folds(y, n_folds, labeled=labeled, classification=True,
                              random_state=random_state), None
        if m == 1:
            raise ValueError(
                f"n_folds={n_folds}: {why}. No fold can hide a label without hiding its "
                f"class, so no cross-validation can score a choice at one label per class. "
                f"Use the few-labels guide's recommendation without selection "
                f"(PoissonMBO(class_priors=shares) when the class shares are known, else "
                f"PoissonLearning(); {LOW_LABEL_GUIDE}), label more points of that class, or "
                f"let active learning choose which points to label next "
                f"(fastgssl.active.ActiveLearner)."
            )
        if m >= 3:
            return make_folds(y, m, labeled=labeled, classification=True,
                              random_state=random_state), (
                f"folds lowered from {n_folds} to {m}: {why} (stratified folds hold every "
                f"class)")
    else:
        m = lab_idx.size
        if m >= n_folds:
            return make_folds(y, n_folds, labeled=labeled, classification=False,
                              random_state=random_state), None
        if m < 2:
            raise ValueError(f"n_folds={n_folds}: only {m} labeled point(s); "
                             f"cross-validation needs two at least.")
        why = f"only {m} labeled point(s)"
    rng = check_random_state(random_state)
    folds = np.empty(len(y), dtype=np.intp)
    folds[lab_idx] = np.arange(lab_idx.size)
    unl_idx = np.flatnonzero(~labeled)
    folds[unl_idx] = rng.permutation(np.arange(len(unl_idx)) % lab_idx.size)
    return folds, (f"folds lowered from {n_folds} to leave-one-label-out "
                   f"({lab_idx.size} folds): {why}")
