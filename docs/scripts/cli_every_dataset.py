"""``fastgssl select --quick -q --json`` on every file of the shared datasets folder (issue
43): exit status, stderr bytes (0 expected unless the file is refused), the warnings of the
JSON report, wall and CPU seconds of the run and the 1-minute load average before it. One
JSON object per line on stdout (docs/scripts/cli_every_dataset.jsonl); the large sets run
Poisson learning at 5 labels per class, the two larger regression sets KRR.

    FASTGSSL_DATASETS=../shared/datasets python docs/scripts/cli_every_dataset.py [name ...]
"""
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

root = Path(os.environ["FASTGSSL_DATASETS"])
big = {"letter.scale", "letter.scale.t", "letter-recognition.data", "a1a.t", "mnist",
       "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte", "madelon_train.data", "w1a",
       "a1a", "svmguide3", "madelon_valid.data", "madelon.t", "splice", "german.numer"}
regression_big = {"abalone", "space_ga"}
names = sorted(p.name.removesuffix(".gz") for p in root.glob("*.gz"))
only = sys.argv[1:]
rows = []
for name in (only or names):
    argv = ["fastgssl", "select", "--dataset", name, "--quick", "-q", "--json"]
    if name in big:
        argv += ["--model", "poisson", "--labels-per-class", "5"]
    elif name in regression_big:
        argv += ["--model", "krr", "--method", "exact-quadratic"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load = os.getloadavg()[0]
    t0 = time.perf_counter()
    p = subprocess.run(argv, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    row = {"dataset": name, "argv": " ".join(argv[1:]), "exit": p.returncode,
           "stderr_bytes": len(p.stderr), "wall_s": round(wall, 1), "cpu_s": round(cpu, 1),
           "load1_before": round(load, 2)}
    if p.returncode == 0:
        r = json.loads(p.stdout)
        row.update(task=r["task"], model=r["model"], n_train=r["n_train"],
                   warnings=r["warnings"],
                   warnings_raised=[(d["category"], d["count"]) for d in r["warnings_raised"]],
                   test_error=round(r["test_error"], 4))
    else:
        row["stderr"] = p.stderr.strip()[:400]
    rows.append(row)
    print(json.dumps(row), flush=True)
