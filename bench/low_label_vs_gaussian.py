"""The low-label benchmark's default-graph cells against the Gaussian graph (issue 36).

Reads the JSON of ``bench/bench_low_label.py`` (each fastgssl learner on its own default graph)
and the Gaussian cells that ``bench/bench_graph_weight.py`` measured on the same data, label
draws and seeds (``docs/scripts/graph_weight_{mnist,classification,letter}_round3.json``, and
``graph_weight_mnist_round2.json`` for the reweighted learners on MNIST), and
prints, per learner and cell, the mean paired difference in points and its paired t; on MNIST
also PoissonMBO on its own graph against graphlearning's ``poisson_mbo`` on graphlearning's graph
(the issue's first goal). A cell is compared on the draws both files hold (the first n).

Usage::

    python bench/low_label_vs_gaussian.py ll_goal.json ll_classification.json ll_mnist.json \
        ll_letter.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

DOCS = Path(__file__).resolve().parents[1] / "docs" / "scripts"
ROUND3 = {"goal": "classification", "classification": "classification", "mnist": "mnist",
          "letter": "letter"}


def paired(a, b):
    """Mean of a - b in points and its paired t over the first min(len) draws."""
    n = min(len(a), len(b))
    d = 100.0 * (np.asarray(a[:n]) - np.asarray(b[:n]))
    sd = d.std(ddof=1) if n > 1 else 0.0
    t = d.mean() / (sd / np.sqrt(n)) if sd > 0 else (0.0 if d.mean() == 0 else np.inf)
    return d.mean(), t, n


def gaussian_cells(case):
    """The Gaussian cells of the third round, and for learners it did not run on the case
    (the reweighted ones on MNIST, 1 and 5 labels per class) the second round's."""
    out = {}
    for rnd in ("round2", "round3"):  # the third round's cells win
        path = DOCS / f"graph_weight_{ROUND3[case]}_{rnd}.json"
        if not path.exists():
            continue
        for key, learners in json.loads(path.read_text()).items():
            if key != case and not key.startswith(case + " ("):
                continue
            for name, weights in learners.items():
                if "gaussian" in weights:
                    out[name] = weights["gaussian"]
    return out


def main(paths):
    for path in paths:
        for case, res in json.loads(Path(path).read_text())["cases"].items():
            gauss = gaussian_cells(case)
            print(f"\n## {case} ({path})\n")
            print("| method | " + " | ".join(res["columns"]) + " |")
            print("|---" * (len(res["columns"]) + 1) + "|")
            for name, cells in res["own_graph"].items():
                if name not in gauss:
                    continue
                row = []
                for col in res["columns"]:
                    g = gauss[name].get(col) or gauss[name].get(col.split()[0])
                    a = cells[col]["acc"]
                    if not g or not a:
                        row.append("-")
                        continue
                    m, t, n = paired(a, g)
                    row.append(f"{m:+.2f} (t {t:+.1f}{'' if n >= 10 else f', n={n}'})")
                print(f"| {name} | " + " | ".join(row) + " |")
            gl = res["same_W"].get("gl poisson_mbo(priors)")
            ours = res["own_graph"].get("PoissonMBO(priors)")
            if gl and ours:
                row = []
                for col in res["columns"]:
                    if not gl[col]["acc"]:
                        row.append("-")
                        continue
                    m, t, n = paired(ours[col]["acc"], gl[col]["acc"])
                    row.append(f"{m:+.2f} (t {t:+.1f}, n={n})")
                print("| PoissonMBO own graph - gl poisson_mbo on gl W | "
                      + " | ".join(row) + " |")


if __name__ == "__main__":
    main(sys.argv[1:])
