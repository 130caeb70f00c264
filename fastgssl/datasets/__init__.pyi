"""The public names of the front door beside it and where they live: the front door reads
this file (``fastgssl._lazy.attach_stub``), and so do editors and type checkers."""

from fastgssl.datasets._loaders import hide_labels as hide_labels
from fastgssl.datasets._loaders import load_data_file as load_data_file
from fastgssl.datasets._loaders import load_default as load_default
from fastgssl.datasets._loaders import load_libsvm as load_libsvm
from fastgssl.datasets._loaders import load_mnist_test as load_mnist_test
from fastgssl.datasets._loaders import make_gaussian_mixture as make_gaussian_mixture
from fastgssl.datasets._loaders import shared_datasets_dir as shared_datasets_dir
