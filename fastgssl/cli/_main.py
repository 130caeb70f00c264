"""The ``fastgssl`` command line: its argument parser and entry point."""

from __future__ import annotations

import argparse
import json
import sys

from fastgssl import __version__
from fastgssl.cli._models import _BACKENDS, _METHODS, _MODELS, _TASKS
from fastgssl.cli._report import _print_report
from fastgssl.cli._select import select
from fastgssl.cli._warnings import quiet_logger


def build_parser():
    """The argument parser of the ``fastgssl`` command."""
    parser = argparse.ArgumentParser(
        prog="fastgssl",
        description="Fast graph-based semi-supervised learning: labels for the unlabeled "
                    "rows of a partly labeled file (label), model selection by "
                    "cross-validation from one fit with a test error (select).",
    )
    parser.add_argument("--version", action="version", version=f"fastgssl {__version__}")
    sub = parser.add_subparsers(dest="command")
    sel = sub.add_parser(
        "select",
        help="select hyper-parameters by t-FBIF / t-BIF / exact CV and report test error",
        description="Grid search by approximate (or exact) t-fold CV on a held-out split.",
    )
    sel.add_argument("--dataset", default="digits",
                     help="digits (default, bundled with scikit-learn), breast_cancer, "
                          "mnist (the shared MNIST test images), a file path or a shared "
                          "dataset name such as a1a, housing_scale or balance-scale.data; "
                          "files are read by their format: LIBSVM, a table with one "
                          "non-numeric column (the label), a numeric table with name.labels "
                          "beside it, ARFF or MNIST idx; others are refused naming these")
    # one name of a fixed list each; omitted (None), the job chooses it from the data
    for flag, choices, help_ in (
        ("--model", _MODELS,
         "default: lapsvm for classification, laprls for regression (semi-"
         "supervised: --labeled-fraction of the training labels are kept; the "
         "report compares an SVM on the labeled points alone and scikit-"
         "learn's LabelSpreading); krr / svm are supervised; graph "
         "propagation: poisson (Poisson learning, for few labels), "
         "poissonmbo, volumembo, labelprop (harmonic), pwll (Poisson-"
         "reweighted Laplace learning), lgc (local and global "
         "consistency), their n_neighbors (and class mass normalization) "
         "selected by exact CV (one block solve; refits for poissonmbo, "
         "volumembo and pwll)"),
        ("--method", _METHODS,
         "CV criterion of the search (default: auto, i.e. exact CV where it "
         "costs about one fit: transductive exact CV through the deformed "
         "kernel for laprls / lapsvm, exact CV for krr and svm); the graph "
         "propagation models take auto or exact, the others are refused for them; "
         "exact-quadratic needs krr or laprls"),
        ("--task", _TASKS,
         "classification or regression (default: guessed from the labels: "
         "integer labels, of any count, are classes; other numbers are a "
         "regression target; the report says which and why)"),
    ):
        sel.add_argument(flag, choices=choices, default=None, help=help_)
    sel.add_argument("--folds", type=int, default=None,
                     help="number of folds t (default 10, lowered to the labeled count of "
                          "the smallest class, or of the labeled points for regression, when "
                          "that is smaller; the report says so)")
    sel.add_argument("--labeled-fraction", type=float, default=None,
                     help="fraction of training points keeping their label for the semi-"
                          "supervised models (default 0.1; refused for krr / svm, which "
                          "train on every label)")
    sel.add_argument("--labels-per-class", type=int, default=None,
                     help="keep this many labels per class instead of --labeled-fraction "
                          "(the low-label regime of graph propagation; CV needs at least 2; "
                          "a class with fewer training points keeps all of them, and the "
                          "report says so; refused for krr / svm)")
    sel.add_argument("--backend", choices=_BACKENDS, default="auto",
                     help="kernel models: 'dense' (an n x n kernel; exact), 'nystrom' (n x c "
                          "features from c landmark columns, never n x n) or 'auto' "
                          "(default: dense when its estimated memory fits and its "
                          "factorizations take at most about 2 minutes, else nystrom with a "
                          "note); 'dense' is refused before the search when it would not fit "
                          "or would take more than about 30 minutes")
    sel.add_argument("--n-components", type=int, default=None,
                     help="Nystrom columns of fbif (default n / 10, seed 001's c; "
                          "with a graph and for fbif-margin min(n, 300)) and of the nystrom "
                          "backend (default min(n, 300))")
    sel.add_argument("--quick", action="store_true",
                     help="a thinner grid (default: off, the full grid; e.g. lapsvm 27 "
                          "points instead of 80)")
    sel.add_argument("--json", action="store_true", help="print one JSON object")
    sel.add_argument("--compare-exact", action="store_true",
                     help="also run the whole grid search with exact t-fold CV")
    sel.add_argument("--verify", default="best",
                     help="exact verification of the winner for the approximate methods "
                          "(bif, fbif, fbif-margin, newton): 'best' (default: "
                          "re-score the first-ranked candidate by exact CV until it is "
                          "verified), 'none', or a cap N on the exact re-scorings")
    sel.add_argument("--n-jobs", type=int, default=None,
                     help="joblib workers of the search (default: None, one process; the "
                          "Numba kernels take the cores other jobs leave free)")
    sel.add_argument("--random-state", type=int, default=0,
                     help="seed of the 70 / 30 split, the labels kept and every random draw "
                          "of the search (default: 0)")
    sel.add_argument("--standardize", action=argparse.BooleanOptionalAction, default=None,
                     help="center and scale every feature by the training split's mean and "
                          "standard deviation (default: read off the features: mixed ranges "
                          "are standardized; one common range such as pixels, or columns "
                          "mostly of codes (at most 5 distinct values), are left alone; "
                          "the report says which and why)")
    sel.add_argument("--standardize-target", action=argparse.BooleanOptionalAction,
                     default=True,
                     help="regression: center and scale the targets by the labeled training "
                          "points' mean and standard deviation (LapRLS has no "
                          "intercept); errors are then reported in standardized units and in "
                          "the data's units (default: on)")
    sel.add_argument("--verbose", "-v", action="count", default=None,
                     help="progress bars with ETA on stderr (default: on when stderr is a "
                          "terminal); -vv also prints the search's progress lines")
    sel.add_argument("--quiet", "-q", action="store_true",
                     help="nothing on stderr but errors: no progress, no compilation notice, "
                          "no warning lines (the report holds the warnings)")
    lab = sub.add_parser(
        "label",
        help="label the unlabeled rows of a partly labeled file, with a confidence each",
        description="Read a partly labeled file (unlabeled rows marked nan, or -1 with "
                    "--unlabeled -1), keep every given label, fit the learner the few-labels "
                    "guide recommends for the label count, and write OUT as CSV with the "
                    "header label,confidence,given and one row per input row in input order "
                    "(a given label is kept, confidence 1). Files: LIBSVM, a CSV whose header "
                    "names the label column 'label' (or class, target, y), a table with one "
                    "non-numeric column (the label), ARFF, MNIST idx, NumPy .npz (arrays X "
                    "and y) or .npy (column 0 the label). Refused before any work: no labels, "
                    "one class, nothing unlabeled, an empty, damaged or unknown file, an "
                    "unwritable OUT; OUT is written whole or not at all.")
    lab.add_argument("file", help="the partly labeled data file")
    lab.add_argument("-o", "--output", required=True, metavar="OUT",
                     help="the CSV to write (replaced whole once the run succeeds)")
    lab.add_argument("--unlabeled", choices=("nan", "-1"), default="nan",
                     help="the marker of unlabeled rows (default: nan; in a text label column "
                          "also an empty cell, ? or NA). With -1, -1 is the marker and a file "
                          "that also holds nan is refused; by default -1 is a class, as in "
                          "LIBSVM's two-class files")
    lab.add_argument("--standardize", action=argparse.BooleanOptionalAction, default=None,
                     help="center and scale every feature (default: read off the features, "
                          "as for select: mixed ranges are standardized, one common range "
                          "such as pixels is left alone; the summary says which and why)")
    lab.add_argument("--n-jobs", type=int, default=None,
                     help="Numba threads (default: None, the cores other jobs leave free; "
                          "the summary gives the count used)")
    lab.add_argument("--random-state", type=int, default=0,
                     help="seed of any random draw of the learner (default: 0)")
    lab.add_argument("--json", action="store_true",
                     help="print the summary (what was chosen and why) as one JSON object")
    lab.add_argument("--verbose", "-v", action="count", default=None,
                     help="stage lines and the library's progress on stderr (default: on "
                          "when stderr is a terminal)")
    lab.add_argument("--quiet", "-q", action="store_true",
                     help="nothing on stderr but errors")
    sub.add_parser(
        "warmup",
        help="compile the Numba kernels of the main paths ahead of time (cached on disk)",
        description="Compile (or load from Numba's disk cache) the kernels of the kNN graph, "
                    "the propagation learners, the kernel machines and their exact CV on "
                    "small data, so that a first real run does not pay the compilation.")
    return parser


def _level(args):
    if args.quiet:
        return 0
    if args.verbose is not None:
        return args.verbose
    try:
        return 1 if sys.stderr.isatty() else 0
    except (AttributeError, ValueError):
        return 0


def main(argv=None):
    """Entry point of the ``fastgssl`` console script; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    if args.command == "warmup":
        from fastgssl.cli._warmup import warmup

        seconds = warmup(verbose=True)
        print(f"{'total':32s} {sum(seconds.values()):7.2f} s")
        return 0
    if args.command == "label":
        return _run_label(args)
    if args.folds is not None and args.folds < 2:
        parser.error(f"--folds must be >= 2, got {args.folds}")
    try:
        with quiet_logger(args.quiet):
            report = select(dataset=args.dataset, model=args.model, method=args.method,
                            folds=args.folds, labeled_fraction=args.labeled_fraction,
                            n_components=args.n_components, quick=args.quick,
                            compare_exact=args.compare_exact, n_jobs=args.n_jobs,
                            random_state=args.random_state, verbose=_level(args),
                            verify=args.verify, standardize=args.standardize,
                            standardize_target=args.standardize_target, task=args.task,
                            labels_per_class=args.labels_per_class, backend=args.backend)
    except (ValueError, OSError, MemoryError) as exc:  # stderr even with -q: the run failed
        print(f"fastgssl select: error: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        _print_report(report, sys.stdout)
    if args.json and not args.quiet:  # on stderr too, so --json users see them
        for message in report["warnings"]:
            print(f"fastgssl select: warning: {message}", file=sys.stderr)
    return 0


def _run_label(args):
    from fastgssl.cli._label import dumps, label, print_summary

    try:
        with quiet_logger(args.quiet):
            summary = label(args.file, args.output, unlabeled=args.unlabeled,
                            standardize=args.standardize, n_jobs=args.n_jobs,
                            random_state=args.random_state, verbose=_level(args))
    except (ValueError, OSError, MemoryError) as exc:  # stderr even with -q: the run failed
        print(f"fastgssl label: error: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(dumps(summary))
    else:
        print_summary(summary, sys.stdout)
    if args.json and not args.quiet:
        for message in summary["warnings"]:
            print(f"fastgssl label: warning: {message}", file=sys.stderr)
    return 0
