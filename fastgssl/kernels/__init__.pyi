"""The public names of the front door beside it and where they live: the front door reads
this file (``fastgssl._lazy.attach_stub``), and so do editors and type checkers."""

from fastgssl.exceptions import IllConditionedKernelWarning as IllConditionedKernelWarning
from fastgssl.kernels._data_dependent import DataDependentKernel as DataDependentKernel
from fastgssl.kernels._deformed import DeformedKernel as DeformedKernel
from fastgssl.kernels._nystrom import NystromFactor as NystromFactor
from fastgssl.kernels._nystrom import nystrom as nystrom
from fastgssl.kernels._nystrom import nystrom_from_gram as nystrom_from_gram
from fastgssl.kernels._pairwise import pairwise_kernel as pairwise_kernel
from fastgssl.kernels._rbf import default_sigma as default_sigma
from fastgssl.kernels._rbf import rbf_kernel as rbf_kernel
