"""What ``method="auto"`` means, in one place, for :func:`fastgssl.cv.cv_result` and the
grid search.

The rule: **exact CV wherever it costs about what the one-fit approximation plus the exact
verification of its winner costs; otherwise the approximation, with its winner verified by
exact CV** (so ``"auto"`` never returns an unverified approximate result).

* one candidate (:func:`fastgssl.cv.cv_result`, :func:`fastgssl.cv.cv_score`): exact CV
  (verifying the only candidate *is* exact CV);
* learners the one-fit paths cannot see through (no :class:`fastgssl.CVObjective`, no loss:
  label propagation, Poisson learning, a ``Pipeline``), loss weights and one-vs-one votes:
  exact CV (only it carries them into every refit);
* graph learners under the transductive protocol (the default), and any square-loss
  learner: exact transductive CV (the deformed-kernel reduction: about one fit per
  candidate, work shared along the grid);
* supervised learners with any loss: exact t-fold CV (the Huber / squared hinge's t refits
  cold in one batched call per candidate, other losses' warm-started from the candidate's
  fit at 200 labeled points and more; ``bench/bench_auto_method.py`` measured the SVM's
  t-FBIF plus the verification of its winner 1.9-7.4x slower, median 3.9x, over 12 LIBSVM
  sets);
* graph learners with a non-square loss under ``protocol="inductive"`` (exact CV refits
  the graph learner t times per candidate): one Newton step per fold for smooth losses
  (logistic), t-FBIF for piecewise-quadratic ones (the Huber hinge), winner verified.
"""

from __future__ import annotations

__all__ = ["choose_method"]


def choose_method(objectives, protocol=None, *, verify=None, n_candidates=1, one_fit=True,
                  weighted=False, one_vs_one=False):
    """``(method, protocol, verify)`` that ``method="auto"`` runs (see the module docstring).

    Parameters
    ----------
    objectives : list of CVObjective or None
        The candidates' objectives (None: the learner does not declare one).
    protocol : {None, "transductive", "inductive"}
    verify : None, False, "best" or int
        The caller's verification; an approximate pick sets ``"best"`` when it is None.
    n_candidates : int
    one_fit : bool
        Whether the one-fit paths can evaluate the candidates (objectives with a loss and a
        kernel to share).
    weighted, one_vs_one : bool
        Loss weights; one-vs-one learners.
    """
    if n_candidates <= 1 or not objectives or not one_fit or weighted or one_vs_one:
        return "exact", protocol, verify
    names = {getattr(o.loss, "name", None) for o in objectives}
    square = names == {"square"}
    graph = any(o.gamma_i > 0 for o in objectives)
    if protocol in (None, "transductive") and (graph or square):
        return "exact", "transductive", verify
    if square or not graph:
        return "exact", protocol, verify
    smooth = all(getattr(getattr(o.loss, "spec", None), "smooth", False) for o in objectives)
    return ("newton" if smooth else "fbif"), protocol, ("best" if verify is None else verify)
