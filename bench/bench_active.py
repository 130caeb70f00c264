"""Graph active learning on MNIST (issue 42): accuracy curves and time per round.

Usage: python bench/bench_active.py [--draws 10] [--rounds 10] [--batch 10] [--n 10000]
       [--out bench/results/active_mnist.json] [--figure docs/images/active_mnist.png]
       python bench/bench_active.py --summarize bench/results/active_mnist.json

The shared MNIST test images (10,000 x 784, /work/shared/datasets), one kNN graph (k = 10,
Gaussian weights, fastgssl's builder) shared by every run, Poisson learning with uniform class
priors as the learner.
Each draw starts from one random label per class and asks ``rounds x batch`` labels:

- ours (:class:`fastgssl.active.ActiveLearner`): random, uncertainty (smallest margin), VOpt,
  Sigma-opt and model change, the variance criteria exact on 100 candidates preselected by a
  sketch, greedy batches by rank-one updates;
- graphlearning's ``active_learning.active_learner`` with ``var_opt``, ``sigma_opt`` and
  ``model_change`` on the 50 lowest eigenpairs of the same graph's normalized Laplacian
  (``C = diag(1 / (lambda + 1e-11))``, its examples' setting), ``policy="max"`` (the batch is
  the top 10 scores), candidates all unlabeled points, and the same learner on the same
  graph (an adapter fits fastgssl's PoissonLearning and returns its scores), so only the
  acquisition differs.

Accuracy is over the points unlabeled at that moment. Printed: mean +- std over draws after
0, 50 and 100 queries, the best acquisition minus random, paired t-tests (ours vs
graphlearning per criterion, over draws, at the last round) and seconds per round.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import time
import warnings

import numpy as np
from scipy import stats

from fastgssl.active import ActiveLearner, active_learning_loop
from fastgssl.datasets import load_mnist_test
from fastgssl.graphs import knn_graph
from fastgssl.models import PoissonLearning

OURS = ["random", "uncertainty", "vopt", "sigma_opt", "model_change"]
# MNIST's classes are balanced (within 1.1x): the learner is given uniform priors, its
# volume-constrained decision. Without them PoissonLearning decides by argmax p_c u_ic with p
# the labels' shares, which the queries unbalance (random sampling: 0.68 -> 0.54 accuracy
# on 2,000 digits after 30 labels; 0.66 -> 0.73 with the priors).
PRIORS = np.full(10, 0.1)
GL = {"vopt": "var_opt", "sigma_opt": "sigma_opt", "model_change": "model_change"}


class _GLModel:
    """graphlearning's model interface (``fit(ind, labels) -> u``, ``graph``) around
    fastgssl's learner on the same graph."""

    def __init__(self, gl, W, X, learner):
        self.graph = gl.graph(W)
        self.X, self.learner = X, learner

    def fit(self, ind, labels):
        y = np.full(self.X.shape[0], -1)
        y[ind] = labels
        self.learner.fit(self.X, y)
        return np.nan_to_num(self.learner.cv_state().f)


def run_gl(gl, W, X, y_true, start, evals, evecs, name, rounds, batch):
    learner = PoissonLearning(graph=W, class_priors=PRIORS)
    model = _GLModel(gl, W, X, learner)
    acq = getattr(gl.active_learning, GL[name])
    al = gl.active_learning.active_learner(model, acq, start.copy(), y_true[start].copy(),
                                           C=np.diag(1.0 / (evals + 1e-11)), V=evecs.copy())
    acc, times = [], []
    for _ in range(rounds):
        acc.append(_accuracy(learner, y_true, al.labeled_ind))
        t0 = time.perf_counter()
        q = al.select_queries(batch_size=batch)
        times.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        al.update(q, y_true[q])
        times[-1] += time.perf_counter() - t0  # the update refits the learner
    acc.append(_accuracy(learner, y_true, al.labeled_ind))
    return acc, times


def _accuracy(learner, y_true, labeled_ind):
    pred = learner.classes_[np.argmax(np.nan_to_num(learner.cv_state().f, nan=-np.inf),
                                      axis=1)]
    mask = np.ones(y_true.size, dtype=bool)
    mask[labeled_ind] = False
    return float(np.mean(pred[mask] == y_true[mask]))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--batch", type=int, default=10)
    parser.add_argument("--n", type=int, default=10000)
    parser.add_argument("--out", default="bench/results/active_mnist.json")
    parser.add_argument("--figure", default="docs/images/active_mnist.png")
    parser.add_argument("--no-graphlearning", action="store_true")
    parser.add_argument("--summarize", metavar="JSON",
                        help="only print the summary (and figure) of a saved run")
    args = parser.parse_args()
    if args.summarize:
        summarize(json.loads(pathlib.Path(args.summarize).read_text()), args.figure)
        return
    warnings.simplefilter("ignore")
    X, y_true = load_mnist_test()
    X, y_true = X[:args.n], y_true[:args.n]
    t0 = time.perf_counter()
    W = knn_graph(X, n_neighbors=10)
    print(f"graph: n={X.shape[0]}, nnz={W.nnz}, {time.perf_counter() - t0:.1f} s", flush=True)
    gl = None
    if not args.no_graphlearning:
        import graphlearning as gl

        t0 = time.perf_counter()
        evals, evecs = gl.graph(W).eigen_decomp(normalization="normalized", k=50)
        print(f"graphlearning eigenbasis (50): {time.perf_counter() - t0:.1f} s", flush=True)
    results = {"config": vars(args), "draws": []}
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    for draw in range(args.draws):
        rng = np.random.default_rng(draw)
        start = np.array([rng.choice(np.flatnonzero(y_true == c)) for c in range(10)])
        y0 = np.full(y_true.size, -1)
        y0[start] = y_true[start]
        record = {}
        for name in OURS:
            al = ActiveLearner(PoissonLearning(graph=W, class_priors=PRIORS), method=name,
                               batch_size=args.batch, random_state=draw)
            h = active_learning_loop(al, X, y0, y_true, args.rounds)
            record[name] = {"accuracy": h.accuracy(y_true).tolist(),
                            "times": h.round_times.tolist(),
                            "n_solved": h.n_solved.tolist()}
        if gl is not None:
            for name in GL:
                acc, times = run_gl(gl, W, X, y_true, start, evals, evecs, name, args.rounds,
                                    args.batch)
                record["gl_" + name] = {"accuracy": acc, "times": times}
        results["draws"].append(record)
        out.write_text(json.dumps(results, indent=1))
        print(f"draw {draw}: " + ", ".join(f"{k} {v['accuracy'][-1]:.3f}"
                                          for k, v in record.items()), flush=True)
    summarize(results, args.figure)


def summarize(results, figure=None):
    draws = results["draws"]
    names = list(draws[0])
    acc = {k: np.array([d[k]["accuracy"] for d in draws]) for k in names}
    times = {k: np.array([d[k]["times"] for d in draws]) for k in names}
    cfg = results["config"]
    labels = 10 + cfg["batch"] * np.arange(cfg["rounds"] + 1)
    half = cfg["rounds"] // 2
    print(f"\n{len(draws)} draws; accuracy on the unlabeled points (mean +- std), "
          f"seconds per round (round 1 / later rounds, mean and max)")
    print(f"{'method':>16} {'0 q':>13} {f'{labels[half] - 10} q':>13} "
          f"{f'{labels[-1] - 10} q':>13} {'t round 1':>10} {'t later':>8} {'max':>6}")
    for k in names:
        a, t = acc[k], times[k]
        print(f"{k:>16} {a[:, 0].mean():.3f}+-{a[:, 0].std():.3f} "
              f"{a[:, half].mean():.3f}+-{a[:, half].std():.3f} "
              f"{a[:, -1].mean():.3f}+-{a[:, -1].std():.3f} {t[:, 0].mean():10.2f} "
              f"{t[:, 1:].mean():8.2f} {t[:, 1:].max():6.2f}")
    best = max((k for k in names if k != "random" and not k.startswith("gl_")),
               key=lambda k: acc[k][:, -1].mean())
    gain = acc[best][:, -1] - acc["random"][:, -1]
    print(f"\nbest of ours ({best}) - random after {labels[-1] - 10} queries: "
          f"{100 * gain.mean():+.1f} points (paired t p = "
          f"{stats.ttest_rel(acc[best][:, -1], acc['random'][:, -1]).pvalue:.2g})")
    for k in GL:
        if "gl_" + k in acc and len(draws) > 1:
            d = acc[k][:, -1] - acc["gl_" + k][:, -1]
            r = stats.ttest_rel(acc[k][:, -1], acc["gl_" + k][:, -1])
            print(f"{k}: ours - graphlearning = {100 * d.mean():+.1f} points "
                  f"(t = {r.statistic:.2f}, p = {r.pvalue:.2g}, {len(draws)} draws)")
    if figure:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(7, 4.5))
        for k in names:
            m, s = acc[k].mean(axis=0), acc[k].std(axis=0)
            style = "--" if k.startswith("gl_") else "-"
            label = (f"graphlearning {k[3:]} (50 eigenpairs)" if k.startswith("gl_")
                     else f"fastgssl {k}")
            ax.plot(labels, m, style, marker="o", ms=3, label=label)
            ax.fill_between(labels, m - s, m + s, alpha=0.1)
        ax.set_xlabel("labeled points")
        ax.set_ylabel("accuracy on the unlabeled points")
        ax.set_title(f"MNIST (n = {cfg['n']}), Poisson learning, {len(draws)} draws")
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
        fig.tight_layout()
        pathlib.Path(figure).parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(figure, dpi=130)
        print(f"figure: {figure}")


if __name__ == "__main__":
    main()
