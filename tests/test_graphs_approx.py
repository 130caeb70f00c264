"""The approximate graph builder (issue 25, item 2): its reported recall equals a
brute-force count, float32 input, the warning below min_recall, use through graph=."""

import warnings

import numpy as np
import pytest

pytest.importorskip("pynndescent")

from fastgssl.graphs import LowRecallWarning, NNDescentGraph, knn_recall  # noqa: E402


def _brute_recall(X, lists, k):
    """Recall@k by a full distance matrix: a listed j is a hit if it is closer than, or
    tied with, the exact k-th neighbour (self excluded)."""
    X = np.asarray(X, dtype=np.float64)
    D = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    np.fill_diagonal(D, np.inf)
    kth = np.sort(D, axis=1)[:, k - 1]
    hits = 0
    for i, row in enumerate(lists):
        hits += sum(1 for j in row if j >= 0 and j != i and D[i, j] <= kth[i])
    return hits / (len(lists) * k)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_reported_recall_equals_brute_force_count(dtype):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 16)).astype(dtype)
    # a deliberately poor graph (short NN-descent lists) so that recall is < 1
    builder = NNDescentGraph(n_neighbors=8, search_neighbors=9, recall_sample=500,
                             min_recall=None, random_state=0)
    W = builder(X)
    assert W.shape == (500, 500)
    expected = _brute_recall(X, builder.neighbors_, 8)
    assert builder.recall_ == pytest.approx(expected, abs=1e-12)
    assert 0.3 < builder.recall_ <= 1.0


def test_knn_recall_on_a_sample_equals_brute_force_on_that_sample():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 5))
    lists = np.argsort(((X[:, None] - X[None]) ** 2).sum(-1), axis=1)[:, 1:6]
    noisy = lists.copy()
    noisy[::3, -2:] = rng.integers(0, 300, size=noisy[::3, -2:].shape)
    sample = np.sort(np.random.RandomState(4).choice(300, 120, replace=False))
    D = ((X[sample, None] - X[None]) ** 2).sum(-1)
    D[np.arange(120), sample] = np.inf
    kth = np.sort(D, axis=1)[:, 4]
    hits = sum(int(D[r, j] <= kth[r]) for r, i in enumerate(sample) for j in noisy[i]
               if j != i)
    got = knn_recall(X, noisy, sample_size=120, random_state=4)
    assert got == pytest.approx(hits / (120 * 5), abs=1e-12)


def test_float32_input_stays_float32_and_warns_below_min_recall(monkeypatch):
    import pynndescent

    import fastgssl.graphs._knn as knn_module
    import fastgssl.graphs._nndescent as nnd

    # record the dtype of every data array the builder hands on: to pynndescent, to the
    # exact pair distances (edge weights and recall) and to the exact search of the recall
    # sample (its queries and its reference set)
    seen = {"nndescent": [], "pair_sqdist": [], "knn_search": []}

    def spy(name, original):
        def wrapper(data, *args, **kwargs):
            seen[name].extend(a.dtype for a in (data, *args)
                              if isinstance(a, np.ndarray) and a.ndim == 2)
            return original(data, *args, **kwargs)
        return wrapper

    monkeypatch.setattr(pynndescent, "NNDescent", spy("nndescent", pynndescent.NNDescent))
    monkeypatch.setattr(nnd, "pair_sqdist", spy("pair_sqdist", nnd.pair_sqdist))
    monkeypatch.setattr(nnd, "knn_search", spy("knn_search", knn_module.knn_search))
    rng = np.random.default_rng(2)
    X = (rng.normal(size=(400, 30)) + 1e3).astype(np.float32)
    builder = NNDescentGraph(n_neighbors=10, search_neighbors=11, min_recall=1.0,
                             random_state=0)
    with pytest.warns(LowRecallWarning, match="recall@10"):
        W = builder(X)
    assert builder.recall_ < 1.0
    assert seen["nndescent"] == [np.dtype(np.float32)]
    # no float64 copy of X: pair distances and the exact recall search read float32
    assert len(seen["pair_sqdist"]) > 1 and set(seen["pair_sqdist"]) == {np.dtype(np.float32)}
    assert len(seen["knn_search"]) == 2 and set(seen["knn_search"]) == {np.dtype(np.float32)}
    assert W.dtype == np.float64  # the weights are computed in float64
    # float64 input stays float64 (the spies see what the builder passes on)
    seen.update(nndescent=[], pair_sqdist=[], knn_search=[])
    with pytest.warns(LowRecallWarning):
        builder(X.astype(np.float64))
    assert set(seen["pair_sqdist"]) == set(seen["knn_search"]) == {np.dtype(np.float64)}


def test_approximate_graph_through_graph_argument():
    from fastgssl.models import LocalGlobalConsistency

    rng = np.random.default_rng(3)
    X = np.vstack([rng.normal(size=(150, 4)), rng.normal(size=(150, 4)) + 6])
    y = np.full(300, -1)
    y[[0, 1, 150, 151]] = [0, 0, 1, 1]
    with warnings.catch_warnings():
        warnings.simplefilter("error", LowRecallWarning)
        model = LocalGlobalConsistency(graph="nndescent", n_neighbors=8).fit(X, y)
    assert (model.transduction_[:150] == 0).mean() > 0.95
    assert (model.transduction_[150:] == 1).mean() > 0.95
