"""fastgssl._indexing.take_block against NumPy's fancy indexing."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastgssl._indexing import _PARALLEL_MIN, take_block


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 30), m=st.integers(1, 30), seed=st.integers(0, 2**16))
def test_take_block_equals_ix(n, m, seed):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(n, m))
    rows = rng.integers(0, n, size=rng.integers(0, 2 * n))  # repeats and any order
    cols = rng.integers(0, m, size=rng.integers(0, 2 * m))
    out = take_block(A, rows, cols)
    assert out.flags.c_contiguous
    np.testing.assert_array_equal(out, A[np.ix_(rows, cols)])


def test_take_block_defaults_masks_and_layouts():
    rng = np.random.default_rng(0)
    A = rng.normal(size=(9, 9))
    mask = rng.random(9) < 0.5
    np.testing.assert_array_equal(take_block(A, mask), A[np.ix_(mask, mask)])
    F = np.asfortranarray(A)
    idx = np.array([3, 0, 7])
    np.testing.assert_array_equal(take_block(F, idx), A[np.ix_(idx, idx)])


def test_take_block_parallel_path():
    n = int(np.sqrt(_PARALLEL_MIN)) + 8
    A = np.arange(n * n, dtype=np.float64).reshape(n, n)
    idx = np.arange(n)[::-1]
    np.testing.assert_array_equal(take_block(A, idx), A[np.ix_(idx, idx)])


@pytest.mark.parametrize("rows", [np.array([0, 5]), np.array([-1, 0]), np.ones(4, bool)])
def test_take_block_refuses_out_of_range(rows):
    with pytest.raises(IndexError, match="rows"):
        take_block(np.zeros((5, 5)), rows)


def test_take_block_checks_default_cols_and_dtypes():
    A = np.arange(15.0).reshape(5, 3)
    with pytest.raises(IndexError, match="cols"):
        take_block(A, [0, 4])  # cols default to rows: 4 is out of A's 3 columns
    with pytest.raises(IndexError, match="integer"):
        take_block(A, np.array([0.9, 1.7]), [0])
