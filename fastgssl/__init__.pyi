"""The public names of the front door beside it and where they live: the front door reads
this file (``fastgssl._lazy.attach_stub``), and so do editors and type checkers."""

from fastgssl._protocol import CVObjective as CVObjective
from fastgssl._protocol import CVState as CVState
from fastgssl._protocol import GraphPart as GraphPart
from fastgssl._protocol import KernelPart as KernelPart
from fastgssl._protocol import PropagationSystem as PropagationSystem
from fastgssl._protocol import RefitPart as RefitPart
from fastgssl._protocol import sharing_key as sharing_key
from fastgssl.exceptions import ClassShareWarning as ClassShareWarning
from fastgssl.exceptions import OptimisticCriterionWarning as OptimisticCriterionWarning

from . import active as active
from . import cv as cv
from . import datasets as datasets
from . import exceptions as exceptions
from . import graphs as graphs
from . import kernels as kernels
from . import losses as losses
from . import models as models
from . import registry as registry
from . import regularizers as regularizers
from . import solvers as solvers
from . import testing as testing

__version__: str
