"""``score`` of the semi-supervised learners leaves the unlabeled entries of ``y`` out.

scikit-learn's ``ClassifierMixin.score`` counted every ``-1`` as an error (0.003-0.01 for a
model right on most points, issue 53). Each learner is checked against the accuracy of its
own ``predict`` on the labeled half, computed here by hand.
"""

import numpy as np
import pytest
from sklearn.datasets import make_blobs

from fastgssl.models import (
    ALGT,
    LabelPropagation,
    LabelPropagationRegressor,
    LapRLS,
    LapSVM,
    LocalGlobalConsistency,
    PoissonLearning,
    PoissonMBO,
    VolumeMBO,
)

CLASSIFIERS = [
    PoissonLearning(),
    PoissonMBO(),
    VolumeMBO(),
    LabelPropagation(),
    LabelPropagation(class_mass_normalization=True),
    LabelPropagation(reweighting="poisson"),
    LocalGlobalConsistency(),
    LapSVM(),
    ALGT(n_neighbors=10, max_iter=2),
]


def _data():
    X, y = make_blobs(240, centers=[[0, 0], [3, 0], [0, 3]], cluster_std=1.2, random_state=0)
    y_half = y.copy()
    y_half[1::2] = -1  # half unlabeled
    return X, y, y_half


@pytest.mark.parametrize("est", CLASSIFIERS, ids=lambda e: repr(e))
def test_score_with_half_unlabeled_is_accuracy_on_the_labeled_half(est):
    X, y, y_half = _data()
    model = est.fit(X, y_half)
    pred = model.predict(X)
    labeled = y_half != -1
    expected = float(np.mean(pred[labeled] == y_half[labeled]))
    assert model.score(X, y_half) == expected
    assert expected > 0.5  # not the 0.0x that counting -1 as a class gave
    # with every label known it is the plain accuracy
    assert model.score(X, y) == float(np.mean(pred == y))
    with pytest.raises(ValueError, match="every entry of y is -1"):
        model.score(X, np.full(len(y), -1))


def test_score_of_string_labels_skips_the_string_marker():
    X, y, y_half = _data()
    names = np.array(["a", "b", "c"])[y]
    half = names.copy()
    half[1::2] = "-1"
    model = PoissonLearning().fit(X, half)
    pred = model.predict(X)
    keep = half != "-1"
    assert model.score(X, half) == float(np.mean(pred[keep] == half[keep]))


def test_sample_weight_of_the_labeled_entries():
    X, y, y_half = _data()
    model = PoissonLearning().fit(X, y_half)
    w = np.linspace(0.5, 2.0, len(y))
    keep = y_half != -1
    ok = model.predict(X)[keep] == y_half[keep]
    assert model.score(X, y_half, sample_weight=w) == pytest.approx(
        float(np.sum(w[keep] * ok) / np.sum(w[keep])))


@pytest.mark.parametrize("est", [LabelPropagationRegressor(), LapRLS()],
                         ids=lambda e: type(e).__name__)
def test_regressor_score_skips_nan_targets(est):
    from sklearn.metrics import r2_score

    X, y, _ = _data()
    t = X[:, 0] + 0.1 * X[:, 1]
    t_half = t.copy()
    t_half[1::2] = np.nan
    model = est.fit(X, t_half)
    keep = ~np.isnan(t_half)
    assert model.score(X, t_half) == pytest.approx(
        r2_score(t_half[keep], model.predict(X)[keep]))
    with pytest.raises(ValueError, match="every entry of y is NaN"):
        model.score(X, np.full(len(t), np.nan))


def test_cross_val_score_scores_the_labeled_entries_of_each_test_fold():
    """What the guide says of scikit-learn's cross_val_score: each fold is fitted on the
    training part (its unlabeled points included) and scored on the labeled points of the
    test part."""
    from sklearn.model_selection import KFold, cross_val_score

    X, y, y_half = _data()
    folds = KFold(4, shuffle=True, random_state=0)
    scores = cross_val_score(PoissonLearning(), X, y_half, cv=folds)
    for s, (tr, te) in zip(scores, folds.split(X)):
        pred = PoissonLearning().fit(X[tr], y_half[tr]).predict(X[te])
        keep = y_half[te] != -1
        assert s == float(np.mean(pred[keep] == y_half[te][keep]))
    assert scores.min() > 0.5


def test_fitted_learner_reports_recall_threads_and_logs_its_stages(caplog):
    """Diagnostics of issue 53: the builder's recall on the fitted learner (an IVF graph),
    None for the exact graph; the thread count used; INFO lines on the "fastgssl" logger."""
    import logging

    from fastgssl._threads import thread_count
    from fastgssl.graphs import IVFGraph

    X, y = make_blobs(2000, centers=4, n_features=6, random_state=0)
    y[1::2] = -1
    builder = IVFGraph(n_neighbors=10, random_state=0)
    with caplog.at_level(logging.INFO, logger="fastgssl"):
        model = PoissonLearning(graph=builder, n_jobs=1).fit(X, y)
    assert model.graph_recall_ == builder.recall_ and 0 < model.graph_recall_ <= 1
    assert model.n_threads_ == 1
    lines = [r.getMessage() for r in caplog.records if r.name == "fastgssl"]
    assert any("graph of 2,000 points" in m and "recall" in m and "1 thread" in m
               for m in lines), lines
    assert any("propagation on 2,000 points, 1,000 labeled" in m for m in lines), lines
    assert lines[0].startswith("PoissonLearning: building the graph (IVFGraph) of 2,000 points")
    exact = PoissonLearning().fit(X, y)
    assert exact.graph_recall_ is None
    assert 1 <= exact.n_threads_ and thread_count(-1) >= exact.n_threads_
