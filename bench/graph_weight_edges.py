"""Why the self-tuned graph's mean join helps on MNIST and hurts on make_classification (issue 36).

For each data set of ``bench/bench_graph_weight.py``, on the exact 10-NN lists: the share of
one-sided list entries (i lists j, j does not list i), the share of same-class pairs among
mutual and one-sided entries and by neighbour rank, the hubness (coefficient of variation of
the in-degree, share of points no one lists) and the distance contrast ``d_1 / d_k`` (median
over points). graphlearning's ``(W + W^T) / 2`` halves exactly the one-sided entries; the
self-tuned constant 4 sets the weight ratio ``exp(4 (1 - d_1^2 / d_k^2))`` along a list.

Usage::

    OPENBLAS_NUM_THREADS=1 python bench/graph_weight_edges.py --cases goal mnist letter
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent))

K = 10


def edge_report(name, X, y):
    from fastgssl.graphs._knn import knn_search

    idx, sq = knn_search(X, K)
    n = idx.shape[0]
    B = sp.csr_matrix((np.ones(n * K), idx.ravel(), np.arange(0, n * K + 1, K)), shape=(n, n))
    rows = np.repeat(np.arange(n), K)
    mutual = np.asarray(B.T[rows, idx.ravel()]).ravel() > 0
    same = (y[rows] == y[idx.ravel()])
    indeg = np.asarray(B.sum(axis=0)).ravel()
    pos = sq[:, -1] > 0
    contrast = np.median(np.sqrt(sq[pos, 0] / sq[pos, -1]))
    by_rank = same.reshape(n, K).mean(axis=0)
    print(f"{name} (n={n}): one-sided {1 - mutual.mean():.3f}; same class: mutual "
          f"{same[mutual].mean():.3f}, one-sided {same[~mutual].mean():.3f}; by rank 1 / 5 / 10: "
          f"{by_rank[0]:.3f} / {by_rank[4]:.3f} / {by_rank[-1]:.3f}; in-degree cv "
          f"{indeg.std() / indeg.mean():.2f}, listed by no one {np.mean(indeg == 0):.3f}; "
          f"median d_1 / d_k {contrast:.3f}")


def main():
    from bench_low_label import load_case
    from sklearn.datasets import make_classification

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", nargs="+", default=["goal", "classification", "mnist",
                                                      "letter"])
    args = parser.parse_args()
    for key in args.cases:
        if key in ("mnist", "letter"):
            _, X, y = load_case(key)
        else:
            n_s = 20_000 if key == "classification" else 8_000
            X, y = make_classification(n_samples=n_s, n_features=30, random_state=0)
        edge_report(key, np.asarray(X, dtype=np.float64), np.asarray(y))
    return 0


if __name__ == "__main__":
    sys.exit(main())
