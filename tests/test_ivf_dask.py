"""IVFGraph on a dask.distributed cluster (issue 39): the same graph as in memory.

A ``dask.array`` X (row chunks, uneven, not aligned with any block size of the search) or a
NumPy X with ``client=`` must give the in-memory ``IVFGraph`` graph with the same
``random_state`` and ``n_probe`` (neighbour lists and weights, exactly), and with ``n_probe =
n_lists`` the exact ``knn_graph``.  Two worker processes, one thread each (as tests/test_dask.py).
"""

import sys
import warnings
from types import SimpleNamespace

import numpy as np
import pytest

pytest.importorskip(
    "distributed",
    reason="dask.distributed absent: pip install -e '.[test]' (or '.[dask]') in the checkout",
)
import dask.array as da  # noqa: E402
from distributed import Client, LocalCluster  # noqa: E402

from fastgssl.graphs import IVFGraph, knn_graph, knn_search  # noqa: E402


@pytest.fixture(scope="module")
def cluster():
    with LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                      dashboard_address=None, silence_logs=40) as c:
        yield c


@pytest.fixture(scope="module")
def client(cluster):
    with Client(cluster) as c:
        yield c


def _mixture(n=2400, d=8, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=4.0, size=(6, d))
    X = centres[rng.integers(0, 6, size=n)] + rng.normal(size=(n, d))
    return X.astype(dtype)


def _assert_same(local, dist, W_local, W_dist):
    np.testing.assert_array_equal(local.neighbors_, dist.neighbors_)
    assert local.n_probe_ == dist.n_probe_ and local.n_lists_ == dist.n_lists_
    assert (W_local != W_dist).nnz == 0
    assert local.recall_ == dist.recall_
    # a pair of lists probed both ways is searched once (two-way blocks) on both roads,
    # within a group and across two groups: the same pairs formed
    assert local.scan_fraction_ == dist.scan_fraction_
    np.testing.assert_array_equal(local.kth_sq_distances_, dist.kth_sq_distances_)


def _both_roads(X, chunks, **kw):
    """The in-memory and the dask-array builders of ``X`` (row chunks of ``chunks``),
    checked to give the same graph."""
    local = IVFGraph(**kw)
    W0 = local(X)
    dist = IVFGraph(**kw)
    W1 = dist(da.from_array(X, chunks=(chunks, X.shape[1])))  # the active client
    _assert_same(local, dist, W0, W1)
    return local, dist


@pytest.mark.parametrize("dtype, chunks", [(np.float64, 777), (np.float32, 500)])
def test_dask_array_matches_local(client, dtype, chunks):
    X = _mixture(dtype=dtype)
    kw = dict(n_neighbors=7, n_lists=30, n_probe=4, random_state=0)
    local = IVFGraph(**kw)
    W0 = local(X)
    dist = IVFGraph(**kw)
    W1 = dist(da.from_array(X, chunks=(chunks, X.shape[1])))  # the active client
    _assert_same(local, dist, W0, W1)
    assert local.dask_info_ is None
    info = dist.dask_info_
    assert info["n_groups"] >= 2 and info["bytes_moved"] > 0
    assert 1.0 <= info["groups_per_point"] <= info["n_groups"]
    assert {"operands", "kmeans", "tune", "assign", "search", "refine", "weights",
            "recall"} <= set(dist.stage_times_)


def test_numpy_with_client_and_target_recall(client):
    """NumPy X scattered by client=; n_probe chosen from the sample on the cluster; gaussian
    weights (the weights of knn_adjacency, from the same float64 distances)."""
    X = _mixture(seed=1)
    kw = dict(n_neighbors=6, n_lists=40, target_recall=0.9, weight="gaussian",
              random_state=3)
    local = IVFGraph(**kw)
    W0 = local(X)
    dist = IVFGraph(client=client, **kw)
    W1 = dist(X)
    _assert_same(local, dist, W0, W1)
    assert 1 < dist.n_probe_ < dist.n_lists_


def test_all_lists_probed_is_exact(client):
    X = _mixture(n=1500, seed=2)
    b = IVFGraph(n_neighbors=5, n_lists=12, n_probe=12, weight="distance", random_state=0)
    W = b(da.from_array(X, chunks=(400, X.shape[1])))
    np.testing.assert_array_equal(b.neighbors_, knn_search(X, 5)[0])
    assert (W != knn_graph(X, 5, weight="distance")).nnz == 0
    assert b.recall_ == 1.0


def test_points_with_few_probed_neighbours(client):
    """Tiny lists: points whose probed lists hold fewer than k others are searched exactly
    against every chunk, as in memory (same warning, same lists)."""
    X = _mixture(n=300, d=4, seed=4)
    kw = dict(n_neighbors=6, n_lists=120, n_probe=1, random_state=0, min_recall=None)
    with pytest.warns(UserWarning, match="searched exactly"):
        local = IVFGraph(**kw)
        W0 = local(X)
    with pytest.warns(UserWarning, match="searched exactly"):
        dist = IVFGraph(**kw)
        W1 = dist(da.from_array(X, chunks=(70, 4)))
    _assert_same(local, dist, W0, W1)


def test_duplicated_points(client):
    """Equal points (ties broken by index, uncertified rows rescanned in their group)."""
    X = np.repeat(_mixture(n=400, d=5, seed=5), 3, axis=0)
    _both_roads(X, 333, n_neighbors=4, n_lists=20, n_probe=3, weight="self_tuned",
                random_state=1)


def test_bad_input(client, cluster):
    X = _mixture(n=400)
    with pytest.raises(ValueError, match="chunked along its columns"):
        IVFGraph(n_neighbors=5)(da.from_array(X, chunks=(100, 4)))
    bad = X.copy()
    bad[321, 2] = np.nan
    with pytest.raises(ValueError, match="NaN|finite|infinit"):
        IVFGraph(n_neighbors=5)(da.from_array(bad, chunks=(100, 8)))
    with pytest.raises(ValueError, match="n_probe"):
        IVFGraph(n_neighbors=5, n_lists=4, n_probe=9)(da.from_array(X, chunks=(100, 8)))
    with pytest.raises(TypeError, match="client must be"):
        IVFGraph(client="tcp://127.0.0.1:1")(X)
    # issue 51: "zero-size array to reduction operation minimum"
    for empty in (da.zeros((0, 5)), da.zeros((40, 0), chunks=(10, 0))):
        with pytest.raises(ValueError, match=r"X is an empty dask array \(shape"):
            IVFGraph(n_neighbors=5)(empty)
    closed = Client(cluster, set_as_default=False)
    closed.close()
    with pytest.raises(RuntimeError, match="closed"):
        IVFGraph(n_neighbors=5, client=closed)(X)


def test_no_client_and_version_mismatch(client, monkeypatch):
    import distributed

    X = _mixture(n=400)

    def no_client():
        raise ValueError("No clients found")

    with monkeypatch.context() as m:
        m.setattr(distributed, "get_client", no_client)
        with pytest.raises(ValueError, match="no dask.distributed Client is active"):
            IVFGraph(n_neighbors=5)(da.from_array(X, chunks=(100, 8)))
    # workers importing another fastgssl (or none) are refused before any work
    with monkeypatch.context() as m:
        m.setattr(sys.modules["fastgssl"], "__version__", "0.0.other")
        with pytest.raises(RuntimeError, match="do not import fastgssl 0.0.other"):
            IVFGraph(n_neighbors=5, client=client)(X)


def test_missing_distributed_names_the_package_and_the_extra(monkeypatch):
    """The package to install, and the checkout's extra (fastgssl is not on an index, so
    'fastgssl[dask]' would not install, issue 53)."""
    from fastgssl.graphs import _ivf_dask

    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(ImportError, match=r"pip install 'dask\[distributed\]' .*"
                                          r"pip install -e '\.\[dask\]'"):
        _ivf_dask._distributed()


def test_lost_worker_fails_clearly(client, monkeypatch):
    """A worker lost with data that cannot be recomputed (scattered X) fails the build with
    a clear error, never a partial graph."""
    from distributed.scheduler import KilledWorker

    def lost(*args, **kwargs):
        raise KilledWorker("_part_range-x", SimpleNamespace(address="tcp://127.0.0.1:1"), 3)

    monkeypatch.setattr(client, "gather", lost)
    with pytest.raises(RuntimeError, match="worker was lost.*No graph is returned"):
        IVFGraph(n_neighbors=5, client=client)(_mixture(n=400))


@pytest.mark.parametrize("n_groups", [None, 7])
def test_two_way_pairs_across_groups(client, n_groups):
    """Pairs of lists probed both ways whose lists are in different groups: the smaller
    list goes whole to the other's group, which searches the pair once as two-way
    blocks; the lists, W and the pairs formed are those of the in-memory search."""
    from fastgssl.graphs._ivf_dask import DaskRows
    from fastgssl.graphs._ivf_driver import MemoryRows, ivf_lists

    X = _mixture(n=6000, d=6, seed=7, dtype=np.float32)
    if n_groups is None:  # the builder: 2 groups on 2 worker threads
        info = _both_roads(X, 1234, n_neighbors=9, n_lists=60, n_probe=9,
                           weight="gaussian", random_state=2)[1].dask_info_
    else:
        args = (9, 60, 9, 0.95, 0, 2, 1)
        got_m = ivf_lists(MemoryRows(X), *args)
        got_d = ivf_lists(DaskRows(da.from_array(X, chunks=(1001, 6)), client,
                                   n_groups=n_groups), *args)
        np.testing.assert_array_equal(got_m[0], got_d[0])
        np.testing.assert_array_equal(got_m[1], got_d[1])
        assert got_m[2]["scan_fraction"] == got_d[2]["scan_fraction"]
        info = got_d[2]["backend"]
    assert info["n_groups"] == (n_groups or 2)
    assert info["extra_lists"] > 0  # pairs shared across tasks were searched two-way


@pytest.mark.parametrize("table_max", [1 << 26, 10])
def test_list_pair_keys_by_table_and_by_sort(monkeypatch, table_max):
    """The (list, probed list) keys' distinct values and membership, by the table of
    flags and (more keys than the table holds) by a sort, against NumPy."""
    from fastgssl.graphs import _ivf_dask

    monkeypatch.setattr(_ivf_dask, "_TABLE_MAX", table_max)
    rng = np.random.default_rng(8)
    keys = rng.integers(0, 900, size=(500, 7))
    found = _ivf_dask._distinct(keys, 900)
    np.testing.assert_array_equal(found, np.unique(keys))
    chosen = np.sort(rng.choice(found, 40, replace=False))
    np.testing.assert_array_equal(_ivf_dask._isin_sorted(keys, chosen, 900),
                                  np.isin(keys, chosen))


def test_tiny_chunks_and_few_lists(client):
    """Chunks smaller than k + 1 rows, fewer lists than groups, one list."""
    X = np.random.default_rng(6).normal(size=(50, 3))
    for kw in (dict(n_lists=3), dict(n_lists=10, n_probe=1), dict(n_lists=1)):
        local = IVFGraph(n_neighbors=5, random_state=0, min_recall=None, **kw)
        dist = IVFGraph(n_neighbors=5, random_state=0, min_recall=None, **kw)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (small lists: the builder's list warnings)
            W0 = local(X)
            W1 = dist(da.from_array(X, chunks=(3, 3)))
        _assert_same(local, dist, W0, W1)
        assert dist.dask_info_["n_groups"] <= max(1, local.n_lists_)
