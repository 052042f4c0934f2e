"""torch.cpu.amp: deprecated aliases of torch.amp.autocast("cpu") and torch.amp.GradScaler("cpu")."""
from .autocast_mode import autocast  # noqa: F401
from .grad_scaler import GradScaler  # noqa: F401
