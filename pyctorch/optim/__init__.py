"""pyctorch.optim: optimizers and learning-rate schedulers mirroring torch.optim.

Adam, AdamW, SGD and Adagrad step through fused C kernels by default (csrc/aten/cpu/optim.c, with
torch's for-loop numbers); the others run torch's single-tensor step on pyctorch ops.
"""
from .optimizer import Optimizer, required, register_optimizer_step_pre_hook, register_optimizer_step_post_hook
from .sgd import SGD
from .adam import Adam
from .adamw import AdamW
from .adagrad import Adagrad
from .adamax import Adamax
from .nadam import NAdam
from .radam import RAdam
from .rmsprop import RMSprop
from .lbfgs import LBFGS
from . import lr_scheduler
from .adadelta import Adadelta
from .asgd import ASGD
from .rprop import Rprop
from .sparse_adam import SparseAdam
from ._adafactor import Adafactor
from . import swa_utils
from ._muon import Muon
from ._stateless import swap_in_optimizer_params_and_state

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "Adagrad", "Adamax", "NAdam", "RAdam", "RMSprop", "LBFGS",
           "lr_scheduler", "Adadelta", "ASGD", "Rprop", "SparseAdam", "Adafactor", "swa_utils", "Muon",
           "swap_in_optimizer_params_and_state",
           "register_optimizer_step_pre_hook", "register_optimizer_step_post_hook"]
