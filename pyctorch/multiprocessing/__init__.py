"""pyctorch.multiprocessing: the standard multiprocessing module, plus reductions that send
tensors and storages between processes through shared memory instead of copying them.

Everything of `multiprocessing` is re-exported, so `import pyctorch.multiprocessing as mp`
replaces `import multiprocessing as mp`. Importing this package registers the reductions
with multiprocessing.reduction.ForkingPickler (what Queue, Pipe and Process arguments
use): a CPU tensor put on a Queue is moved to shared memory once (Tensor.share_memory_),
and the receiver maps the same memory (Note [Shared storages], csrc/aten/storage_shared.c).
Plain pickle.dumps(tensor) is unaffected and still copies the values.
"""
import multiprocessing
from multiprocessing import *  # noqa: F401,F403

from .reductions import init_reductions
from .spawn import (ProcessContext, ProcessExitedException, ProcessRaisedException, SpawnContext, spawn,  # noqa: F401
                    start_processes)

ENV_VAR_PARALLEL_START = "TORCH_MP_PARALLEL_START"

__all__ = ["set_sharing_strategy", "get_sharing_strategy", "get_all_sharing_strategies"] + list(multiprocessing.__all__)

# file_descriptor: a storage travels as a duplicate of its anonymous memory file's descriptor.
# file_system: as the name of a file in /dev/shm (Note [Storages shared by name] in
# csrc/aten/storage_shared.c: a use count in the file and a watchdog per creating process
# remove the names, where torch has its torch_shm_manager process).
_sharing_strategy = "file_descriptor"
_all_sharing_strategies = {"file_descriptor", "file_system"}


def set_sharing_strategy(new_strategy):
    """Sets the strategy for sharing CPU tensors (one of get_all_sharing_strategies())."""
    global _sharing_strategy
    if new_strategy not in _all_sharing_strategies:
        raise AssertionError(f"invalid sharing strategy {new_strategy!r}, expected one of {_all_sharing_strategies}")
    _sharing_strategy = new_strategy
    from pyctorch import _C
    _C.UntypedStorage._set_share_by_name(new_strategy == "file_system")


def get_sharing_strategy():
    """The current strategy for sharing CPU tensors."""
    return _sharing_strategy


def get_all_sharing_strategies():
    """The set of sharing strategies this build supports."""
    return set(_all_sharing_strategies)


init_reductions()
