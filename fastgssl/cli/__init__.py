"""The ``fastgssl`` command.

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
``-vv`` adds the search's own lines, ``-q`` silences it; stdout holds only the report (with
``--json``: only the JSON object).
"""

# _guess_task, _dense_plan and _grid: private helpers that tests and bench/ scripts import
# from fastgssl.cli
from fastgssl.cli._data import _guess_task  # noqa: F401
from fastgssl.cli._main import build_parser, main
from fastgssl.cli._models import _dense_plan, _grid  # noqa: F401
from fastgssl.cli._select import select
from fastgssl.cli._warmup import warmup

__all__ = ["main", "build_parser", "select", "warmup"]
