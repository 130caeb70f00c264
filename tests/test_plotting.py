"""fastgssl.plotting with the Agg backend: figures, artists and labels, no pixel comparisons."""

import numpy as np
import pytest

mpl = pytest.importorskip("matplotlib", reason="matplotlib absent: pip install -e '.[plot]'")
mpl.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.collections import LineCollection  # noqa: E402

from fastgssl.plotting import plot_cv_surface, plot_graph, plot_label_rate_curve  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def data():
    from sklearn.datasets import make_classification

    return make_classification(n_samples=120, n_features=5, random_state=0)


GRID = {"sigma": [0.5, 5.0, 50.0], "lam": [1e-6, 1e-3, 1e-1]}


@pytest.fixture(scope="module")
def verified_search(data):
    from fastgssl.cv import GridSearchCV
    from fastgssl.models import SVM

    X, y = data
    return GridSearchCV(SVM(), GRID, cv=4, method="fbif", verify="best",
                              random_state=0).fit(X, y)


@pytest.fixture(scope="module")
def exact_search(data):
    from fastgssl.cv import GridSearchCV
    from fastgssl.models import SVM

    X, y = data
    return GridSearchCV(SVM(), GRID, cv=4, method="exact", random_state=0).fit(X, y)


def _markers(ax, label):
    return [ln for ln in ax.get_lines() if ln.get_label() == label]


def _cells(ax):
    return ax.get_images()[0].get_array()


def test_cv_surface_verified_search(verified_search):
    fig, axes = plot_cv_surface(verified_search, "sigma", "lam")
    assert len(axes) == 2 and axes[0].figure is fig
    assert [ax.get_xlabel() for ax in axes] == ["sigma", "sigma"]
    assert axes[0].get_ylabel() == "lam"
    assert "fbif" in axes[0].get_title()
    assert "exact" in axes[1].get_title()
    assert [t.get_text() for t in axes[0].get_xticklabels()] == ["0.5", "5", "50"]
    assert [t.get_text() for t in axes[0].get_yticklabels()] == ["1e-06", "0.001", "0.1"]
    res = verified_search.cv_results_
    approx = _cells(axes[0])
    exact = _cells(axes[1])
    assert approx.shape == exact.shape == (3, 3)
    # every approximate criterion is shown; exact values only where verify re-scored
    np.testing.assert_allclose(np.sort(approx.compressed()), np.sort(res["approx_cv_error"]))
    assert exact.count() == int(np.sum(res["verified"]))
    # the selected point: a red star on both panels, at the best candidate's cell
    best = verified_search.best_params_
    col = GRID["sigma"].index(best["sigma"])
    row = GRID["lam"].index(best["lam"])
    for ax in axes:
        (star,) = _markers(ax, "selected")
        assert star.get_xdata()[0] == col and star.get_ydata()[0] == row
    # the chosen cell is verified: its exact value is drawn
    assert not np.ma.is_masked(exact[row, col])


def test_cv_surface_with_exact_search(verified_search, exact_search):
    _, axes = plot_cv_surface(verified_search, "lam", "sigma", exact=exact_search)
    exact = _cells(axes[1])
    assert exact.count() == 9
    np.testing.assert_allclose(np.sort(exact.compressed()),
                               np.sort(exact_search.cv_results_["mean_cv_error"]))
    assert axes[0].get_xlabel() == "lam" and axes[0].get_ylabel() == "sigma"
    # a dict of cv_results_ is accepted as well
    _, axes2 = plot_cv_surface(verified_search, "lam", "sigma",
                               exact=exact_search.cv_results_)
    np.testing.assert_allclose(_cells(axes2[1]).compressed(), exact.compressed())


def test_cv_surface_defaults_and_given_axes(exact_search):
    fig, given = plt.subplots(1, 2)
    fig2, axes = plot_cv_surface(exact_search, axes=given, annotate=False)
    assert fig2 is fig and list(axes) == list(given)
    assert {axes[0].get_xlabel(), axes[0].get_ylabel()} == {"sigma", "lam"}
    # an exact search shows its own criterion on both sides; no separate argmin marker
    np.testing.assert_allclose(_cells(axes[0]).compressed(), _cells(axes[1]).compressed())
    assert not _markers(axes[0], "approximate argmin")
    assert not axes[0].texts


def test_cv_surface_needs_two_parameters(data):
    from fastgssl.cv import GridSearchCV
    from fastgssl.models import KRR

    X, y = data
    s = GridSearchCV(KRR(), {"lam": [1e-3, 1e-1]}, cv=3, method="exact-quadratic",
                           random_state=0).fit(X, y.astype(float))
    with pytest.raises(ValueError, match="needs two"):
        plot_cv_surface(s)


def test_graph_with_labels():
    from fastgssl.graphs import knn_graph

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    W = knn_graph(X, n_neighbors=4)
    y = np.full(60, -1)
    y[:3], y[3:6] = 0, 1
    ax = plot_graph(X, W, y)
    (edges,) = [c for c in ax.collections if isinstance(c, LineCollection)]
    Wu = W.maximum(W.T).tocoo()
    assert len(edges.get_segments()) == int(np.sum(Wu.row < Wu.col))
    labels = [c.get_label() for c in ax.collections]
    assert "unlabeled" in labels and "class 0" in labels and "class 1" in labels
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        "edges", "unlabeled", "class 0", "class 1"]


def test_graph_with_scores_and_edge_cap():
    import scipy.sparse as sp

    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 2))
    W = sp.random(40, 40, density=0.5, random_state=0)
    scores = rng.normal(size=40)
    fig, ax = plt.subplots()
    out = plot_graph(X, W, scores, ax=ax, labeled=np.arange(40) < 4, max_edges=50)
    assert out is ax
    (edges,) = [c for c in ax.collections if isinstance(c, LineCollection)]
    assert len(edges.get_segments()) == 50
    assert {"points", "labeled"} <= {c.get_label() for c in ax.collections}
    assert len(fig.axes) == 2  # the colour bar
    assert fig.axes[1].get_ylabel() == "score"


def test_graph_validates_shapes():
    with pytest.raises(ValueError, match=r"shape \(n, 2\)"):
        plot_graph(np.zeros((5, 3)), None)
    with pytest.raises(ValueError, match="W has shape"):
        plot_graph(np.zeros((5, 2)), np.zeros((4, 4)))


def test_label_rate_curve():
    rates = [2, 5, 10]
    ours = np.array([[0.7, 0.8], [0.85, 0.9], [0.95, 0.96]])
    theirs = [0.6, 0.7, 0.8]
    ax = plot_label_rate_curve(rates, {"fastgssl": ours, "sklearn": theirs},
                               xlabel="labels per class", logx=True, title="digits")
    assert [ln.get_label() for ln in ax.get_lines()] == ["fastgssl", "sklearn"]
    np.testing.assert_allclose(ax.get_lines()[0].get_ydata(), np.median(ours, axis=1))
    assert ax.get_xlabel() == "labels per class" and ax.get_ylabel() == "accuracy"
    assert ax.get_xscale() == "log" and ax.get_title() == "digits"
    assert len(ax.collections) == 1  # one min-max band: only the first curve has draws
    with pytest.raises(ValueError, match="rows"):
        plot_label_rate_curve(rates, {"bad": [1.0, 2.0]})


def test_import_without_matplotlib_is_cheap():
    import subprocess
    import sys

    code = ("import sys, fastgssl.plotting; "
            "assert 'matplotlib' not in sys.modules, 'matplotlib imported at import time'")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_cv_surface_of_an_auto_search(data):
    from fastgssl.cv import GridSearchCV
    from fastgssl.models import SVM

    X, y = data
    s = GridSearchCV(SVM(), GRID, cv=4, random_state=0).fit(X, y)  # method="auto"
    _, axes = plot_cv_surface(s, "sigma", "lam")
    method = getattr(s, "method_", s.method)
    assert method in axes[0].get_title()
    assert _markers(axes[0], "selected")
