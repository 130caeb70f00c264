"""Graph active learning on MNIST (issue 42): accuracy curves and time per round.

Usage: python bench/bench_active.py [--draws 10] [--rounds 10] [--batch 10] [--n 10000]
       [--weight binary] [--learner poisson] [--methods random,uncertainty,...]
       [--gl vopt,sigma_opt,model_change] [--gl-batch B] [--n-eigenpairs K]
       [--out docs/scripts/active_mnist.json] [--figure docs/images/active_mnist.png]
       python bench/bench_active.py --summarize docs/scripts/active_mnist.json [more.json ...]
       python bench/bench_active.py --vopt-check --n 5000 --draws 10 --out FILE.json

Several runs on the same graph (same --n, --weight, --learner: the same starting labels per
draw) are summarized together, curves taken every 10 labels, paired by draw over the draws
all of them completed (e.g. sequential queries, ``--batch 1 --rounds 100``, beside batches).

The shared MNIST test images (the first n of 10,000 x 784, /work/shared/datasets), one kNN
graph (k = 10, fastgssl's builder, ``--weight``: binary by default, or graphlearning's
self-tuned Gaussian) shared by every run, Poisson learning with uniform class priors (or
Laplace learning, ``--learner laplace``) as the learner.
Each draw starts from one random label per class and asks ``rounds x batch`` labels:

- ours (:class:`fastgssl.active.ActiveLearner`): random, uncertainty (smallest margin), VOpt,
  Sigma-opt and model change, the variance criteria exact on 100 candidates preselected by a
  sketch, greedy batches by rank-one updates (``--n-eigenpairs K``: instead, on every
  unlabeled point, graphlearning's approximation of the same model, the prior truncated to K
  eigenpairs: ``ActiveLearner(n_eigenpairs=K)``);
- graphlearning's ``active_learning.active_learner`` with ``var_opt``, ``sigma_opt`` and
  ``model_change`` on the 50 lowest eigenpairs of the same graph's normalized Laplacian
  (``C = diag(1 / (lambda + 1e-11))``, its examples' setting), ``policy="max"`` (the batch is
  the top ``--gl-batch`` scores; ``--gl-batch 1`` is its papers' sequential setting, with
  ``rounds x batch`` single queries), candidates all unlabeled points, and the same learner on
  the same graph (an adapter fits fastgssl's learner and returns its scores), so only the
  acquisition differs. ``uncertainty`` there is its ``unc_sampling`` (smallest margin).

``--vopt-check``: 100 sequential VOpt picks per draw, exact on every unlabeled point (the
dense posterior covariance, so only for n of a few thousand) against graphlearning's
50-eigenpair ``var_opt`` (sequential, every unlabeled point), the learner's accuracy after 0,
50 and 100 picks, and the picks' degrees (no learner fit between picks: VOpt does not read
the labels' values).

Accuracy is over the points unlabeled at that moment. Printed: mean +- std over draws after
0, half and all queries, the best acquisition minus random, paired t-tests (ours vs
graphlearning per criterion, over draws, at the last round), wall and CPU seconds per round
(CPU: ``time.process_time``, all threads) and the load average at the start and the end.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import pathlib
import subprocess
import sys
import time
import warnings

import numpy as np
from scipy import stats

from fastgssl.active import ActiveLearner, active_learning_loop
from fastgssl.datasets import load_mnist_test
from fastgssl.graphs import knn_graph
from fastgssl.models import LabelPropagation, PoissonLearning

OURS = ["random", "uncertainty", "vopt", "sigma_opt", "model_change"]
# MNIST's classes are balanced (within 1.1x): the learner is given uniform priors, its
# volume-constrained decision. Without them PoissonLearning decides by argmax p_c u_ic with p
# the labels' shares, which the queries unbalance (random sampling: 0.68 -> 0.54 accuracy
# on 2,000 digits after 30 labels; 0.66 -> 0.73 with the priors).
PRIORS = np.full(10, 0.1)
GL = {"vopt": "var_opt", "sigma_opt": "sigma_opt", "model_change": "model_change",
      "uncertainty": "unc_sampling"}


def make_learner(name, W):
    """The learner on the shared graph: Poisson learning with uniform priors, or Laplace
    learning (the harmonic solution) with class mass normalization."""
    if name == "poisson":
        return PoissonLearning(graph=W, class_priors=PRIORS)
    return LabelPropagation(graph=W, class_mass_normalization=True)


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


def run_gl(gl, W, X, y_true, start, evals, evecs, name, args):
    """graphlearning's active learner; accuracy recorded every ``args.batch`` labels (as
    ours) whatever its own batch size, times per ``args.batch`` labels."""
    learner = make_learner(args.learner, W)
    model = _GLModel(gl, W, X, learner)
    acq = getattr(gl.active_learning, GL[name])
    kw = ({} if name == "uncertainty" else
          dict(C=np.diag(1.0 / (evals + 1e-11)), V=evecs.copy()))
    al = gl.active_learning.active_learner(model, acq, start.copy(), y_true[start].copy(),
                                           **kw)
    gl_batch = args.gl_batch or args.batch
    acc, times, cpu = [], [], []
    for _ in range(args.rounds):
        acc.append(_accuracy(learner, y_true, al.labeled_ind))
        t0, c0 = time.perf_counter(), time.process_time()
        for _ in range(args.batch // gl_batch):
            q = al.select_queries(batch_size=gl_batch)
            al.update(q, y_true[q])  # (the update refits the learner)
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    acc.append(_accuracy(learner, y_true, al.labeled_ind))
    return {"accuracy": acc, "times": times, "cpu_times": cpu}


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
    parser.add_argument("--weight", default="binary",
                        help="knn_graph weight (binary, self_tuned, gaussian)")
    parser.add_argument("--learner", default="poisson", choices=["poisson", "laplace"])
    parser.add_argument("--methods", default=",".join(OURS))
    parser.add_argument("--gl", default="vopt,sigma_opt,model_change",
                        help="graphlearning criteria to run ('' for none)")
    parser.add_argument("--n-candidates", type=int, default=100,
                        help="ActiveLearner's n_candidates (exact criteria on this many)")
    parser.add_argument("--n-eigenpairs", type=int, default=None,
                        help="ActiveLearner's n_eigenpairs (truncated model; default exact)")
    parser.add_argument("--gl-batch", type=int, default=None,
                        help="graphlearning's batch size (default: --batch)")
    parser.add_argument("--out", default="docs/scripts/active_mnist.json")
    parser.add_argument("--figure", default="docs/images/active_mnist.png")
    parser.add_argument("--vopt-check", action="store_true",
                        help="exact VOpt on every point against graphlearning's, sequential")
    parser.add_argument("--summarize", metavar="JSON", nargs="+",
                        help="only print the summary (and figure) of saved runs")
    args = parser.parse_args()
    if args.summarize and args.vopt_check:
        summarize_vopt_check(json.loads(pathlib.Path(args.summarize[0]).read_text()))
        return
    if args.summarize:
        summarize(merge_runs([json.loads(pathlib.Path(f).read_text())
                              for f in args.summarize]), args.figure)
        return
    warnings.simplefilter("ignore")
    X, y_true = load_mnist_test()
    X, y_true = X[:args.n], y_true[:args.n]
    t0 = time.perf_counter()
    W = knn_graph(X, n_neighbors=10, weight=args.weight)
    print(f"graph: n={X.shape[0]}, nnz={W.nnz}, {time.perf_counter() - t0:.1f} s", flush=True)
    if args.vopt_check:
        vopt_check(X, y_true, W, args)
        return
    methods = [m for m in args.methods.split(",") if m]
    gl_methods = [m for m in args.gl.split(",") if m]
    gl = None
    if gl_methods:
        import graphlearning as gl

        t0 = time.perf_counter()
        evals, evecs = gl.graph(W).eigen_decomp(normalization="normalized", k=50)
        print(f"graphlearning eigenbasis (50): {time.perf_counter() - t0:.1f} s", flush=True)
    results = {"config": vars(args), **_provenance(), "load_start": os.getloadavg(),
               "draws": []}
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    for draw in range(args.draws):
        start = _start(y_true, draw)
        y0 = np.full(y_true.size, -1)
        y0[start] = y_true[start]
        record = {}
        for name in methods:
            al = ActiveLearner(make_learner(args.learner, W), criterion=name,
                               batch_size=args.batch, n_candidates=args.n_candidates,
                               n_eigenpairs=args.n_eigenpairs, random_state=draw)
            h = active_learning_loop(al, X, y0, y_true, args.rounds)
            record[name] = {"accuracy": h.accuracy(y_true).tolist(),
                            "times": h.round_times.tolist(),
                            "cpu_times": h.round_cpu_times.tolist(),
                            "n_solved": h.n_solved.tolist()}
        for name in gl_methods:
            record["gl_" + name] = run_gl(gl, W, X, y_true, start, evals, evecs, name, args)
        results["draws"].append(record)
        results["load_end"] = os.getloadavg()
        out.write_text(json.dumps(results, indent=1))
        print(f"draw {draw}: " + ", ".join(f"{k} {v['accuracy'][-1]:.3f}"
                                          for k, v in record.items()), flush=True)
    summarize(results, args.figure)


def _provenance():
    """Command, commit, date and thread count of a run (written into its JSON)."""
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                                check=False).stdout.strip()
    except OSError:
        commit = None
    return {"command": "python " + " ".join(sys.argv), "commit": commit,
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "threads": os.environ.get("FASTGSSL_NUM_THREADS")}


def _start(y_true, draw):
    rng = np.random.default_rng(draw)
    return np.array([rng.choice(np.flatnonzero(y_true == c)) for c in range(10)])


def _exact_vopt_picks(W, start, n_picks, tau=1e-6, gamma2=0.01):
    """Sequential exact VOpt on every unlabeled point from the dense C_S (Cholesky
    inverse, rank-one updates in place)."""
    import scipy.linalg as sl
    from scipy.linalg.blas import dger

    from fastgssl.regularizers import laplacian

    n = W.shape[0]
    P = laplacian(W, kind="L_norm").toarray()
    P[np.diag_indices(n)] += tau
    P[start, start] += 1.0 / gamma2
    c, _ = sl.lapack.dpotrf(P, lower=1, overwrite_a=1)
    C, _ = sl.lapack.dpotri(c, lower=1, overwrite_c=1)
    C = np.tril(C)
    C = np.asfortranarray(C + np.tril(C, -1).T)
    labeled = np.zeros(n, dtype=bool)
    labeled[start] = True
    picks = []
    for _ in range(n_picks):
        score = np.einsum("ij,ij->j", C, C) / (gamma2 + C.diagonal())
        score[labeled] = -np.inf
        k = int(np.argmax(score))
        picks.append(k)
        labeled[k] = True
        ck = C[:, k].copy()
        C = dger(-1.0 / (gamma2 + ck[k]), ck, ck, a=C, overwrite_a=1)
    return np.array(picks)


def vopt_check(X, y_true, W, args):
    import graphlearning as gl

    n, n_picks = X.shape[0], args.rounds * args.batch
    deg = np.asarray(W.sum(axis=1)).ravel()
    evals, evecs = gl.graph(W).eigen_decomp(normalization="normalized", k=50)
    learner = make_learner(args.learner, W)

    def accuracy(S):
        y = np.full(n, -1)
        y[S] = y_true[S]
        learner.fit(X, y)
        return _accuracy(learner, y_true, S)

    results = {"config": vars(args), **_provenance(), "load_start": os.getloadavg(),
               "draws": [],
               "median_degree_all": float(np.median(deg))}
    for draw in range(args.draws):
        start = _start(y_true, draw)
        c0 = time.process_time()
        picks = {"exact_vopt": _exact_vopt_picks(W, start, n_picks)}
        cpu = time.process_time() - c0
        acq = gl.active_learning.var_opt(C=np.diag(1.0 / (evals + 1e-11)), V=evecs.copy())
        acq.update(start, y_true[start])
        unl = np.ones(n, dtype=bool)
        unl[start] = False
        gl_picks = []
        for _ in range(n_picks):
            cand = np.flatnonzero(unl)
            k = int(cand[np.argmax(acq.compute(None, cand))])
            gl_picks.append(k)
            unl[k] = False
            acq.update([k], None)
        picks["gl_vopt"] = np.array(gl_picks)
        rec = {"start_accuracy": accuracy(start), "exact_cpu": cpu}
        for name, p in picks.items():
            rec[name] = {"picks": p.tolist(),
                         "median_degree_first10": float(np.median(deg[p[:10]])),
                         "median_degree": float(np.median(deg[p])),
                         "classes_first10": np.bincount(y_true[p[:10]], minlength=10).tolist(),
                         "accuracy_half_all": [accuracy(np.r_[start, p[:n_picks // 2]]),
                                               accuracy(np.r_[start, p])]}
        results["draws"].append(rec)
        results["load_end"] = os.getloadavg()
        pathlib.Path(args.out).write_text(json.dumps(results, indent=1))
        print(f"draw {draw}: " + ", ".join(f"{k} {rec[k]['accuracy_half_all']}"
                                          for k in picks), flush=True)
    summarize_vopt_check(results)


def summarize_vopt_check(results):
    draws = results["draws"]
    acc = {k: np.array([d[k]["accuracy_half_all"] for d in draws])
           for k in ("exact_vopt", "gl_vopt")}
    deg = {k: np.median([d[k]["median_degree_first10"] for d in draws]) for k in acc}
    print(f"{len(draws)} draws; median degree of all points "
          f"{results.get('median_degree_all', 'n/a')}; load {results.get('load_start')} -> "
          f"{results.get('load_end')}")
    for k, a in acc.items():
        print(f"{k}: accuracy after half / all picks {a[:, 0].mean():.3f} / {a[:, 1].mean():.3f}"
              f" +- {a[:, 1].std():.3f}; median degree of the first 10 picks {deg[k]:.1f}")
    for i, at in enumerate(("half", "all")):
        r = stats.ttest_rel(acc["exact_vopt"][:, i], acc["gl_vopt"][:, i])
        d = acc["exact_vopt"][:, i] - acc["gl_vopt"][:, i]
        print(f"exact - graphlearning after {at}: {100 * d.mean():+.1f} points (t = "
              f"{r.statistic:.2f}, p = {r.pvalue:.2g})")


def merge_runs(runs, step=10):
    """One result of several runs on the same graph: each method's curve every ``step``
    labels, methods suffixed by their batch size where the runs' batch sizes differ, draws
    those all runs completed."""
    if len(runs) == 1:
        return runs[0]
    same = ("n", "weight", "learner")
    cfg0 = runs[0]["config"]
    for r in runs[1:]:
        if any(r["config"].get(k) != cfg0.get(k) for k in same):
            raise ValueError(f"runs differ in {same}: cannot pair their draws")
    n_labels = min(r["config"]["batch"] * r["config"]["rounds"] for r in runs)
    suffix = len({r["config"]["batch"] for r in runs}) > 1
    draws = [{} for _ in range(min(len(r["draws"]) for r in runs))]
    for r in runs:
        b = r["config"]["batch"]
        every, per = step // b, n_labels // b
        for d, rec in zip(draws, r["draws"]):
            c = r["config"].get("n_candidates", 100)
            eig = r["config"].get("n_eigenpairs")
            for k, v in rec.items():
                key = f"{k}/b{b}" if suffix and not k.startswith("gl_") else k
                if not k.startswith("gl_"):
                    key += f"/k{eig}" if eig else f"/c{c}" if c != 100 else ""
                d[key] = {"accuracy": v["accuracy"][:per + 1:every],
                          "times": v["times"][:per], "cpu_times": v.get("cpu_times",
                                                                        v["times"])[:per]}
    cfg = dict(cfg0, batch=step, rounds=n_labels // step)
    return {"config": cfg, "load_start": runs[0].get("load_start"),
            "load_end": runs[-1].get("load_end"), "draws": draws}


def summarize(results, figure=None):
    draws = results["draws"]
    names = list(draws[0])
    acc = {k: np.array([d[k]["accuracy"] for d in draws]) for k in names}
    times = {k: np.array([d[k]["times"] for d in draws]) for k in names}
    cpu = {k: np.array([d[k].get("cpu_times", d[k]["times"]) for d in draws]) for k in names}
    cfg = results["config"]
    labels = 10 + cfg["batch"] * np.arange(cfg["rounds"] + 1)
    half = cfg["rounds"] // 2
    load = [results.get("load_start"), results.get("load_end")]
    print(f"\n{len(draws)} draws; accuracy on the unlabeled points (mean +- std); seconds per "
          f"query (one batch of that run): query 1 and later ones (median, max), wall / CPU; "
          f"load average (1, 5, 15 min) at the start {load[0]}, at the end {load[1]}")
    print(f"{'method':>16} {'0 q':>13} {f'{labels[half] - 10} q':>13} "
          f"{f'{labels[-1] - 10} q':>13} {'wall 1st':>8} {'later':>6} {'max':>6} "
          f"{'cpu 1st':>8} {'later':>6} {'max':>6}")
    for k in names:
        a, t, c = acc[k], times[k], cpu[k]
        print(f"{k:>16} {a[:, 0].mean():.3f}+-{a[:, 0].std():.3f} "
              f"{a[:, half].mean():.3f}+-{a[:, half].std():.3f} "
              f"{a[:, -1].mean():.3f}+-{a[:, -1].std():.3f} {np.median(t[:, 0]):8.2f} "
              f"{np.median(t[:, 1:]):6.2f} {t[:, 1:].max():6.2f} {np.median(c[:, 0]):8.2f} "
              f"{np.median(c[:, 1:]):6.2f} {c[:, 1:].max():6.2f}")
    base = {k: k.split("/")[0] for k in names}   # "model_change/b1" -> "model_change"
    rnd = next((k for k in names if base[k] == "random"), None)
    for who, group in (("ours", [k for k in names if k != rnd and k[:3] != "gl_"]),
                       ("graphlearning's", [k for k in names if k[:3] == "gl_"])):
        for at in (half, -1):
            if rnd is None or not group:
                continue
            best = max(group, key=lambda k: acc[k][:, at].mean())
            gain = acc[best][:, at] - acc[rnd][:, at]
            print(f"best of {who} ({best}) - random after {labels[at] - 10} queries: "
                  f"{100 * gain.mean():+.1f} points (paired t p = "
                  f"{stats.ttest_rel(acc[best][:, at], acc[rnd][:, at]).pvalue:.2g})")
    for k in names:
        if base[k] in GL and "gl_" + base[k] in acc and len(draws) > 1:
            g = "gl_" + base[k]
            d = acc[k][:, -1] - acc[g][:, -1]
            r = stats.ttest_rel(acc[k][:, -1], acc[g][:, -1])
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
            label = (f"graphlearning {k[3:]}" + ("" if k == "gl_uncertainty" else
                                                  " (50 eigenpairs)")
                     if k.startswith("gl_") else f"fastgssl {k}")
            ax.plot(labels, m, style, marker="o", ms=3, label=label)
            ax.fill_between(labels, m - s, m + s, alpha=0.1)
        ax.set_xlabel("labeled points")
        ax.set_ylabel("accuracy on the unlabeled points")
        ax.set_title(f"MNIST (n = {cfg['n']}), {cfg.get('learner', 'poisson')} learning, "
                     f"batches of {cfg['batch']}, {len(draws)} draws")
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
        fig.tight_layout()
        pathlib.Path(figure).parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(figure, dpi=130)
        print(f"figure: {figure}")


if __name__ == "__main__":
    main()
