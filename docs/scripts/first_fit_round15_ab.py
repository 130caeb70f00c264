"""A first PoissonLearning fit on a saved graph, this tree against another checkout (A/B).

The fifteenth round of issue 54 made the 10^6-point fit's passes cheaper (unit-Laplacian
products, int32 union-find and aggregates, the permuted matrix unsorted). On a VM whose
speed drifts by 20-40 % within minutes, only interleaved runs compare two trees: each
repeat runs one child process per tree, in turn, on the same graph and labels.

Each child: the Gaussian mixture of ``bench/bench_million.py`` (n points, 50 features, 10
classes, 10 labels per class, seed 0), the saved graph ``--graph`` (a CSR ``.npz`` over
those points: ``bench_million.py``'s ``IVFGraph``), a warm-up fit on the first 20,000
points' subgraph (compilation and the disk cache out of the timing), then one timed
``PoissonLearning(graph=W).fit(X, y)``: wall seconds of the fit and of its solve, the
iterations, the accuracy on the unlabeled points. One untimed child per tree runs first
(each checkout compiles its own Numba disk cache, some kernels only at 10^6 points).

Usage::

    git worktree add /tmp/base <revision>
    FASTGSSL_NUM_THREADS=2 python docs/scripts/first_fit_round15_ab.py \\
        --graph W.npz --other /tmp/base --repeats 3
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

CHILD = r"""
import json, sys, time, warnings
import numpy as np, scipy.sparse as sp
from fastgssl.datasets import hide_labels, make_gaussian_mixture
from fastgssl.models import PoissonLearning
W = sp.load_npz(sys.argv[1]).tocsr()
n = W.shape[0]
X, y = make_gaussian_mixture(n, 50, 10, 1.0, random_state=0)
X = X.astype(np.float32)
yt = hide_labels(y, 10, random_state=0)
m = min(n, 20000)
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    PoissonLearning(graph=W[:m][:, :m]).fit(X[:m], yt[:m])
t = time.perf_counter()
model = PoissonLearning(graph=W).fit(X, yt)
fit = time.perf_counter() - t
unl = yt == -1
print(json.dumps({"fit_s": fit, "solve_s": float(model.solver_info_.time),
                  "iterations": int(model.solver_info_.iterations.max()),
                  "accuracy": float((model.transduction_[unl] == y[unl]).mean())}))
"""


def run(tree, graph):
    env = dict(os.environ, PYTHONPATH=str(tree))
    out = subprocess.run([sys.executable, "-c", CHILD, str(graph)], env=env, check=True,
                         capture_output=True, text=True, cwd=str(tree))
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graph", required=True, type=Path)
    parser.add_argument("--other", required=True, type=Path, help="the other checkout")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    here = Path(__file__).resolve().parents[2]
    trees = {"this tree": here, "other": args.other.resolve()}
    results = {name: [] for name in trees}
    print(f"# {args.graph.name}; load {os.getloadavg()[0]:.2f}; "
          f"FASTGSSL_NUM_THREADS={os.environ.get('FASTGSSL_NUM_THREADS', '')}; "
          f"other = {trees['other']}", flush=True)
    for tree in trees.values():  # (untimed: each tree's Numba disk cache filled first)
        run(tree, args.graph)
    for rep in range(args.repeats):
        for name, tree in trees.items():
            r = run(tree, args.graph)
            results[name].append(r)
            print(f"repeat {rep}  {name:9s}  fit {r['fit_s']:6.2f} s  solve {r['solve_s']:6.2f} s"
                  f"  iterations {r['iterations']}  accuracy {r['accuracy']:.6f}", flush=True)
    for name, rs in results.items():
        fits = sorted(r["fit_s"] for r in rs)
        print(f"median fit, {name}: {fits[len(fits) // 2]:.2f} s (of {len(fits)})")
    print(f"load at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
