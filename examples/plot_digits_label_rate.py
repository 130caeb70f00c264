"""
Digits with a handful of labels: accuracy against the label rate
================================================================

scikit-learn's 8x8 digits (1,797 images, 10 classes) with 1 to 10 labels per class, scored
on the unlabeled images (the transductive protocol), with the methods the few-labels guide
(:doc:`/guide/low_labels`) recommends at these rates, all on a 10-nearest-neighbour graph:
:class:`fastgssl.models.PoissonLearning` (Calder et al. 2020: sources and sinks instead of
clamped labels, the recommendation at 1-2 labels per class when the class shares are
unknown) and :class:`fastgssl.models.LabelPropagation` with class mass normalization (the
harmonic solution rescaled to the labeled class shares), beside scikit-learn's
:class:`~sklearn.semi_supervised.LabelSpreading` (``kernel="knn"``, fixed-point
iterations).  The plain harmonic ``LabelPropagation()`` is left out on purpose: below about
5 labels per class its solution is nearly constant away from the labels and its argmax
collapses onto a few classes (the guide's table; it warns with a ``ClassShareWarning``).
Five random draws of the labeled set per rate; the curve is the median and the band the
range over draws.
"""

# %%
import time

import numpy as np
from sklearn.datasets import load_digits
from sklearn.semi_supervised import LabelSpreading

from fastgssl.datasets import hide_labels
from fastgssl.models import LabelPropagation, PoissonLearning
from fastgssl.plotting import plot_label_rate_curve

X, y = load_digits(return_X_y=True)
X = X / 16.0
per_class = [1, 2, 3, 5, 10]
draws = 5
methods = {
    "fastgssl PoissonLearning": lambda: PoissonLearning(n_neighbors=10),
    "fastgssl LabelPropagation (class mass normalization)":
        lambda: LabelPropagation(n_neighbors=10, class_mass_normalization=True),
    "sklearn LabelSpreading (knn)":
        lambda: LabelSpreading(kernel="knn", n_neighbors=10, max_iter=200),
}
accuracy = {name: np.empty((len(per_class), draws)) for name in methods}
seconds = dict.fromkeys(methods, 0.0)

for make in methods.values():  # compile the Numba kernels once, outside the timings
    make().fit(X, hide_labels(y, 2, random_state=0))

for i, k in enumerate(per_class):
    for d in range(draws):
        y_train = hide_labels(y, k, random_state=d)
        unl = y_train == -1
        for name, make in methods.items():
            t0 = time.perf_counter()
            model = make().fit(X, y_train)
            seconds[name] += time.perf_counter() - t0
            accuracy[name][i, d] = np.mean(model.transduction_[unl] == y[unl])

# %%
# The three criteria differ (Poisson sources and sinks, the harmonic solution rescaled to
# the class shares, spreading with ``alpha = 0.2``), so the curves need not coincide.  The
# medians printed below are those of this build, as are the fit times (graph construction
# included for all three).
ax = plot_label_rate_curve(
    per_class, accuracy,
    xlabel="labels per class", ylabel="accuracy on the unlabeled images",
    title="digits (n = 1,797), 5 draws per rate",
)

for i, k in enumerate(per_class):
    print(f"{k:2d} labels/class: " + ", ".join(
        f"{name} {np.median(acc[i]):.3f}" for name, acc in accuracy.items()))
print({name: f"{t:.2f} s for {len(per_class) * draws} fits" for name, t in seconds.items()})
