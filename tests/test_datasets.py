"""Dataset helpers: bundled default, synthetic mixture, label hiding, shared files."""

import numpy as np
import pytest

from fastgssl.datasets import hide_labels, load_default, load_libsvm, make_gaussian_mixture


def test_default_dataset_is_standardized_breast_cancer():
    X, y = load_default()
    assert X.shape == (569, 30) and set(np.unique(y)) == {0, 1}
    np.testing.assert_allclose(X.mean(axis=0), 0, atol=1e-12)
    np.testing.assert_allclose(X.std(axis=0), 1, atol=1e-12)


def test_gaussian_mixture_matches_the_peers_recipe():
    X, y = make_gaussian_mixture(1000, 5, n_classes=4, sep=2.0, random_state=3)
    rng = np.random.default_rng(3)
    means = rng.normal(scale=2.0, size=(4, 5))
    labels = np.arange(1000) % 4
    rng.shuffle(labels)
    np.testing.assert_array_equal(y, labels)
    np.testing.assert_array_equal(X, means[labels] + rng.normal(size=(1000, 5)))
    assert np.bincount(y).tolist() == [250] * 4


def test_hide_labels_keeps_the_requested_count_per_class():
    y = np.repeat(np.arange(3), 20)
    y_semi = hide_labels(y, 4, random_state=0)
    assert [(y_semi == c).sum() for c in range(3)] == [4, 4, 4]
    assert (y_semi == -1).sum() == 48
    kept = y_semi != -1
    np.testing.assert_array_equal(y_semi[kept], y[kept])


def test_shared_libsvm_file(datasets_dir):
    X, y = load_libsvm("heart_scale")
    assert X.shape == (270, 13) and set(np.unique(y)) == {-1.0, 1.0}
    with pytest.raises(FileNotFoundError, match="no dataset"):
        load_libsvm("not_a_dataset")
