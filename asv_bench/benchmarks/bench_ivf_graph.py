"""The inverted-file kNN graph (IVFGraph, issue 34) against exact search and faiss-cpu's
IndexIVFFlat at a target recall; recall and stage times tracked."""

import warnings

import numpy as np

from fastgssl.graphs import IVFGraph, default_n_lists, knn_search

from . import log_environment

K = 10


def _mixture(n, d, seed=0):
    rng = np.random.default_rng(seed)
    means = rng.normal(size=(10, d))
    return (means[rng.integers(0, 10, n)] + rng.normal(size=(n, d))).astype(np.float32)


def _recall(exact, approx, step=50):
    rows = range(0, exact.shape[0], step)
    return float(np.mean([np.isin(approx[i], exact[i]).mean() for i in rows]))


class IVFGraph_n50000_d50:
    params = ([0.9, 0.95],)
    param_names = ["target_recall"]
    timeout = 600

    def setup(self, target_recall):
        log_environment(type(self).__name__)
        self.X = _mixture(50_000, 50)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            IVFGraph(K, random_state=0)(self.X[:5000])  # compile / load the disk cache
        self.exact = knn_search(self.X, K)[0]
        self.builder = IVFGraph(K, target_recall=target_recall, random_state=0)

    def time_ivf_graph(self, target_recall):
        self.builder(self.X)

    def time_exact_knn_search(self, target_recall):
        knn_search(self.X, K)

    def track_recall(self, target_recall):
        self.builder(self.X)
        return _recall(self.exact, self.builder.neighbors_)

    track_recall.unit = "recall@10"

    def track_scan_fraction(self, target_recall):
        self.builder(self.X)
        return self.builder.scan_fraction_

    track_scan_fraction.unit = "share of pairs"


class FaissIVFFlat_n50000_d50:
    """faiss-cpu IndexIVFFlat with IVFGraph's number of lists (skipped without faiss)."""

    params = ([32, 64],)
    param_names = ["nprobe"]
    timeout = 600

    def setup(self, nprobe):
        try:
            import faiss
        except ImportError:
            raise NotImplementedError("faiss-cpu is not installed") from None
        self.faiss = faiss
        self.X = _mixture(50_000, 50)
        self.exact = knn_search(self.X, K)[0]

    def _run(self, nprobe):
        faiss = self.faiss
        index = faiss.IndexIVFFlat(faiss.IndexFlatL2(50), 50, default_n_lists(len(self.X)))
        index.train(self.X)
        index.add(self.X)
        index.nprobe = nprobe
        return index.search(self.X, K + 1)[1]

    def time_ivfflat_train_add_search(self, nprobe):
        self._run(nprobe)

    def track_recall(self, nprobe):
        I = self._run(nprobe)
        n = I.shape[0]
        is_self = I == np.arange(n)[:, None]
        drop = np.where(is_self.any(axis=1), is_self.argmax(axis=1), K)
        keep = np.ones_like(is_self)
        keep[np.arange(n), drop] = False
        return _recall(self.exact, I[keep].reshape(n, K))

    track_recall.unit = "recall@10"
