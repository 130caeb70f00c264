"""
Two moons with six labels: the graph and the decision surface
=============================================================

Three labeled points per class are not enough for a supervised classifier to find the two
moons, but the unlabeled points trace them out.  A kNN graph over all 500 points carries that
shape into :class:`~fastgssl.models.LapSVM` through the Laplacian penalty
``gamma_i / n^2 f^T L f``, which makes the decision function smooth along the graph.
"""

# %%
# Data: 500 points, 3 labels per class (``-1`` marks the unlabeled points).
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_moons

from fastgssl.graphs import knn_graph
from fastgssl.models import SVM, LapSVM
from fastgssl.plotting import plot_graph

X, y = make_moons(500, noise=0.1, random_state=0)
rng = np.random.default_rng(1)
labeled = np.r_[rng.choice(np.flatnonzero(y == 0), 3, replace=False),
                rng.choice(np.flatnonzero(y == 1), 3, replace=False)]
y_ssl = np.full(500, -1)
y_ssl[labeled] = y[labeled]

# %%
# The graph: each point joined to its 10 nearest neighbours (exact search, symmetrized).
# The six labeled points are drawn large; every other point is grey.
W = knn_graph(X, n_neighbors=10)
ax = plot_graph(X, W, y_ssl)
ax.set_title(f"10-NN graph: {W.nnz // 2} edges, 6 labels")

# %%
# LapSVM against an SVM trained on the six labeled points alone (``gamma_i = 0`` is the
# supervised special case).  The decision surfaces are evaluated on a grid through the
# kernel expansion ``f(x) = sum_i alpha_i k(x_i, x)``: both models predict new points.
# The kernel is the papers' ``exp(-||x - x'||^2 / (2 sigma))``: ``sigma`` is a squared
# distance.
lapsvm = LapSVM(sigma=0.2, gamma_a=1e-4, gamma_i=100.0, n_neighbors=10).fit(X, y_ssl)
svm = SVM(sigma=0.2, lam=1e-4).fit(X[labeled], y[labeled])

xx, yy = np.meshgrid(np.linspace(-1.5, 2.5, 200), np.linspace(-1.0, 1.5, 150))
grid = np.c_[xx.ravel(), yy.ravel()]
fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True, layout="constrained")
for ax, model, name in [(axes[0], svm, "SVM on the 6 labels"), (axes[1], lapsvm, "LapSVM")]:
    f = model.decision_function(grid).reshape(xx.shape)
    ax.contourf(xx, yy, f, levels=20, cmap="coolwarm", alpha=0.6)
    ax.contour(xx, yy, f, levels=[0.0], colors="black", linewidths=1.5)
    ax.scatter(X[:, 0], X[:, 1], c=np.where(y_ssl == -1, 0.5, y_ssl), cmap="coolwarm",
               s=6, vmin=0, vmax=1)
    ax.scatter(X[labeled, 0], X[labeled, 1], c=y[labeled], cmap="coolwarm", s=80,
               edgecolors="black", vmin=0, vmax=1)
    unl = y_ssl == -1
    acc = np.mean(model.predict(X[unl]) == y[unl])
    ax.set_title(f"{name}: accuracy on the unlabeled points {acc:.3f}")
plt.show()
