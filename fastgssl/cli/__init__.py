"""The ``fastgssl`` command (also ``python -m fastgssl``).

``fastgssl label FILE -o OUT`` labels the unlabeled rows of a partly labeled file (rows
labeled ``nan``) with the learner the few-labels guide recommends, every given label kept,
and writes OUT as CSV with the header ``label,confidence,given``, one row per input row in
input order (:mod:`fastgssl.cli._label`; :func:`label` from Python)::

    fastgssl label images.libsvm -o labels.csv --json

``fastgssl select`` runs model selection by t-fold cross-validation (exact where it costs
about one fit, else t-FBIF / t-BIF of Liu et al. (2018, 2019) with the winner verified), on
scikit-learn's digits (the default), its breast cancer data or a LIBSVM file (path or
shared-dataset name), and prints the chosen hyper-parameters, the CV criterion, the test
error of the selected model on a held-out 30 % split, the time of the approximate CV against
exact t-fold CV, and the time Numba spent compiling (apart from the rest)::

    fastgssl select                                  # LapSVM on digits, exact 10-fold CV
    fastgssl select --dataset housing_scale          # LapRLS, a regression set
    fastgssl select --dataset letter.scale --task classification
    fastgssl select --model lapsvm --labeled-fraction 0.1 --folds 5 --json
    fastgssl select --quick --compare-exact          # also run the exact grid search

Features of mixed ranges are standardized with the training split's mean and standard
deviation, and features of one common range (pixels, counts, pre-scaled data) are left as
loaded, a rule read off the training features (``--standardize`` / ``--no-standardize``
force either); regression targets are standardized (``--no-standardize-target``), and the
report states both, why, and the units of its errors.
Progress (tqdm, with an ETA) goes to stderr: on by default at a terminal, ``-v`` forces it,
``-vv`` adds the search's own lines; stdout holds only the report (with ``--json``: only the
JSON object). Warnings are never printed with their source lines: the report lists each
once in the command line's words with its count (``warnings``; ``warnings_raised`` in
``--json`` adds the category and the library's message), and ``--json`` runs repeat them on
stderr. ``-q`` leaves stderr empty unless the run fails.

Files of the shared datasets folder are read by their format (read off the file, not its
name): LIBSVM, the UCI tables (one non-numeric column is the label; a numeric table takes
``name.labels`` beside it), Weka ARFF and the MNIST idx pair; any other file is refused
naming these formats.
"""

from fastgssl._lazy import attach_stub

__getattr__, __dir__, __all__ = attach_stub(__name__, __file__)
