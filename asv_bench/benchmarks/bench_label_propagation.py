"""Label propagation (seed 004): end-to-end fits, induction, subset approximations.

Workload: 10-class Gaussian mixture in d = 50 (class means ~ N(0, 0.5^2 I), unit noise), 10
labels per class, as in the shared baseline script. ``time_*`` include the kNN graph (end to
end, as a user pays it); ``track_*`` record the accuracy on the unlabeled points so a speed-up
that hurts accuracy shows. scikit-learn's LabelSpreading(kernel="knn") is the peer.
"""

import warnings

import numpy as np

from fastgssl.datasets import hide_labels, make_gaussian_mixture

from . import log_environment


def gaussian_mixture(n, d=50, n_classes=10, sep=0.5, seed=0):
    return make_gaussian_mixture(n, d, n_classes, sep, random_state=seed)

def few_labels(y, per_class=10, seed=0):
    return hide_labels(y, per_class, random_state=seed)

def accuracy(pred, y, y_train):
    unl = y_train == -1
    return float(np.mean(pred[unl] == y[unl]))


class FullSolve:
    params = ([10_000, 20_000], ["LabelPropagation", "LocalGlobalConsistency"])
    param_names = ["n", "estimator"]
    timeout = 600

    def setup(self, n, estimator):
        log_environment(type(self).__name__)
        import fastgssl.models as models

        self.X, self.y = gaussian_mixture(n)
        self.y_train = few_labels(self.y)
        self.Est = getattr(models, estimator)
        self.model = self.Est(n_neighbors=10).fit(self.X, self.y_train)  # warms the JIT
        self.X_new, _ = gaussian_mixture(1_000, seed=1)

    def time_fit(self, n, estimator):
        self.Est(n_neighbors=10).fit(self.X, self.y_train)

    def time_predict_1000_new_points(self, n, estimator):
        self.model.predict(self.X_new)

    def track_accuracy(self, n, estimator):
        return accuracy(self.model.transduction_, self.y, self.y_train)

    track_accuracy.unit = "accuracy"


class SklearnLabelSpreading:
    params = [10_000]
    param_names = ["n"]
    timeout = 600

    def setup(self, n):
        log_environment(type(self).__name__)
        from sklearn.semi_supervised import LabelSpreading

        self.X, self.y = gaussian_mixture(n)
        self.y_train = few_labels(self.y)
        self.Est = LabelSpreading
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.model = LabelSpreading(kernel="knn", n_neighbors=10).fit(self.X, self.y_train)

    def time_fit(self, n):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.Est(kernel="knn", n_neighbors=10).fit(self.X, self.y_train)

    def track_accuracy(self, n):
        return accuracy(self.model.transduction_, self.y, self.y_train)

    track_accuracy.unit = "accuracy"


class SubsetApproximation_n10000:
    """SS_hat / SS_RR (seed 004 section 5) on a fixed graph: accuracy and time against m."""

    params = ([300, 1_000, 2_000], [True, False])
    param_names = ["n_landmarks", "drop_rr"]
    timeout = 600

    def setup(self, m, drop_rr):
        log_environment(type(self).__name__)
        from fastgssl.graphs import knn_graph
        from fastgssl.models import LabelPropagation

        self.X, self.y = gaussian_mixture(10_000)
        self.y_train = few_labels(self.y)
        self.W = knn_graph(self.X, 10, weight="gaussian")
        self.kw = dict(graph=self.W, n_neighbors=10, n_landmarks=m, drop_rr=drop_rr,
                       random_state=0)
        self.model = LabelPropagation(**self.kw).fit(self.X, self.y_train)

    def time_fit_on_graph(self, m, drop_rr):
        from fastgssl.models import LabelPropagation

        LabelPropagation(**self.kw).fit(self.X, self.y_train)

    def track_accuracy(self, m, drop_rr):
        return accuracy(self.model.transduction_, self.y, self.y_train)

    track_accuracy.unit = "accuracy"
