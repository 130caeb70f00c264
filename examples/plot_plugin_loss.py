"""
A plugin loss end to end: pseudo-Huber regression with outliers
===============================================================

``plugins/fastgssl-pseudohuber`` is a complete third-party distribution: one Numba loss
(value, first and second derivative) declared in ``pyproject.toml`` under the
``fastgssl.losses`` entry-point group::

    [project.entry-points."fastgssl.losses"]
    pseudo_huber = "fastgssl_pseudohuber:PSEUDO_HUBER"

Once installed (``pip install ./plugins/fastgssl-pseudohuber``) every learner accepts
``loss="pseudo_huber"``, and so do the CV methods and the grid search: the loss's
derivatives are all that t-BIF / t-FBIF and the Newton solver need.  The pseudo-Huber loss
``delta^2 (sqrt(1 + ((f - y) / delta)^2) - 1)`` is quadratic near the target and linear far
from it, so a few gross outliers pull the fit much less than under the square loss.
"""

# %%
# The registry lists the plugin next to the built-ins without importing its code.
import matplotlib.pyplot as plt
import numpy as np

from fastgssl import registry
from fastgssl.cv import GridSearchCV, cv_score
from fastgssl.models import KRR

rows = {row["name"]: row for row in registry.available("fastgssl.losses")}
if "pseudo_huber" not in rows:
    raise SystemExit("install the example plugin: pip install ./plugins/fastgssl-pseudohuber")
for row in rows.values():
    print(f"{row['name']:14s} {row['origin']:28s} {row['value']}  ({row['status']})")

# %%
# A smooth 1-D target with 10 % of the targets replaced by gross outliers.
rng = np.random.default_rng(0)
n = 300
X = np.sort(rng.uniform(-3, 3, n))[:, None]
truth = np.sin(2 * X[:, 0]) + 0.3 * X[:, 0]
y = truth + rng.normal(scale=0.15, size=n)
bad = rng.choice(n, n // 10, replace=False)
y[bad] += rng.choice([-1, 1], bad.size) * rng.uniform(2, 4, bad.size)

square = KRR(lam=1e-3, sigma=0.5).fit(X, y)
robust = KRR(lam=1e-3, sigma=0.5, loss="pseudo_huber", loss_params={"delta": 0.2}).fit(X, y)

# %%
# CV from one fit works for the plugin loss as for a built-in one: t-FBIF against exact
# 10-fold CV (squared error over the held-out points).
for name, model in [("square", square), ("pseudo_huber", robust)]:
    approx = cv_score(model, X, y, folds=10, method="fbif", random_state=0)
    exact = cv_score(model, X, y, folds=10, method="exact", random_state=0)
    print(f"{name:12s} 10-FBIF {approx:.4f}   exact 10-fold CV {exact:.4f}")

# %%
# And model selection over the kernel width and the regularization, verified.
search = GridSearchCV(
    KRR(loss="pseudo_huber", loss_params={"delta": 0.2}),
    {"sigma": [0.1, 0.5, 2.0], "lam": [1e-5, 1e-3, 1e-1]},
    cv=10, method="fbif", verify="best", random_state=0,
).fit(X, y)
print("selected", search.best_params_, f"exact CV error {search.best_cv_error_:.4f}",
      f"({search.n_verified_} exact verifications)")

# %%
# The CV criterion above counts the outliers' squared errors too; against the noiseless
# target, the robust fit is closer.
grid = np.linspace(-3, 3, 400)[:, None]
target = np.sin(2 * grid[:, 0]) + 0.3 * grid[:, 0]
for name, model in [("square loss", square), ("pseudo-Huber, selected", search)]:
    rms = np.sqrt(np.mean((model.predict(grid) - target) ** 2))
    print(f"{name:24s} RMS error against the noiseless target {rms:.4f}")

fig, ax = plt.subplots(figsize=(7, 4), layout="constrained")
ax.scatter(X[:, 0], y, s=8, color="0.6", label="training targets")
ax.scatter(X[bad, 0], y[bad], s=14, color="black", marker="x", label="outliers")
ax.plot(grid[:, 0], target, "k--", lw=1, label="truth")
ax.plot(grid[:, 0], square.predict(grid), lw=2, label="KRR, square loss")
ax.plot(grid[:, 0], search.predict(grid), lw=2, label="KRR, pseudo-Huber (selected)")
ax.set_ylim(-4, 4)
ax.set_xlabel("x")
ax.set_ylabel("y")
ax.legend(loc="lower right", fontsize=8)
plt.show()
