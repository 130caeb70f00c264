"""Exact kNN graphs (fastgssl.graphs) against scikit-learn, recall tracked; cold start."""

import subprocess
import sys

import numpy as np
from sklearn.neighbors import NearestNeighbors

from fastgssl.graphs import epsilon_graph, knn_graph, knn_search

from . import log_environment


def _mixture(n, d, seed=0):
    rng = np.random.default_rng(seed)
    means = rng.normal(size=(10, d))
    return means[rng.integers(0, 10, n)] + rng.normal(size=(n, d))


class KNNGraph:
    params = ([(10_000, 50), (10_000, 10), (100_000, 2)],)
    param_names = ["n_d"]
    timeout = 300

    def setup(self, n_d):
        log_environment(type(self).__name__)
        n, d = n_d
        self.X = _mixture(n, d)
        knn_graph(self.X[:2000], 10)  # JIT warm-up / cache load outside the timing
        self.algorithm = "kd_tree" if d <= 3 else "brute"

    def time_fastgssl_knn_graph(self, n_d):
        knn_graph(self.X, 10)

    def time_sklearn_kneighbors_graph(self, n_d):
        NearestNeighbors(n_neighbors=10, algorithm=self.algorithm).fit(self.X).kneighbors_graph(
            mode="distance")

    def track_recall_vs_sklearn(self, n_d):
        idx, _ = knn_search(self.X, 10)
        ref = NearestNeighbors(n_neighbors=10, algorithm=self.algorithm).fit(self.X)
        ref_idx = ref.kneighbors(return_distance=False)
        return float(np.mean([len(set(a) & set(b)) / 10 for a, b in zip(idx, ref_idx)]))

    track_recall_vs_sklearn.unit = "recall@10"


class EpsilonGraph_n5000_d10:
    def setup(self):
        log_environment(type(self).__name__)
        self.X = _mixture(5_000, 10)
        epsilon_graph(self.X[:500], 4.0)

    def time_epsilon_graph(self):
        epsilon_graph(self.X, 4.0)


class SparseKNN_n5000_d500:
    def setup(self):
        log_environment(type(self).__name__)
        import scipy.sparse as sp

        self.X = sp.random(5_000, 500, density=0.02, format="csr", random_state=0)
        knn_search(self.X[:300], 5)

    def time_knn_search_sparse(self):
        knn_search(self.X, 10)


class ColdStart:
    """First knn_graph call in a fresh process (Numba disk cache already populated)."""

    timeout = 300

    def setup(self):
        log_environment(type(self).__name__)
        knn_graph(_mixture(500, 10), 5)  # make sure the on-disk cache exists

    def time_first_knn_graph_fresh_process(self):
        subprocess.run(
            [sys.executable, "-c",
             "import numpy as np; from fastgssl.graphs import knn_graph; "
             "knn_graph(np.random.default_rng(0).normal(size=(2000, 10)), 10)"],
            check=True,
        )

    def time_import_fastgssl(self):
        subprocess.run([sys.executable, "-c", "import fastgssl"], check=True)
