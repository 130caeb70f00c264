"""Graphs at the machine's limit (issue 25): exact kNN on the GEMM path against scikit-learn
brute force and the machine's sgemm rate, the approximate graph's recall and speed, the
end-to-end 10^6-point run (scaled down), the data-dependent kernel given its graph.

Full-size versions: ``bench/bench_knn_gemm.py``, ``bench/bench_approx_graph.py``,
``bench/bench_million.py``, ``bench/bench_data_dependent_kernel.py --given-graph``.
"""

import resource
import time

import numpy as np
from sklearn.neighbors import NearestNeighbors

from fastgssl.datasets import make_gaussian_mixture
from fastgssl.graphs import knn_search

from . import log_environment

K = 10


class ExactKNNGemm:
    """float32 / float64 input, 20,000 x 50 and 8,000 x 784 (MNIST's width)."""

    params = ([(20_000, 50), (8_000, 784)], ["float64", "float32"])
    param_names = ["n_d", "dtype"]
    timeout = 600

    def setup(self, n_d, dtype):
        log_environment(type(self).__name__)
        n, d = n_d
        self.X = np.random.default_rng(0).normal(size=(n, d)).astype(dtype)
        knn_search(self.X[:2000], K)  # JIT / disk cache outside the timing

    def time_fastgssl_knn_search(self, n_d, dtype):
        knn_search(self.X, K)

    def time_sklearn_brute(self, n_d, dtype):
        NearestNeighbors(n_neighbors=K, algorithm="brute").fit(self.X).kneighbors()

    def track_fraction_of_gemm_bound(self, n_d, dtype):
        """(2 n^2 (d + 1) flops, the full augmented product, at this run's 2048^3 sgemm rate)
        / our time (the symmetric self-search forms half of it)."""
        a = np.random.default_rng(1).normal(size=(2048, 2048)).astype(np.float32)
        t0 = time.perf_counter()
        a @ a
        rate = 2.0 * 2048 ** 3 / (time.perf_counter() - t0)
        t0 = time.perf_counter()
        knn_search(self.X, K)
        n, d = n_d
        return 2.0 * n * n * (d + 1) / rate / (time.perf_counter() - t0)

    track_fraction_of_gemm_bound.unit = "fraction"

    def track_same_neighbours_as_sklearn(self, n_d, dtype):
        idx, _ = knn_search(self.X, K)
        ref = NearestNeighbors(n_neighbors=K, algorithm="brute").fit(
            self.X.astype(np.float64)).kneighbors(return_distance=False)
        return float((idx == ref).all(axis=1).mean())

    track_same_neighbours_as_sklearn.unit = "fraction of lists"


class ApproxGraph_n30000_d50:
    """NNDescentGraph: time against the exact graph, recall against exact lists."""

    timeout = 900

    def setup(self):
        log_environment(type(self).__name__)
        from fastgssl.graphs import NNDescentGraph

        self.X = make_gaussian_mixture(30_000, 50, 10, 1.0, random_state=0)[0].astype(
            np.float32)
        NNDescentGraph(K, recall_sample=0, random_state=0)(self.X[:3000])  # JIT
        knn_search(self.X[:2000], K)
        self.exact = knn_search(self.X, K)[0]

    def time_nndescent_graph(self):
        from fastgssl.graphs import NNDescentGraph

        NNDescentGraph(K, random_state=0, min_recall=None)(self.X)

    def time_exact_knn_search(self):
        knn_search(self.X, K)

    def track_recall(self):
        from fastgssl.graphs import NNDescentGraph

        b = NNDescentGraph(K, random_state=0, min_recall=None)
        b(self.X)
        rows = np.arange(0, self.X.shape[0], 10)
        return float(np.mean([np.isin(b.neighbors_[i], self.exact[i]).mean() for i in rows]))

    track_recall.unit = "recall@10"


class EndToEnd_n100000:
    """bench_million.py's pipeline at 10^5 points: approximate graph + label spreading."""

    timeout = 900

    def setup(self):
        log_environment(type(self).__name__)
        from fastgssl.datasets import hide_labels
        from fastgssl.graphs import NNDescentGraph

        X, y = make_gaussian_mixture(100_000, 50, 10, 1.0, random_state=0)
        self.X, self.y = X.astype(np.float32), y
        self.y_train = hide_labels(y, 10, random_state=0)
        NNDescentGraph(K, recall_sample=0, random_state=0)(self.X[:3000])

    def time_graph_and_label_spreading(self):
        from fastgssl.graphs import NNDescentGraph
        from fastgssl.models import LocalGlobalConsistency

        W = NNDescentGraph(K, random_state=0, min_recall=None)(self.X)
        LocalGlobalConsistency(0.99, graph=W).fit(self.X, self.y_train)

    def track_peak_rss_mb(self):
        self.time_graph_and_label_spreading()
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0

    track_peak_rss_mb.unit = "MB"


class DataDependentKernelGivenGraph:
    """Fit with the kNN graph passed in (graph=W): the kernel's own growth with n."""

    params = [16_000, 64_000]
    param_names = ["n"]
    timeout = 900

    def setup(self, n):
        log_environment(type(self).__name__)
        from fastgssl.graphs import knn_graph
        from fastgssl.kernels import DataDependentKernel

        self.X = make_gaussian_mixture(n, 50, 10, 0.5, random_state=0)[0]
        self.W = knn_graph(self.X, 5)
        DataDependentKernel(n_subsample=20, sigma=50.0).fit(self.X[:2500])

    def time_fit_given_graph(self, n):
        from fastgssl.kernels import DataDependentKernel

        DataDependentKernel(graph=self.W, sigma=50.0, random_state=0).fit(self.X)
