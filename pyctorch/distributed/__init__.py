"""torch.distributed: process groups and collectives across processes and machines.

Stores (TCPStore, FileStore, HashStore, PrefixStore) and the Gloo process group are C
(csrc/distributed/); distributed_c10d.py holds torch's Python surface. Imported on first use of
`pyctorch.distributed`, so `import pyctorch` does not pay for it.
"""
from pyctorch._C import _distributed_c10d as _c10d  # noqa: F401

from .distributed_c10d import *  # noqa: F401,F403
from .distributed_c10d import (  # noqa: F401
    Backend, DistBackendError, DistError, DistNetworkError, DistStoreError, FileStore, GroupMember, HashStore,
    P2POp, PrefixStore, ProcessGroup, ReduceOp, Store, TCPStore, Work, group, is_available, is_xccl_available,
    _get_default_group,
)
from .rendezvous import rendezvous, register_rendezvous_handler  # noqa: F401
from . import constants  # noqa: F401
from ._reducer import GradBucket, Reducer, _compute_bucket_assignment_by_size, _DEFAULT_FIRST_BUCKET_BYTES  # noqa: F401,E402
from . import algorithms  # noqa: F401,E402
