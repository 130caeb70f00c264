"""Tables of ``bench/bench_low_label_leader.py``'s records: every learner's mean accuracy per
data set and label rate, the label-free rules evaluated on the same fits, and paired t.

A rule picks, per fit, one candidate's refined labeling by its constrained cut (no labels
read); its accuracy is that labeling's. Compared with the best single learner of the cell
(by mean accuracy over the draws, unrefined ``acc`` of the learners as they ship) and with
PoissonMBO: mean difference in points and paired t over the draws.

Usage::

    python bench/low_label_leader_report.py docs/scripts/low_label_leader_*.json \\
        > docs/scripts/low_label_leader.md
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict

import numpy as np

LEARNERS = ("poisson", "poisson_mbo", "cutssl", "pwll", "lp_cmn")
RULES = {
    "cut3": ("poisson_mbo", "poisson", "cutssl"),
    "cut5": LEARNERS,
    "cutL": ("poisson", "pwll", "lp_cmn"),
    "cutPL": ("pwll", "lp_cmn"),
    "pwll+ref": ("pwll",),
    "lp_cmn+ref": ("lp_cmn",),
}


def paired_t(a, b):
    d = np.asarray(a) - np.asarray(b)
    if d.size < 2 or d.std(ddof=1) == 0:
        return float("nan") if d.any() else 0.0
    return float(d.mean() / (d.std(ddof=1) / np.sqrt(d.size)))


def rule_acc(cell, members):
    best = min(members, key=lambda c: (cell[c]["cut_refined"], members.index(c)))
    return cell[best]["acc_refined"], best


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+")
    args = parser.parse_args(argv)
    records = []
    commands = []
    for f in args.files:
        data = json.load(open(f))
        records += data["results"]
        commands.append(f"{data['command']} (commit {data['commit']}, load "
                        f"{data['load_start'][0]:.1f}-{data.get('load_end', ['?'])[0]})")
    cells = defaultdict(list)
    for r in records:
        cells[(r["dataset"], r["rate"])].append(r["learners"])
    print("# Low-label learners and label-free rules (issue 52)\n")
    for c in commands:
        print(f"- `{c}`")
    print("\nMean accuracy on the unlabeled points (%), per data set and labels per class; "
          "`+ref` the learner's labeling rounded exactly to the class sizes and refined by cut "
          "descent; rules: the refined labeling of least cut among cut2 = {PoissonMBO, "
          "Poisson}, cut3 = cut2 + CutSSL, cut5 = all five. `vs best`: the rule minus the "
          "best learner of the cell (unrefined), points (paired t); `vs pmbo`: minus "
          "PoissonMBO.\n")
    head = ["data", "r", "n"] + list(LEARNERS) + [f"{x}+ref" for x in LEARNERS] + list(RULES) \
        + [f"{x} vs best" for x in RULES] + [f"{x} vs pmbo" for x in RULES]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    summary = defaultdict(list)
    chosen_counts = defaultdict(lambda: defaultdict(int))
    order = defaultdict(lambda: [0, 0])
    for (ds, rate), fits in sorted(cells.items()):
        acc = {x: np.array([f[x]["acc"] for f in fits]) for x in LEARNERS}
        ref = {x: np.array([f[x]["acc_refined"] for f in fits]) for x in LEARNERS}
        best = max(LEARNERS, key=lambda x: acc[x].mean())
        row = [ds, str(rate), str(len(fits))]
        row += [f"{100 * acc[x].mean():.1f}" for x in LEARNERS]
        row += [f"{100 * ref[x].mean():.1f}" for x in LEARNERS]
        vs_best, vs_pmbo = [], []
        for name, members in RULES.items():
            picks = [rule_acc(f, members) for f in fits]
            a = np.array([p[0] for p in picks])
            for p in picks:
                chosen_counts[name][p[1]] += 1
            row.append(f"{100 * a.mean():.1f}")
            db, tb = 100 * (a - acc[best]).mean(), paired_t(a, acc[best])
            dp, tp = 100 * (a - acc["poisson_mbo"]).mean(), paired_t(a, acc["poisson_mbo"])
            vs_best.append(f"{db:+.1f} ({tb:+.1f})")
            vs_pmbo.append(f"{dp:+.1f} ({tp:+.1f})")
            summary[name].append((ds, rate, db, tb, dp, tp))
        print("| " + " | ".join(row + vs_best + vs_pmbo) + " |")
        # does a lower refined cut mean a higher accuracy? pairs of candidates within a fit
        for f in fits:
            for i, a in enumerate(LEARNERS):
                for b in LEARNERS[i + 1:]:
                    if f[a]["cut_refined"] == f[b]["cut_refined"] or \
                            f[a]["acc_refined"] == f[b]["acc_refined"]:
                        continue
                    order[ds][0] += 1
                    lower = a if f[a]["cut_refined"] < f[b]["cut_refined"] else b
                    other = b if lower == a else a
                    order[ds][1] += f[lower]["acc_refined"] > f[other]["acc_refined"]
    print("\n## The rules against the best learner of each cell\n")
    print("| rule | cells | within 1 point or t > -1.9 | worst (points, t) | below PoissonMBO "
          "significantly (t < -1.9) | chosen |")
    print("|---|---|---|---|---|---|")
    for name, rows in summary.items():
        ok = sum((db > -1.0) or (tb > -1.9) for _, _, db, tb, _, _ in rows)
        worst = min(rows, key=lambda r: r[2])
        below = [f"{d} r={r}" for d, r, _, _, dp, tp in rows if tp < -1.9]
        picks = ", ".join(f"{k} {v}" for k, v in sorted(chosen_counts[name].items()))
        print(f"| {name} | {len(rows)} | {ok} | {worst[0]} r={worst[1]}: {worst[2]:+.1f} "
              f"({worst[3]:+.1f}) | {', '.join(below) or 'none'} | {picks} |")
    print("\n## Does a lower cut mean a higher accuracy?\n")
    print("Pairs of candidates' refined labelings within one fit (ties left out): how often "
          "the labeling of lower cut is the more accurate.\n")
    print("| data | pairs | lower cut more accurate |")
    print("|---|---|---|")
    for ds, (n, k) in sorted(order.items()):
        print(f"| {ds} | {n} | {k / max(n, 1):.2f} |")
    print("\n## Refinement: never worse on average?\n")
    print("| data | r | learner | acc -> refined (points) | t | cut above start "
          "| moved (median) |")
    print("|---|---|---|---|---|---|---|")
    for (ds, rate), fits in sorted(cells.items()):
        for x in LEARNERS:
            a = np.array([f[x]["acc_rounded"] for f in fits])
            b = np.array([f[x]["acc_refined"] for f in fits])
            above = sum(f[x]["cut_refined"] > f[x]["cut_rounded"] + 1e-9 for f in fits)
            moved = int(np.median([f[x]["moved"] for f in fits]))
            print(f"| {ds} | {rate} | {x} | {100 * a.mean():.1f} -> {100 * b.mean():.1f} "
                  f"| {paired_t(b, a):+.1f} | {above} | {moved} |")


if __name__ == "__main__":
    main()
