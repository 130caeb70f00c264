"""LowLabelClassifier: its labeling against CutRefinement of the same learner by hand, the
class sizes, the confidence, the options and the family's API."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_digits

from fastgssl.datasets import hide_labels
from fastgssl.graphs import knn_graph
from fastgssl.models import (
    CutRefinement,
    LabelPropagation,
    LowLabelClassifier,
    PoissonMBO,
    constrained_cut,
)


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    X, y = X[:900], y[:900]
    W = knn_graph(X, 10, weight="self_tuned", self_tuned_constant=3.0, symmetrize="max")
    return X, y, W


def test_default_equals_cut_refinement_of_pwll_by_hand(digits):
    X, y, W = digits
    y_ssl = hide_labels(y, 2, random_state=0)
    model = LowLabelClassifier(graph=W, random_state=0).fit(X, y_ssl)
    assert model.chosen_["learner"] == "pwll"
    pwll = LabelPropagation(graph=W, reweighting="poisson", class_mass_normalization=True)
    ref = CutRefinement(pwll, random_state=0).fit(X, y_ssl)
    np.testing.assert_array_equal(model.transduction_, ref.transduction_)
    assert model.chosen_["cut"] == pytest.approx(ref.cut_)
    assert model.chosen_["cut_start"] == pytest.approx(ref.cut_start_)
    idx = np.searchsorted(model.classes_, model.transduction_)
    assert constrained_cut(W, idx) == pytest.approx(model.chosen_["cut"])
    # another learner, with the priors
    priors = model.class_priors_
    mbo = LowLabelClassifier(priors, learner="poisson_mbo", graph=W, random_state=0)
    mbo.fit(X, y_ssl)
    ref = CutRefinement(PoissonMBO(priors, graph=W), priors, random_state=0).fit(X, y_ssl)
    np.testing.assert_array_equal(mbo.transduction_, ref.transduction_)


def test_labels_sizes_confidence_and_api(digits):
    X, y, W = digits
    y_ssl = hide_labels(y, 1, random_state=1)
    unl = y_ssl == -1
    model = LowLabelClassifier(random_state=0).fit(X, y_ssl)
    assert (model.transduction_[~unl] == y_ssl[~unl]).all()
    np.testing.assert_array_equal(np.bincount(model.transduction_[unl], minlength=10),
                                  model.class_sizes_)
    assert (model.transduction_[unl] == y[unl]).mean() > 0.8
    conf = model.confidence_
    assert conf.shape == y.shape and (conf[~unl] == 1).all()
    assert ((conf >= 0) & (conf <= 1)).all()
    right = model.transduction_[unl] == y[unl]
    assert conf[unl][right].mean() > conf[unl][~right].mean()
    assert "cannot score" in model.chosen_["reason"]
    assert model.chosen_["labels_per_class"] == [1, 1]
    assert model.predict(X[:7]).shape == (7,)
    np.testing.assert_allclose(model.predict_proba(X[:7]).sum(axis=1), 1.0)
    assert model.score(X, y_ssl) == 1.0  # the labeled entries keep their labels
    assert clone(model).get_params()["learner"] == "auto"


def test_learner_and_refine_options(digits):
    X, y, W = digits
    y_ssl = hide_labels(y, 2, random_state=2)
    plain = LowLabelClassifier(learner="cutssl", refine=False, graph=W).fit(X, y_ssl)
    assert plain.chosen_["learner"] == "cutssl" and plain.chosen_["n_moved"] == 0
    assert plain.chosen_["cut"] == plain.chosen_["cut_start"]
    with pytest.raises(ValueError, match="learner"):
        LowLabelClassifier(learner="nope", graph=W).fit(X, y_ssl)


def test_bad_priors_are_named(digits):
    X, y, W = digits
    y_ssl = hide_labels(y, 2, random_state=0)
    priors = np.full(10, 0.1)
    priors[3] = 0.0
    with pytest.raises(ValueError, match="class_priors"):
        LowLabelClassifier(priors / priors.sum(), graph=W).fit(X, y_ssl)


def test_verbose_prints_progress(digits, capsys):
    X, y, W = digits
    y_ssl = hide_labels(y, 1, random_state=0)
    LowLabelClassifier(graph=W, verbose=1).fit(X, y_ssl)
    err = capsys.readouterr().err
    assert "pwll fitted" in err and "refined (cut" in err
