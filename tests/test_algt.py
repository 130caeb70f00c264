"""ALGT (seed 003): the closed-form W-step, the initial graph, trimming on two moons."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_moons
from sklearn.exceptions import ConvergenceWarning

from fastgssl.graphs import knn_graph
from fastgssl.models import ALGT, LapRLS, LapSVM
from fastgssl.models._algt import trimmed_weights


def _moons(n=300, seed=2, per_class=2):
    X, y = make_moons(n, noise=0.1, random_state=seed)
    rng = np.random.default_rng(seed)
    labeled = np.concatenate(
        [rng.choice(np.flatnonzero(y == c), per_class, replace=False) for c in (0, 1)]
    )
    y_ssl = np.full(n, -1)
    y_ssl[labeled] = y[labeled]
    return X, y, y_ssl


def test_hard_weights_minimize_the_self_paced_objective():
    rng = np.random.default_rng(0)
    d = rng.uniform(0, 2, size=200)
    age = 0.9
    w = trimmed_weights(d, age, "hard")
    # min over w in [0, 1] of w d - age w (linear in w): brute force on the endpoints + grid
    grid = np.linspace(0, 1, 101)
    best = grid[np.argmin(grid[None, :] * (d[:, None] - age), axis=1)]
    np.testing.assert_array_equal(w, best)


def test_soft_weights_minimize_the_entropy_objective_below_the_age():
    rng = np.random.default_rng(1)
    d = rng.uniform(0, 1.5, size=200)
    age = 1.0
    w = trimmed_weights(d, age, "soft")
    grid = np.linspace(1e-6, 1, 200001)
    objective = grid[None, :] * d[:, None] + age * (grid * np.log(grid) - grid)[None, :]
    best = grid[np.argmin(objective, axis=1)]
    below = d < age
    np.testing.assert_allclose(w[below], best[below], atol=1e-5)
    assert np.all(w[~below] == 0)


def test_initial_graph_is_the_binary_knn_graph():
    X, _, y_ssl = _moons(120)
    model = ALGT(LapRLS(sigma=0.5, gamma_a=1e-5, gamma_i=1.0), n_neighbors=6, max_iter=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X, y_ssl)
    reference = knn_graph(X, 6, weight="binary", symmetrize="max")
    assert abs(model.initial_graph_ - reference).max() == 0


def test_trimming_cuts_inter_class_edges_on_two_moons():
    X, y, y_ssl = _moons(400, seed=2)
    base = LapSVM(sigma=0.5, gamma_a=1e-5, gamma_i=1.0, n_neighbors=40,
                  graph_weight="binary")
    model = ALGT(base, n_neighbors=40).fit(X, y_ssl)
    assert model.converged_

    def inter_class(W):
        W = W.tocoo()
        return int(np.count_nonzero(y[W.row] != y[W.col]))

    assert inter_class(model.graph_) < inter_class(model.initial_graph_)
    plain_error = np.mean(base.fit(X, y_ssl).predict(X) != y)
    algt_error = np.mean(model.predict(X) != y)
    assert algt_error <= plain_error
    assert model.n_edges_[-1] < model.n_edges_[0]


def test_converged_graph_is_a_fixed_point_of_the_w_step():
    X, _, y_ssl = _moons(200, seed=0)
    model = ALGT(LapSVM(sigma=0.5, gamma_a=1e-5, gamma_i=1.0), n_neighbors=15,
                 weighting="soft", tol=1e-10, max_iter=30).fit(X, y_ssl)
    assert model.converged_
    f = model.estimator_.decision_train_
    rows, cols, sq = ALGT._candidate_edges(X, 15)
    w = trimmed_weights(1.0 * (f[rows] - f[cols]) ** 2 + sq, model.age_, "soft")
    W = ALGT._graph(rows, cols, w, X.shape[0])
    np.testing.assert_allclose(W.toarray(), model.graph_.toarray(), atol=1e-10)


def test_non_convergence_warns_with_numbers():
    X, _, y_ssl = _moons(200, seed=2)
    base = LapSVM(sigma=0.5, gamma_a=1e-5, gamma_i=1.0)
    with pytest.warns(ConvergenceWarning, match="max_iter=1"):
        ALGT(base, n_neighbors=30, max_iter=1).fit(X, y_ssl)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        # scikit-learn's parameter validation (InvalidParameterError names the parameter)
        ({"weighting": "fuzzy"}, r"'weighting' parameter of ALGT must be a str among"),
        ({"gamma_x": 0.0}, r"'gamma_x' parameter of ALGT must be a float in the range \(0"),
        ({"gamma_x": np.inf}, r"'gamma_x' parameter of ALGT .* Got inf"),
        ({"age_growth": 0.5}, r"'age_growth' parameter of ALGT must be a float in the range \[1"),
        ({"max_iter": 0}, r"'max_iter' parameter of ALGT must be an int in the range \[1"),
        ({"max_iter": 2.5}, r"'max_iter' parameter of ALGT"),
        ({"n_neighbors": 0}, r"'n_neighbors' parameter of ALGT"),
        ({"gamma_f": -1.0}, r"'gamma_f' parameter of ALGT"),
        ({"age": 0.0}, r"'age' parameter of ALGT"),
        ({"tol": -1.0}, r"'tol' parameter of ALGT"),
        ({"estimator": "LapSVM"}, r"'estimator' parameter of ALGT"),
        # checks against the data or the base estimator's own parameters
        ({"n_neighbors": 500}, "n_neighbors=500 must be smaller"),
        ({"estimator": LapSVM(kernel="precomputed")}, "kernel='rbf'"),
        ({"estimator": LapSVM(gamma_i=0.0)}, "estimator.gamma_i must be > 0"),
    ],
)
def test_bad_parameters(kwargs, match):
    X, _, y_ssl = _moons(100)
    with pytest.raises(ValueError, match=match):
        ALGT(**kwargs).fit(X, y_ssl)


def test_parameter_validation_happens_before_any_work():
    """A bad value is refused by scikit-learn's InvalidParameterError (a ValueError) before X
    is even looked at."""
    from sklearn.utils._param_validation import InvalidParameterError

    with pytest.raises(InvalidParameterError, match="'weighting' parameter of ALGT"):
        ALGT(weighting="fuzzy").fit(None, None)
