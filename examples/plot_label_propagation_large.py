"""
Label propagation at 100,000 points, with induction to new points
=================================================================

Two interleaved spirals, 100,000 points, 20 labels.
:class:`~fastgssl.models.LocalGlobalConsistency` (Zhou et al., 2004) builds the exact 10-NN
graph (Numba, kd-tree candidates in low dimension) and solves
``(I - alpha D^-1/2 W D^-1/2) F = Y`` with multigrid-preconditioned CG, all classes in one
block solve.  (The harmonic solution of :class:`~fastgssl.models.LabelPropagation`,
``L_uu f_u = W_ul y_l``, gives the same picture but needs hundreds of CG iterations on this
long, thin 2-D graph; ``alpha < 1`` keeps LGC's system well conditioned.)

New points need no new solve: the induction formula of Bengio, Delalleau & Le Roux (2004),
``f(x) = sum_j K(x, x_j) f_j / sum_j K(x, x_j)`` over the ``n_neighbors`` nearest training
points, extends the solution to any ``x``.  Here it colours a 300 x 300 grid.
"""

# %%
import time

import matplotlib.pyplot as plt
import numpy as np

from fastgssl.models import LocalGlobalConsistency


def spirals(n, noise=0.35, seed=0):
    rng = np.random.default_rng(seed)
    t = np.sqrt(rng.uniform(0.02, 1.0, n)) * 3.0 * np.pi
    y = rng.integers(0, 2, n)
    r = t
    X = np.c_[r * np.cos(t + np.pi * y), r * np.sin(t + np.pi * y)]
    return X + rng.normal(scale=noise, size=X.shape), y


X, y = spirals(100_000)
rng = np.random.default_rng(1)
labeled = np.r_[rng.choice(np.flatnonzero(y == 0), 10, replace=False),
                rng.choice(np.flatnonzero(y == 1), 10, replace=False)]
y_train = np.full(len(y), -1)
y_train[labeled] = y[labeled]

LocalGlobalConsistency(n_neighbors=10).fit(X[:2000], np.where(np.arange(2000) < 20, y[:2000], -1))

t0 = time.perf_counter()
model = LocalGlobalConsistency(n_neighbors=10, alpha=0.99).fit(X, y_train)
t_fit = time.perf_counter() - t0
unl = y_train == -1
acc = np.mean(model.transduction_[unl] == y[unl])
print(f"fit (graph + solve) on {len(y):,} points: {t_fit:.2f} s; "
      f"accuracy on the unlabeled points {acc:.4f}; "
      f"{model.solver_info_.solver}, iterations per class {model.solver_info_.iterations}")

# %%
# Induction: 90,000 new points on a grid, and 10,000 fresh points from the same spirals.
xx, yy = np.meshgrid(np.linspace(-11, 11, 300), np.linspace(-11, 11, 300))
t0 = time.perf_counter()
proba = model.predict_proba(np.c_[xx.ravel(), yy.ravel()])[:, 1].reshape(xx.shape)
t_grid = time.perf_counter() - t0
X_new, y_new = spirals(10_000, seed=2)
acc_new = np.mean(model.predict(X_new) == y_new)
print(f"induction on {xx.size:,} grid points: {t_grid:.2f} s; "
      f"accuracy on 10,000 new points {acc_new:.4f}")

fig, axes = plt.subplots(1, 2, figsize=(10, 4.6), layout="constrained")
show = rng.choice(len(y), 8000, replace=False)
axes[0].scatter(X[show, 0], X[show, 1], c=model.transduction_[show], cmap="coolwarm", s=2)
axes[0].scatter(X[labeled, 0], X[labeled, 1], c=y[labeled], cmap="coolwarm", s=60,
                edgecolors="black")
axes[0].set_title(f"transduction (8,000 of {len(y):,} shown), 20 labels")
im = axes[1].contourf(xx, yy, proba, levels=np.linspace(0, 1, 11), cmap="coolwarm")
axes[1].scatter(X[labeled, 0], X[labeled, 1], c=y[labeled], cmap="coolwarm", s=60,
                edgecolors="black")
axes[1].set_title("induction: P(class 1) on a 300 x 300 grid")
fig.colorbar(im, ax=axes[1], label="P(class 1)")
for ax in axes:
    ax.set_aspect("equal")
plt.show()
