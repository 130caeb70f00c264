"""The IVF search by pairs of lists and the probe selection (issue 34) against references:
the one-way search's candidate heaps, and a lexicographic sort of every row."""

from __future__ import annotations

import numpy as np
import pytest

from fastgssl._geometry import check_distance_scale
from fastgssl.graphs._ivf_kernels import (
    _invert_probes,
    _list_order_operands,
    _nearest_lists,
)
from fastgssl.graphs._ivf_pairs import _search_pairs
from fastgssl.graphs._ivf_search import (
    _centroid_order,
    _kmeans,
    _nearest_centroids,
    _search_lists,
)
from fastgssl.graphs._knn import _gemm_operands


def _reference_probes(part, p):
    """The p nearest columns of each row, ties by index, and the first nearest."""
    n, m = part.shape
    order = np.lexsort((np.broadcast_to(np.arange(m), part.shape), part), axis=1)
    return order[:, 0], np.sort(order[:, :p], axis=1)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("m, p", [(300, 1), (300, 7), (300, 40), (300, 299), (300, 300),
                                  (50, 25), (2000, 68)])
def test_nearest_lists_equal_a_lexicographic_sort(seed, m, p):
    rng = np.random.default_rng(seed)
    part = rng.normal(size=(200, m)).astype(np.float32)
    if seed % 2:  # many ties: integer values, and a row of equal entries
        part = np.round(part * 2).astype(np.float32)
        part[0] = 3.0
    probe = np.empty((200, p), dtype=np.int32)
    labels = np.empty(200, dtype=np.int64)
    _nearest_lists(part, probe, labels, np.empty(0, dtype=np.int32))
    first, ref = _reference_probes(part, p)
    np.testing.assert_array_equal(labels, first)
    np.testing.assert_array_equal(np.sort(probe, axis=1), ref)
    # the same lists under other names (the spatial order of the search's lists)
    names = rng.permutation(m).astype(np.int32)
    _nearest_lists(part, probe, labels, names)
    np.testing.assert_array_equal(labels, names[first])
    np.testing.assert_array_equal(np.sort(probe, axis=1), np.sort(names[ref], axis=1))


def _operands(X, n_lists, p, seed=0):
    """The search's inputs as IVFGraph._search builds them (list order)."""
    A, _, _, _, _ = _gemm_operands(X, X, check_distance_scale(X, name="X"))
    C, Cop, _ = _kmeans(A, n_lists, np.random.RandomState(seed), 1)
    n, d = X.shape
    labels = np.empty(n, dtype=np.int64)
    probe = np.empty((n, p), dtype=np.int32)
    _nearest_centroids(A, Cop, p, 1, labels=labels, probe=probe)
    perm = np.argsort(labels, kind="stable")
    counts = np.bincount(labels, minlength=C.shape[0])
    starts = np.concatenate(([0], np.cumsum(counts)))
    ptr, queries = _invert_probes(probe, C.shape[0], perm)
    A, B = _list_order_operands(A, perm)
    return A, B, starts, ptr, queries


@pytest.mark.parametrize("n_lists, p, threads", [(12, 1, 1), (12, 4, 1), (12, 4, 2),
                                                 (12, 12, 2), (40, 9, 1)])
def test_pairs_search_keeps_the_candidates_of_the_one_way_search(n_lists, p, threads):
    rng = np.random.default_rng(3)
    X = (rng.normal(scale=3.0, size=(5, 6))[rng.integers(5, size=900)]
         + rng.normal(size=(900, 6))).astype(np.float32)
    A, B, starts, ptr, queries = _operands(X, n_lists, p)
    kc = 9
    d1, i1 = _search_lists(A, B, starts, ptr, queries, kc, 1)
    d2, i2, pairs = _search_pairs(A, B, starts, ptr, queries, kc, threads)
    one_way = float(np.dot(np.diff(ptr), np.diff(starts)))
    assert pairs <= one_way
    if p > 1:
        assert pairs < one_way  # lists probed both ways are searched once
    # the kc smallest of the same candidate set (float32 values of the same products)
    np.testing.assert_allclose(np.sort(d1, axis=1), np.sort(d2, axis=1), rtol=1e-5,
                               atol=1e-5)
    # and every candidate is a point of a probed list, never the point itself
    pos = np.arange(A.shape[0])
    assert (i2 != pos[:, None]).all()
    n_l = len(starts) - 1
    list_of = np.repeat(np.arange(n_l), np.diff(starts))
    probes = np.zeros((A.shape[0], n_l), dtype=bool)
    for L in range(n_l):
        probes[queries[ptr[L]:ptr[L + 1]], L] = True
    rows, cols = np.nonzero(i2 >= 0)
    assert probes[rows, list_of[i2[rows, cols]]].all()


@pytest.mark.parametrize("seed", range(3))
def test_centroid_order_names_subtrees_contiguously(seed):
    """The lists' spatial names: a permutation, and on points along a line every aligned
    block of 2^j names (a subtree of the median splits) is an interval of the line."""
    rng = np.random.default_rng(seed)
    x = rng.permutation(64).astype(float)
    C = np.column_stack([x, 1e-3 * rng.normal(size=64)])
    names = _centroid_order(C)
    np.testing.assert_array_equal(np.sort(names), np.arange(64))
    rank_by_name = x[np.argsort(names)]
    for size in (32, 16, 8, 4):
        for b in range(0, 64, size):
            block = np.sort(rank_by_name[b:b + size])
            assert block[-1] - block[0] == size - 1
    assert _centroid_order(np.zeros((5, 3))).tolist() == list(range(5))
