"""torch.distributed.algorithms.ddp_comm_hooks: hooks for DistributedDataParallel.register_comm_hook."""
from . import default_hooks  # noqa: F401
