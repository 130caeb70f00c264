"""predict_proba of the kernel machines: Platt scaling on out-of-fold decision values."""

import numpy as np
import pytest
from sklearn.datasets import make_moons
from sklearn.metrics import log_loss

from fastgssl.models import KRR, SVM, LapRLS, LapSVM
from fastgssl.models._calibration import platt_fit, platt_probabilities


def test_platt_fit_recovers_a_known_sigmoid():
    rng = np.random.default_rng(0)
    f = rng.normal(scale=2.0, size=20000)
    p = 1.0 / (1.0 + np.exp(-1.5 * f + 0.3))
    pos = rng.random(f.size) < p
    A, B = platt_fit(f, pos)
    assert A == pytest.approx(-1.5, rel=0.05) and B == pytest.approx(0.3, abs=0.05)


def test_platt_probabilities_rows_sum_to_one():
    P = platt_probabilities(np.array([[1.0, -1.0, 0.2], [-3.0, 2.0, 0.0]]),
                            [(-2.0, 0.0)] * 3)
    assert np.allclose(P.sum(axis=1), 1.0) and (P >= 0).all()
    P2 = platt_probabilities(np.array([-800.0, 800.0]), [(-1.0, 0.0)])
    assert np.isfinite(P2).all() and np.allclose(P2, [[1, 0], [0, 1]])


@pytest.mark.parametrize("est", [SVM(sigma=0.5, probability=True),
                                 KRR(sigma=0.5, task="classification", probability=True),
                                 LapSVM(sigma=0.5, probability=True),
                                 LapRLS(sigma=0.5, probability=True)],
                         ids=["svm", "krr", "lapsvm", "laprls"])
def test_predict_proba_is_calibrated_on_held_out_points(est):
    X, y = make_moons(300, noise=0.3, random_state=0)
    Xt, yt = make_moons(1000, noise=0.3, random_state=1)
    y_fit = y.copy()
    if isinstance(est, (LapSVM, LapRLS)):
        y_fit[::3] = -1
    model = est.fit(X, y_fit)
    P = model.predict_proba(Xt)
    assert P.shape == (1000, 2) and np.allclose(P.sum(axis=1), 1.0)
    # decision and probability agree on the side of the boundary
    assert np.array_equal(P[:, 1] > 0.5, model.decision_function(Xt) > -model.
                          probability_sigmoids_[0][1] / model.probability_sigmoids_[0][0])
    assert log_loss(yt, P) < 0.35  # SVC(probability=True) scores 0.254 on this data
    assert np.allclose(np.exp(model.predict_log_proba(Xt[:5])), P[:5])


def test_multiclass_predict_proba():
    from sklearn.datasets import load_digits

    D = load_digits()
    X, y = D.data[:400] / 16.0, D.target[:400]
    model = SVM(sigma=5.0, probability=True, random_state=0).fit(X, y)
    P = model.predict_proba(D.data[400:600] / 16.0)
    assert P.shape == (200, 10) and np.allclose(P.sum(axis=1), 1.0)
    assert np.mean(model.classes_[np.argmax(P, axis=1)] == D.target[400:600]) > 0.8


def test_predict_proba_only_when_asked_and_for_classifiers():
    assert not hasattr(SVM(), "predict_proba")
    with pytest.raises(ValueError, match="needs a classifier"):
        KRR(probability=True).fit(np.eye(4), np.arange(4.0))
    X, y = make_moons(40, noise=0.2, random_state=0)
    y = y.copy()
    y[np.flatnonzero(y == 1)[1:]] = -1  # a single labeled point of class 1
    with pytest.raises(ValueError, match="at least 2 labeled points"):
        LapSVM(probability=True).fit(X, y)


def test_dense_fit_too_large_is_refused_before_any_work(monkeypatch):
    import fastgssl._memory as memory
    from fastgssl.models import LapSVM

    monkeypatch.setattr(memory, "available_memory", lambda: (10**6, "test"), raising=False)
    X = np.random.default_rng(0).normal(size=(2000, 3))
    y = np.full(2000, -1)
    y[:10] = np.arange(10) % 2
    with pytest.raises(MemoryError, match="nystrom"):
        LapSVM().fit(X, y)


def test_search_reuses_its_exact_cv_for_probabilities():
    """A fitted search calibrates the selected classifier on its own out-of-fold values:
    the same sigmoids as calibrating a plain fit on exact CV with the search's folds."""
    from sklearn.datasets import make_moons

    from fastgssl.cv import GridSearchCV, cv_result
    from fastgssl.models import LapSVM

    X, y = make_moons(160, noise=0.25, random_state=0)
    ys = y.copy()
    ys[40:] = -1
    grid = {"gamma_a": [1e-3, 1e-2], "gamma_i": [0.1, 1.0]}
    search = GridSearchCV(LapSVM(probability=True), grid, cv=4, random_state=0)
    search.fit(X, ys)
    assert search.probability_source_.startswith("the search's exact transductive CV")
    ref = LapSVM(**search.best_params_).fit(X, ys)
    res = cv_result(ref, X, ys, search.folds_, method="exact", protocol="transductive")
    ref.calibrate(res.predictions, res.targets)
    assert np.allclose(search.predict_proba(X[:20]), ref.predict_proba(X[:20]), atol=1e-8)
    assert search.best_estimator_.get_params()["probability"] is True


def test_search_without_probability_has_no_predict_proba():
    from sklearn.datasets import make_moons

    from fastgssl.cv import GridSearchCV
    from fastgssl.models import SVM

    X, y = make_moons(80, noise=0.25, random_state=0)
    search = GridSearchCV(SVM(), {"lam": [1e-3, 1e-2]}, cv=4, random_state=0).fit(X, y)
    assert not hasattr(search, "predict_proba") and search.probability_source_ is None


def test_calibrate_refuses_bad_shapes():
    from sklearn.datasets import make_moons

    from fastgssl.models import SVM

    X, y = make_moons(60, noise=0.25, random_state=0)
    model = SVM().fit(X, y)
    with pytest.raises(ValueError, match="shape"):
        model.calibrate(np.zeros((60, 2)), np.ones((60, 2)))
    with pytest.raises(ValueError, match="NaN"):
        model.calibrate(np.full(60, np.nan), np.ones(60))
