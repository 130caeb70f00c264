"""Dataset helpers: bundled default, synthetic mixture, label hiding, shared files."""

import gzip
import re
from pathlib import Path

import numpy as np
import pytest

import fastgssl.datasets as ds
import fastgssl.datasets._loaders as loaders
from fastgssl.datasets import hide_labels, load_default, load_libsvm, make_gaussian_mixture


def test_default_dataset_is_standardized_breast_cancer():
    X, y = load_default()
    assert X.shape == (569, 30) and set(np.unique(y)) == {0, 1}
    np.testing.assert_allclose(X.mean(axis=0), 0, atol=1e-12)
    np.testing.assert_allclose(X.std(axis=0), 1, atol=1e-12)
    raw, _ = load_default(standardize=False)
    assert raw.mean(axis=0).max() > 100  # breast cancer's areas, in the data's own units


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
    with pytest.raises(FileNotFoundError, match="neither a file nor a dataset") as info:
        load_libsvm("not_a_dataset")
    assert "heart_scale" in str(info.value)  # the message lists what is there


# ---- locating the shared folder: $FASTGSSL_DATASETS, then ../shared/datasets, else none ----
def _fake_folder(tmp_path):
    folder = tmp_path / "datasets"
    folder.mkdir()
    with gzip.open(folder / "tiny.gz", "wt") as fh:
        fh.write("1 1:0.5 2:1.0\n-1 1:-0.5\n1 2:2.0\n")
    (folder / "t10k-images-idx3-ubyte.gz").write_bytes(b"")
    return folder


def test_env_variable_comes_first(tmp_path, monkeypatch):
    folder = _fake_folder(tmp_path)
    monkeypatch.setenv("FASTGSSL_DATASETS", str(folder))
    assert ds.shared_datasets_dir() == folder
    X, y = load_libsvm("tiny", dense=True)
    np.testing.assert_array_equal(X, [[0.5, 1.0], [-0.5, 0.0], [0.0, 2.0]])
    np.testing.assert_array_equal(y, [1, -1, 1])
    with pytest.raises(FileNotFoundError, match=r"datasets: tiny\.$"):
        load_libsvm("absent")


def test_checkout_sibling_then_nothing(tmp_path, monkeypatch):
    monkeypatch.delenv("FASTGSSL_DATASETS", raising=False)
    checkout = tmp_path / "repo"
    checkout.mkdir()
    monkeypatch.setattr(loaders, "_checkout_root", lambda: checkout)
    assert ds.shared_datasets_dir() is None
    with pytest.raises(FileNotFoundError, match="export FASTGSSL_DATASETS="):
        ds.shared_datasets_dir(required=True)
    with pytest.raises(FileNotFoundError, match="not a file, and the shared datasets folder"):
        load_libsvm("a1a")
    (tmp_path / "shared").mkdir()
    folder = _fake_folder(tmp_path / "shared")
    assert ds.shared_datasets_dir() == folder
    # installed outside a checkout: no guess at all
    monkeypatch.setattr(loaders, "_checkout_root", lambda: None)
    assert ds.shared_datasets_dir() is None
    with pytest.raises(FileNotFoundError, match="not running from a source checkout"):
        ds.load_mnist_test()


def test_env_variable_pointing_nowhere(tmp_path, monkeypatch):
    monkeypatch.setenv("FASTGSSL_DATASETS", str(tmp_path / "missing"))
    assert ds.shared_datasets_dir() is None
    with pytest.raises(FileNotFoundError, match="is not a directory"):
        ds.shared_datasets_dir(required=True)


def test_empty_name_and_directory_are_refused(tmp_path):
    with pytest.raises(ValueError, match="empty"):
        load_libsvm("")
    with pytest.raises(ValueError, match="empty"):
        load_libsvm("  ")
    with pytest.raises(FileNotFoundError, match="is a directory"):
        load_libsvm(tmp_path)


def test_a_path_is_read_directly(tmp_path, monkeypatch):
    monkeypatch.setenv("FASTGSSL_DATASETS", str(tmp_path / "missing"))
    folder = _fake_folder(tmp_path)
    X, y = load_libsvm(folder / "tiny.gz")
    assert X.shape == (3, 2) and len(y) == 3


def test_no_absolute_machine_path_in_package_or_tests():
    """No machine-specific absolute directory is written into the code (issue 14)."""
    root = Path(__file__).resolve().parents[1]
    pattern = re.compile(r"""["'](/(?:work|home|root|mnt|Users|data|scratch|opt)/)""")
    offenders = []
    for folder in ("fastgssl", "tests"):
        for path in (root / folder).rglob("*.py"):
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if pattern.search(line) and "pattern = re.compile" not in line:
                    offenders.append(f"{path.relative_to(root)}:{number}: {line.strip()}")
    assert not offenders, "\n".join(offenders)
