"""Draw docs/images/low_labels.png from the JSON of bench/bench_low_label.py.

    python bench/bench_low_label.py --json low_labels.json
    python docs/scripts/plot_low_labels.py low_labels.json [--out docs/images/low_labels.png]

One panel per data set measured at several labels per class (MNIST, letter): mean accuracy on
the unlabeled points against labels per class, one line per method, each library on its own
graph (what a user gets from its defaults; graphlearning's own graph is the shared one), the
band one standard deviation over the label draws. fastgssl solid, graphlearning dashed,
scikit-learn dotted.
"""

import argparse
import json
from pathlib import Path

import numpy as np

STYLE = {  # method -> (label, color, linestyle, marker)
    "PoissonMBO(priors)": ("fastgssl PoissonMBO (priors)", "tab:red", "-", "o"),
    "PoissonLearning": ("fastgssl PoissonLearning", "tab:orange", "-", "o"),
    "LocalGlobalConsistency(0.99)": ("fastgssl LocalGlobalConsistency", "tab:green", "-", "o"),
    "LabelPropagation(cmn)": ("fastgssl LabelPropagation (cmn)", "tab:purple", "-", "o"),
    "LabelPropagation": ("fastgssl LabelPropagation", "tab:gray", "-", "o"),
    "gl poisson_mbo(priors)": ("graphlearning poisson_mbo (priors)", "tab:red", "--", "s"),
    "gl poisson": ("graphlearning poisson", "tab:orange", "--", "s"),
    "gl laplace": ("graphlearning laplace", "tab:gray", "--", "s"),
    "sklearn LabelSpreading(knn)": ("scikit-learn LabelSpreading (knn)", "tab:blue", ":", "^"),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("json", type=Path)
    ap.add_argument("--out", type=Path,
                    default=Path(__file__).resolve().parents[1] / "images" / "low_labels.png")
    args = ap.parse_args()

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    results = json.loads(args.json.read_text())
    cases = [c for c in results["cases"].values() if len(c["columns"]) > 1]
    fig, axes = plt.subplots(1, len(cases), figsize=(5.2 * len(cases), 5.2), squeeze=False)
    for ax, case in zip(axes[0], cases):
        x = np.array([int(c) for c in case["columns"]])
        missing = []
        for method, (label, color, ls, marker) in STYLE.items():
            cells = case["own_graph"].get(method)
            if cells is None:
                continue
            accs = [cells[c]["acc"] for c in case["columns"]]
            if not all(accs):  # not run on this data set (graphlearning's Poisson on letter)
                missing.append(label)
                continue
            mean = np.array([np.mean(a) for a in accs])
            std = np.array([np.std(a) for a in accs])
            fewest = min(len(a) for a in accs)
            if fewest < case["n_draws"]:
                label += f" ({fewest} draw{'s' * (fewest > 1)})"
            ax.plot(x, mean, ls=ls, color=color, marker=marker, ms=4, label=label)
            ax.fill_between(x, mean - std, mean + std, color=color, alpha=0.08, lw=0)
        ax.set_xscale("log")
        ax.set_xticks(x, [str(v) for v in x])
        ax.minorticks_off()
        ax.set_xlabel("labels per class")
        ax.set_ylabel("accuracy on the unlabeled points")
        ax.set_title(f"{case['title']} (n = {case['n']:,}, {case['n_draws']} draws)")
        ax.set_ylim(0, 1)
        if missing:
            ax.text(0.02, 0.97, "not run here: " + ", ".join(missing), transform=ax.transAxes,
                    fontsize=7, va="top")
        ax.grid(alpha=0.3)
    handles = {}
    for ax in axes[0]:  # one legend for all panels (a method may be missing from one)
        for h, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label.split(" (")[0] if "draw" in label else label, h)
    meta = results["meta"]
    fig.suptitle(f"Each library on its own 10-NN graph; fastgssl {meta['commit']}, "
                 f"{meta['date']}", fontsize=9)
    ncol = 3 if len(cases) > 1 else 2  # one panel (a single data set) is too narrow for 3
    fig.tight_layout(rect=(0, 0.16 if ncol == 3 else 0.27, 1, 1))
    fig.legend(handles.values(), handles.keys(), loc="lower center", ncol=ncol, fontsize=8,
               frameon=False)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
