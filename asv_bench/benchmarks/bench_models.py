"""Kernel machines: KRR / SVM / LapRLS / LapSVM fits (dense and Nystrom) against scikit-learn.

``setup`` builds the data and warms the Numba kernels (RBF pass, losses, kNN search) so the
``time_*`` figures exclude compilation; ``track_*`` record test accuracy / R^2 so a speed-up
that hurts the fit shows.
"""

import numpy as np

from . import log_environment


def _regression(n, d=20, seed=0):
    from sklearn.datasets import make_regression

    X, y = make_regression(n_samples=n + 500, n_features=d, noise=10.0, random_state=seed)
    return X[:n], y[:n], X[n:], y[n:]


def _classification(n, d=20, seed=0):
    from sklearn.datasets import make_classification

    X, y = make_classification(n_samples=n + 500, n_features=d, random_state=seed)
    return X[:n], y[:n], X[n:], y[n:]


def _warm():
    from fastgssl.models import KRR, SVM, LapSVM

    X, y, _, _ = _classification(60, d=5)
    KRR(lam=1e-2).fit(X, y.astype(float))
    SVM(lam=1e-2).fit(X, y)
    ys = np.where(np.arange(60) % 3 == 0, y, -1)
    LapSVM(n_neighbors=3, backend="nystrom", n_components=10).fit(X, ys)


class KRRFit:
    """KRR fit against scikit-learn's KernelRidge (alpha = n lam, gamma = 1 / (2 sigma))."""

    params = ([1600, 6400], ["fastgssl-dense", "fastgssl-nystrom", "sklearn"])
    param_names = ["n", "implementation"]
    timeout = 300

    def setup(self, n, impl):
        log_environment(type(self).__name__)
        from sklearn.kernel_ridge import KernelRidge

        from fastgssl.models import KRR

        _warm()
        self.X, self.y, self.Xte, self.yte = _regression(n)
        lam, sigma = 1e-2 / n, 50.0
        if impl == "sklearn":
            self.make = lambda: KernelRidge(alpha=n * lam, kernel="rbf", gamma=1 / (2 * sigma))
        else:
            backend = impl.split("-")[1]
            self.make = lambda: KRR(lam=lam, sigma=sigma, backend=backend, n_components=300,
                                    random_state=0)

    def time_fit(self, n, impl):
        self.make().fit(self.X, self.y)

    def track_test_r2(self, n, impl):
        return self.make().fit(self.X, self.y).score(self.Xte, self.yte)


class SVMFit:
    """Huber-hinge SVM (Newton with line search) against SVC with C = 1 / (2 n lam)."""

    params = ([1000, 2000], ["fastgssl-dense", "fastgssl-nystrom", "sklearn"])
    param_names = ["n", "implementation"]
    timeout = 300

    def setup(self, n, impl):
        log_environment(type(self).__name__)
        from sklearn.svm import SVC

        from fastgssl.models import SVM

        _warm()
        self.X, self.y, self.Xte, self.yte = _classification(n)
        lam, sigma = 1e-4, 20.0
        if impl == "sklearn":
            self.make = lambda: SVC(C=1 / (2 * n * lam), kernel="rbf", gamma=1 / (2 * sigma))
        else:
            backend = impl.split("-")[1]
            self.make = lambda: SVM(lam=lam, sigma=sigma, backend=backend, n_components=300,
                                    random_state=0)

    def time_fit(self, n, impl):
        self.make().fit(self.X, self.y)

    def track_test_accuracy(self, n, impl):
        return self.make().fit(self.X, self.y).score(self.Xte, self.yte)


class LapSVMFit:
    """Semi-supervised fits, 2 % labeled: dense LapSVM / LapRLS and the nystrom LapSVM."""

    params = (["LapSVM-dense-n2000", "LapRLS-dense-n2000", "LapSVM-nystrom-n20000"],)
    param_names = ["model"]
    timeout = 600

    def setup(self, model):
        log_environment(type(self).__name__)
        from fastgssl.models import LapRLS, LapSVM

        _warm()
        name, backend, size = model.split("-")
        n = int(size[1:])
        rng = np.random.default_rng(0)
        means = rng.normal(size=(2, 10))
        y = rng.integers(0, 2, n)
        X = means[y] + rng.normal(size=(n, 10))
        self.X, self.y = X, y
        self.ys = np.where(rng.random(n) < 0.02, y, -1)
        est = {"LapSVM": LapSVM, "LapRLS": LapRLS}[name]
        # the graph is built once here: the benchmark times the learner, not the kNN search
        from fastgssl.graphs import knn_graph

        self.W = knn_graph(X, 10, weight="gaussian")
        self.make = lambda: est(sigma=10.0, gamma_a=1e-4, gamma_i=1.0, graph=self.W,
                                backend=backend, n_components=300, random_state=0)

    def time_fit_given_graph(self, model):
        self.make().fit(self.X, self.ys)

    def track_accuracy_all_points(self, model):
        return self.make().fit(self.X, self.ys).score(self.X, self.y)
