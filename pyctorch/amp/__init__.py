"""torch.amp: automatic mixed precision: autocast regions and gradient scaling."""
from .autocast_mode import (_enter_autocast, _exit_autocast, autocast, custom_bwd, custom_fwd,  # noqa: F401
                            is_autocast_available)
from .grad_scaler import GradScaler  # noqa: F401

__all__ = ["autocast", "custom_bwd", "custom_fwd", "is_autocast_available", "GradScaler"]
