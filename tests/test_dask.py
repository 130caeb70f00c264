"""GridSearchCV on a dask.distributed cluster through joblib's Dask backend.

Two worker processes (``LocalCluster(n_workers=2, processes=True)``) must give the serial
search's ``cv_results_`` exactly (every column but the wall-clock ``cost_seconds``): the
groups of candidates are independent and each runs the same code on the same arrays.
``dask[distributed]`` is in the ``test`` extra: CI runs this file with the other tests.
"""

import numpy as np
import pytest

pytest.importorskip(
    "distributed",
    reason="dask.distributed absent: pip install -e '.[test]' (or '.[dask]') in the checkout",
)
import joblib  # noqa: E402
from distributed import Client, LocalCluster, get_task_stream  # noqa: E402

from fastgssl.cv import GridSearchCV  # noqa: E402
from fastgssl.models import SVM, LapSVM  # noqa: E402


@pytest.fixture(scope="module")
def client():
    cluster = LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                           dashboard_address=None, silence_logs=40)
    with cluster, Client(cluster) as c:
        yield c


def _data(n=160, seed=0):
    from sklearn.datasets import make_classification

    return make_classification(n_samples=n, n_features=6, random_state=seed)


def _assert_same_results(a, b):
    ra, rb = a.cv_results_, b.cv_results_
    assert set(ra) == set(rb)
    for key in ra:
        if key == "cost_seconds":
            continue
        if key == "params":
            assert ra[key] == rb[key]
        elif np.asarray(ra[key]).dtype == object:
            assert list(ra[key]) == list(rb[key]), key
        else:
            np.testing.assert_array_equal(ra[key], rb[key], err_msg=key)
    assert a.best_params_ == b.best_params_
    assert a.n_verified_ == b.n_verified_
    np.testing.assert_array_equal(a.folds_, b.folds_)


@pytest.mark.parametrize("method, verify", [("fbif", "best"), ("exact", None)])
def test_search_on_local_cluster_matches_serial(client, method, verify):
    X, y = _data()
    grid = {"sigma": [1.0, 4.0, 16.0, 64.0], "lam": [1e-6, 1e-3, 1e-1]}
    kw = dict(cv=4, method=method, verify=verify, random_state=0)
    serial = GridSearchCV(SVM(), grid, n_jobs=1, **kw).fit(X, y)
    with get_task_stream(client) as stream, joblib.parallel_backend("dask"):
        distributed = GridSearchCV(SVM(), grid, n_jobs=-1, **kw).fit(X, y)
    _assert_same_results(serial, distributed)
    # the groups really ran on the cluster's worker processes
    workers = {t["worker"] for t in stream.data}
    assert stream.data and workers <= set(client.scheduler_info()["workers"])


def test_semi_supervised_search_on_local_cluster(client):
    X, y = _data(120, seed=1)
    y = y.copy()
    y[np.random.default_rng(0).permutation(120)[:90]] = -1
    grid = {"sigma": [2.0, 8.0], "gamma_a": [1e-4, 1e-2], "gamma_i": [0.1, 1.0]}
    kw = dict(cv=3, method="fbif", random_state=0)
    serial = GridSearchCV(LapSVM(n_neighbors=6), grid, n_jobs=1, **kw).fit(X, y)
    with joblib.parallel_backend("dask"):
        distributed = GridSearchCV(LapSVM(n_neighbors=6), grid, n_jobs=-1, **kw).fit(X, y)
    _assert_same_results(serial, distributed)
