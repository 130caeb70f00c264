"""ALGT (seed 003) robustness to k: test error of LapSVM vs ALGT-LapSVM on two moons.

Usage: python bench/bench_algt.py [--repeats 10] [--n 400]

The paper's experiment (its Fig. 3): two labeled points per class, error on the unlabeled
points as the neighbourhood size k grows, mean +- std over random draws, with the paper's
gamma_a = 1e-5, gamma_i = 1, gamma_x = 1 and hard weights.
"""

import argparse
import statistics
import time
import warnings

import numpy as np
from sklearn.datasets import make_moons

from fastgssl.models import ALGT, LapSVM


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--n", type=int, default=400)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    print(f"{'k':>4} {'LapSVM error':>16} {'ALGT error':>16} {'ALGT iters':>10} "
          f"{'time ratio':>10}")
    for k in (5, 10, 20, 30, 40):
        plain, algt, iters, ratio = [], [], [], []
        for seed in range(args.repeats):
            X, y = make_moons(args.n, noise=0.1, random_state=seed)
            rng = np.random.default_rng(seed)
            lab = np.concatenate(
                [rng.choice(np.flatnonzero(y == c), 2, replace=False) for c in (0, 1)])
            y_ssl = np.full(args.n, -1)
            y_ssl[lab] = y[lab]
            unl = y_ssl == -1
            base = LapSVM(sigma=0.5, gamma_a=1e-5, gamma_i=1.0, n_neighbors=k,
                          graph_weight="binary")
            t0 = time.perf_counter()
            plain.append(np.mean(base.fit(X, y_ssl).predict(X)[unl] != y[unl]))
            t1 = time.perf_counter()
            model = ALGT(base, n_neighbors=k).fit(X, y_ssl)
            t2 = time.perf_counter()
            algt.append(np.mean(model.predict(X)[unl] != y[unl]))
            iters.append(model.n_iter_)
            ratio.append((t2 - t1) / (t1 - t0))
        print(f"{k:>4} {np.mean(plain):8.3f} +- {np.std(plain):.3f} "
              f"{np.mean(algt):8.3f} +- {np.std(algt):.3f} {statistics.median(iters):>10} "
              f"{statistics.median(ratio):>10.1f}")


if __name__ == "__main__":
    main()
