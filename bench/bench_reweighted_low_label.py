"""Issue 41's learners against graphlearning's on the same weight matrix, interleaved.

``LabelPropagation(reweighting="wnll" | "properly" | "poisson")`` against
``gl.ssl.laplace(W, reweighting=...)`` and ``VolumeMBO(class_priors)`` against
``gl.ssl.volume_mbo(W, class_priors)`` (true class shares, both), on graphlearning's
``gl.weightmatrix.knn(X, 10)`` of the MNIST test images (the graph of
``bench_low_label.py``, whose full run includes these rows too but takes hours), at the given
labels per class over ``--draws`` label draws (``hide_labels``, seeds 0..). Each draw fits
graphlearning's then fastgssl's method back to back, so a burst of load hits both; accuracy on
the unlabeled points, mean over the draws, the difference with its paired t; time = median fit
(graph excluded), wall and CPU seconds (``time.process_time``, all threads), ratio = gl /
fastgssl (above 1: fastgssl faster), with the median 1-minute load average of the fits.

Usage::

    OPENBLAS_NUM_THREADS=1 python bench/bench_reweighted_low_label.py --rates 1 5 --draws 10
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_low_label import (  # noqa: E402
    GL,
    ISSUE41_PAIRS,
    OURS,
    accuracy,
    fit_gl,
    fit_ours,
    load_case,
    log,
    shared_graph,
    warm_up,
)
from low_label_paired import paired  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rates", type=int, nargs="+", default=[1, 5])
    parser.add_argument("--draws", type=int, default=10)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    import graphlearning as gl

    from fastgssl.datasets import hide_labels

    warm_up()
    title, X, y = load_case("mnist")
    W, seconds, _ = shared_graph(gl, X)
    log(f"{title}: gl.weightmatrix.knn {seconds:.1f} s")
    priors = np.bincount(y) / y.size
    out = {}
    for rate in args.rates:
        for d in range(args.draws):
            y_train = hide_labels(y, rate, random_state=d)
            for ours, theirs in ISSUE41_PAIRS:
                cell = out.setdefault(f"{rate}", {}).setdefault(
                    ours, {"acc": [], "time": [], "cpu": [], "gl_acc": [], "gl_time": [],
                           "gl_cpu": [], "load": []})
                cell["load"].append(os.getloadavg()[0])
                gc.collect()  # (the fit helpers collect again, now at no cost, then time)
                c0 = time.process_time()
                pred, s = fit_gl(GL[theirs], gl, W, y_train, priors, X)
                cell["gl_cpu"].append(time.process_time() - c0)
                cell["gl_acc"].append(accuracy(pred, y, y_train))
                cell["gl_time"].append(s)
                gc.collect()
                c0 = time.process_time()
                pred, s, _, _ = fit_ours(OURS[ours], W, X, y_train, priors)
                cell["cpu"].append(time.process_time() - c0)
                cell["acc"].append(accuracy(pred, y, y_train))
                cell["time"].append(s)
            log(f"{rate} per class, draw {d}: " + ", ".join(
                f"{m} {c['acc'][-1]:.3f}/{c['gl_acc'][-1]:.3f}"
                for m, c in out[f"{rate}"].items()))
    print("| labels per class | method | accuracy (fastgssl) | accuracy (gl) | difference "
          "(points, paired t) | median fit fastgssl (s, wall / CPU) | median fit gl (s, wall / "
          "CPU) | gl / fastgssl (wall / CPU) | load |")
    print("|---|---|---|---|---|---|---|---|---|")
    for rate, cells in out.items():
        for (ours, theirs), c in zip(ISSUE41_PAIRS, cells.values()):
            a, b = np.mean(c["acc"]), np.mean(c["gl_acc"])
            diff, t_stat, _ = paired(c["acc"], c["gl_acc"])
            t, tg = statistics.median(c["time"]), statistics.median(c["gl_time"])
            u, ug = statistics.median(c["cpu"]), statistics.median(c["gl_cpu"])
            print(f"| {rate} | {ours} vs {theirs} | {a:.4f} | {b:.4f} | {100 * diff:+.2f} "
                  f"({t_stat:+.2f}) | {t:.3f} / {u:.3f} | {tg:.3f} / {ug:.3f} | "
                  f"{tg / t:.2f}x / {ug / u:.2f}x | {statistics.median(c['load']):.1f} |")
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
