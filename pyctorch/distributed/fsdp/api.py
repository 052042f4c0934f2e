"""torch.distributed.fsdp.api: the enums and config records FSDP takes (plain data, no behaviour)."""
from dataclasses import dataclass
from enum import Enum, auto

__all__ = ["ShardingStrategy", "BackwardPrefetch", "MixedPrecision", "CPUOffload", "StateDictType",
           "StateDictConfig", "FullStateDictConfig", "ShardedStateDictConfig", "LocalStateDictConfig",
           "OptimStateDictConfig", "FullOptimStateDictConfig", "ShardedOptimStateDictConfig",
           "LocalOptimStateDictConfig", "StateDictSettings"]


class ShardingStrategy(Enum):
    """FULL_SHARD: parameters, gradients and optimizer state sharded; parameters re-gathered for
    backward. SHARD_GRAD_OP: the gathered parameters stay from forward until backward. NO_SHARD:
    replicated, gradients all-reduced (DDP). HYBRID_SHARD / _HYBRID_SHARD_ZERO2: pyctorch runs one
    node's worth of ranks, so they shard across the whole group as FULL_SHARD / SHARD_GRAD_OP."""
    FULL_SHARD = auto()
    SHARD_GRAD_OP = auto()
    NO_SHARD = auto()
    HYBRID_SHARD = auto()
    _HYBRID_SHARD_ZERO2 = auto()


class BackwardPrefetch(Enum):
    """Accepted for torch compatibility; pyctorch's collectives are synchronous, so there is
    nothing to prefetch ahead of (see the package docstring)."""
    BACKWARD_PRE = auto()
    BACKWARD_POST = auto()


@dataclass
class MixedPrecision:
    """param_dtype: the dtype forward and backward compute in (the shard stays in its own dtype);
    reduce_dtype: the dtype gradients are reduced in (default param_dtype); buffer_dtype: the
    dtype buffers are cast to at the first forward."""
    param_dtype: object = None
    reduce_dtype: object = None
    buffer_dtype: object = None
    keep_low_precision_grads: bool = False
    cast_forward_inputs: bool = False
    cast_root_forward_inputs: bool = True
    _module_classes_to_ignore: tuple = ()


@dataclass
class CPUOffload:
    """offload_params: keep the sharded parameters and their gradients on the CPU. On a CPU-only
    build they are there already, so this changes nothing (and moves nothing)."""
    offload_params: bool = False


class StateDictType(Enum):
    FULL_STATE_DICT = auto()
    LOCAL_STATE_DICT = auto()
    SHARDED_STATE_DICT = auto()


@dataclass
class StateDictConfig:
    offload_to_cpu: bool = False


@dataclass
class FullStateDictConfig(StateDictConfig):
    rank0_only: bool = False


@dataclass
class ShardedStateDictConfig(StateDictConfig):
    _use_dtensor: bool = False


@dataclass
class LocalStateDictConfig(StateDictConfig):
    pass


@dataclass
class OptimStateDictConfig:
    offload_to_cpu: bool = True


@dataclass
class FullOptimStateDictConfig(OptimStateDictConfig):
    rank0_only: bool = False


@dataclass
class ShardedOptimStateDictConfig(OptimStateDictConfig):
    _use_dtensor: bool = False


@dataclass
class LocalOptimStateDictConfig(OptimStateDictConfig):
    offload_to_cpu: bool = False


@dataclass
class StateDictSettings:
    state_dict_type: StateDictType
    state_dict_config: StateDictConfig
    optim_state_dict_config: OptimStateDictConfig
