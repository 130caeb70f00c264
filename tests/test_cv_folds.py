"""Fold assignment: stratification, semi-supervised splits, bad input."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fastgssl._folds import labeled_mask_from_y
from fastgssl.cv import check_folds, make_folds


@given(
    seed=st.integers(0, 10_000),
    n_classes=st.integers(2, 4),
    per_class=st.integers(5, 20),
    n_unlabeled=st.integers(0, 40),
    t=st.integers(2, 5),
)
def test_make_folds_is_stratified_and_balanced(seed, n_classes, per_class, n_unlabeled, t):
    rng = np.random.default_rng(seed)
    y = np.concatenate([np.repeat(np.arange(n_classes), per_class), -np.ones(n_unlabeled, int)])
    y = y[rng.permutation(len(y))]
    folds = make_folds(y, t, random_state=seed)
    labeled = y != -1
    assert folds.shape == y.shape and set(np.unique(folds)) <= set(range(t))
    for c in range(n_classes):
        counts = np.bincount(folds[y == c], minlength=t)
        assert counts.max() - counts.min() <= 1  # stratified
    lab_counts = np.bincount(folds[labeled], minlength=t)
    assert lab_counts.max() - lab_counts.min() <= 1
    if n_unlabeled:
        unl_counts = np.bincount(folds[~labeled], minlength=t)
        assert unl_counts.max() - unl_counts.min() <= 1
    # deterministic with a seed, different with another
    assert np.array_equal(folds, make_folds(y, t, random_state=seed))
    check_folds(folds, labeled, y)


def test_make_folds_regression_and_nan_unlabeled():
    y = np.arange(30, dtype=float)
    y[::3] = np.nan
    folds = make_folds(y, 4, classification=False, random_state=0)
    labeled = ~np.isnan(y)
    assert np.array_equal(labeled, labeled_mask_from_y(y))
    assert np.bincount(folds[labeled], minlength=4).min() == 5
    # a real target equal to -1 is a label in regression
    assert labeled_mask_from_y(np.array([-1.0, 2.0]), classification=False).all()


def test_string_labels_and_unequal_fold_sizes():
    y = np.array(["a"] * 7 + ["b"] * 5 + ["-1"] * 3, dtype=object)
    folds = make_folds(y, 3, random_state=1)
    assert np.bincount(folds, minlength=3).sum() == 15
    assert set(folds[y == "-1"]) <= {0, 1, 2}


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"n_folds": 1}, "n_folds .* >= 2"),
        ({"n_folds": 2.5}, "integer"),
        ({"n_folds": 6}, "smallest class count"),
    ],
)
def test_make_folds_bad_n_folds(kwargs, match):
    y = np.array([0] * 5 + [1] * 9)
    with pytest.raises(ValueError, match=match):
        make_folds(y, random_state=0, **kwargs)


def test_fewer_labels_than_folds():
    y = np.array([0, 1, 0, -1, -1, -1, -1, -1])
    with pytest.raises(ValueError, match="only 3 labeled"):
        make_folds(y, 4)


def test_single_class_labels():
    with pytest.raises(ValueError, match="single class"):
        make_folds(np.array([1, 1, 1, -1]), 2)


def test_check_folds_errors():
    y = np.array([0, 0, 1, 1, -1, -1])
    labeled = y != -1
    with pytest.raises(ValueError, match="at least two folds"):
        check_folds(np.zeros(6, int), labeled, y)
    with pytest.raises(ValueError, match="no labeled point"):
        check_folds(np.array([0, 0, 1, 1, 2, 2]), labeled, y)
    # a fold of a single class is valid (leave-one-label-out); hiding a whole class is not
    f, t = check_folds(np.array([0, 1, 0, 2, 0, 1]), labeled, y)
    assert t == 3
    f, t = check_folds(np.array([0, 1, 2, 3, 0, 1]), labeled, y)
    assert t == 4
    with pytest.raises(ValueError, match="hides every label of class"):
        check_folds(np.array([0, 0, 1, 1, 0, 1]), labeled, y)
    with pytest.raises(ValueError, match="leaves the labeled classes"):
        check_folds(np.array([0, 0, 1, 0, 0, 1]), labeled, np.array([0, 0, 1, 2, -1, -1]))
    with pytest.raises(ValueError, match="one fold id per training point"):
        check_folds(np.zeros(5, int), labeled, y)
    with pytest.raises(ValueError, match="integer"):
        check_folds(np.array([0.5, 1, 0, 1, 0, 1]), labeled, y)
    folds, t = check_folds(np.array([7, 3, 3, 7, 7, 3]), labeled, y)
    assert t == 2 and set(folds) == {0, 1}


# ---- issue 27, item 9: malformed targets refused in our words ----------------------------------
def _malformed_targets():
    import scipy.sparse as sp

    y = np.r_[np.zeros(15), np.ones(15)].astype(int)
    return [
        (None, "y is None"),
        (3, "got the scalar 3"),
        ("abc", "got a string"),
        (sp.csr_matrix(y.reshape(-1, 1)), "got a sparse 30 x 1 matrix"),
        (np.c_[y, y], r"got an array of shape \(30, 2\)"),
    ]


@pytest.mark.parametrize("bad, message", _malformed_targets())
def test_make_folds_and_the_search_refuse_malformed_y(bad, message):
    from fastgssl.cv import GridSearchCV
    from fastgssl.models import SVM

    with pytest.raises(ValueError, match=message):
        make_folds(bad, 3)
    X = np.random.default_rng(0).normal(size=(30, 2))
    with pytest.raises(ValueError, match=message):
        GridSearchCV(SVM(), {"lam": [1e-2]}, cv=3).fit(X, bad)


def test_make_folds_refuses_an_infinite_label_and_ravels_a_column():
    y = np.r_[np.zeros(15), np.ones(15)]
    with pytest.raises(ValueError, match="non-finite label inf at index 29"):
        make_folds(np.r_[y[:-1], np.inf], 3)
    with pytest.warns(Warning, match="column-vector y"):  # scikit-learn's convention
        folds = make_folds(y.reshape(-1, 1), 3, random_state=0)
    assert folds.tolist() == make_folds(y, 3, random_state=0).tolist()


def _few_labels(per_class, seed=0):
    from sklearn.datasets import make_blobs

    X, y = make_blobs(400, centers=4, random_state=seed)
    rng = np.random.default_rng(seed)
    y_ssl = np.full(400, -1)
    for c in range(4):
        y_ssl[rng.choice(np.flatnonzero(y == c), per_class, replace=False)] = c
    return X, y_ssl


@pytest.mark.parametrize("per_class, n_splits, how", [(2, 8, "leave-one-label-out"),
                                                      (3, 3, "to 3")])
def test_the_guides_recipe_runs_at_few_labels_and_says_what_it_lowered(per_class, n_splits,
                                                                       how):
    from fastgssl.cv import GridSearchCV, cv_result
    from fastgssl.exceptions import FoldsLoweredWarning
    from fastgssl.models import LabelPropagation, PoissonLearning

    X, y = _few_labels(per_class)
    grid = {"estimator": [PoissonLearning(), LabelPropagation(class_mass_normalization=True)],
            "n_neighbors": [5, 10]}
    with pytest.warns(FoldsLoweredWarning, match=how):  # was a bare fold-count error
        search = GridSearchCV(PoissonLearning(), grid, cv=5).fit(X, y)
    assert search.n_splits_ == n_splits and how in search.folds_note_
    if per_class == 2:  # every labeled point its own fold
        lab = y >= 0
        assert len(np.unique(search.folds_[lab])) == lab.sum()
    with pytest.warns(FoldsLoweredWarning):
        r = cv_result(PoissonLearning(), X, y, 10, random_state=0)
    assert r.n_folds == n_splits


def test_one_label_per_class_is_refused_naming_the_guide():
    from fastgssl.cv import GridSearchCV
    from fastgssl.models import PoissonLearning

    X, y = _few_labels(1)
    with pytest.raises(ValueError, match=r"one label per class.*PoissonMBO.*low_labels.*"
                                         r"ActiveLearner"):
        GridSearchCV(PoissonLearning(), {"n_neighbors": [5, 10]}, cv=2).fit(X, y)
