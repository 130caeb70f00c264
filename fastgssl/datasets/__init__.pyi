"""Stub of the lazy front door beside it: its public names where they live, for editors and
type checkers (tests/test_front_doors.py checks it against ``__all__``)."""

from fastgssl.datasets._loaders import hide_labels as hide_labels
from fastgssl.datasets._loaders import load_data_file as load_data_file
from fastgssl.datasets._loaders import load_default as load_default
from fastgssl.datasets._loaders import load_libsvm as load_libsvm
from fastgssl.datasets._loaders import load_mnist_test as load_mnist_test
from fastgssl.datasets._loaders import make_gaussian_mixture as make_gaussian_mixture
from fastgssl.datasets._loaders import shared_datasets_dir as shared_datasets_dir

__all__ = [
    "hide_labels",
    "load_data_file",
    "load_default",
    "load_libsvm",
    "load_mnist_test",
    "make_gaussian_mixture",
    "shared_datasets_dir",
]
