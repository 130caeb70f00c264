"""The public names of the front door beside it and where they live: the front door reads
this file (``fastgssl._lazy.attach_stub``), and so do editors and type checkers."""

from fastgssl.exceptions import ClassShareWarning as ClassShareWarning
from fastgssl.exceptions import CutSSLWarning as CutSSLWarning
from fastgssl.exceptions import UnlabeledComponentWarning as UnlabeledComponentWarning
from fastgssl.models._algt import ALGT as ALGT
from fastgssl.models._cut import CutRefinement as CutRefinement
from fastgssl.models._cut import constrained_cut as constrained_cut
from fastgssl.models._cut import refine_cut as refine_cut
from fastgssl.models._cutssl import CutSSL as CutSSL
from fastgssl.models._kernel_kmeans import KernelKMeans as KernelKMeans
from fastgssl.models._label_propagation import DisconnectedGraphWarning as DisconnectedGraphWarning
from fastgssl.models._label_propagation import LabelPropagation as LabelPropagation
from fastgssl.models._label_propagation import (
    LabelPropagationRegressor as LabelPropagationRegressor,
)
from fastgssl.models._label_propagation import LocalGlobalConsistency as LocalGlobalConsistency
from fastgssl.models._laplacian_machines import LapRLS as LapRLS
from fastgssl.models._laplacian_machines import LapSVM as LapSVM
from fastgssl.models._low_label import LowLabelClassifier as LowLabelClassifier
from fastgssl.models._poisson import PoissonLearning as PoissonLearning
from fastgssl.models._poisson import PoissonMBO as PoissonMBO
from fastgssl.models._size_assignment import exact_size_assignment as exact_size_assignment
from fastgssl.models._supervised import KRR as KRR
from fastgssl.models._supervised import SVM as SVM
from fastgssl.models._volume_mbo import VolumeMBO as VolumeMBO
