"""The inverted-file driver over its rows backends (issue 55).

One driver (:func:`fastgssl.graphs._ivf_driver.ivf_lists`) holds the stages, seeds, constants
and the certification bound; ``MemoryRows`` and ``DaskRows`` only move rows.  Checked here:
each constant and the bound is written once in graphs/ code, the bound holds against float64
truth, the two backends give the same lists and info (also where rows fail the certificate
and where probed lists hold fewer than k points), and the Dask side reads no private name of
the builder.  Dask: two worker processes, one thread each.
"""

import ast
import pathlib

import numpy as np
import pytest

from fastgssl.graphs import knn_search
from fastgssl.graphs._ivf_driver import MemoryRows, candidate_count, ivf_lists, ivf_recall
from fastgssl.graphs._operands import _gemm_operands, filter_bound

GRAPHS = pathlib.Path(__file__).resolve().parents[1] / "fastgssl" / "graphs"


def _code_without_docs(path):
    """The module's code as ``ast.unparse`` writes it: no comments, no docstrings."""
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                             ast.AsyncFunctionDef)):
            body = node.body
            if (body and isinstance(body[0], ast.Expr)
                    and isinstance(body[0].value, ast.Constant)
                    and isinstance(body[0].value.value, str)):
                node.body = body[1:] or [ast.Pass()]
    return ast.unparse(tree)


@pytest.mark.parametrize("text", ["k + max(4, k // 4)", "(d + 9)"])
def test_constants_and_bound_written_once_in_graphs_code(text):
    found = {p.name: _code_without_docs(p).count(text) for p in sorted(GRAPHS.glob("*.py"))}
    found = {name: c for name, c in found.items() if c}
    assert sum(found.values()) == 1, f"{text!r} in graphs/ code: {found}"


def test_filter_bound_holds_against_float64_distances():
    # offset, spread and a few near-duplicate rows: the float32 product's error is what
    # the bound covers
    rng = np.random.default_rng(3)
    X = 1e3 + rng.normal(size=(300, 37)) * np.logspace(-2, 1, 37)
    X[150:160] = X[0] + 1e-7 * rng.normal(size=(10, 37))
    from fastgssl._geometry import squared_spread

    A, B, q_norms, r_norms, unit2 = _gemm_operands(X, X, squared_spread(X))
    approx = (A.astype(np.float32) @ B.T).astype(np.float64) * unit2
    exact = ((X[:, None, :] - X[None, :, :]) ** 2).sum(axis=2)
    delta = filter_bound(X.shape[1], q_norms, r_norms.max(), unit2)
    err = np.abs(approx - exact)
    assert (err <= delta[:, None]).all()
    assert err.max() > 1e-3 * delta.max()  # a bound of the right size, not a vacuous one
    # unit2 = 1 gives the bound in scaled units
    np.testing.assert_array_equal(filter_bound(37, q_norms, r_norms.max()) * unit2, delta)


def test_candidate_count():
    assert [candidate_count(1000, k) for k in (1, 10, 16, 40)] == [5, 14, 20, 50]
    assert candidate_count(8, 6) == 7  # at most n - 1 others


def _mixture(n, d, seed, duplicates=0):
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=4.0, size=(6, d))
    X = centres[rng.integers(0, 6, size=n)] + rng.normal(size=(n, d))
    if duplicates:
        X[rng.choice(n, duplicates, replace=False)] = X[0]
    return X


def test_memory_rows_with_every_list_probed_is_the_exact_search():
    X = _mixture(600, 5, 0, duplicates=30)  # equal points: ties the filter cannot split
    out_i, out_d, info = ivf_lists(MemoryRows(X), 6, 10, 10, None, 0, 0, 1)
    idx, sq = knn_search(X, 6)
    np.testing.assert_array_equal(out_i, idx)
    np.testing.assert_array_equal(out_d, sq)
    assert info["n_probe"] == info["n_lists"] == 10 and info["backend"] is None
    assert ivf_recall(MemoryRows(X), out_i, out_d, info, 200, 0, 1) == 1.0


def test_dask_side_reads_no_private_name_of_the_builder():
    for name in ("_ivf_dask.py", "_ivf_driver.py"):
        tree = ast.parse((GRAPHS / name).read_text())
        imported = {node.module for node in ast.walk(tree)
                    if isinstance(node, ast.ImportFrom)}
        assert "_ivf" not in imported, f"{name} imports the builder's module"
        foreign = sorted(
            f"{ast.unparse(node.value)}.{node.attr}" for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and node.attr.startswith("_")
            and not node.attr.startswith("__")
            and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")))
        assert foreign == [], f"{name} reads private names: {foreign}"


# ------------------------------------------------------------------ the two backends

distributed = pytest.importorskip(
    "distributed",
    reason="dask.distributed absent: pip install -e '.[test]' (or '.[dask]') in the checkout",
)


@pytest.fixture(scope="module")
def client():
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                      dashboard_address=None, silence_logs=40) as cluster, \
            Client(cluster) as c:
        yield c


@pytest.mark.parametrize("case", [
    # tuned n_probe (the tuning sample searched with the recall sample)
    dict(n=1500, d=6, seed=1, k=8, n_lists=24, n_probe=None, target=0.9, recall=300),
    # equal points: rows the certificate fails, rescanned over their probed lists
    dict(n=1200, d=4, seed=2, k=7, n_lists=20, n_probe=2, duplicates=80, recall=0),
    # lists of ~2 points probed once: rows searched against all points
    dict(n=400, d=3, seed=3, k=5, n_lists=180, n_probe=1, recall=100),
])
def test_memory_and_dask_rows_give_the_same_lists_and_info(client, case):
    import dask.array as da

    from fastgssl.graphs._ivf_dask import DaskRows

    X = _mixture(case["n"], case["d"], case["seed"], case.get("duplicates", 0))
    args = (case["k"], case["n_lists"], case["n_probe"], case.get("target", 0.95),
            case["recall"], 5, 1)
    mem = MemoryRows(X)
    dist = DaskRows(da.from_array(X, chunks=(333, -1)), client)
    got_m = ivf_lists(mem, *args)
    got_d = ivf_lists(dist, *args)
    np.testing.assert_array_equal(got_m[0], got_d[0])
    np.testing.assert_array_equal(got_m[1], got_d[1])
    info_m, info_d = got_m[2], got_d[2]
    for key in ("n_lists", "n_probe", "n_empty", "largest", "n_full"):
        assert info_m[key] == info_d[key], key
    assert (info_m["recall_exact"] is None) == (info_d["recall_exact"] is None)
    if info_m["recall_exact"] is not None:
        for a, b in zip(info_m["recall_exact"], info_d["recall_exact"]):
            np.testing.assert_array_equal(a, b)
    assert info_d["backend"]["n_groups"] >= 1 and info_m["backend"] is None
    # a pair of lists probed both ways is searched once on both roads (two-way blocks)
    assert info_m["scan_fraction"] == info_d["scan_fraction"]
    if case["n_lists"] == 180:
        assert info_m["n_full"] > 0
    if case["recall"]:
        r_m = ivf_recall(mem, *got_m, case["recall"], 5, 1)
        assert r_m == ivf_recall(dist, *got_d, case["recall"], 5, 1)
        # against truth: the exact lists of the drawn sample by brute force
        sample = np.sort(np.random.RandomState(5).choice(case["n"], case["recall"],
                                                         replace=False))
        D = ((X[sample, None, :] - X[None, :, :]) ** 2).sum(axis=2)
        D[np.arange(sample.size), sample] = np.inf
        kth = np.sort(D, axis=1)[:, case["k"] - 1]
        hits = D[np.arange(sample.size)[:, None], got_m[0][sample]] <= kth[:, None] * (1 + 1e-12)
        assert r_m == pytest.approx(hits.mean(), abs=1e-12)
