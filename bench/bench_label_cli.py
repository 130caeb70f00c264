"""``fastgssl label`` against PoissonMBO fitted by hand (issue 53's goal).

Goal: on a 20,000-row file with 3 labels per class, the command's accuracy on the unlabeled
rows within 1 point of ``PoissonMBO()`` (class priors: the labels' shares) fitted by hand on
the file's features, in at most 1.5x its time including the graph, and an AUC of the
confidence for correctness of at least 0.6.

The file: letter-recognition.data of the shared datasets (20,000 rows, 16 features, 26
classes; ``--dataset mnist``: the 10,000 MNIST test images, 784 pixels, 10 classes),
``--per-class`` labels per class kept by ``fastgssl.datasets.hide_labels`` (seed
``--seed``), the rest ``nan``, written as a CSV with a ``label`` header column. Each repetition
runs, alternating, (a) the command in a fresh process (``python -m fastgssl label FILE -o OUT
--json``: wall time of the whole process, import, read and write included, and the time of
its fit; CPU seconds of the whole process from ``getrusage``) and (b) a fresh process
reading the same file with numpy and timing ``PoissonMBO().fit(X, y)`` alone (graph
included; wall and ``time.process_time``). On a shared machine the CPU ratio is the steadier
one. Both load their Numba kernels from the disk
cache; one warm-up run of each comes first and is not counted. The load average is stored.

Usage::

    python bench/bench_label_cli.py --reps 3 --json docs/scripts/label_cli_letter.json
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HAND = r"""
import sys, time, json, numpy as np
from fastgssl.models import PoissonMBO
rows = np.genfromtxt(sys.argv[1], delimiter=",", skip_header=1, dtype=str)
labels = rows[:, 0]
X = rows[:, 1:].astype(np.float64)
classes = np.unique(labels[labels != "nan"])
y = np.full(len(labels), -1)
y[labels != "nan"] = np.searchsorted(classes, labels[labels != "nan"])
t, c = time.perf_counter(), time.process_time()
m = PoissonMBO().fit(X, y)
t, c = time.perf_counter() - t, time.process_time() - c
pred = np.where(y == -1, m.transduction_, y)
print(json.dumps({"fit_seconds": t, "fit_cpu_seconds": c, "labels": classes[pred].tolist()}))
"""


def make_file(path, per_class, seed, dataset="letter"):
    from fastgssl import datasets

    if dataset == "mnist":  # pixels in [0, 1], 4 decimals: the same values once written
        X, y = datasets.load_mnist_test()
        X = np.round(X, 4)
        y = y.astype(str)
    else:
        X, y, _ = datasets.load_data_file("letter-recognition.data")
    classes, yi = np.unique(y, return_inverse=True)
    kept = datasets.hide_labels(yi, per_class, seed)
    with open(path, "w") as fh:
        fh.write("label," + ",".join(f"f{j}" for j in range(X.shape[1])) + "\n")
        for x, k in zip(X, kept):
            fh.write((classes[k] if k != -1 else "nan") + ","
                     + ",".join(f"{v:g}" for v in x) + "\n")
    return classes[yi], kept != -1


def _children_cpu():
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_label(path, out):
    t, c = time.perf_counter(), _children_cpu()
    done = subprocess.run([sys.executable, "-m", "fastgssl", "label", str(path), "-o", str(out),
                           "--json", "-q"], capture_output=True, text=True, check=True)
    wall = time.perf_counter() - t
    summary_cpu = _children_cpu() - c
    summary = json.loads(done.stdout)
    summary["process_cpu_seconds"] = summary_cpu
    with open(out, newline="") as fh:
        rows = list(csv.DictReader(fh))
    return wall, summary, np.array([r["label"] for r in rows]), \
        np.array([float(r["confidence"]) for r in rows])


def run_hand(path):
    t = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", HAND, str(path)], capture_output=True,
                          text=True, check=True)
    wall = time.perf_counter() - t
    res = json.loads(done.stdout)
    return wall, res["fit_seconds"], res["fit_cpu_seconds"], np.array(res["labels"])


def main(argv=None):
    from sklearn.metrics import roc_auc_score

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dataset", choices=("letter", "mnist"), default="letter",
                    help="letter-recognition.data (20,000 x 16) or the MNIST test images "
                         "(10,000 x 784)")
    ap.add_argument("--per-class", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="bench_label_"))
    path, out = tmp / f"{args.dataset}.csv", tmp / "labels.csv"
    truth, given = make_file(path, args.per_class, args.seed, args.dataset)
    unl = ~given
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, cwd=Path(__file__).parent).stdout.strip()
    run_label(path, out), run_hand(path)  # warm-up: kernels from Numba's disk cache
    runs = []
    for rep in range(args.reps):
        load0 = os.getloadavg()[0]
        wall, summary, lab, conf = run_label(path, out)
        hand_wall, hand_fit, hand_cpu, hand_lab = run_hand(path)
        ok = lab[unl] == truth[unl]
        runs.append({
            "rep": rep, "load_1min_before": load0, "load_1min_after": os.getloadavg()[0],
            "label_wall_seconds": wall, "label_fit_seconds": summary["seconds"]["fit"],
            "label_total_seconds": summary["seconds"]["total"],
            "label_process_cpu_seconds": summary["process_cpu_seconds"],
            "hand_wall_seconds": hand_wall, "hand_fit_seconds": hand_fit,
            "hand_fit_cpu_seconds": hand_cpu,
            "label_accuracy": float(ok.mean()),
            "hand_accuracy": float(np.mean(hand_lab[unl] == truth[unl])),
            "same_labels_as_hand": bool(np.array_equal(lab, hand_lab)),
            "auc_confidence": float(roc_auc_score(ok, conf[unl])),
            "n_threads": summary["chosen"]["n_threads"],
        })
        print(json.dumps(runs[-1]), flush=True)
    med = {k: float(np.median([r[k] for r in runs])) for k in runs[0]
           if k.endswith(("seconds", "accuracy")) or k == "auc_confidence"}
    med["ratio_label_wall_to_hand_fit"] = med["label_wall_seconds"] / med["hand_fit_seconds"]
    med["ratio_label_fit_to_hand_fit"] = med["label_fit_seconds"] / med["hand_fit_seconds"]
    med["ratio_label_process_cpu_to_hand_fit_cpu"] = (med["label_process_cpu_seconds"]
                                                      / med["hand_fit_cpu_seconds"])
    med["ratio_per_rep_wall"] = [r["label_wall_seconds"] / r["hand_fit_seconds"] for r in runs]
    result = {"command": " ".join(sys.argv), "commit": commit, "dataset": args.dataset,
              "rows": int(truth.size),
              "labeled": int(given.sum()), "runs": runs, "median": med}
    print(json.dumps(med, indent=1))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
