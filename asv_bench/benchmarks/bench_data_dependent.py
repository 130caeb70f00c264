"""Data-dependent kernel (seed 002): build time vs n, kernel evaluation, accuracy tracks.

``time_*`` exclude Numba compilation (``setup`` fits once on a small set first);
``track_*`` record accuracy so that a speed-up that hurts the kernel shows.
"""

import numpy as np

from fastgssl.datasets import make_gaussian_mixture
from fastgssl.kernels import DataDependentKernel, rbf_kernel
from fastgssl.models import KernelKMeans

from . import log_environment


def _mixture(n, d=50, n_classes=10, sep=0.5, seed=0):
    return make_gaussian_mixture(n, d, n_classes, sep, random_state=seed)

def _warm():
    DataDependentKernel(n_subsample=20, regularizer="L", sigma=50.0).fit(_mixture(2500)[0])


class DataDependentKernelBuild:
    """Paper's timing setting: kNN k=5, Q = L + 1e-6 I, p = 1, eta = 1."""

    params = ([10_000, 20_000], [100, 500])
    param_names = ["n", "n_subsample"]
    timeout = 600

    def setup(self, n, m):
        log_environment(type(self).__name__)
        _warm()
        self.X, _ = _mixture(n)

    def time_fit(self, n, m):
        DataDependentKernel(n_subsample=m, regularizer="L", ridge=1e-6, sigma=50.0,
                            random_state=0).fit(self.X)


class DataDependentKernelPower_n10000:
    params = [1, 2, 4]
    param_names = ["power"]
    timeout = 600

    def setup(self, p):
        log_environment(type(self).__name__)
        _warm()
        self.X, _ = _mixture(10_000)

    def time_fit(self, p):
        DataDependentKernel(n_subsample=200, regularizer="L_norm", power=p, sigma=50.0,
                            random_state=0).fit(self.X)


class DataDependentKernelGram_n10000:
    """Evaluating K_breve on new points: m base-kernel columns plus two small products."""

    def setup(self):
        log_environment(type(self).__name__)
        _warm()
        X, _ = _mixture(10_000)
        self.ddk = DataDependentKernel(n_subsample=500, regularizer="L", sigma=50.0,
                                       random_state=0).fit(X)
        self.X_new = _mixture(2_000, seed=1)[0]

    def time_gram_2000_new_points(self):
        self.ddk.gram(self.X_new)

    def time_rbf_reference_2000(self):
        rbf_kernel(self.X_new, sigma=50.0)


class TwoMoonsClustering_n1000:
    """Seed 002, Section 5.2: 1,000 points, m_hat = 40, p = 2 (paper: 1 % error)."""

    timeout = 300

    def setup(self):
        log_environment(type(self).__name__)
        from sklearn.datasets import make_moons

        self.X, self.y = make_moons(1000, noise=0.05, random_state=0)
        _warm()

    def _error(self, labels):
        e = float(np.mean(labels != self.y))
        return min(e, 1.0 - e)

    def time_kernel_and_kmeans(self):
        ddk = DataDependentKernel(eta=1e4, n_subsample=40, regularizer="L", power=2,
                                  sigma=0.1, random_state=0).fit(self.X)
        KernelKMeans(2, kernel=ddk, random_state=0).fit(self.X)

    def track_error_data_dependent(self):
        errors = []
        for seed in range(3):
            ddk = DataDependentKernel(eta=1e4, n_subsample=40, regularizer="L", power=2,
                                      sigma=0.1, random_state=seed).fit(self.X)
            errors.append(self._error(KernelKMeans(2, kernel=ddk, random_state=0)
                                      .fit(self.X).labels_))
        return float(np.median(errors))

    track_error_data_dependent.unit = "error rate"

    def track_error_rbf(self):
        return self._error(KernelKMeans(2, kernel="rbf", sigma=0.1, random_state=0)
                           .fit(self.X).labels_)

    track_error_rbf.unit = "error rate"


class MnistFewLabels:
    """4 vs 9 on the shared MNIST test images, 20 labels: SVC with K_breve vs plain RBF."""

    timeout = 600

    def setup(self):
        log_environment(type(self).__name__)
        from fastgssl.datasets import load_mnist_test
        from fastgssl.kernels import default_sigma

        try:
            X, y = load_mnist_test()
        except (FileNotFoundError, OSError):
            raise NotImplementedError("shared MNIST test images not found") from None
        mask = np.isin(y, [4, 9])
        X, y = X[mask], (y[mask] == 9).astype(int)
        perm = np.random.default_rng(0).permutation(len(y))
        n_test = int(0.3 * len(y))
        self.Xte, self.yte = X[perm[:n_test]], y[perm[:n_test]]
        self.Xtr, self.ytr = X[perm[n_test:]], y[perm[n_test:]]
        self.sigma = default_sigma(self.Xtr)
        r = np.random.default_rng(1)
        self.lab = np.r_[r.choice(np.flatnonzero(self.ytr == 0), 10, replace=False),
                         r.choice(np.flatnonzero(self.ytr == 1), 10, replace=False)]
        _warm()

    def track_accuracy_data_dependent(self):
        from sklearn.svm import SVC

        y_semi = np.full(len(self.ytr), -1)
        y_semi[self.lab] = self.ytr[self.lab]
        ddk = DataDependentKernel(eta=100.0, n_subsample=250, regularizer="L_norm", power=4,
                                  sigma=self.sigma, random_state=0).fit(self.Xtr, y_semi)
        svc = SVC(kernel=ddk.gram, C=10.0).fit(self.Xtr[self.lab], self.ytr[self.lab])
        return float(np.mean(svc.predict(self.Xte) == self.yte))

    track_accuracy_data_dependent.unit = "accuracy"

    def track_accuracy_rbf(self):
        from sklearn.svm import SVC

        svc = SVC(kernel="rbf", gamma=1.0 / (2.0 * self.sigma), C=10.0)
        svc.fit(self.Xtr[self.lab], self.ytr[self.lab])
        return float(np.mean(svc.predict(self.Xte) == self.yte))

    track_accuracy_rbf.unit = "accuracy"
