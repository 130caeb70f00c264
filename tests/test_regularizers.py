"""Tests of fastgssl.regularizers against dense numpy references."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st
from scipy.sparse.linalg import LinearOperator

from fastgssl import registry
from fastgssl.regularizers import (
    LaplacianPower,
    LaplacianRegularizer,
    NormalizedLaplacianRegularizer,
    connected_components,
    laplacian,
    laplacian_null_space,
)


def random_graph(rng, n, density, n_blocks=1):
    """Symmetric nonnegative W with (at least) n_blocks components by construction."""
    W = np.zeros((n, n))
    cuts = np.linspace(0, n, n_blocks + 1).astype(int)
    for a, b in zip(cuts[:-1], cuts[1:]):
        m = b - a
        B = rng.random((m, m)) * (rng.random((m, m)) < density)
        B = np.triu(B, 1)
        # a path keeps every block connected
        B[np.arange(m - 1), np.arange(1, m)] = 0.5 + rng.random(m - 1)
        W[a:b, a:b] = B + B.T
    return W


def dense_laplacians(W):
    deg = W.sum(axis=1)
    L = np.diag(deg) - W
    s = np.where(deg > 0, 1 / np.sqrt(np.where(deg > 0, deg, 1)), 0)
    Ln = np.diag((deg > 0).astype(float)) - s[:, None] * W * s[None]
    return L, Ln


@pytest.mark.parametrize("sparse_input", [False, True])
def test_laplacian_matches_dense_reference(sparse_input):
    rng = np.random.default_rng(0)
    W = random_graph(rng, 40, 0.2, n_blocks=3)
    L, Ln = dense_laplacians(W)
    Win = sp.csr_matrix(W) if sparse_input else W
    np.testing.assert_allclose(laplacian(Win).toarray(), L, atol=1e-14)
    np.testing.assert_allclose(laplacian(Win, "L_norm").toarray(), Ln, atol=1e-14)
    R = L + 0.3 * np.eye(40)
    np.testing.assert_allclose(laplacian(Win, power=2, ridge=0.3).toarray(), R @ R, atol=1e-12)
    Q3 = laplacian(Win, power=3, ridge=0.3)
    assert isinstance(Q3, LaplacianPower) and isinstance(Q3, LinearOperator)
    x = rng.normal(size=(40, 2))
    np.testing.assert_allclose(Q3 @ x, R @ R @ R @ x, atol=1e-11)
    assert sp.issparse(laplacian(Win, power=3, operator="sparse"))
    assert isinstance(laplacian(Win, operator="linear_operator"), LaplacianPower)


@pytest.mark.filterwarnings("ignore:laplacian.kind='L_norm'.:UserWarning")
@given(n=st.integers(2, 30), density=st.floats(0.0, 0.6), blocks=st.integers(1, 3),
       seed=st.integers(0, 10_000))
def test_laplacian_properties(n, density, blocks, seed):
    rng = np.random.default_rng(seed)
    blocks = min(blocks, n)
    W = random_graph(rng, n, density, blocks)
    L = laplacian(W).toarray()
    np.testing.assert_allclose(L.sum(axis=1), 0, atol=1e-12)
    ev = np.linalg.eigvalsh(L)
    scale = max(1.0, np.abs(ev).max())
    assert ev.min() >= -1e-10 * scale
    n_comp, labels = connected_components(W)
    assert n_comp == blocks
    assert int((ev < 1e-9 * scale).sum()) == n_comp
    evn = np.linalg.eigvalsh(laplacian(W, "L_norm").toarray())
    assert evn.min() >= -1e-10 and evn.max() <= 2 + 1e-10
    assert int((evn < 1e-9).sum()) == n_comp
    for kind in ["L", "L_norm"]:
        N = laplacian_null_space(W, kind)
        assert N.shape == (n, n_comp)
        np.testing.assert_allclose(N.T @ N, np.eye(n_comp), atol=1e-12)
        np.testing.assert_allclose(laplacian(W, kind) @ N, 0, atol=1e-12)


def test_isolated_vertices_warn_with_count():
    W = np.zeros((5, 5))
    W[0, 1] = W[1, 0] = 2.0
    with pytest.warns(UserWarning, match="3 isolated vertices"):
        Ln = laplacian(W, "L_norm").toarray()
    assert np.allclose(Ln[2:], 0) and np.allclose(Ln[:, 2:], 0)
    assert connected_components(W)[0] == 4
    np.testing.assert_allclose(laplacian(W, "L") @ np.ones(5), 0)


def test_registry_factories():
    W = random_graph(np.random.default_rng(1), 10, 0.3)
    reg = registry.get("fastgssl.regularizers", "L_norm", power=2)
    assert isinstance(reg, NormalizedLaplacianRegularizer)
    assert (reg.kind, reg.power, reg.ridge) == ("L_norm", 2, 0.0)
    _, Ln = dense_laplacians(W)
    np.testing.assert_allclose(reg(W).toarray(), Ln @ Ln, atol=1e-13)
    reg = registry.get("fastgssl.regularizers", "L", ridge=0.5)
    assert isinstance(reg, LaplacianRegularizer) and reg.kind == "L"
    np.testing.assert_allclose(reg(W).toarray(), dense_laplacians(W)[0] + 0.5 * np.eye(10),
                               atol=1e-13)


@pytest.mark.parametrize(
    "kwargs, match",
    [({"kind": "Lsym"}, "kind must be"), ({"power": 0}, "power must be"),
     ({"power": 1.5}, "power must be"), ({"ridge": -1.0}, "ridge must be >= 0"),
     ({"operator": "dense"}, "operator must be")],
)
def test_bad_parameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        laplacian(np.ones((3, 3)) - np.eye(3), **kwargs)


def test_bad_graph():
    with pytest.raises(ValueError, match="not symmetric"):
        laplacian(np.triu(np.ones((3, 3)), 1))
    with pytest.raises(ValueError, match="negative"):
        laplacian(-np.ones((3, 3)))


def test_laplacian_without_validation_equals_the_checked_one():
    from fastgssl.graphs import check_adjacency, knn_graph

    X = np.random.default_rng(2).normal(size=(120, 3))
    W = check_adjacency(knn_graph(X, 6, weight="gaussian"))
    a = laplacian(W)
    b = laplacian(W, validate=False)
    assert (a != b).nnz == 0
    np.testing.assert_array_equal(a.indices, b.indices)
