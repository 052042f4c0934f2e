"""torch.cuda.amp: deprecated aliases of torch.amp.autocast("cuda") and torch.amp.GradScaler("cuda").
Without a CUDA backend both disable themselves with torch's warning."""
from .autocast_mode import autocast  # noqa: F401
from .grad_scaler import GradScaler  # noqa: F401
