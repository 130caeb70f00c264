"""The text report of ``fastgssl select`` (``--json`` prints the report dict itself)."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np


def json_params(params):
    """A search's ``best_params_`` as the report holds them: booleans and integers stay what
    they are (``PoissonLearning(n_neighbors=5.0)`` is refused), other reals become floats,
    anything else is kept as given."""
    out = {}
    for key, v in params.items():
        if isinstance(v, (bool, np.bool_)):
            out[key] = bool(v)
        elif isinstance(v, Integral):
            out[key] = int(v)
        elif isinstance(v, Real):
            out[key] = float(v)
        else:
            out[key] = v
    return out


def _params_text(params):
    return ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                     for k, v in params.items())


def _print_report(r, out):
    p = lambda *a: print(*a, file=out)  # noqa: E731
    p(f"dataset      {r['dataset']}: {r['n_train']} train ({r['n_labeled']} labeled), "
      f"{r['n_test']} test")
    p(f"task         {r['task']}: {r['task_reason']}")
    p(f"features     {r['features']}")
    if r.get("target"):
        t = r["target"]
        p("targets      " + (f"standardized (labeled training mean {t['mean']:.4g}, std "
                             f"{t['std']:.4g}; --no-standardize-target keeps them)"
                             if t["standardized"] else "as loaded (--no-standardize-target)"))
    for note in r.get("notes", []):
        p(f"note         {note}")
    p(f"model        {r['model']}" + (f" ({r['backend']} backend)" if r.get("backend") else "")
      + f", {r['folds']}-fold {r['method']} ({r['protocol']}) over "
      f"{r['grid_size']} grid points")
    p("chosen       " + _params_text(r["best_params"]))
    p(f"units        {r['criterion']} in {r['criterion_units']}")
    data_units = lambda key: (f" ({r[key]:.4g} in the data's units)"  # noqa: E731
                              if key in r else "")
    p(f"CV criterion {r['cv_criterion']:.4f}{data_units('cv_criterion_data_units')} "
      f"({r['criterion']}, labeled held-out points)")
    p(f"test error   {r['test_error']:.4f}{data_units('test_error_data_units')} "
      f"({r['criterion']}, 30 % held-out split)")
    p(f"search time  {r['search_seconds']:.2f} s ({1e3 * r['seconds_per_grid_point']:.1f} ms "
      f"per grid point)" + (f", {r['n_verified']} candidate(s) re-scored by exact CV "
                           f"(--verify {r['verify']})" if r["verify"] else ""))
    if r["compile_seconds"] > 0:
        p(f"compile time {r['compile_seconds']:.2f} s (Numba compiling its kernels on a first "
          f"run, {r['search_compile_seconds']:.2f} s of it during the search; left out of the "
          f"other times, and read from Numba's disk cache on later runs)")
    else:
        p("compile time 0 s (every kernel read from Numba's disk cache)")
    s = r["selected_point"]
    p(f"at the chosen point: {r['method']} CV {s['approx_cv']:.4f} in "
      f"{s['approx_seconds']:.3f} s; exact {r['folds']}-CV {s['exact_cv']:.4f} in "
      f"{s['exact_seconds']:.3f} s ({s['speedup']:.1f}x)")
    if "baselines" in r:
        b = r["baselines"]
        s_ = b["svm_labeled_only"]
        p(f"baseline     SVM on the {r['n_labeled']} labeled points alone ({s_['method']}): "
          f"test error {s_['test_error']:.4f} ({s_['seconds']:.2f} s)")
        for key, what in (("label_spreading_knn", "kNN graph as the model's"),
                          ("label_spreading_defaults", "its defaults")):
            ls = b[key]
            args = ", ".join(f"{k}={v!r}" for k, v in ls["params"].items())
            if "skipped" in ls:
                p(f"baseline     scikit-learn LabelSpreading({args}), {what}: skipped, "
                  f"{ls['skipped']}")
                continue
            unscored = (f"; {ls['n_test_unscored']} test point(s) got 0/0 probabilities and "
                        f"its first class" if ls["n_test_unscored"] else "")
            p(f"baseline     scikit-learn LabelSpreading({args}), {what}: test error "
              f"{ls['test_error']:.4f} ({ls['seconds']:.2f} s{unscored})")
    if "verdict" in r:
        p(f"verdict      {r['verdict']}")
    if "exact_search" in r:
        e = r["exact_search"]
        p("exact search chose " + _params_text(e["best_params"])
          + f": CV {e['cv_criterion']:.4f}, test error {e['test_error']:.4f}, "
          f"{e['search_seconds']:.2f} s ({e['speedup']:.1f}x the {r['method']} search)")
    for message in r.get("warnings", []):
        p(f"warning      {message}")
