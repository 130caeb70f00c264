"""Graph propagation at very low label rates (issue 24): Poisson learning and Poisson MBO.

A small subset of ``bench/bench_low_label.py`` that asv can track across commits:

- ``LowLabelMNIST_n10000_k10``: the shared MNIST test images (10,000 x 784, pixels in [0, 1]),
  one Gaussian 10-NN graph built once in ``setup_cache`` (``knn_graph(X, 10,
  weight="gaussian")``, the estimators' default graph) and passed as ``graph=W``; one label
  draw (``hide_labels(..., random_state=0)``) at 1 and 10 labels per class. ``time_fit`` is
  the solve on that graph (``PoissonLearning()``, ``PoissonMBO`` with the true class shares
  as priors); ``track_accuracy`` the accuracy on the unlabeled points.
- ``LowLabelMNISTGraphlearning_n10000_k10``: graphlearning's ``gl.ssl.poisson`` and
  ``gl.ssl.poisson_mbo`` (same priors) on the same graph and draws, the peer of the same run.
- ``LowLabelClassification_n8000_labels80``: issue 24's goal case, ``make_classification(
  n_samples=8000, n_features=30, random_state=0)`` with 80 random labels; ``PoissonLearning()``
  at its defaults (end to end, its own graph) should keep ``track_accuracy`` >= 0.68, and
  ``LabelPropagation()`` should keep ``track_class_share_warning`` at 1 (it warns).

MNIST classes skip (``NotImplementedError``) when the shared datasets are not found; the
graphlearning class also when graphlearning is not installed (``pip install -e '.[bench]'``).
"""

import warnings

import numpy as np

from . import log_environment

K = 10


def _mnist():
    from fastgssl.datasets import load_mnist_test

    try:
        return load_mnist_test()
    except (FileNotFoundError, OSError):
        return None


def _mnist_graph():
    """``(W, class shares)`` of the shared MNIST images, or None when they are absent."""
    data = _mnist()
    if data is None:
        return None
    from fastgssl.graphs import knn_graph

    X, y = data
    return knn_graph(X, K, weight="gaussian"), np.bincount(y) / y.size


def _warm():
    """Compile the graph and solver kernels so that ``time_*`` excludes compilation."""
    from fastgssl.datasets import hide_labels, make_gaussian_mixture
    from fastgssl.models import PoissonLearning, PoissonMBO

    X, y = make_gaussian_mixture(3_000, 20, 5, sep=1.0, random_state=0)
    y_train = hide_labels(y, 2, random_state=0)
    W = PoissonLearning(n_neighbors=K).fit(X, y_train).graph_
    PoissonMBO(np.full(5, 0.2), graph=W, n_neighbors=K).fit(X, y_train)


def _accuracy(pred, y, y_train):
    unl = y_train == -1
    return float(np.mean(np.asarray(pred)[unl] == y[unl]))


class LowLabelMNIST_n10000_k10:
    """fastgssl's Poisson learning and Poisson MBO on a shared MNIST graph."""

    params = (["PoissonLearning", "PoissonMBO"], [1, 10])
    param_names = ["estimator", "labels_per_class"]
    timeout = 600
    number, repeat, warmup_time = 1, 3, 0  # setup warmed the JIT and fitted once

    def setup_cache(self):
        return _mnist_graph()  # None: setup skips every benchmark

    def setup(self, cache, estimator, per_class):
        if cache is None:
            raise NotImplementedError("shared MNIST test images not found")
        log_environment(type(self).__name__)
        import fastgssl.models as models
        from fastgssl.datasets import hide_labels

        _warm()
        self.W, priors = cache
        self.X, self.y = _mnist()
        self.y_train = hide_labels(self.y, per_class, random_state=0)
        params = {"graph": self.W, "n_neighbors": K}
        if estimator == "PoissonMBO":
            params["class_priors"] = priors
        self.make = lambda: getattr(models, estimator)(**params)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.model = self.make().fit(self.X, self.y_train)

    def time_fit(self, cache, estimator, per_class):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.make().fit(self.X, self.y_train)

    def track_accuracy(self, cache, estimator, per_class):
        return _accuracy(self.model.transduction_, self.y, self.y_train)

    track_accuracy.unit = "accuracy"


class LowLabelMNISTGraphlearning_n10000_k10:
    """graphlearning's Poisson learning and Poisson MBO on the same graph, priors and draws."""

    params = (["poisson", "poisson_mbo"], [1, 10])
    param_names = ["method", "labels_per_class"]
    timeout = 600
    number, repeat, warmup_time = 1, 3, 0  # gl.ssl.poisson_mbo takes 5-15 s per fit

    def setup_cache(self):
        try:
            import graphlearning  # noqa: F401
        except ImportError:
            return None
        return _mnist_graph()

    def setup(self, cache, method, per_class):
        if cache is None:
            raise NotImplementedError("graphlearning or the shared MNIST images not found")
        log_environment(type(self).__name__)
        import graphlearning as gl

        from fastgssl.datasets import hide_labels

        self.W, priors = cache
        _, self.y = _mnist()
        self.y_train = hide_labels(self.y, per_class, random_state=0)
        self.lab = np.flatnonzero(self.y_train >= 0)
        if method == "poisson":
            self.make = lambda: gl.ssl.poisson(self.W)
        else:
            self.make = lambda: gl.ssl.poisson_mbo(self.W, class_priors=priors)
        self.pred = self.make().fit_predict(self.lab, self.y_train[self.lab])

    def time_fit(self, cache, method, per_class):
        self.make().fit_predict(self.lab, self.y_train[self.lab])

    def track_accuracy(self, cache, method, per_class):
        return _accuracy(self.pred, self.y, self.y_train)

    track_accuracy.unit = "accuracy"


class LowLabelClassification_n8000_labels80:
    """Issue 24's goal case, end to end at the defaults (each fit builds its own graph)."""

    params = ["PoissonLearning", "LabelPropagation"]
    param_names = ["estimator"]
    timeout = 600

    def setup(self, estimator):
        log_environment(type(self).__name__)
        from sklearn.datasets import make_classification

        import fastgssl.models as models
        from fastgssl import ClassShareWarning

        _warm()
        self.X, self.y = make_classification(n_samples=8_000, n_features=30, random_state=0)
        rng = np.random.default_rng(0)
        lab = rng.choice(self.y.size, 80, replace=False)
        self.y_train = np.full(self.y.size, -1)
        self.y_train[lab] = self.y[lab]
        self.Est = getattr(models, estimator)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ClassShareWarning)
            self.model = self.Est().fit(self.X, self.y_train)
        self.warned = any(issubclass(w.category, ClassShareWarning) for w in caught)

    def time_fit(self, estimator):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.Est().fit(self.X, self.y_train)

    def track_accuracy(self, estimator):
        return _accuracy(self.model.transduction_, self.y, self.y_train)

    track_accuracy.unit = "accuracy"

    def track_class_share_warning(self, estimator):
        return float(self.warned)

    track_class_share_warning.unit = "warned (1) or not (0)"
