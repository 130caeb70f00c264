"""Paired comparisons of two runs of ``bench/bench_low_label.py`` (issue 36).

The runs draw the same labels (``hide_labels`` seeds, uniform draws by seed), so accuracies
pair by draw. Printed (markdown):

- every fastgssl learner on its own default graph, new run against old run: mean difference in
  points and paired t (the old run's default graph against the new one's);
- ``PoissonMBO(priors)`` of the new run on its own graph and on the same W against
  graphlearning's ``poisson_mbo(priors)`` on W.

Usage::

    python bench/low_label_paired.py docs/scripts/low_labels_issue24.json \
        docs/scripts/low_labels.json
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np

OURS = ("LabelPropagation", "LabelPropagation(cmn)", "LocalGlobalConsistency(0.99)",
        "PoissonLearning", "PoissonMBO(priors)")


def paired(a, b):
    n = min(len(a), len(b))
    d = np.asarray(a[:n]) - np.asarray(b[:n])
    if n < 2:
        return (float(d.mean()) if n else float("nan")), float("nan"), n
    sd = d.std(ddof=1)
    t = d.mean() / (sd / np.sqrt(n)) if sd > 0 else (0.0 if d.mean() == 0 else np.inf)
    return float(d.mean()), float(t), n


def fmt(m, t):
    return f"{100 * m:+.2f} (t {t:+.2f})" if np.isfinite(m) else "not run"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("old")
    parser.add_argument("new")
    args = parser.parse_args()
    old = json.load(open(args.old))["cases"]
    new = json.load(open(args.new))["cases"]
    for key, case in new.items():
        cols = case["columns"]
        print(f"\n### {case.get('title', key)}\n")
        print("Own default graph, new against old (points, paired t over the draws):\n")
        print("| method | " + " | ".join(cols) + " |")
        print("|---|" + "---|" * len(cols))
        for m in OURS:
            row = []
            for c in cols:
                a = case["own_graph"][m][c]["acc"]
                b = old.get(key, {}).get("own_graph", {}).get(m, {}).get(c, {}).get("acc", [])
                mean_new = f"{np.mean(a):.3f}" if a else "-"
                row.append(f"{mean_new}: {fmt(*paired(a, b)[:2])}" if b else mean_new)
            print(f"| {m} | " + " | ".join(row) + " |")
        gl = case["same_W"].get("gl poisson_mbo(priors)", {})
        if any(gl.get(c, {}).get("acc") for c in cols):
            print("\nPoissonMBO(priors) against gl poisson_mbo(priors) on W (points, paired t):\n")
            for where in ("own_graph", "same_W"):
                parts = []
                for c in cols:
                    ref = gl.get(c, {}).get("acc", [])
                    if not ref:
                        parts.append(f"{c}: not run")
                        continue
                    m, t, n = paired(case[where]["PoissonMBO(priors)"][c]["acc"], ref)
                    parts.append(f"{c}: {fmt(m, t)}")
                print(f"- {where.replace('_', ' ')}: " + ", ".join(parts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
