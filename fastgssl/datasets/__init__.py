"""Datasets: the bundled default and the shared LIBSVM / UCI / MNIST files.

- :func:`load_default` returns scikit-learn's bundled breast-cancer data (ships with a
  dependency, so the main job runs on a fresh machine without downloads);
- :func:`shared_datasets_dir` locates the shared folder: ``$FASTGSSL_DATASETS``, else
  ``../shared/datasets`` beside the source checkout (no machine path is guessed);
- :func:`load_libsvm` reads a LIBSVM file by path or by its name in that folder;
- :func:`load_data_file` reads any file of that folder whose format is known (LIBSVM, the
  UCI tables, ARFF, MNIST idx), refusing others with the formats it reads;
- :func:`load_mnist_test` reads the shared MNIST test images;
- :func:`make_gaussian_mixture` and :func:`hide_labels` build the synthetic semi-supervised
  workload of the benchmarks (BENCHMARKS.md: isotropic unit Gaussians around N(0, sep^2 I)
  class means, a few labels per class).
"""

from fastgssl._lazy import attach_stub

__getattr__, __dir__, __all__ = attach_stub(__name__, __file__)
