"""Merge runs of ``bench/bench_low_label.py`` that measured different label rates of the same
data sets (one process per rate, ``--rates r``: on a shared machine they get more of it), and
print the report of the merged results.

The draws of a rate do not depend on the other rates (``hide_labels`` seeds 0..9 per rate),
so the merged cells are those of one run over all rates; times are medians over the merged
fits. The ``meta`` of the first file is kept, with the load and the commit of every file.

Usage::

    python bench/low_label_merge.py out.json run_1.json run_2.json run_5.json run_10.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def merge(paths):
    runs = [json.loads(Path(p).read_text()) for p in paths]
    out = {"meta": dict(runs[0]["meta"]), "cases": {}}
    out["meta"]["merged_from"] = [
        {"file": str(p), "commit": r["meta"].get("commit"), "load": r["meta"].get("load"),
         "load_end": r["meta"].get("load_end"), "date": r["meta"].get("date")}
        for p, r in zip(paths, runs)]
    commits = {r["meta"].get("commit") for r in runs}
    if len(commits) != 1:
        raise ValueError(f"the runs measured different commits: {sorted(map(str, commits))}")
    for run in runs:
        for key, case in run["cases"].items():
            if key not in out["cases"]:
                out["cases"][key] = json.loads(json.dumps(case))
                continue
            dest = out["cases"][key]
            for col in case["columns"]:
                if col in dest["columns"]:
                    raise ValueError(f"{key}: column {col} is in two runs")
                dest["columns"].append(col)
                for table in ("same_W", "own_graph"):
                    for method, cells in case[table].items():
                        dest[table].setdefault(method, {})[col] = cells[col]
    for case in out["cases"].values():  # columns in the order of the label rates
        case["columns"].sort(key=lambda c: (len(c), c))
    return out


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    from bench_low_label import report, save

    merged = merge(sys.argv[2:])
    save(merged, Path(sys.argv[1]))
    report(merged)
    return 0


if __name__ == "__main__":
    sys.exit(main())
