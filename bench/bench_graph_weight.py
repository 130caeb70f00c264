"""Which graph weight should the propagation learners default to? (issue 36)

For every data set of ``bench/bench_low_label.py`` (the shared MNIST test images, letter, the
two ``make_classification`` cases) the exact 10-NN graph is built once per weight
(``--weights``: ``"gaussian"``, the default before issue 36, ``"self_tuned"`` and
``"self_tuned_sym"`` with their own joins and graphlearning's constant 4 (graphlearning's
graphs), a weight under another symmetrization, ``"self_tuned(max)"``, or a candidate with
options, ``"self_tuned[c=3](max)"`` (the learners' default since issue 36's fourth round,
``self_tuned_constant=3.0``, ``graph_symmetrize="max"``), ``bench/graph_weight_candidates.py``)
and every
propagation learner (``--learners``: the five of the low-label table, the reweighted Laplace
learners and VolumeMBO) runs on it at its defaults on the same label draws (``hide_labels`` seeds
``--first-draw``.. per class rate, or uniform draws for the make_classification cases, as the
low-label benchmark draws them); PoissonMBO and VolumeMBO get the true class shares. Runs of
other seeds or weights are joined by ``--merge``. On MNIST also
graphlearning's ``gl.weightmatrix.knn(X, 10)`` (``"gl W"``) with our PoissonMBO and
graphlearning's ``poisson_mbo`` on it, and (``--mbo-variants``) PoissonMBO on the old
default graph with more fidelity, fewer or more diffusion steps, to locate the gap.

A graph given as W is the graph the learner builds itself with that ``graph_weight``
(same builder, same parameters), so the accuracies are those of the defaults.

Reported: mean accuracy on the unlabeled points per cell (``[n]``: over fewer than 10
draws), and for every weight against ``--against`` (``"gaussian"``) the mean paired
difference in points and its paired t (draws paired by seed).

Usage::

    OPENBLAS_NUM_THREADS=1 python bench/bench_graph_weight.py --cases mnist --json w.json
    python bench/bench_graph_weight.py --cases letter --no-gl --letter-draws 7 --first-draw 3 \
        --json letter_3_9.json
    python bench/bench_graph_weight.py --merge letter_0_2.json,letter_0_2_other_weight.json \
        letter_3_9.json --json letter.json
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
# a weight name, or "name(symmetrize)" for that weight under another symmetrization
WEIGHTS = ("gaussian", "self_tuned", "self_tuned_sym", "self_tuned(max)")
LEARNERS = {
    "LabelPropagation": lambda p: ("LabelPropagation", {}),
    "LabelPropagation(cmn)": lambda p: ("LabelPropagation", {"class_mass_normalization": True}),
    "LocalGlobalConsistency(0.99)": lambda p: ("LocalGlobalConsistency", {"alpha": 0.99}),
    "PoissonLearning": lambda p: ("PoissonLearning", {}),
    "PoissonMBO(priors)": lambda p: ("PoissonMBO", {"class_priors": p}),
    "LabelPropagation(wnll)": lambda p: ("LabelPropagation", {"reweighting": "wnll"}),
    "LabelPropagation(properly)": lambda p: ("LabelPropagation", {"reweighting": "properly"}),
    "LabelPropagation(poisson)": lambda p: ("LabelPropagation", {"reweighting": "poisson"}),
    "VolumeMBO(priors)": lambda p: ("VolumeMBO", {"class_priors": p, "random_state": 0}),
}
BASE = ("LabelPropagation", "LabelPropagation(cmn)", "LocalGlobalConsistency(0.99)",
        "PoissonLearning", "PoissonMBO(priors)")


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')} load {os.getloadavg()[0]:.1f}] {msg}", file=sys.stderr,
          flush=True)


def fit(name, params, W, X, y_train):
    import fastgssl.models as models

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = getattr(models, name)(graph=W, n_neighbors=K, **params)
        model.fit(X, y_train)  # W holds the graph; X is read by reweighting="properly" only
    return model


def build(X, wname):
    """The exact 10-NN graph of ``wname``: a weight (graphlearning's constant 4), or
    "weight(symmetrize)", or a candidate with options (``bench/graph_weight_candidates.py``:
    "self_tuned[c=3](max)", the learners' default graph)."""
    import graph_weight_candidates

    from fastgssl.graphs import knn_graph

    if graph_weight_candidates.is_candidate(wname):
        return graph_weight_candidates.build(X, wname, K)
    weight, _, how = wname.partition("(")
    return knn_graph(X, K, weight=weight, symmetrize=how.rstrip(")") or None)


def accuracy(pred, y, y_train):
    unl = y_train == -1
    return float(np.mean(np.asarray(pred)[unl] == y[unl]))


def paired(a, b):
    """Mean of a - b and its paired t over the draws both ran (None: a draw a merged run did
    not measure); nan for fewer than two pairs, +-inf for zero spread."""
    d = np.array([u - v for u, v in zip(a, b) if u is not None and v is not None])
    if d.size < 2:
        return float(d.mean()) if d.size else float("nan"), float("nan")
    sd = d.std(ddof=1)
    return float(d.mean()), (float(d.mean() / (sd / np.sqrt(d.size))) if sd > 0 else
                             (0.0 if d.mean() == 0 else float("inf") * np.sign(d.mean())))


def run_case(key, X, y, draws, gl, mbo_variants, learners, weights, out=None,
             on_draw=lambda: None):
    """Every learner on every weight's graph and draw; the cells fill ``out`` (returned),
    ``on_draw`` is called after each draw (a long run saves what it has)."""
    from bench_low_label import shared_graph

    priors = np.bincount(y) / y.size
    graphs = {w: build(X, w) for w in weights}
    if gl is not None:
        graphs["gl W"], _, _ = shared_graph(gl, X)
    out = {} if out is None else out
    for rate, ys in draws:
        for s, y_train in enumerate(ys):
            for wname, W in graphs.items():
                for lname in learners:
                    if wname == "gl W" and lname != "PoissonMBO(priors)":
                        continue
                    name, params = LEARNERS[lname](priors)
                    model = fit(name, params, W, X, y_train)
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
                                graphs["gaussian"], X, y_train)
                    out.setdefault("PoissonMBO variants", {}).setdefault(vname, {}) \
                        .setdefault(rate, []).append(accuracy(model.transduction_, y, y_train))
            log(f"{key} rate {rate} draw {s}")
            on_draw()
    return out


def merge(paths):
    """Runs of other draws (``--first-draw``) joined by draw: each file's draws follow the
    previous file's, and a cell a file did not measure gets None for them. ``a.json,b.json``
    is one run: the same draws, other weights or learners."""
    runs = [_union(str(p).split(",")) for p in paths]
    keys = list(dict.fromkeys(  # first-seen order, rates by size
        (c, m, w, r) for run in runs for c, case in run.items() for m, by_w in case.items()
        for w, cells in by_w.items() for r in sorted(cells, key=lambda r: (len(r), r))))
    out = {}
    for run in runs:
        for c in dict.fromkeys(k[0] for k in keys):
            case = run.get(c, {})
            rates = {k[3] for k in keys if k[0] == c}
            count = {r: max((len(cells.get(r, [])) for by_w in case.values()
                             for cells in by_w.values()), default=0) for r in rates}
            for (c2, m, w, r) in keys:
                if c2 == c:
                    got = case.get(m, {}).get(w, {}).get(r)
                    out.setdefault(c, {}).setdefault(m, {}).setdefault(w, {}) \
                        .setdefault(r, []).extend(got if got is not None else [None] * count[r])
    return out


def _union(paths):
    """Runs of the same draws with other cells (weights, learners): one run."""
    out = {}
    for path in paths:
        for c, case in json.loads(Path(path).read_text()).items():
            for m, by_w in case.items():
                for w, cells in by_w.items():
                    dest = out.setdefault(c, {}).setdefault(m, {}).setdefault(w, {})
                    if set(dest) & set(cells):
                        raise ValueError(f"{path}: {c} / {m} / {w} is in two runs of the "
                                         f"same draws")
                    dest.update(cells)
    return out


def _mean(values):
    values = [v for v in values if v is not None]
    return (f"{np.mean(values):.3f}" + (f" [{len(values)}]" if len(values) < 10 else "")
            if values else "-")


def report(results, base_weight="gaussian"):
    for key, case in results.items():
        print(f"\n### {key}\n")
        rates = list(next(iter(next(iter(case.values())).values())).keys())
        print("| method | graph | " + " | ".join(rates) + " |")
        print("|---|---|" + "---|" * len(rates))
        for lname, by_w in case.items():
            base = by_w.get(base_weight)
            for wname, cells in by_w.items():
                row = []
                for r in rates:
                    acc = cells.get(r, [])
                    text = _mean(acc)
                    if base is not None and wname != base_weight and acc:
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
    parser.add_argument("--first-draw", type=int, default=0,
                        help="seed of the first draw (runs of other seeds merge by seed)")
    parser.add_argument("--letter-draws", type=int, default=3)
    parser.add_argument("--weights", nargs="+", default=list(WEIGHTS[:3]),
                        help="weights, or weight(symmetrize), e.g. 'self_tuned(max)'")
    parser.add_argument("--rates", type=int, nargs="+", default=list(RATES))
    parser.add_argument("--learners", nargs="+", default=list(BASE),
                        help=f"any of {list(LEARNERS)}")
    parser.add_argument("--no-gl", action="store_true")
    parser.add_argument("--mbo-variants", action="store_true")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--merge", nargs="+", default=None,
                        help="report these runs' JSON files joined by draw (in seed order; "
                             "a,b: runs of the same draws; saved to --json) instead of "
                             "running")
    parser.add_argument("--against", default="gaussian",
                        help="the weight the others are paired against")
    args = parser.parse_args()
    if args.merge:
        results = merge(args.merge)
        if args.json is not None:
            args.json.write_text(json.dumps(results, indent=1))
        report(results, args.against)
        return 0
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
            draws = per_class_draws(y, args.rates, args.first_draw + n)
        else:
            n_s, n_l = (20_000, 150) if key == "classification" else (8_000, 80)
            X, y = make_classification(n_samples=n_s, n_features=30, random_state=0)
            draws = random_draws(y, n_l, args.first_draw + args.draws)
        draws = [(c, ys[args.first_draw:]) for c, ys in draws]
        def save():
            if args.json is not None:
                args.json.write_text(json.dumps(results, indent=1))

        results[key] = {}
        run_case(key, np.asarray(X, dtype=np.float64), y, draws,
                 gl if key == "mnist" else None, variants if key == "mnist" else None,
                 args.learners, args.weights, out=results[key], on_draw=save)
    report(results, args.against)
    return 0


if __name__ == "__main__":
    sys.exit(main())
