"""What the type-check step of CI (mypy, ``[tool.mypy]`` in pyproject.toml) reads: every
public name of every front door, imported as users import it. mypy resolves each through the
front door's ``__init__.pyi`` stub; a name missing from a stub is an error, and the last
access, of a name no front door has, must be an error too (``warn_unused_ignores``): without
the stubs mypy would read the lazy ``__getattr__`` and accept any name."""

# ruff: noqa: F401, F811, B018 (imports for the type checker; names repeat across front doors)
from __future__ import annotations

import fastgssl.models as models_door
from fastgssl import (
    ClassShareWarning,
    CVObjective,
    CVState,
    GraphPart,
    KernelPart,
    OptimisticCriterionWarning,
    PropagationSystem,
    RefitPart,
    __version__,
    active,
    cv,
    datasets,
    exceptions,
    graphs,
    kernels,
    losses,
    models,
    registry,
    regularizers,
    sharing_key,
    solvers,
    testing,
)
from fastgssl.active import (
    ActiveLearner,
    ActiveLearningHistory,
    PosteriorCovariance,
    active_learning_loop,
    criterion_scores,
    greedy_batch,
    uncertainty_scores,
)
from fastgssl.cli import (
    build_parser,
    label,
    main,
    select,
    warmup,
)
from fastgssl.cv import (
    ApproxGridSearchCV,
    BIFMethod,
    CVMethod,
    CVResult,
    ExactMethod,
    ExactQuadraticMethod,
    FBIFMethod,
    GridSearchCV,
    MarginFBIFMethod,
    NewtonStepMethod,
    bif_matrix,
    check_folds,
    cv_predictions,
    cv_result,
    cv_score,
    folds_for_labels,
    make_folds,
)
from fastgssl.datasets import (
    hide_labels,
    load_data_file,
    load_default,
    load_libsvm,
    load_mnist_test,
    make_gaussian_mixture,
    shared_datasets_dir,
)
from fastgssl.graphs import (
    EpsilonGraph,
    Graph,
    IVFGraph,
    KNNGraph,
    LowRecallWarning,
    NNDescentGraph,
    PrecomputedGraph,
    check_adjacency,
    default_n_lists,
    epsilon_graph,
    knn_adjacency,
    knn_graph,
    knn_recall,
    knn_search,
    resolve_graph,
    resolve_graph_value,
    reuse_neighbors,
)
from fastgssl.kernels import (
    DataDependentKernel,
    DeformedKernel,
    IllConditionedKernelWarning,
    NystromFactor,
    default_sigma,
    nystrom,
    nystrom_from_gram,
    pairwise_kernel,
    rbf_kernel,
)
from fastgssl.losses import (
    Loss,
    LossSpec,
    available_losses,
    get_loss,
)
from fastgssl.models import (
    ALGT,
    KRR,
    SVM,
    ClassShareWarning,
    CutRefinement,
    CutSSL,
    CutSSLWarning,
    DisconnectedGraphWarning,
    KernelKMeans,
    LabelPropagation,
    LabelPropagationRegressor,
    LapRLS,
    LapSVM,
    LocalGlobalConsistency,
    LowLabelClassifier,
    PoissonLearning,
    PoissonMBO,
    UnlabeledComponentWarning,
    VolumeMBO,
    constrained_cut,
    exact_size_assignment,
    refine_cut,
)
from fastgssl.regularizers import (
    LaplacianPower,
    LaplacianRegularizer,
    NormalizedLaplacianRegularizer,
    build_regularizer,
    connected_components,
    degree_centered,
    laplacian,
    laplacian_null_space,
)
from fastgssl.solvers import (
    LaplacianSolver,
    SolveInfo,
    clear_solver_cache,
    reused_solver,
)

models_door.NotAPublicName  # type: ignore[attr-defined]

