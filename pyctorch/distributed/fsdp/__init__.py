"""torch.distributed.fsdp: fully sharded data parallelism on pyctorch's process groups (Gloo).

FullyShardedDataParallel (FSDP1) and fully_shard (FSDP2) share one machinery: Note [Flat
parameter] (_flat_param.py), Note [Saved parameter views] (_saved_params.py) and the per-unit
forward in _runtime.py. Collectives are synchronous (issued in forward and backward order), so
BackwardPrefetch, forward_prefetch and limit_all_gathers are accepted and change nothing.
"""
from .api import (BackwardPrefetch, CPUOffload, FullOptimStateDictConfig, FullStateDictConfig,  # noqa: F401
                  LocalOptimStateDictConfig, LocalStateDictConfig, MixedPrecision, OptimStateDictConfig,
                  ShardedOptimStateDictConfig, ShardedStateDictConfig, ShardingStrategy, StateDictConfig,
                  StateDictSettings, StateDictType)
from .fully_sharded_data_parallel import FullyShardedDataParallel  # noqa: F401
from ._fully_shard import (CPUOffloadPolicy, FSDPModule, MixedPrecisionPolicy, OffloadPolicy,  # noqa: F401
                           UnshardHandle, fully_shard, register_fsdp_forward_method)
from . import wrap  # noqa: F401
