"""torch.distributed._composable.fsdp: FSDP2's old import path, the same objects as torch.distributed.fsdp."""
from ...fsdp import (CPUOffloadPolicy, FSDPModule, MixedPrecisionPolicy, OffloadPolicy, fully_shard,  # noqa: F401
                     register_fsdp_forward_method)

__all__ = ["CPUOffloadPolicy", "FSDPModule", "MixedPrecisionPolicy", "OffloadPolicy", "fully_shard",
           "register_fsdp_forward_method"]
