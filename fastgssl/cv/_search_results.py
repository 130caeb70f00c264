"""The results of :class:`fastgssl.cv.GridSearchCV`: ``cv_results_`` in scikit-learn's layout,
the winner (the first in grid order among equal scores; for an unverified one-fit
approximation, the most regularized of the candidates tied with the best criterion) and the
warnings about it (a criterion at the training error, points the winner leaves undecided).
"""

from __future__ import annotations

import warnings

import numpy as np

from fastgssl.cv._result import at_training_error
from fastgssl.exceptions import OptimisticCriterionWarning

__all__ = []


class _SearchResults:
    """Mixin of :class:`fastgssl.cv.GridSearchCV`: ``cv_results_``, ``best_index_`` and the
    winner's warnings, from the per-candidate records of a grid evaluation."""

    def _sign(self, classification):
        if self.scoring == "neg_error":
            return -1.0, 0.0
        if self.scoring is None:
            return (-1.0, 1.0) if classification else (-1.0, 0.0)
        if self.scoring == "accuracy":
            if not classification:
                raise ValueError("scoring='accuracy' needs a classifier.")
            return -1.0, 1.0
        return -1.0, 0.0

    def _store_results(self, candidates, results, plan, strengths):
        """``cv_results_`` and the selection, from the records of ``candidates`` (the
        plan's, as a list) and the :class:`fastgssl.cv._plan.SearchPlan` of the search."""
        n_folds, classification = plan.n_folds, plan.classification
        errors = np.array([results[i]["error"] for i in range(len(candidates))])
        if plan.scorer is None:
            sign, offset = self._sign(classification)
            fold_errors = np.array([results[i]["fold_errors"] for i in range(len(candidates))])
            split = offset + sign * fold_errors
            scores = offset + sign * errors
        else:  # a scikit-learn scorer on the out-of-fold predictions: higher is better
            split = np.array([results[i]["fold_scores"] for i in range(len(candidates))])
            scores = split.mean(axis=1)
        out = {"params": candidates}
        for name in sorted({k for c in candidates for k in c}):
            col = np.ma.MaskedArray(np.empty(len(candidates), dtype=object), mask=True)
            for i, c in enumerate(candidates):
                if name in c:
                    col[i] = c[name]
            out[f"param_{name}"] = col
        for i in range(n_folds):
            out[f"split{i}_test_score"] = split[:, i]
        out["mean_test_score"] = scores
        out["std_test_score"] = split.std(axis=1)
        loss = errors if plan.scorer is None else -scores
        order = np.argsort(loss, kind="stable")
        # equal values share the best rank (scikit-learn's "min" ranking)
        rank = np.array([1 + int(np.sum(loss < loss[i])) for i in range(len(candidates))],
                        dtype=np.int32)
        out["rank_test_score"] = rank
        out["mean_cv_error"] = errors
        if self.verify_ not in (None, False) and not plan.exact:
            verified = np.array([bool(results[i].get("verified")) for i in range(len(candidates))])
            out["verified"] = verified
            out["approx_cv_error"] = np.array(
                [results[i].get("approx_error", results[i]["error"])
                 for i in range(len(candidates))])
            out["exact_cv_error"] = np.where(verified, errors, np.nan)
        out["cost_seconds"] = np.array([results[i]["time"] for i in range(len(candidates))])
        undecided = [results[i].get("n_undecided") for i in range(len(candidates))]
        if any(u is not None for u in undecided):  # graph learners: points left undecided
            out["n_undecided"] = np.array([u or 0 for u in undecided], dtype=np.int64)
        self.cv_results_ = out
        best = int(order[0])
        unverified = not plan.exact and self.verify_ in (None, False)
        if unverified:
            best = self._most_regularized_tie(strengths, loss, best)
        self.best_index_ = best
        self.best_params_ = candidates[self.best_index_]
        self.best_score_ = float(scores[self.best_index_])
        self.best_cv_error_ = float(errors[self.best_index_])
        if unverified:
            self._warn_training_error(candidates, results, classification)
        self._warn_undecided(candidates)

    def _warn_undecided(self, candidates):
        """The winner leaves points undecided (graph components without a label: CV cannot
        see them, no held-out label lies there) while another candidate decides them all."""
        undecided = self.cv_results_.get("n_undecided")
        if undecided is None or undecided[self.best_index_] == 0 or undecided.min() > 0:
            return
        full = np.flatnonzero(undecided == 0)
        alt = full[np.argmin(self.cv_results_["rank_test_score"][full])]
        warnings.warn(
            f"the selected candidate {candidates[self.best_index_]} leaves "
            f"{undecided[self.best_index_]} point(s) undecided (graph components without a "
            f"labeled point; cross-validation cannot score them), while "
            f"{candidates[alt]} (rank {self.cv_results_['rank_test_score'][alt]}) decides "
            f"every point. See cv_results_['n_undecided']; a larger n_neighbors or "
            f"unlabeled_policy='nearest' gives every point a class.",
            UserWarning, stacklevel=3)

    @staticmethod
    def _most_regularized_tie(strengths, loss, first):
        """Among the candidates tied with the best criterion, the one with the largest
        regularization ``gamma_a`` of its objective (``lam`` of KRR / SVM; the first in grid
        order among equals): a first-order criterion ties at the training error in the
        interpolating corner, and the strongest regularization is the least overfit of the
        tied models."""
        tied = np.flatnonzero(loss == loss[first])
        strength = strengths[tied]
        return int(tied[np.flatnonzero(strength == strength.max())[0]])

    def _warn_training_error(self, candidates, results, classification):
        """Warn when the unverified winner's criterion fell to its training error."""
        rec = results[self.best_index_]
        train = rec.get("train_error")
        if train is None or not at_training_error(rec["error"], train,
                                                  classification, rec["targets"]):
            return
        warnings.warn(
            f"the selected candidate {candidates[self.best_index_]} has a {self.method_} "
            f"criterion ({rec['error']:.4g}) equal to its training error ({train:.4g}): the "
            f"first-order expansion barely moved its held-out predictions, which happens for "
            f"nearly interpolating models (small lam and sigma), so the criterion cannot tell "
            f"this candidate from an overfit one. Use verify='best' (exact CV of the winner, "
            f"what method='auto' does) or method='exact'.",
            OptimisticCriterionWarning,
            stacklevel=3,
        )
