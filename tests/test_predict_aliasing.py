"""Predictions must not depend on whether the new points are the training array object.

numpy computes ``A @ A.T`` (one buffer) by BLAS syrk and ``A @ B.T`` by gemm; their round-off
differs on some sizes and CPU kernels (n = 569 with OpenBLAS's Haswell kernel, n = 90 with
``OPENBLAS_CORETYPE=Nehalem``), so without a guard ``predict(X_fit)`` and the prediction of a
pickled model differed in the last bits (issue 14).
"""

import pickle

import numpy as np
import pytest

from fastgssl.kernels import pairwise_kernel
from fastgssl.models import KRR


@pytest.mark.parametrize("kernel", ["rbf", "linear", "poly"])
@pytest.mark.parametrize("n,d", [(90, 4), (569, 10)])
def test_cross_kernel_ignores_aliasing(kernel, n, d):
    X = np.random.default_rng(0).normal(size=(n, d))
    np.testing.assert_array_equal(pairwise_kernel(X, X, kernel, sigma=float(d)),
                                  pairwise_kernel(X, X.copy(), kernel, sigma=float(d)))


@pytest.mark.parametrize("kernel", ["rbf", "linear"])
def test_predict_on_training_object_equals_copy_and_pickle(kernel):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(569, 10))
    y = X[:, 0] + 0.1 * rng.normal(size=569)
    est = KRR(lam=1e-2, sigma=10.0, kernel=kernel).fit(X, y)
    again = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(est.predict(X), est.predict(X.copy()))
    np.testing.assert_array_equal(est.predict(X), again.predict(X))
