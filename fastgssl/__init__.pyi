"""Stub of the lazy front door beside it: its public names where they live, for editors and
type checkers (tests/test_front_doors.py checks it against ``__all__``)."""

from fastgssl import active as active
from fastgssl import cv as cv
from fastgssl import datasets as datasets
from fastgssl import exceptions as exceptions
from fastgssl import graphs as graphs
from fastgssl import kernels as kernels
from fastgssl import losses as losses
from fastgssl import models as models
from fastgssl import registry as registry
from fastgssl import regularizers as regularizers
from fastgssl import solvers as solvers
from fastgssl import testing as testing
from fastgssl._protocol import CVObjective as CVObjective
from fastgssl._protocol import CVState as CVState
from fastgssl._protocol import GraphPart as GraphPart
from fastgssl._protocol import KernelPart as KernelPart
from fastgssl._protocol import PropagationSystem as PropagationSystem
from fastgssl._protocol import RefitPart as RefitPart
from fastgssl._protocol import sharing_key as sharing_key
from fastgssl.exceptions import ClassShareWarning as ClassShareWarning
from fastgssl.exceptions import OptimisticCriterionWarning as OptimisticCriterionWarning

__version__: str

__all__ = [
    "active",
    "cv",
    "datasets",
    "exceptions",
    "graphs",
    "kernels",
    "losses",
    "models",
    "registry",
    "regularizers",
    "solvers",
    "testing",
    "CVObjective",
    "CVState",
    "ClassShareWarning",
    "GraphPart",
    "KernelPart",
    "OptimisticCriterionWarning",
    "PropagationSystem",
    "RefitPart",
    "__version__",
    "sharing_key",
]
