"""VolumeMBO against graphlearning's ``volume_mbo`` with graphlearning's own noise (issue 41).

Both methods are random: each thresholding adds N(0, temperature^2) noise to the diffused
class scores, and on MNIST a draw's accuracy moves by about a point from the noise alone, so
ten draws cannot tell a 0.4 point gap from chance. Here the noise is taken out of the
comparison (common random numbers): graphlearning's C routine draws its noise from the C
library's ``rand()`` (Box-Muller, in float32, after one ``rand()`` per unlabeled point for
an initialization the Voronoi cells overwrite); this script seeds ``rand()`` with ``srand``
(ctypes) before each graphlearning fit and feeds fastgssl's ``VolumeMBO`` the same stream
through its ``_standard_normal`` seam (glibc's generator, reimplemented and checked against
the C library's). Same W, same labels, same noise: what remains is the implementations'
difference (float32 against float64 arithmetic, graphlearning's incremental float32 update
of K (K U), its epsilon-auction against the exact assignment). After each graphlearning fit
the next ``rand()`` is compared with the stream's next value, which checks that
graphlearning drew exactly the noise replayed (n - m + (max_iter - 1) n k draws).

Printed per labels-per-class rate: mean accuracy of graphlearning, of fastgssl with
graphlearning's noise, and of fastgssl with its own noise (``random_state`` = draw), the
paired differences in points with their t statistics, and the share of unlabeled points on
which fastgssl-with-gl-noise and graphlearning agree.

Usage (glibc only)::

    OPENBLAS_NUM_THREADS=1 python bench/repro_volume_mbo_gl_noise.py --rates 1 5 --draws 20
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))
from bench_low_label import accuracy, load_case, log, shared_graph  # noqa: E402
from gl_noise import GLNoiseVolumeMBO, gl_volume_mbo, libc  # noqa: E402
from low_label_paired import paired  # noqa: E402

from fastgssl.models import VolumeMBO  # noqa: E402

VARIANTS = (("auction, gl's noise", "auction", True), ("exact, gl's noise", "exact", True),
            ("auction, own noise", "auction", False), ("exact, own noise", "exact", False))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rates", type=int, nargs="+", default=[1, 5])
    parser.add_argument("--draws", type=int, default=20)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    import graphlearning as gl

    from fastgssl.datasets import hide_labels

    lib = libc()
    if lib is None:
        raise SystemExit("this C library's rand() is not glibc's: the replay needs glibc")
    title, X, y = load_case("mnist")
    W, _, _ = shared_graph(gl, X)
    priors = np.bincount(y) / y.size
    VolumeMBO(priors, graph=W).fit(X, hide_labels(y, 1, random_state=0))  # compile
    out = {}
    for rate in args.rates:
        cell = out.setdefault(str(rate), {"gl": [], "gl_time": []})
        for d in range(args.draws):
            y_train = hide_labels(y, rate, random_state=d)
            unl = y_train < 0
            t0 = time.perf_counter()
            pred, after = gl_volume_mbo(gl, lib, d + 1, W, y_train, priors)
            cell["gl_time"].append(time.perf_counter() - t0)
            cell["gl"].append(accuracy(pred, y, y_train))
            for name, assignment, replay in VARIANTS:
                if replay:
                    model = GLNoiseVolumeMBO(priors, graph=W, assignment=assignment)
                    model.gl_seed = d + 1
                else:
                    model = VolumeMBO(priors, graph=W, assignment=assignment, random_state=d)
                t0 = time.perf_counter()
                model.fit(X, y_train)
                seconds = time.perf_counter() - t0
                if replay and model.stream.draw(1)[0] != after:
                    raise SystemExit("graphlearning drew a different number of rand() values")
                c = cell.setdefault(name, {"acc": [], "agree": [], "time": []})
                c["acc"].append(accuracy(model.transduction_, y, y_train))
                c["agree"].append(float(np.mean(model.transduction_[unl] == pred[unl])))
                c["time"].append(seconds)
            log(f"{rate} per class, draw {d}: gl {cell['gl'][-1]:.4f}; " + "; ".join(
                f"{name} {cell[name]['acc'][-1]:.4f} (agree {cell[name]['agree'][-1]:.4f})"
                for name, _, _ in VARIANTS))
    print(f"{title}, gl.weightmatrix.knn(X, 10), {args.draws} draws per rate: VolumeMBO "
          f"against gl.ssl.volume_mbo (difference in points, paired t; agreement = share of "
          f"unlabeled points predicted alike)\n")
    print("| labels per class | gl | " + " | ".join(
        f"{name}: accuracy, difference (t), agreement" for name, _, _ in VARIANTS) + " |")
    print("|---|---|" + "---|" * len(VARIANTS))
    for rate, cell in out.items():
        row = []
        for name, _, _ in VARIANTS:
            m, t, _ = paired(cell[name]["acc"], cell["gl"])
            row.append(f"{np.mean(cell[name]['acc']):.4f}, {100 * m:+.2f} ({t:+.2f}), "
                       f"{np.mean(cell[name]['agree']):.4f}")
        print(f"| {rate} | {np.mean(cell['gl']):.4f} | " + " | ".join(row) + " |")
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
