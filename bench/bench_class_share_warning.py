"""ClassShareWarning's false alarms and misses on the low-label benchmark cases (issue 51).

A fit *collapses* when some class c with true share t_c (the data set's, known here),
expected on at least 20 unlabeled points, is predicted on less than a quarter of it
(q_c < t_c / 4): the rule the warning applies when the true shares are given as
``class_priors``, here applied with the truth. Without priors the warning has only the
labels; this script counts, per learner and case, the fits that warn without collapsing
(false alarms) and the collapses that do not warn (misses), for the rule in
``fastgssl.models._balance.check_class_shares`` (half the Wilson lower bound L at z = 3 on a
class's share given its label count), for the same rule at a quarter of L, and for the former
one (a tenth of the labels' share).

Cases (``bench/bench_low_label.py``'s): ``make_classification(8000, 30)`` with 80 random
labels and ``make_classification(20000, 30)`` with 150 (10 draws each), the shared MNIST test
images and letter at 1, 2, 5 and 10 labels per class (``hide_labels``, ``--draws`` draws).
Learners at their defaults (own 10-NN graph, built once per case and passed as ``graph=``):
``LabelPropagation``, ``LabelPropagation(class_mass_normalization=True)``,
``LocalGlobalConsistency(alpha=0.99)``, ``PoissonLearning()``.

Usage::

    OPENBLAS_NUM_THREADS=1 nice -n 5 python bench/bench_class_share_warning.py --draws 3
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_low_label import load_case, per_class_draws, random_draws  # noqa: E402

LEARNERS = {
    "LabelPropagation": ("LabelPropagation", {}),
    "LabelPropagation(cmn)": ("LabelPropagation", {"class_mass_normalization": True}),
    "LocalGlobalConsistency(0.99)": ("LocalGlobalConsistency", {"alpha": 0.99}),
    "PoissonLearning": ("PoissonLearning", {}),
}


# the rule's LABEL_FRACTION (the first is the package's), each measured
FRACTIONS = (1 / 3, 0.5, 0.25)


def former_rule(q, p, n_u):
    """The rule before issue 51: q_c < p_c / 10 with p the labels' shares."""
    return bool(((p * n_u >= 20) & (q < p / 10)).any())


def verdicts(model, y, y_train):
    """(collapsed, warns now, warned before, largest share) of a fitted model."""
    from fastgssl import ClassShareWarning
    from fastgssl.models import _balance as balance
    from fastgssl.models._balance import check_class_shares

    k = model.classes_.size
    unl = (y_train < 0) & (model.transduction_ != -1)
    decided = np.searchsorted(model.classes_, model.transduction_[unl])
    counts = np.bincount(y_train[y_train >= 0], minlength=k)
    n_u = decided.size
    q = np.bincount(decided, minlength=k) / n_u
    t = np.bincount(y[unl], minlength=k) / n_u
    collapsed = bool(((t * n_u >= 20) & (q < t / 4)).any())
    warns = []
    for fraction in FRACTIONS:
        balance.LABEL_FRACTION = fraction
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            check_class_shares(decided, counts, model.classes_, "m", "")
        warns.append(any(issubclass(w.category, ClassShareWarning) for w in caught))
    balance.LABEL_FRACTION = FRACTIONS[0]
    return (collapsed, *warns, former_rule(q, counts / counts.sum(), n_u), float(q.max()))


def run(name, X, y, draws, out):
    import fastgssl.models as models

    graph = None
    for col, ys in draws:
        for y_train in ys:
            for label, (cls, params) in LEARNERS.items():
                est = getattr(models, cls)(n_neighbors=10, **params,
                                           **({} if graph is None else {"graph": graph}))
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    model = est.fit(X, y_train)
                graph = model.graph_ if graph is None else graph
                out.append((name, col, label) + verdicts(model, y, y_train)
                           + (float(np.mean(model.transduction_[y_train < 0]
                                            == y[y_train < 0])),))
                print(*out[-1], sep="\t", file=sys.stderr, flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--draws", type=int, default=3, help="label draws per MNIST / letter "
                                                             "cell (the synthetic cases: 10)")
    parser.add_argument("--cases", nargs="+", default=["c8000", "c20000", "mnist", "letter"])
    args = parser.parse_args()
    from sklearn.datasets import make_classification

    out = []
    for case in args.cases:
        if case in ("c8000", "c20000"):
            n, labels = (8000, 80) if case == "c8000" else (20000, 150)
            X, y = make_classification(n_samples=n, n_features=30, random_state=0)
            run(case, X, y, random_draws(y, labels, 10), out)
        else:
            name, X, y = load_case(case)
            run(case, X, y, per_class_draws(y, (1, 2, 5, 10), args.draws), out)
    names = [f"warns (L/{1 / f:g})" for f in FRACTIONS] + ["warned (p/10, before)"]
    print("| case | learner | fits | collapses | "
          + " | ".join(f"{n} | false alarms | misses" for n in names) + " |")
    print("|---" * (4 + 3 * len(names)) + "|")
    keys = sorted({(r[0], r[2]) for r in out}, key=lambda k: (args.cases.index(k[0]), k[1]))
    for case, label in keys:
        rows = [r for r in out if r[0] == case and r[2] == label]
        c = np.array([r[3] for r in rows])
        cells = []
        for j in range(len(names)):
            w = np.array([r[4 + j] for r in rows])
            cells.append(f"{w.sum()} | {(w & ~c).sum()} | {(c & ~w).sum()}")
        print(f"| {case} | {label} | {len(rows)} | {c.sum()} | " + " | ".join(cells) + " |")

if __name__ == "__main__":
    main()
