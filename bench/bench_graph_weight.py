"""Which graph weight should the propagation learners default to? (issue 36)

For every data set of ``bench/bench_low_label.py`` (the shared MNIST test images, letter, the
two ``make_classification`` cases) the exact 10-NN graph is built once per weight
(``"gaussian"``, the old default, ``"self_tuned"``, ``"self_tuned_sym"``) and every
propagation learner runs on it at its defaults on the same label draws (``hide_labels``
seeds 0..9 per class rate, or uniform draws for the make_classification cases, as the
low-label benchmark draws them); PoissonMBO gets the true class shares. On MNIST also
graphlearning's ``gl.weightmatrix.knn(X, 10)`` (``"gl W"``) with our PoissonMBO and
graphlearning's ``poisson_mbo`` on it, and (``--mbo-variants``) PoissonMBO on the old
default graph with more fidelity, fewer or more diffusion steps, to locate the gap.

A graph given as W is the graph the learner builds itself with that ``graph_weight``
(same builder, same parameters), so the accuracies are those of the defaults.

Reported: mean accuracy on the unlabeled points per cell, and for every weight against
``"gaussian"`` the mean paired difference and its paired t (draws paired by seed).

Usage::

    OPENBLAS_NUM_THREADS=1 python bench/bench_graph_weight.py --cases mnist --json w.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

K = 10
WEIGHTS = ("gaussian", "self_tuned", "self_tuned_sym")
LEARNERS = {
    "LabelPropagation": lambda p: ("LabelPropagation", {}),
    "LabelPropagation(cmn)": lambda p: ("LabelPropagation", {"class_mass_normalization": True}),
    "LocalGlobalConsistency(0.99)": lambda p: ("LocalGlobalConsistency", {"alpha": 0.99}),
    "PoissonLearning": lambda p: ("PoissonLearning", {}),
    "PoissonMBO(priors)": lambda p: ("PoissonMBO", {"class_priors": p}),
}


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')} load {os.getloadavg()[0]:.1f}] {msg}", file=sys.stderr,
          flush=True)


def fit(name, params, W, y_train):
    import fastgssl.models as models

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = getattr(models, name)(graph=W, n_neighbors=K, **params)
        model.fit(np.zeros((W.shape[0], 1)), y_train)  # W holds the graph: X is not read
    return model


def accuracy(pred, y, y_train):
    unl = y_train == -1
    return float(np.mean(np.asarray(pred)[unl] == y[unl]))


def paired(a, b):
    """Mean of a - b and its paired t (nan for fewer than two pairs or zero spread)."""
    d = np.asarray(a) - np.asarray(b)
    if d.size < 2:
        return float(d.mean()) if d.size else float("nan"), float("nan")
    sd = d.std(ddof=1)
    return float(d.mean()), (float(d.mean() / (sd / np.sqrt(d.size))) if sd > 0 else
                             (0.0 if d.mean() == 0 else float("inf") * np.sign(d.mean())))


def run_case(key, X, y, draws, gl, mbo_variants, learners):
    from bench_low_label import shared_graph

    from fastgssl.graphs import knn_graph

    priors = np.bincount(y) / y.size
    graphs = {w: knn_graph(X, K, weight=w) for w in WEIGHTS}
    if gl is not None:
        graphs["gl W"], _, _ = shared_graph(gl, X)
    out = {}
    for rate, ys in draws:
        for s, y_train in enumerate(ys):
            for wname, W in graphs.items():
                for lname in learners:
                    if wname == "gl W" and lname != "PoissonMBO(priors)":
                        continue
                    name, params = LEARNERS[lname](priors)
                    model = fit(name, params, W, y_train)
                    cell = out.setdefault(lname, {}).setdefault(wname, {}).setdefault(rate, [])
                    cell.append(accuracy(model.transduction_, y, y_train))
            if gl is not None:
                lab = np.flatnonzero(y_train >= 0)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    pred = gl.ssl.poisson_mbo(graphs["gl W"], class_priors=priors).fit_predict(
                        lab, y_train[lab])
                out.setdefault("gl poisson_mbo(priors)", {}).setdefault("gl W", {}) \
                    .setdefault(rate, []).append(accuracy(pred, y, y_train))
            if mbo_variants:
                for vname, params in mbo_variants.items():
                    model = fit("PoissonMBO", {"class_priors": priors, **params},
                                graphs["gaussian"], y_train)
                    out.setdefault("PoissonMBO variants", {}).setdefault(vname, {}) \
                        .setdefault(rate, []).append(accuracy(model.transduction_, y, y_train))
            log(f"{key} rate {rate} draw {s}")
    return out


def report(results):
    for key, case in results.items():
        print(f"\n### {key}\n")
        rates = list(next(iter(next(iter(case.values())).values())).keys())
        print("| method | graph | " + " | ".join(rates) + " |")
        print("|---|---|" + "---|" * len(rates))
        for lname, by_w in case.items():
            base = by_w.get("gaussian")
            for wname, cells in by_w.items():
                row = []
                for r in rates:
                    acc = cells.get(r, [])
                    text = f"{np.mean(acc):.3f}" if acc else "-"
                    if base is not None and wname != "gaussian" and acc:
                        m, t = paired(acc, base[r])
                        text += f" ({100 * m:+.1f}, t {t:+.1f})"
                    row.append(text)
                print(f"| {lname} | {wname} | " + " | ".join(row) + " |")
        gl_mbo = case.get("gl poisson_mbo(priors)", {}).get("gl W")
        if gl_mbo:
            print("\nPoissonMBO(priors) against gl poisson_mbo on gl W (points, paired t):\n")
            for wname, cells in case["PoissonMBO(priors)"].items():
                parts = []
                for r in rates:
                    m, t = paired(cells[r], gl_mbo[r])
                    parts.append(f"{r}: {100 * m:+.2f} (t {t:+.2f})")
                print(f"- {wname}: " + ", ".join(parts))


def main():
    from bench_low_label import RATES, load_case, per_class_draws, random_draws

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", nargs="+", default=["mnist", "letter", "classification",
                                                      "goal"])
    parser.add_argument("--draws", type=int, default=10)
    parser.add_argument("--letter-draws", type=int, default=3)
    parser.add_argument("--rates", type=int, nargs="+", default=list(RATES))
    parser.add_argument("--learners", nargs="+", default=list(LEARNERS))
    parser.add_argument("--no-gl", action="store_true")
    parser.add_argument("--mbo-variants", action="store_true")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    from sklearn.datasets import make_classification

    gl = None
    if not args.no_gl:
        import graphlearning as gl
    variants = {"fidelity=3": {"fidelity": 3.0}, "fidelity=10": {"fidelity": 10.0},
                "n_diffusion_steps=10": {"n_diffusion_steps": 10},
                "n_diffusion_steps=160": {"n_diffusion_steps": 160}} if args.mbo_variants else None
    results = {}
    for key in args.cases:
        if key in ("mnist", "letter"):
            _, X, y = load_case(key)
            n = args.letter_draws if key == "letter" else args.draws
            draws = per_class_draws(y, args.rates, n)
        else:
            n_s, n_l = (20_000, 150) if key == "classification" else (8_000, 80)
            X, y = make_classification(n_samples=n_s, n_features=30, random_state=0)
            draws = random_draws(y, n_l, args.draws)
        results[key] = run_case(key, np.asarray(X, dtype=np.float64), y, draws,
                                gl if key == "mnist" else None,
                                variants if key == "mnist" else None, args.learners)
        if args.json is not None:
            args.json.write_text(json.dumps(results, indent=1))
    report(results)


if __name__ == "__main__":
    sys.exit(main())
