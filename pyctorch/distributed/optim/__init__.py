"""torch.distributed.optim: ZeroRedundancyOptimizer (optimizer state sharded across ranks)."""
from .zero_redundancy_optimizer import ZeroRedundancyOptimizer  # noqa: F401
