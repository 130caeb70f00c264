"""The few-labels guide's search against each fixed candidate of its grid (issue 38).

The recipe of ``docs/guide/low_labels.md`` at 2 labels per class (since issue 38c, ``--grid
poisson``, the default)::

    GridSearchCV(PoissonLearning(), {"n_neighbors": [5, 10, 20],
                                     "graph_symmetrize": ["mean", "max"]}, cv=5)

and before it (``--grid families``)::

    GridSearchCV(PoissonLearning(), {"estimator": [PoissonLearning(), LocalGlobalConsistency()],
                                     "n_neighbors": [5, 10, 20]}, cv=5)

at 2 labels per class (``hide_labels(y, 2, seed)``, seeds ``0..draws-1``): ``cv=5`` is lowered
to leave-one-label-out (``fastgssl.cv.folds_for_labels``). Every draw fits each fixed
candidate of the grid and runs the search, under each ``unlabeled_policy`` given
(``--policies``); accuracy is measured on the unlabeled points, an abstention (-1) counting as
an error. The kNN graphs do not depend on the labels, so each (symmetrization, k) graph is
built once per data set (a fit's ``graph_``) and handed to the candidates as ``graph=W``; the
search then runs over the candidates on their given graphs, in the recipe's grid order
(draw 0 also runs the recipe as written and records whether it picks the same candidate:
``recipe_same_choice``, and the largest difference of the CV errors).

The search's CV errors, its points left undecided and the grid order of every candidate are
stored per draw, so the JSON also scores other selection rules without a rerun
(``--report FILE`` prints the tables of a stored run): ``grid_order`` (first best in grid
order, what the search does), ``prefer_decided_then_larger_k`` (among candidates tied at the
best CV error: fewest points left undecided, then the larger k) and ties broken at random
(the mean accuracy over the tied candidates: how much the grid order decides).

Data sets: ``digits`` (scikit-learn, 1,797 x 64), ``mnist`` (the shared MNIST test images,
10,000 x 784, pixels in [0, 1]), ``letter`` (letter.scale + letter.scale.t, 20,000 x 16, 26
classes), or any shared LIBSVM name (features standardized when the command line's rule,
``fastgssl.cli._data._scaling_choice``, says so).

Usage::

    OPENBLAS_NUM_THREADS=1 python bench/bench_low_label_selection.py --datasets digits mnist \\
        letter --draws 10 --policies auto --no-two-fold \\
        --json docs/scripts/low_label_selection_poisson.json
    python bench/bench_low_label_selection.py --report docs/scripts/low_label_selection.json

Times are CPU seconds of this process (``time.process_time``) beside wall seconds; the load
average at the start and end of each data set is stored. The machine is shared: compare
ratios from one run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
import warnings

import numpy as np

KS = (5, 10, 20)
PER_CLASS = 2
# The grids measured (``--grid``): "families", the guide's recipe until issue 38c (two learner
# families x k); "poisson", its recipe since (one learner, symmetrization x k).
GRIDS = {"families": {"learners": ("PoissonLearning", "LocalGlobalConsistency"),
                      "symmetrize": ("mean",)},
         "poisson": {"learners": ("PoissonLearning",), "symmetrize": ("mean", "max")}}
GRID = dict(GRIDS["families"], name="families")


def load(name):
    """``(X, y)`` of a data set name (classes encoded 0..K-1)."""
    from fastgssl.datasets import load_libsvm, load_mnist_test

    if name == "digits":
        from sklearn.datasets import load_digits

        X, y = load_digits(return_X_y=True)
    elif name == "mnist":
        X, y = load_mnist_test()
    elif name == "letter":
        X, y = load_libsvm("letter.scale", dense=True)
        Xt, yt = load_libsvm("letter.scale.t", dense=True)
        X, y = np.vstack([X, Xt]), np.concatenate([y, yt])
    else:
        from fastgssl.cli._data import _scaling_choice, _standardize

        X, y = load_libsvm(name, dense=True)
        if _scaling_choice(X)[0]:
            X = _standardize(X, X[:1])[0]
    return np.asarray(X, dtype=np.float64), np.unique(y, return_inverse=True)[1]


def learner(name, **params):
    from fastgssl.models import LocalGlobalConsistency, PoissonLearning

    return {"PoissonLearning": PoissonLearning,
            "LocalGlobalConsistency": LocalGlobalConsistency}[name](**params)


def candidates(grid=None):
    """The recipe's grid in GridSearchCV's order (sorted keys: estimator, graph_symmetrize,
    n_neighbors): ``(learner, symmetrize, k)`` triples."""
    grid = GRID if grid is None else grid
    return [(name, sym, k) for name in grid["learners"] for sym in grid["symmetrize"]
            for k in KS]


def cand_name(name, sym, k):
    """A candidate's key in the JSON (the families grid keeps its pre-38c keys)."""
    return f"{name}/k={k}" if GRID["name"] == "families" else f"{name}/{sym}/k={k}"


def accuracy(pred, y, unl):
    return float(np.mean(pred[unl] == y[unl]))  # -1 (abstention) is an error


def graphs(X, y):
    from fastgssl.datasets import hide_labels
    from fastgssl.models import PoissonLearning

    y0 = hide_labels(y, PER_CLASS, 0)
    out = {}
    for sym in GRID["symmetrize"]:
        for k in KS:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out[sym, k] = PoissonLearning(n_neighbors=k, graph_symmetrize=sym).fit(
                    X, y0).graph_
    return out


def _reached(W, y_ssl):
    """Points whose graph component holds a label."""
    from scipy.sparse.csgraph import connected_components

    comp = connected_components(W, directed=False)[1]
    return np.isin(comp, comp[y_ssl >= 0])


def one_draw(X, y, W, seed, policy, check_recipe, two_fold=True):
    from fastgssl._folds import make_folds
    from fastgssl.cv import GridSearchCV
    from fastgssl.datasets import hide_labels

    y_ssl = hide_labels(y, PER_CLASS, seed)
    unl = y_ssl == -1
    rec = {"seed": seed, "policy": policy, "fixed": {}}
    for name, sym, k in candidates():
        est = learner(name, graph=W[sym, k], n_neighbors=k, graph_symmetrize=sym,
                      unlabeled_policy=policy)
        c0 = time.process_time()
        est.fit(X, y_ssl)
        reached = _reached(W[sym, k], y_ssl)
        rec["fixed"][cand_name(name, sym, k)] = {
            "accuracy": accuracy(est.transduction_, y, unl),
            # the same fit had it abstained where no label is connected
            "accuracy_if_abstaining": accuracy(np.where(reached, est.transduction_, -1), y,
                                               unl),
            "n_undecided": int(np.count_nonzero(est.transduction_ == -1)),
            "cpu_seconds": time.process_time() - c0}
    grid = {"estimator": [learner(name, graph=W[sym, k], n_neighbors=k, graph_symmetrize=sym,
                                  unlabeled_policy=policy)
                          for name, sym, k in candidates()]}
    variants = [("search", 5), ("search_2fold", make_folds(y_ssl, 2, random_state=seed))]
    for key, cv in variants[:1 + two_fold]:
        c0, t0 = time.process_time(), time.perf_counter()
        s = GridSearchCV(learner("PoissonLearning"), grid, cv=cv, random_state=seed,
                         refit=False).fit(X, y_ssl)
        res = s.cv_results_
        rec[key] = {
            "n_folds": int(s.n_splits_),
            "cv_error": [float(e) for e in res["mean_cv_error"]],
            "n_undecided": [int(u) for u in res.get("n_undecided", np.zeros(len(candidates())))],
            "best_index": int(s.best_index_),
            "cpu_seconds": time.process_time() - c0,
            "wall_seconds": time.perf_counter() - t0}
    if check_recipe:  # the recipe as written: graphs built by the search
        recipe = {"estimator": [learner(n, unlabeled_policy=policy) for n in GRID["learners"]],
                  "graph_symmetrize": list(GRID["symmetrize"]), "n_neighbors": list(KS)}
        r = GridSearchCV(learner("PoissonLearning"), recipe, cv=5, random_state=seed,
                         refit=False).fit(X, y_ssl)
        p = r.best_params_
        chosen = candidates()[rec["search"]["best_index"]]
        rec["recipe_same_choice"] = bool(
            (type(p["estimator"]).__name__, p["graph_symmetrize"], p["n_neighbors"]) == chosen)
        rec["recipe_cv_error_max_diff"] = float(np.max(np.abs(
            np.asarray(r.cv_results_["mean_cv_error"]) - rec["search"]["cv_error"])))
    return rec


# ---- selection rules over a draw's stored search results ----------------------------------

def rule_grid_order(search):
    err = np.asarray(search["cv_error"])
    return int(np.flatnonzero(err == err.min())[0])


def rule_prefer_decided_then_larger_k(search):
    err = np.asarray(search["cv_error"])
    und = np.asarray(search["n_undecided"])
    tied = np.flatnonzero(err == err.min())
    ks = np.array([k for _, _, k in candidates()])
    # fewest undecided, then the larger k, then grid order
    return int(min(tied, key=lambda i: (und[i], -ks[i], i)))


def rule_search(search):
    return int(search["best_index"])


SEARCHES = {"search": "search cv=5 (leave-one-label-out)",
            "search_2fold": "search, 2 stratified folds"}
RULES = {"search (as run)": rule_search, "grid_order": rule_grid_order,
         "prefer_decided_then_larger_k": rule_prefer_decided_then_larger_k}


def report(data, out=sys.stdout):
    grid = dict(data.get("grid", dict(GRIDS["families"], name="families")))
    GRID.clear()
    GRID.update(grid)
    names = [cand_name(*c) for c in candidates()]
    for ds in data["datasets"]:
        for policy in data["policies"]:
            draws = [d for d in ds["draws"] if d["policy"] == policy]
            if not draws:
                continue
            acc = {n: np.array([d["fixed"][n]["accuracy"] for d in draws]) for n in names}
            best_fixed = max(names, key=lambda n: acc[n].mean())
            print(f"\n{ds['name']} (n = {ds['n']}), {PER_CLASS} labels per class, "
                  f"unlabeled_policy={policy!r}, {len(draws)} draws, "
                  f"{draws[0]['search']['n_folds']} folds\n", file=out)
            print("| selection | mean accuracy | minus best fixed (points) | picks |", file=out)
            print("|---|---|---|---|", file=out)
            for n in names:
                und = np.mean([d["fixed"][n]["n_undecided"] for d in draws])
                print(f"| fixed {n} | {acc[n].mean():.4f} | "
                      f"{100 * (acc[n].mean() - acc[best_fixed].mean()):+.2f} | "
                      f"undecided {und:.0f} |", file=out)
            for key in [k for k in SEARCHES if k in draws[0]]:
                for rule, fn in RULES.items():
                    picks = [fn(d[key]) for d in draws]
                    a = np.array([d["fixed"][names[i]]["accuracy"]
                                  for d, i in zip(draws, picks)])
                    counts = {}
                    for i in picks:
                        counts[names[i]] = counts.get(names[i], 0) + 1
                    top = ", ".join(f"{k} x{v}" for k, v in sorted(counts.items(),
                                                                    key=lambda kv: -kv[1]))
                    print(f"| {SEARCHES[key]}, {rule} | {a.mean():.4f} | "
                          f"{100 * (a.mean() - acc[best_fixed].mean()):+.2f} | {top} |",
                          file=out)
            for key in [k for k in SEARCHES if k in draws[0]]:
                # how much grid order decides: draws whose best CV error several candidates
                # share, and the mean accuracy had such ties been broken at random
                tied = [np.flatnonzero(np.asarray(d[key]["cv_error"])
                                       == min(d[key]["cv_error"])) for d in draws]
                a = np.mean([np.mean([d["fixed"][names[i]]["accuracy"] for i in t])
                             for d, t in zip(draws, tied)])
                print(f"| {SEARCHES[key]}, ties broken at random (tied in "
                      f"{sum(t.size > 1 for t in tied)} of {len(draws)} draws) | {a:.4f} | "
                      f"{100 * (a - acc[best_fixed].mean()):+.2f} | |", file=out)
            for key in [k for k in SEARCHES if k in draws[0]]:
                cpu = np.median([d[key]["cpu_seconds"] for d in draws])
                wall = np.median([d[key]["wall_seconds"] for d in draws])
                print(f"\n{SEARCHES[key]}: median {cpu:.2f} CPU s, {wall:.2f} wall s; "
                      f"load {ds['load']}", file=out)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["digits", "mnist", "letter"])
    parser.add_argument("--draws", type=int, default=10)
    parser.add_argument("--first-seed", type=int, default=0,
                        help="seeds first-seed .. first-seed + draws - 1 (split a run)")
    parser.add_argument("--policies", nargs="+", default=["abstain", "nearest"])
    parser.add_argument("--no-two-fold", dest="two_fold", action="store_false",
                        help="skip the search on 2 stratified folds")
    parser.add_argument("--no-check", dest="check", action="store_false",
                        help="skip draw 0's run of the recipe as written (graphs rebuilt)")
    parser.add_argument("--grid", choices=sorted(GRIDS), default="poisson",
                        help="the candidates: 'poisson' (the guide's recipe: PoissonLearning, "
                             "graph_symmetrize x k) or 'families' (Poisson and LGC x k)")
    parser.add_argument("--json", default=None)
    parser.add_argument("--report", default=None, help="print the tables of a stored run")
    args = parser.parse_args(argv)
    if args.report:
        with open(args.report) as fh:
            report(json.load(fh))
        return
    GRID.clear()
    GRID.update(GRIDS[args.grid], name=args.grid)
    warnings.simplefilter("ignore")  # components without labels, folds lowered, collapses
    data = {"command": " ".join(["python"] + sys.argv),
            "commit": subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True,
                                     text=True).stdout.strip(),
            "machine": platform.platform(), "cpus": os.cpu_count(),
            "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS"),
            "per_class": PER_CLASS, "ks": list(KS), "grid": GRID,
            "policies": args.policies, "datasets": []}
    for name in args.datasets:
        X, y = load(name)
        ds = {"name": name, "n": int(X.shape[0]), "d": int(X.shape[1]),
              "classes": int(y.max() + 1), "load": [os.getloadavg()[0]], "draws": []}
        W = graphs(X, y)
        data["datasets"].append(ds)
        for seed in range(args.first_seed, args.first_seed + args.draws):
            for policy in args.policies:
                rec = one_draw(X, y, W, seed, policy, check_recipe=seed == 0 and args.check,
                               two_fold=args.two_fold)
                ds["draws"].append(rec)
                print(f"{name} seed {seed} {policy}: search picks "
                      f"{candidates()[rec['search']['best_index']]}, "
                      f"{rec['search']['cpu_seconds']:.1f} CPU s", file=sys.stderr, flush=True)
            ds["load_now"] = os.getloadavg()[0]
            if args.json:  # after every draw: a partial run keeps what it measured
                with open(args.json, "w") as fh:
                    json.dump(data, fh, indent=1)
        ds["load"].append(os.getloadavg()[0])
    report(data)


if __name__ == "__main__":
    main()
