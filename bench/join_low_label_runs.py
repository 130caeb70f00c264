"""Join runs of ``bench/bench_low_label.py`` into one JSON (issue 36, fourth round).

Unlike ``bench/low_label_merge.py`` (rates of one commit, the first run's ``meta``) it joins
runs of different cases and commits (the fourth round's runs span commits that changed tests
and docs only) and keeps every run's ``meta``.

A case measured in several runs (letter, one run per rate) gets the union of their columns
and cells; each case keeps the ``meta`` of its runs under ``runs_meta`` (command, commit, date,
load at start and end, thread variables); the top-level ``meta`` names the commits and the
time span, as ``docs/scripts/plot_low_labels.py`` reads it.

Usage::

    python bench/join_low_label_runs.py out.json ll_goal.json ll_mnist.json ll_letter_1.json ...
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def join(paths):
    out = {"meta": {}, "cases": {}}
    metas = []
    for path in paths:
        data = json.loads(Path(path).read_text())
        meta = dict(data["meta"], file=Path(path).name)
        metas.append(meta)
        for key, case in data["cases"].items():
            if key not in out["cases"]:
                out["cases"][key] = dict(case, runs_meta=[meta])
                continue
            base = out["cases"][key]
            base["columns"] += [c for c in case["columns"] if c not in base["columns"]]
            for part in ("same_W", "own_graph"):
                for method, cells in case[part].items():
                    base[part].setdefault(method, {}).update(cells)
            base["runs_meta"].append(meta)
    for case in out["cases"].values():
        case["columns"].sort(key=lambda c: int(c.split()[0]))
    last = max(m["date"] for m in metas)
    out["meta"] = {"commit": " / ".join(sorted({m["commit"] for m in metas})),
                   "date": f"{min(m['date'] for m in metas)[:16]}-{last[11:16]} UTC",
                   "runs": metas}
    return out


if __name__ == "__main__":
    Path(sys.argv[1]).write_text(json.dumps(join(sys.argv[2:]), indent=1))
    print(f"wrote {sys.argv[1]}")
