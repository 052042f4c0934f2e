"""pyctorch.optim: optimizers mirroring torch.optim (single-tensor / for-loop implementations)."""
from .optimizer import Optimizer, required, register_optimizer_step_pre_hook, register_optimizer_step_post_hook
from .sgd import SGD
from .adam import Adam
from .adamw import AdamW

__all__ = ["Optimizer", "SGD", "Adam", "AdamW"]
