"""The public names of the front door beside it and where they live: the front door reads
this file (``fastgssl._lazy.attach_stub``), and so do editors and type checkers."""

from fastgssl.losses._lookup import available_losses as available_losses
from fastgssl.losses._lookup import get_loss as get_loss
from fastgssl.losses._spec import Loss as Loss
from fastgssl.losses._spec import LossSpec as LossSpec
