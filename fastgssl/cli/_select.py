"""The ``select`` job: a grid search by cross-validation on the training split, its test
error, the approximate against the exact CV at the chosen point, the baselines, and the
report (a dict, what ``--json`` prints).

:mod:`fastgssl.cv` and scikit-learn's model selection and semi-supervised estimators are
imported where the job runs, not at module top: they take seconds to import and
``fastgssl --help`` / ``--version`` need none of them.
"""

from __future__ import annotations

import warnings

import numpy as np

from fastgssl import models
from fastgssl._jit import CompileClock
from fastgssl.cli._data import (
    _encode_targets,
    _guess_task,
    _hide_labels,
    _load,
    _n_folds,
    _scaling_choice,
    _split,
    _standardize,
)
from fastgssl.cli._models import (
    _BACKENDS,
    _DEFAULT_MODEL,
    _MODELS,
    _check_options,
    _choose_backend,
    _estimator,
    _grid,
)
from fastgssl.cli._progress import _Progress
from fastgssl.cli._report import json_params
from fastgssl.cli._warnings import recorded, summarize
from fastgssl.exceptions import OptimisticCriterionWarning


def _label_spreading(X_tr, y_fit, X_te, y_te, clock, **params):
    """scikit-learn's LabelSpreading: its test error, time and the test points it could
    not score. A test row whose kernel weights, or whose neighbours' label distributions,
    are all 0 (the RBF kernel at the default gamma underflows far from the training points;
    on a kNN graph the spreading may not reach a neighbourhood) gets 0/0 probabilities:
    scikit-learn warns and predicts its first class. Counted here, the warning not leaked."""
    from sklearn.semi_supervised import LabelSpreading

    with clock.split() as spent, warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        ls = LabelSpreading(**params).fit(X_tr, y_fit)
        proba = ls.predict_proba(X_te)
        pred = ls.classes_[np.argmax(np.nan_to_num(proba, nan=-1.0), axis=1)]
    return {"params": params, "test_error": float(np.mean(pred != y_te)),
            "seconds": spent["run"],
            "n_test_unscored": int(np.count_nonzero(np.isnan(proba).any(axis=1)))}


# scikit-learn's LabelSpreading at its defaults holds a dense n x n RBF kernel and copies of
# it: beyond 1 GiB per copy (n > 11,585) the baseline would dominate the run (a1a.t's 21,669
# training points: 3.5 GiB per copy, more than 14 minutes under load), so it is skipped with
# the numbers in the report
LABEL_SPREADING_MAX_BYTES = 2**30


def _baselines(X_tr, y_fit, X_te, y_te, folds, quick, random_state, n_neighbors, clock,
               progress, dense=True):
    """What the unlabeled points buy: an SVM selected on the labeled points alone (same
    folds, exact search), and scikit-learn's LabelSpreading on the same kNN graph size k as
    the model and at its defaults (an RBF kernel on every pair: a dense n x n matrix and its
    copies, skipped with a reason when the model's own dense route was, ``dense=False``, or
    when one copy would pass ``LABEL_SPREADING_MAX_BYTES``)."""
    from fastgssl.cv import GridSearchCV

    labeled = y_fit != -1
    out = {}
    with progress.bar("baselines", 3, "model") as bar:
        with clock.split() as spent:
            svm = GridSearchCV(models.SVM(random_state=random_state),
                                     _grid("svm", X_tr[labeled], quick), cv=folds[labeled],
                                     random_state=random_state).fit(X_tr[labeled],
                                                                    y_fit[labeled])
        out["svm_labeled_only"] = {
            "test_error": _test_error(svm.best_estimator_, X_te, y_te, "classification"),
            "seconds": spent["run"], "best_params": json_params(svm.best_params_),
            "method": f"{svm.n_splits_}-fold {svm.method_}"
                      + (" + verify" if svm.verify_ else "")}
        bar.update(1)
        out["label_spreading_knn"] = _label_spreading(
            X_tr, y_fit, X_te, y_te, clock, kernel="knn", n_neighbors=int(n_neighbors))
        bar.update(1)
        n = X_tr.shape[0]
        if dense and n * n * 8 <= LABEL_SPREADING_MAX_BYTES:
            out["label_spreading_defaults"] = _label_spreading(X_tr, y_fit, X_te, y_te, clock)
        else:
            why = ("the model's dense route was already too large" if not dense else
                   f"that is {n * n * 8 / 2**30:.1f} GiB per copy, over the "
                   f"{LABEL_SPREADING_MAX_BYTES / 2**30:.0f} GiB this report allows a baseline")
            out["label_spreading_defaults"] = {
                "params": {}, "skipped": (
                    f"its RBF kernel is a dense {n:,} x {n:,} matrix (with copies), and {why}")}
        bar.update(1)
    return out


def _test_error(est, X, y, task):
    pred = est.predict(X)
    if task == "classification":
        return float(np.mean(pred != y))
    return float(np.mean((pred - y) ** 2))


def select(dataset="digits", model=None, method=None, folds=None, labeled_fraction=None,
           n_components=None, quick=False, compare_exact=False, n_jobs=None, random_state=0,
           verbose=0, verify="best", standardize="auto", standardize_target=True, task=None,
           labels_per_class=None, backend="auto"):
    """Run the ``select`` job and return its report as a dict (what ``--json`` prints).

    ``dataset`` is a name (``"digits"``, ``"breast_cancer"``, a LIBSVM path or shared name)
    or a tuple ``(X, y[, name])``; labels that are None / NaN mark unlabeled points: the
    semi-supervised models (laprls, lapsvm) use them as extra unlabeled training points, the
    supervised ones leave them out (both said in the report). ``-1`` is a class here (as in
    LIBSVM files), not a marker: the job hides labels itself (``labeled_fraction``, default
    0.1, or ``labels_per_class``; both refused for the supervised models krr / svm).
    ``task`` (``"classification"`` / ``"regression"``) overrides the guess from the labels;
    ``folds=None`` is 10 lowered to what the smallest labeled class allows.
    ``labels_per_class`` keeps that many labels per class instead of ``labeled_fraction``.
    ``backend`` (``"auto"``, ``"dense"``, ``"nystrom"``): the kernel models' backend; auto
    takes nystrom when the dense route would not fit or finish soon (a note says so), and
    ``"dense"`` is refused with a ValueError when it would not fit or finish.
    ``verbose``: 0 silent, 1 progress bars on stderr, 2 also the search's lines.
    ``standardize``: True, False or ``"auto"`` (the default: standardize features of mixed
    ranges, leave one common range or columns mostly of codes alone,
    :func:`fastgssl.cli._data._scaling_choice`; the report's ``features`` says which and why).
    Warnings raised by the run are not printed: the report's ``warnings`` holds one line
    each in the command line's words, with its count, and ``warnings_raised`` the
    category, count and message of each (:mod:`fastgssl.cli._warnings`).
    """
    with CompileClock() as clock, recorded() as caught:
        report = _select(clock, dataset, model, method, folds, labeled_fraction, n_components,
                         quick, compare_exact, n_jobs, random_state, verbose, verify,
                         standardize, standardize_target, task, labels_per_class, backend)
        report["compile_seconds"] = clock.seconds
    lines, details = summarize(caught)
    report["warnings"] = report["warnings"] + lines
    report["warnings_raised"] = details
    return report


def _select(clock, dataset, model, method, folds, labeled_fraction, n_components, quick,
            compare_exact, n_jobs, random_state, verbose, verify, standardize,
            standardize_target, task, labels_per_class=None, backend="auto"):
    from fastgssl.cv import GridSearchCV, cv_result

    progress = _Progress(verbose)
    X_all, y_raw, missing, base, description = _load(dataset)
    task_guessed = task is None
    task, task_reason = _guess_task(base, y_raw[~missing], task)
    y_all, classes = _encode_targets(y_raw, missing, task)
    if model is None:
        model = _DEFAULT_MODEL[task]
    if method is None:
        method = "auto"
    if backend not in _BACKENDS:
        raise ValueError(f"--backend must be one of {', '.join(_BACKENDS)}, got {backend!r}.")
    _check_options(model, method, labeled_fraction, labels_per_class, n_components)
    est = _estimator(model, task, random_state)
    semi = _MODELS[model].semi_supervised
    X, y = X_all[~missing], y_all[~missing]
    X_unl = X_all[missing]
    if missing.any() and task == "classification":
        _refuse_partly_labeled(y, int(missing.sum()), dataset)
    X_tr, X_te, y_tr, y_te = _split(X, y, task, random_state, task_guessed)
    notes = []
    n_marked = int(missing.sum())
    if n_marked:
        if semi:
            X_tr = np.vstack([X_tr, X_unl])
            notes.append(f"{n_marked} point(s) with a None / NaN label joined the training "
                         f"split as unlabeled points (select reports a test error; "
                         f"fastgssl label writes labels for them)")
        else:
            notes.append(f"{n_marked} point(s) with a None / NaN label were left out (a "
                         f"supervised model has no use for them; laprls / lapsvm would use "
                         f"them)")
    if standardize is None or standardize == "auto":  # read off X (no data set names)
        standardize, features = _scaling_choice(X_tr)
    else:
        features = ("standardized (training split's mean and standard deviation, "
                    "--standardize)" if standardize else "as loaded (--no-standardize)")
    if standardize:
        X_tr, X_te = _standardize(X_tr, X_te)
    y_fit, hidden_by = y_tr, None
    if semi:
        fraction = 0.1 if labeled_fraction is None else labeled_fraction
        y_fit, cap_note = _hide_labels(y_tr, fraction, task, random_state, labels_per_class)
        hidden_by = (f"--labels-per-class {labels_per_class}" if labels_per_class is not None
                     else f"--labeled-fraction {fraction:g}")
        if cap_note:
            notes.append(cap_note)
    if n_marked and semi:
        marker = np.full(n_marked, -1 if task == "classification" else np.nan,
                         dtype=y_fit.dtype)
        y_fit = np.concatenate([y_fit, marker])
    try:
        fold_ids, folds_note = _n_folds(folds, y_fit, task, classes, random_state, hidden_by,
                                        task_guessed)
    except ValueError as exc:
        if not n_marked:
            raise
        raise ValueError(f"{exc} This file came partly labeled ({n_marked:,} None / NaN "
                         f"labels): select hides most of the given labels again to measure "
                         f"a test error. To label its unlabeled points with every given "
                         f"label kept, run: fastgssl label {_file_name(dataset)} -o "
                         f"labels.csv") from None
    folds = int(np.unique(fold_ids).size)
    if folds_note:
        notes.append(folds_note)
    target = None
    scale2 = 1.0
    if task == "regression":
        labeled_y = y_fit[~np.isnan(y_fit)]
        if standardize_target:
            mu = float(labeled_y.mean())
            sd = float(labeled_y.std()) or 1.0
            y_fit = (y_fit - mu) / sd
            y_te = (y_te - mu) / sd
            scale2 = sd * sd
            target = {"standardized": True, "mean": mu, "std": sd}
        else:
            target = {"standardized": False}
    if task == "classification":
        criterion = "0-1 error"
        units = "fraction of misclassified points"
    elif standardize_target:
        criterion = "mean squared error"
        units = (f"squared standardized target units (multiply by std^2 = {scale2:.6g} for "
                 f"the data's units)")
    else:
        criterion = "mean squared error"
        units = "squared target units (targets as loaded)"
    grid = _grid(model, X_tr, quick)
    n_cand = int(np.prod([len(v) for v in grid.values()]))
    # before any n x n work: the dense route refused (--backend dense) or replaced (auto)
    # when it would not fit or finish
    backend, backend_note = _choose_backend(backend, model, X_tr.shape[0], grid, quick)
    if backend_note:
        notes.append(backend_note)
    if backend is not None:
        est.set_params(backend=backend)
        if backend == "nystrom" and n_components is not None:
            est.set_params(n_components=int(n_components))
    verify = _parse_verify(verify)  # validated for every method, used by approximate ones
    if method in ("exact", "exact-quadratic", "auto"):
        verify = None  # auto verifies by itself where it picks an approximation
    search_verbose = min(int(verbose), 2)

    with clock.split() as spent:  # its warnings are recorded by select()
        with progress.search(f"{folds}-fold {method} search", n_cand):
            search = GridSearchCV(est, grid, cv=fold_ids, method=method,
                                        n_components=n_components, n_jobs=n_jobs,
                                        random_state=random_state, verbose=search_verbose,
                                        verify=verify).fit(X_tr, y_fit)
    progress.candidates(f"{folds}-fold {method} search", search)
    if method == "auto":  # what the default picked, and its verification
        method = search.method_
        verify = search.verify_
    best = search.best_estimator_
    test_error = _test_error(best, X_te, y_te, task)
    report = {
        "dataset": description,
        "task": task,
        "task_reason": task_reason,
        "model": model,
        "backend": backend,
        "n_train": int(X_tr.shape[0]),
        "n_labeled": int(np.count_nonzero(y_fit != -1) if task == "classification"
                         else np.count_nonzero(~np.isnan(y_fit))),
        "n_test": int(X_te.shape[0]),
        "n_unlabeled_given": n_marked,
        "features": features,
        "target": target,
        "method": method,
        "folds": folds,
        "grid_size": n_cand,
        "best_params": json_params(search.best_params_),
        "cv_criterion": search.best_cv_error_,
        "criterion": criterion,
        "criterion_units": units,
        "test_error": test_error,
        "search_seconds": spent["run"],
        "search_compile_seconds": spent["compile"],
        "seconds_per_grid_point": spent["run"] / n_cand,
        "verify": verify,
        "n_verified": search.n_verified_,
        "notes": notes,
    }
    report["protocol"] = search.protocol_
    if semi and task == "classification":
        report["baselines"] = _baselines(X_tr, y_fit, X_te, y_te, fold_ids, quick,
                                         random_state,
                                         best.n_neighbors, clock, progress,
                                         dense=backend != "nystrom")
    if "baselines" in report:
        report["verdict"] = _verdict(model, test_error,
                                     report["baselines"]["svm_labeled_only"]["test_error"],
                                     report["n_labeled"])
    if task == "regression" and standardize_target:
        report["test_error_data_units"] = test_error * scale2
        report["cv_criterion_data_units"] = search.best_cv_error_ * scale2
    # approximate vs exact CV at the selected point: one run of each
    point = type(est)(**best.get_params())
    with progress.bar("CV at the chosen point", 2, "run") as bar:
        # the exact run beside it judges the approximation: its own optimism warning would
        # only repeat what the comparison below says with both numbers
        with clock.split() as t_approx, warnings.catch_warnings():
            warnings.simplefilter("ignore", OptimisticCriterionWarning)
            approx = cv_result(point, X_tr, y_fit, search.folds_, method=method,
                               **({"n_components": n_components}
                                  if method in ("fbif", "fbif-margin") else {}))
        bar.update(1)
        with clock.split() as t_exact:
            exact = cv_result(point, X_tr, y_fit, search.folds_, method="exact")
        bar.update(1)
    report["selected_point"] = {
        "approx_cv": approx.score,
        "exact_cv": exact.score,
        "approx_seconds": t_approx["run"],
        "exact_seconds": t_exact["run"],
        "speedup": t_exact["run"] / max(t_approx["run"], 1e-12),
        "approx_exact_gap": abs(approx.score - exact.score),
        "exact_graph_mode": exact.graph_mode,
        "approx_form": approx.form,
    }
    gap = report["selected_point"]["approx_exact_gap"]
    report["warnings"] = []
    exact_method = method in ("exact", "exact-quadratic")
    verified = bool(verify) and bool(search.cv_results_["verified"][search.best_index_])
    # "exact": the criterion is exact CV; "verified": an approximation whose winner was
    # re-scored by exact CV; "unverified": an approximation left as it was
    report["winner_cv"] = "exact" if exact_method else "verified" if verified else "unverified"
    report["winner_verified"] = None if exact_method else verified
    if not exact_method and not verified and gap > max(0.005, 0.25 * exact.score):
        report["warnings"].append(
            f"at the chosen point the {method} criterion ({approx.score:.4f}) differs from "
            f"exact CV ({exact.score:.4f}) by {gap:.4f}; first-order CV approximations are "
            f"optimistic for weakly regularized models (high leverage). "
            + ("Compare with the exact search reported above." if compare_exact
               else "Use --verify best, check with --compare-exact or use --method exact.")
        )
    if compare_exact:
        with progress.search(f"{folds}-fold exact search", n_cand), clock.split() as t_ex:
            ex = GridSearchCV(est, grid, cv=search.folds_, method="exact", n_jobs=n_jobs,
                                    random_state=random_state,
                                    verbose=search_verbose).fit(X_tr, y_fit)
        progress.candidates(f"{folds}-fold exact search", ex)
        report["exact_search"] = {
            "best_params": json_params(ex.best_params_),
            "cv_criterion": ex.best_cv_error_,
            "test_error": _test_error(ex.best_estimator_, X_te, y_te, task),
            "search_seconds": t_ex["run"],
            "speedup": t_ex["run"] / max(spent["run"], 1e-12),
        }
    return report


def _verdict(model, error, svm_error, n_labeled):
    """Whether the unlabeled points helped: the winner's test error against the SVM's on
    the labeled points alone (same split, same folds), in plain words."""
    if error > svm_error:
        return (f"the unlabeled points did not help here: {model}'s test error {error:.4f} is "
                f"above the {svm_error:.4f} of the SVM on the {n_labeled:,} labeled points "
                f"alone; on this data and label count the supervised SVM is the better "
                f"choice (or label more points)")
    if error == svm_error:
        return (f"the unlabeled points did not change the test error: {model} and the SVM on "
                f"the {n_labeled:,} labeled points alone both have {error:.4f}")
    return (f"the unlabeled points helped: {model}'s test error {error:.4f} against "
            f"{svm_error:.4f} for the SVM on the {n_labeled:,} labeled points alone")


def _refuse_partly_labeled(y, n_marked, dataset):
    """A partly labeled file whose labels cannot give the stratified 30 % test split (a
    class with fewer than 2 labels, or fewer test labels than classes): select measures a
    test error on held-out labels, and the job the file is for is ``fastgssl label``."""
    _, counts = np.unique(y, return_counts=True)
    n_test = int(np.ceil(0.3 * y.size))
    if counts.min() >= 2 and min(n_test, y.size - n_test) >= counts.size:
        return
    raise ValueError(
        f"{n_marked:,} of {n_marked + y.size:,} points are unlabeled (None / NaN) and the "
        f"{y.size:,} labeled ones ({counts.size} classes, the smallest with {counts.min()}) "
        f"cannot give the stratified 30 % test split select measures its error on. To label "
        f"the unlabeled points, run: fastgssl label {_file_name(dataset)} -o labels.csv")


def _file_name(dataset):
    return dataset if isinstance(dataset, str) else "FILE"


def _parse_verify(value):
    text = str(value).strip().lower()
    if value is None or text in ("none", "no", "off"):
        return None
    if text == "best":
        return "best"
    try:
        cap = int(value)
    except ValueError:
        cap = 0
    if cap < 1:
        raise ValueError(f"--verify must be 'best', 'none' or a positive integer, got {value!r}.")
    return cap
