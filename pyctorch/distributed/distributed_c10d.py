"""torch.distributed.distributed_c10d: process groups and collectives.

The stores and the Gloo process group are C (pyctorch._C._distributed_c10d, csrc/distributed/);
this module keeps torch's Python surface: the default group and subgroups, rank translation
between global and group ranks, argument checks with torch's messages, async_op handles, and
the object collectives (pickled into uint8 tensors).
"""
import datetime
import enum
import io
import os
import pickle
import queue
import threading
import warnings

import pyctorch
from pyctorch._C import _distributed_c10d as _c10d
from pyctorch import futures as _futures

from .constants import default_pg_timeout
from .rendezvous import rendezvous

Store = _c10d.Store
TCPStore = _c10d.TCPStore
HashStore = _c10d.HashStore
FileStore = _c10d.FileStore
PrefixStore = _c10d.PrefixStore
DistError = _c10d.DistError
DistStoreError = _c10d.DistStoreError
DistNetworkError = _c10d.DistNetworkError
DistBackendError = _c10d.DistBackendError

_GLOO_AVAILABLE = _c10d._has_gloo()

__all__ = [
    "Backend", "DebugLevel", "Future", "GroupMember", "get_debug_level", "set_debug_level",
    "set_debug_level_from_env", "P2POp", "ProcessGroup", "ReduceOp", "Work", "group",
    "all_gather", "all_gather_into_tensor", "all_gather_object", "all_reduce", "all_to_all", "all_to_all_single",
    "barrier", "batch_isend_irecv", "monitored_barrier", "new_subgroups", "new_subgroups_by_enumeration",
    "broadcast", "broadcast_object_list", "destroy_process_group", "gather",
    "gather_object", "get_backend", "get_global_rank", "get_group_rank", "get_process_group_ranks", "get_rank",
    "get_world_size", "init_process_group", "irecv", "is_gloo_available", "is_initialized", "is_mpi_available",
    "is_nccl_available", "is_torchelastic_launched", "is_ucc_available", "isend", "new_group", "recv", "reduce",
    "reduce_scatter", "reduce_scatter_tensor", "scatter", "scatter_object_list", "send",
    "Store", "TCPStore", "HashStore", "FileStore", "PrefixStore",
]


class ReduceOp:
    """torch.distributed.ReduceOp: the reduction of all_reduce, reduce and reduce_scatter."""

    class RedOpType(enum.IntEnum):
        SUM = 0
        AVG = 1
        PRODUCT = 2
        MIN = 3
        MAX = 4
        BAND = 5
        BOR = 6
        BXOR = 7
        PREMUL_SUM = 8

        def __repr__(self):
            return f"<RedOpType.{self.name}: {self.value}>"

        def __str__(self):
            return f"RedOpType.{self.name}"

    SUM = RedOpType.SUM
    AVG = RedOpType.AVG
    PRODUCT = RedOpType.PRODUCT
    MIN = RedOpType.MIN
    MAX = RedOpType.MAX
    BAND = RedOpType.BAND
    BOR = RedOpType.BOR
    BXOR = RedOpType.BXOR
    PREMUL_SUM = RedOpType.PREMUL_SUM


class Backend(str):
    """A backend name: Backend("GLOO") == "gloo"."""

    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    UCC = "ucc"
    MPI = "mpi"
    XCCL = "xccl"
    backend_list = [UNDEFINED, GLOO, NCCL, XCCL, UCC, MPI]
    default_device_backend_map = {"cpu": GLOO, "cuda": NCCL}

    def __new__(cls, name):
        if not isinstance(name, str):
            raise ValueError(f"Backend constructor parameter must be string-ish, but got: {type(name)}")
        value = getattr(Backend, name.upper(), Backend.UNDEFINED)
        if value == Backend.UNDEFINED:
            value = name.lower()
        return str.__new__(cls, value)


class GroupMember:
    WORLD = None
    NON_GROUP_MEMBER = -100


class group:
    """group.WORLD: the default process group (None before init_process_group)."""
    WORLD = None


_GroupNamespace = group  # functions below take a `group=` argument that hides the class


class Work:
    """The handle of a distributed operation: wait(), is_completed(), exception(), result(),
    get_future().

    A collective run with async_op holds its job on the group's worker thread (_job; Note
    [Async collectives]); a send or receive holds the C handle of the posted operation
    (_handle, a _c10d.Work) and completes in wait()."""

    def __init__(self, result=None, _handle=None, _job=None):
        self._result = list(result) if result is not None else []
        self._handle = _handle
        self._job = _job

    def wait(self, timeout=None):
        if self._job is not None:
            self._job.wait(timeout)
        elif self._handle is not None and not self._handle.is_completed():
            self._handle.wait(timeout)
        return True

    def is_completed(self):
        if self._job is not None:
            return self._job.event.is_set()
        return self._handle is None or self._handle.is_completed()

    def is_success(self):
        return self.is_completed() and self.exception() is None

    def exception(self):
        return self._job.error if self._job is not None and self._job.event.is_set() else None

    def result(self):
        if self._handle is not None:
            raise RuntimeError("result() not implemented.")  # as torch's Gloo sends and receives
        return list(self._result)

    def synchronize(self):
        self.wait()

    def get_future(self):
        if self._handle is not None:
            raise RuntimeError("Work::getFuture not implemented.")  # torch's Gloo sends/receives have none
        return Future(self)

    def _source_rank(self):
        return self._handle._source_rank()


class Future(_futures.Future):
    """torch.futures.Future as a collective's Work gives it: wait() and value() wait for the work
    and give its result (its list of tensors); then(callback) is a future of callback(this
    future), run when that future is first waited for (so is add_done_callback's callback)."""

    def __init__(self, work, parent=None, callback=None):
        self._work = work
        self._parent = parent
        self._callback = callback
        self._done = False
        self._value = None
        self._done_callbacks = []

    def add_done_callback(self, callback):
        if self._done:
            callback(self)
        else:
            self._done_callbacks.append(callback)

    def set_result(self, result):
        raise RuntimeError("a collective's Future is completed by its collective")

    set_exception = set_result

    def done(self):
        return self._done or self._work.is_completed()

    def wait(self):
        if not self._done:
            self._work.wait()
            self._value = self._work.result() if self._parent is None else self._callback(self._parent)
            self._done = True
            callbacks, self._done_callbacks = self._done_callbacks, []
            for cb in callbacks:
                cb(self)
        return self._value

    def value(self):
        return self.wait()

    def then(self, callback):
        return Future(self._work, self, callback)


class DebugLevel(enum.IntEnum):
    OFF = 0
    INFO = 1
    DETAIL = 2


def _level_from_env():
    value = os.environ.get("TORCH_DISTRIBUTED_DEBUG", "OFF").upper()
    if value not in DebugLevel.__members__:
        raise ValueError(f"The value of TORCH_DISTRIBUTED_DEBUG must be OFF, INFO, or DETAIL, but got {value}")
    return DebugLevel[value]


_debug_level = _level_from_env()


def get_debug_level():
    return _debug_level


def set_debug_level(level):
    global _debug_level
    _debug_level = DebugLevel(level)


def set_debug_level_from_env():
    set_debug_level(_level_from_env())


# Note [Collective fingerprints]: under TORCH_DISTRIBUTED_DEBUG=DETAIL every collective first
# all-gathers a fixed-size int64 fingerprint (sequence number, op, the first tensor's dtype and
# shape) over the same group, so ranks that issue different collectives, or the same one on
# different shapes or dtypes, all raise torch's "Detected mismatch between collectives" error
# naming the ranks, instead of corrupting data or hanging (or Gloo aborting the process on a
# size mismatch). The check runs in the group's order of operations, just before the collective.
_OP_CODES = {name: i + 1 for i, name in enumerate((
    "ALLREDUCE", "BROADCAST", "REDUCE", "ALLGATHER", "_ALLGATHER_BASE", "GATHER", "SCATTER", "REDUCE_SCATTER",
    "_REDUCE_SCATTER_BASE", "ALLTOALL_BASE", "ALLTOALL", "BARRIER"))}
_OP_NAMES = {v: k for k, v in _OP_CODES.items()}
_FP_DIMS = 16
_FP_LEN = 4 + _FP_DIMS
_DTYPE_CODES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]
_DTYPE_CPP = ["Bool", "Byte", "Char", "Short", "Int", "Long", "Half", "BFloat16", "Float", "Double"]
_TENSOR_OPTIONS = ("TensorOptions(dtype=float (default), device=cpu, layout=Strided (default), requires_grad=false "
                   "(default), pinned_memory=false (default), memory_format=(nullopt))")


def _encode_fingerprint(seq, op, tensor):
    code = [seq, _OP_CODES[op], -1, -1] + [-1] * _FP_DIMS
    if tensor is not None:
        code[2] = _DTYPE_CODES.index(str(tensor.dtype).split(".")[1])
        code[3] = tensor.dim()
        for i, n in enumerate(tuple(tensor.shape)[:_FP_DIMS]):
            code[4 + i] = n
    return code


def _fingerprint_text(code):
    shape = ", ".join(str(n) for n in code[4:4 + max(code[3], 0)])
    dtype = _DTYPE_CPP[code[2]] if code[2] >= 0 else "Undefined"
    return (f"CollectiveFingerPrint(SequenceNumber={code[0]}, OpType={_OP_NAMES[code[1]]}, TensorShape=[{shape}], "
            f"TensorDtypes={dtype}, TensorDeviceTypes={_TENSOR_OPTIONS})")


def _fingerprint_differences(mine, theirs):
    aspects = ""
    if mine[0] != theirs[0]:
        aspects += f"  Sequence number: {mine[0]}vs {theirs[0]}"
    if mine[1] != theirs[1]:
        aspects += f"  Op type: {_OP_NAMES[mine[1]]}vs {_OP_NAMES[theirs[1]]}"
    if mine[3:] != theirs[3:]:
        def dims(c):
            return " ".join(str(n) for n in c[4:4 + max(c[3], 0)])
        aspects += f"  Tensor Tensor shapes: {dims(mine)}vs {dims(theirs)}"
    if mine[2] != theirs[2]:
        def name(c):
            return _DTYPE_CPP[c[2]] if c[2] >= 0 else "Undefined"
        aspects += f"  Tensor Tensor dtypes: {name(mine)}vs {name(theirs)}"
    return aspects


class _FingerprintChecked:
    """fn preceded by the fingerprint check of Note [Collective fingerprints]."""

    def __init__(self, group, fp, fn):
        self.group, self.fp, self.fn = group, fp, fn

    def __call__(self, *args):
        g = self.group
        code = _encode_fingerprint(g._seq, *self.fp)  # runs in the group's order: the same seq on every rank
        everyone = [pyctorch.zeros(_FP_LEN, dtype=pyctorch.int64) for _ in range(g.size())]
        g._backend.allgather(everyone, pyctorch.tensor(code, dtype=pyctorch.int64))
        for r, theirs in enumerate(t.tolist() for t in everyone):
            if theirs != code:
                raise RuntimeError(
                    f"Detected mismatch between collectives on ranks. Rank {g._ranks[g.rank()]} is running collective: "
                    f"{_fingerprint_text(code)}, but Rank {g._ranks[r]} is running collective: "
                    f"{_fingerprint_text(theirs)}.Collectives differ in the following aspects: "
                    f"{_fingerprint_differences(code, theirs)}")
        g._seq += 1  # as torch: a collective refused for a mismatch takes no sequence number
        return self.fn(*args)


class _Job:
    """One backend call for a group's worker thread; wait() re-raises its exception here."""
    __slots__ = ("fn", "args", "event", "error")

    def __init__(self, fn, args):
        self.fn = fn
        self.args = args
        self.event = threading.Event()
        self.error = None

    def run(self):
        try:
            self.fn(*self.args)
        except BaseException as e:  # noqa: BLE001  (handed to whoever waits)
            self.error = e
        finally:
            self.fn = self.args = None
            self.event.set()

    def wait(self, timeout=None):
        if not self.event.wait(None if timeout is None else timeout.total_seconds()):
            raise RuntimeError(f"Work timed out after {int(timeout.total_seconds() * 1000)} ms")
        if self.error is not None:
            raise self.error


class _Worker:
    """A daemon thread running a group's backend calls in submission order."""

    def __init__(self):
        self._queue = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._loop, name="pyctorch-gloo-worker", daemon=True)
        self._thread.start()

    def _loop(self):
        while True:
            job = self._queue.get()
            if job is None:
                return
            job.run()

    def submit(self, fn, args):
        job = _Job(fn, args)
        self._queue.put(job)
        return job

    def stop(self):
        self._queue.put(None)


class ProcessGroup:
    """A group of ranks and the backend that carries its collectives (Gloo here).

    Ownership: _backend is the C ProcessGroupGloo of this group (None on ranks outside it);
    _ranks lists the global ranks of the members in group-rank order."""

    def __init__(self, backend, ranks, rank, name, backend_name, timeout, store=None):
        self._backend = backend
        self._store = store  # this group's PrefixStore (monitored_barrier talks through it)
        self._barrier_seq = 0
        self._worker = None  # the thread async collectives run on (Note [Async collectives])
        self._seq = 0  # collectives that passed the fingerprint check (their SequenceNumber)
        self._detail = _debug_level == DebugLevel.DETAIL  # as torch: fixed when the group is made
        self._pid = os.getpid()
        self._ranks = list(ranks)
        self._rank = rank
        self.group_name = name
        self._backend_name = backend_name
        self._timeout = timeout

    def _call(self, async_op, result, fn, *args, fp=None):
        """Runs fn(*args), a backend call, in this group's order of operations.

        Note [Async collectives]: with async_op the call goes to the group's worker thread (made
        on the first one) and a pending Work comes back; the Gloo call releases the GIL, so the
        caller computes meanwhile. Once a group has a worker every call goes through it, so the
        ranks' collectives keep the order they were issued in; before that, a synchronous call
        runs on the calling thread with no hand-off."""
        if self._pid != os.getpid():
            raise RuntimeError("ProcessGroupGloo: a forked child cannot use its parent's process group")
        if fp is not None and self._detail:
            fn = _FingerprintChecked(self, fp, fn)
        if self._worker is None and not async_op:
            fn(*args)
            return None
        if self._worker is None:
            self._worker = _Worker()
        job = self._worker.submit(fn, args)
        if async_op:
            return Work(result, _job=job)
        job.wait()
        return None

    def _shutdown(self):
        if self._worker is not None and self._pid == os.getpid():
            self._worker.stop()
        self._worker = None
        self._backend = None

    def rank(self):
        return self._rank

    def size(self):
        return len(self._ranks)

    def name(self):
        return self._backend_name

    def __repr__(self):
        return f"<torch.distributed.distributed_c10d.ProcessGroup object at {hex(id(self))}>"


class _World:
    """The state of this process's distributed world. pg_map holds every live group."""

    def __init__(self):
        self.default_pg = None
        self.store = None        # the default group's store (subgroups prefix it)
        self.pg_count = 0
        self.groups = []


_world = _World()


def is_available():
    return True


def is_gloo_available():
    return _GLOO_AVAILABLE


def is_nccl_available():
    return False


def is_mpi_available():
    return False


def is_ucc_available():
    return False


def is_xccl_available():
    return False


def is_torchelastic_launched():
    import os
    return os.getenv("TORCHELASTIC_RUN_ID") is not None


def is_initialized():
    return _world.default_pg is not None


def _get_default_group():
    if _world.default_pg is None:
        raise ValueError("Default process group has not been initialized, please make sure to call init_process_group.")
    return _world.default_pg


def _resolve(group):
    """The ProcessGroup a `group=` argument names."""
    if group is None or group is GroupMember.WORLD:
        return _get_default_group()
    if not isinstance(group, ProcessGroup) or group not in _world.groups:
        name = getattr(group, "group_name", group)
        raise ValueError(f"Process group {name} is not initialized in the world group map. "
                         "Please initialize the group first.")
    return group


def _not_member(group):
    return group is GroupMember.NON_GROUP_MEMBER or (isinstance(group, ProcessGroup) and group._backend is None)


def _warn_not_in_group(op_name):
    global_rank = -1 if _world.default_pg is None else _world.default_pg.rank()
    warnings.warn(f"Running {op_name} on global rank {global_rank} which does not belong to the given group.")


def _timedelta(timeout):
    if timeout is None:
        return default_pg_timeout
    if not isinstance(timeout, datetime.timedelta):
        raise TypeError(f"Expected timeout argument to be of type datetime.timedelta, got {timeout}")
    return timeout


def _check_backend(backend):
    """The name get_backend reports (torch's 'undefined' when none was given), after checking that
    this build runs it: Gloo for CPU tensors ("cpu:gloo,cuda:nccl" needs NCCL, which it lacks)."""
    if backend is None:
        name, cpu = Backend.UNDEFINED, Backend.GLOO
    elif ":" in str(backend):
        name = str(backend).lower()
        parts = dict(p.split(":", 1) for p in name.split(",") if ":" in p)
        if Backend.NCCL in parts.values():
            raise RuntimeError("Distributed package doesn't have NCCL built in")
        cpu = parts.get("cpu", "")
    else:
        name = cpu = Backend(backend)
    _check_runnable(backend, cpu)
    return str(name)


def _check_runnable(backend, name):
    if name == Backend.NCCL:
        raise RuntimeError("Distributed package doesn't have NCCL built in")
    if name == Backend.MPI:
        raise RuntimeError("Distributed package doesn't have MPI built in. MPI is only included if you build PyTorch "
                           "from source on a host that has MPI installed.")
    if name != Backend.GLOO:
        raise ValueError(f"Invalid backend: '{backend}'")
    if not _GLOO_AVAILABLE:
        raise RuntimeError("Distributed package doesn't have Gloo built in (pyctorch was built without libgloo-dev)")


def _local_address(store):
    """The address this host reaches the store's master from: Gloo listens there."""
    import socket
    host = getattr(store, "host", None)
    while host is None and isinstance(store, PrefixStore):
        store = store.underlying_store
        host = getattr(store, "host", None)
    if not host or host in ("localhost", "127.0.0.1", "::1"):
        return "127.0.0.1"
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect((host, 9))  # UDP: picks the route, sends nothing
            return s.getsockname()[0]
    except OSError:
        return "127.0.0.1"


def _make_group(store, ranks, global_rank, name, backend_name, timeout):
    ranks = list(ranks)
    if global_rank not in ranks:
        return ProcessGroup(None, ranks, -1, name, backend_name, timeout)
    rank = ranks.index(global_rank)
    gstore = PrefixStore(f"{name}/", store)
    # GLOO_SOCKET_IFNAME names the interface Gloo listens on, as in torch (the first of a list)
    iface = os.environ.get("GLOO_SOCKET_IFNAME", "").split(",")[0]
    pg = _c10d.ProcessGroupGloo(gstore, rank, len(ranks), timeout, _local_address(store), iface)
    return ProcessGroup(pg, ranks, rank, name, backend_name, timeout, gstore)


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1, store=None,
                       group_name="", pg_options=None, device_id=None, _ranks=None):
    """Joins this process to the default group (rank of world_size) through a store."""
    if _world.default_pg is not None:
        raise ValueError("trying to initialize the default process group twice!")
    if not (store is None or init_method is None):
        raise AssertionError("Cannot specify both init_method and store.")
    backend_name = _check_backend(backend)
    timeout = _timedelta(timeout)
    set_debug_level_from_env()
    if store is not None:
        if world_size <= 0:
            raise AssertionError("world_size must be positive if using store")
        if rank < 0:
            raise AssertionError("rank must be non-negative if using store")
    else:
        if init_method is None:
            init_method = "env://"
        store, rank, world_size = next(rendezvous(init_method, rank, world_size, timeout=timeout))
        store.set_timeout(timeout)
    store = PrefixStore("default_pg", store)
    pg = _make_group(store, range(world_size), rank, "0", backend_name, timeout)
    _world.default_pg = pg
    _world.store = store
    _world.pg_count = 1
    _world.groups = [pg]
    GroupMember.WORLD = _GroupNamespace.WORLD = pg


def _store_barrier(store, key, world_size, timeout):
    """Returns once every rank of the world arrived here (counted in the store)."""
    n = store.add(f"store_based_barrier_key/{key}", 1)
    if n >= world_size:
        store.set(f"store_based_barrier_key/{key}/done", "1")
    else:
        store.wait([f"store_based_barrier_key/{key}/done"], timeout)


def destroy_process_group(group=None):
    """Leaves the group (the default group: every group, and the world is reset)."""
    if group is None or group is GroupMember.WORLD:
        if _world.default_pg is None:
            raise AssertionError("Process group cannot be None")
        for g in _world.groups:
            g._shutdown()
        _world.__init__()
        GroupMember.WORLD = _GroupNamespace.WORLD = None
        return
    g = _resolve(group)
    g._shutdown()
    _world.groups.remove(g)


def new_group(ranks=None, timeout=None, backend=None, pg_options=None, use_local_synchronization=False,
              group_desc=None, device_id=None, sort_ranks=True):
    """A group of some ranks; every rank of the world must call it, members or not."""
    default = _get_default_group()
    world_size = default.size()
    if ranks is None or len(ranks) == 0:
        ranks = list(range(world_size))
    ranks = sorted(ranks) if sort_ranks else list(ranks)
    for r in ranks:
        if r < 0 or r >= world_size:
            raise ValueError("The new group's rank should be within the world_size set by init_process_group")
    backend_name = _check_backend(backend) if backend is not None else default._backend_name
    timeout = _timedelta(timeout) if timeout is not None else default._timeout
    name = str(_world.pg_count)
    _world.pg_count += 1
    g = _make_group(_world.store, ranks, default.rank(), name, backend_name, timeout)
    _world.groups.append(g)
    _store_barrier(_world.store, f"new_group/{name}", world_size, timeout)
    return g if g._backend is not None else GroupMember.NON_GROUP_MEMBER


def get_rank(group=None):
    if _not_member(group):
        return -1
    return _resolve(group).rank()


def get_world_size(group=None):
    if _not_member(group):
        return -1
    return _resolve(group).size()


def get_backend(group=None):
    if _not_member(group):
        raise ValueError("Invalid process group specified")
    return _resolve(group)._backend_name


def get_process_group_ranks(group):
    if group is None or group is GroupMember.WORLD:
        return list(range(_get_default_group().size()))
    return list(_resolve(group)._ranks)


def get_global_rank(group, group_rank):
    ranks = get_process_group_ranks(group)
    if not 0 <= group_rank < len(ranks):
        raise ValueError(f"Group rank {group_rank} is not part of group {group}")
    return ranks[group_rank]


def get_group_rank(group, global_rank):
    ranks = get_process_group_ranks(group)
    if global_rank not in ranks:
        raise ValueError(f"Global rank {global_rank} is not part of group {group}")
    return ranks.index(global_rank)


def _group_peer(g, peer, group_peer, what):
    """The group rank of a src/dst given as a global rank (peer) or a group rank (group_peer)."""
    if peer is not None and group_peer is not None:
        raise ValueError(f"Can not specify both {what} and group_{what}")
    if group_peer is not None:
        if not 0 <= group_peer < g.size():
            raise ValueError(f"Group rank {group_peer} is not part of group {g}")
        return group_peer
    if peer is None:
        peer = 0
    if g is _world.default_pg:
        return peer
    if peer not in g._ranks:
        raise ValueError(f"Global rank {peer} is not part of group {g}")
    return g._ranks.index(peer)


def _check_tensor(t, name):
    if not isinstance(t, pyctorch.Tensor):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type torch.Tensor\n"
                        f"             but got {type(t)} instead.")


def _check_tensor_list(ts, name):
    if not isinstance(ts, list) or not all(isinstance(t, pyctorch.Tensor) for t in ts):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type List[torch.Tensor]\n"
                        f"             but got {type(ts)} with elements of type "
                        f"{[type(t) for t in ts] if isinstance(ts, list) else ''}.")


def _op_value(op):
    if isinstance(op, ReduceOp.RedOpType):
        return int(op)
    if isinstance(op, int):
        return op
    raise TypeError(f"Invalid ReduceOp: {op!r}")


def _collective(name, group):
    """The group's backend, or None (with torch's warning) on ranks outside it."""
    if _not_member(group):
        _warn_not_in_group(name)
        return None
    return _resolve(group)


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    _check_tensor(tensor, "tensor")
    g = _collective("all_reduce", group)
    if g is None:
        return None
    return g._call(async_op, [tensor], g._backend.allreduce, tensor, _op_value(op), fp=("ALLREDUCE", tensor))


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    _check_tensor(tensor, "tensor")
    g = _collective("broadcast", group)
    if g is None:
        return None
    return g._call(async_op, [tensor], g._backend.broadcast, tensor, _group_peer(g, src, group_src, "src"),
                   fp=("BROADCAST", tensor))


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    _check_tensor(tensor, "tensor")
    g = _collective("reduce", group)
    if g is None:
        return None
    return g._call(async_op, [tensor], g._backend.reduce, tensor, _group_peer(g, dst, group_dst, "dst"), _op_value(op),
                   fp=("REDUCE", tensor))


def all_gather(tensor_list, tensor, group=None, async_op=False):
    _check_tensor_list(tensor_list, "tensor_list")
    _check_tensor(tensor, "tensor")
    g = _collective("all_gather", group)
    if g is None:
        return None
    return g._call(async_op, tensor_list, g._backend.allgather, tensor_list, tensor, fp=("ALLGATHER", tensor))


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    _check_tensor(output_tensor, "output_tensor")
    _check_tensor(input_tensor, "input_tensor")
    g = _collective("all_gather_into_tensor", group)
    if g is None:
        return None
    return g._call(async_op, [output_tensor], g._backend.allgather_into, output_tensor, input_tensor,
                   fp=("_ALLGATHER_BASE", input_tensor))


def gather(tensor, gather_list=None, dst=None, group=None, async_op=False, group_dst=None):
    _check_tensor(tensor, "tensor")
    if gather_list:
        _check_tensor_list(gather_list, "gather_list")
    else:
        gather_list = []
    g = _collective("gather", group)
    if g is None:
        return None
    root = _group_peer(g, dst, group_dst, "dst")
    if g.rank() == root:
        if not gather_list:
            raise ValueError("Argument ``gather_list`` must be specified on destination rank.")
    elif gather_list:
        raise ValueError("Argument ``gather_list`` must NOT be specified on non-destination ranks.")
    return g._call(async_op, gather_list, g._backend.gather, gather_list if g.rank() == root else None, tensor, root,
                   fp=("GATHER", tensor))


def scatter(tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None):
    _check_tensor(tensor, "tensor")
    if scatter_list:
        _check_tensor_list(scatter_list, "scatter_list")
    else:
        scatter_list = []
    g = _collective("scatter", group)
    if g is None:
        return None
    root = _group_peer(g, src, group_src, "src")
    if g.rank() == root:
        if not scatter_list:
            raise ValueError("Argument ``scatter_list`` must be specified on source rank.")
    elif scatter_list:
        raise ValueError("Argument ``scatter_list`` must NOT be specified on non-source ranks.")
    return g._call(async_op, [tensor], g._backend.scatter, tensor, scatter_list if g.rank() == root else None, root,
                   fp=("SCATTER", tensor))


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    _check_tensor(output, "output")
    _check_tensor_list(input_list, "input_list")
    g = _collective("reduce_scatter", group)
    if g is None:
        return None
    return g._call(async_op, [output], g._backend.reduce_scatter, output, input_list, _op_value(op),
                   fp=("REDUCE_SCATTER", output))


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    _check_tensor(output, "output")
    _check_tensor(input, "input")
    g = _collective("reduce_scatter_tensor", group)
    if g is None:
        return None
    return g._call(async_op, [output], g._backend.reduce_scatter_tensor, output, input, _op_value(op),
                   fp=("_REDUCE_SCATTER_BASE", input))


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None, group=None, async_op=False):
    _check_tensor(output, "output")
    _check_tensor(input, "input")
    g = _collective("all_to_all_single", group)
    if g is None:
        return None
    return g._call(async_op, [output], g._backend.alltoall_base, output, input, list(output_split_sizes or []),
                   list(input_split_sizes or []), fp=("ALLTOALL_BASE", input))


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    _check_tensor_list(output_tensor_list, "output_tensor_list")
    _check_tensor_list(input_tensor_list, "input_tensor_list")
    g = _collective("all_to_all", group)
    if g is None:
        return None
    if len(input_tensor_list) != g.size() or len(output_tensor_list) != g.size():
        raise RuntimeError("Number of tensors must equal the group size")
    flat_in = pyctorch.cat([t.reshape(-1) for t in input_tensor_list])
    flat_out = pyctorch.empty(sum(t.numel() for t in output_tensor_list), dtype=flat_in.dtype)

    def run():
        g._backend.alltoall_base(flat_out, flat_in, [t.numel() for t in output_tensor_list],
                                 [t.numel() for t in input_tensor_list])
        offset = 0
        for t in output_tensor_list:
            t.copy_(flat_out[offset:offset + t.numel()].view(t.shape))
            offset += t.numel()
    return g._call(async_op, output_tensor_list, run,
                   fp=("ALLTOALL", input_tensor_list[0] if input_tensor_list else None))


def barrier(group=None, async_op=False, device_ids=None, timeout=None):
    g = _collective("barrier", group)
    if g is None:
        return None
    return g._call(async_op, [], g._backend.barrier, fp=("BARRIER", None))


def monitored_barrier(group=None, timeout=None, wait_all_ranks=False):
    """A barrier that names the ranks that did not arrive: rank 0 waits for each rank's check-in
    (through the group's store) up to timeout, then releases them all."""
    g = _collective("monitored_barrier", group)
    if g is None:
        return None
    timeout = g._timeout if timeout is None else _timedelta(timeout)
    ms = int(timeout.total_seconds() * 1000)
    g._barrier_seq += 1
    prefix = f"monitored_barrier/{g._barrier_seq}"
    if g.rank() != 0:
        g._store.set(f"{prefix}/{g.rank()}", "1")
        try:
            g._store.wait([f"{prefix}/release"], timeout)
        except DistStoreError:
            raise RuntimeError(
                f"[Rank {g._ranks[g.rank()]}]: Rank 0 timed out in monitoredBarrier after {ms} ms") from None
        return None
    missing = []
    for r in range(1, g.size()):
        try:
            g._store.wait([f"{prefix}/{r}"], timeout if not missing else datetime.timedelta(milliseconds=1))
        except DistStoreError:
            missing.append(g._ranks[r])
            if not wait_all_ranks:
                break
    if missing:
        who = "Ranks " + ", ".join(str(r) for r in missing) if wait_all_ranks else f"Rank {missing[0]}"
        raise RuntimeError(f"[Rank {g._ranks[0]}]: {who} failed to pass monitoredBarrier in {ms} ms")
    g._store.set(f"{prefix}/release", "1")
    return None


def new_subgroups_by_enumeration(ranks_per_subgroup_list, timeout=None, backend=None, pg_options=None,
                                 group_desc=None):
    """One group per list of ranks; returns (the group holding this rank or None, all of them)."""
    if not ranks_per_subgroup_list:
        raise ValueError("The arg 'ranks_per_subgroup_list' cannot be empty")
    seen = set()
    for ranks in ranks_per_subgroup_list:
        for r in ranks:
            if r in seen:
                raise ValueError(f"Rank {r} has appeared in both subgroup {seen} and {ranks}")
            seen.add(r)
    me = get_rank()
    cur, subgroups = None, []
    for ranks in ranks_per_subgroup_list:
        g = new_group(ranks=ranks, timeout=timeout, backend=backend, pg_options=pg_options)
        subgroups.append(g)
        if me in ranks:
            cur = g
    return cur, subgroups


def new_subgroups(group_size=None, group=None, timeout=None, backend=None, pg_options=None, group_desc=None):
    """Splits the group into consecutive subgroups of group_size ranks."""
    if group_size is None:
        raise ValueError("Default group size only takes effect when CUDA is available."
                         "If your subgroup using a backend that does not depend on CUDA,"
                         "please pass in 'group_size' correctly.")
    if group_size <= 0:
        raise ValueError(f"The arg 'group_size' ({group_size}) must be positive")
    world_size = get_world_size(group=group)
    if world_size < group_size:
        raise ValueError(f"The arg 'group_size' ({group_size}) must not exceed the world size ({world_size})")
    if world_size % group_size != 0:
        raise ValueError(f"The world size ({world_size}) must be divisible by '{group_size=}'")
    ranks = get_process_group_ranks(group)
    return new_subgroups_by_enumeration([ranks[i:i + group_size] for i in range(0, len(ranks), group_size)],
                                        timeout=timeout, backend=backend, pg_options=pg_options)


def _p2p_peer(g, peer, group_peer, what):
    gp = _group_peer(g, peer, group_peer, what)
    if gp == g.rank():
        raise ValueError(f"Invalid {'destination' if what == 'dst' else 'source'} rank: "
                         f"{'destination' if what == 'dst' else 'source'} rank should not be the same as the rank "
                         "of the current process.")
    return gp


def isend(tensor, dst=None, group=None, tag=0, group_dst=None):
    _check_tensor(tensor, "tensor")
    g = _collective("isend", group)
    if g is None:
        return None
    return Work(_handle=g._backend.send(tensor, _p2p_peer(g, dst, group_dst, "dst"), tag))


def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    _check_tensor(tensor, "tensor")
    g = _collective("irecv", group)
    if g is None:
        return None
    peer = -1 if src is None and group_src is None else _group_peer(g, src, group_src, "src")
    return Work(_handle=g._backend.recv(tensor, peer, tag))


def send(tensor, dst=None, group=None, tag=0, group_dst=None):
    work = isend(tensor, dst, group, tag, group_dst)
    if work is not None:
        work.wait()


def recv(tensor, src=None, group=None, tag=0, group_src=None):
    work = irecv(tensor, src, group, tag, group_src)
    if work is None:
        return -1
    work.wait()
    g = _resolve(group)
    return g._ranks[work._source_rank()]


class P2POp:
    """One send or receive for batch_isend_irecv: P2POp(dist.isend, tensor, peer)."""

    def __init__(self, op, tensor, peer=None, group=None, tag=0, group_peer=None):
        if op not in (isend, irecv):
            raise ValueError("Invalid ``op``. Expected ``op`` to be of type ``torch.distributed.isend`` or "
                             "``torch.distributed.irecv``.")
        _check_tensor(tensor, "tensor")
        self.op = op
        self.tensor = tensor
        self.group = group
        self.peer = peer
        self.tag = tag
        self.group_peer = group_peer

    def __repr__(self):
        return f"P2POp(op={self.op.__name__}, tensor={tuple(self.tensor.shape)}, peer={self.peer}, tag={self.tag})"


def batch_isend_irecv(p2p_op_list):
    """Posts every send and receive of the list and returns their Works."""
    if not isinstance(p2p_op_list, list) or not all(isinstance(p, P2POp) for p in p2p_op_list):
        raise ValueError("Invalid ``p2p_op_list``. Each op is expected to to be of type ``torch.distributed.P2POp``.")
    works = []
    for p in p2p_op_list:
        if p.op is isend:
            works.append(isend(p.tensor, p.peer, p.group, p.tag, p.group_peer))
        else:
            works.append(irecv(p.tensor, p.peer, p.group, p.tag, p.group_peer))
    return [w for w in works if w is not None]


# ---- object collectives: objects travel as pickled uint8 tensors ---------------------------

def _object_to_tensor(obj):
    buf = io.BytesIO()
    pickle.Pickler(buf).dump(obj)
    data = bytearray(buf.getvalue())
    t = pyctorch.frombuffer(data, dtype=pyctorch.uint8) if data else pyctorch.empty(0, dtype=pyctorch.uint8)
    return t, pyctorch.tensor([len(data)], dtype=pyctorch.int64)


def _tensor_to_object(t, size):
    return pickle.Unpickler(io.BytesIO(bytes(t[:size].numpy()))).load()


def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None):
    g = _collective("broadcast_object_list", group)
    if g is None:
        return
    root = _group_peer(g, src, group_src, "src")
    if g.rank() == root:
        pairs = [_object_to_tensor(o) for o in object_list]
        sizes = pyctorch.cat([s for _, s in pairs])
    else:
        sizes = pyctorch.zeros(len(object_list), dtype=pyctorch.int64)
    g._call(False, None, g._backend.broadcast, sizes, root)
    if g.rank() == root:
        payload = pyctorch.cat([t for t, _ in pairs]) if pairs else pyctorch.empty(0, dtype=pyctorch.uint8)
    else:
        payload = pyctorch.empty(int(sizes.sum().item()), dtype=pyctorch.uint8)
    g._call(False, None, g._backend.broadcast, payload, root)
    if g.rank() != root:
        offset = 0
        for i, n in enumerate(sizes.tolist()):
            object_list[i] = _tensor_to_object(payload[offset:offset + n], n)
            offset += n


def _gather_padded(g, obj, to_all, root=0):
    """Every rank's pickled obj: a list (on every rank when to_all, else on root only)."""
    t, size = _object_to_tensor(obj)
    sizes = [pyctorch.zeros(1, dtype=pyctorch.int64) for _ in range(g.size())]
    g._call(False, None, g._backend.allgather, sizes, size)
    longest = max(int(s.item()) for s in sizes)
    padded = pyctorch.zeros(longest, dtype=pyctorch.uint8)
    padded[:t.numel()] = t
    outs = [pyctorch.empty(longest, dtype=pyctorch.uint8) for _ in range(g.size())]
    if to_all:
        g._call(False, None, g._backend.allgather, outs, padded)
    else:
        g._call(False, None, g._backend.gather, outs if g.rank() == root else None, padded, root)
        if g.rank() != root:
            return None
    return [_tensor_to_object(o, int(s.item())) for o, s in zip(outs, sizes)]


def all_gather_object(object_list, obj, group=None):
    g = _collective("all_gather_object", group)
    if g is None:
        return
    for i, o in enumerate(_gather_padded(g, obj, True)):
        object_list[i] = o


def gather_object(obj, object_gather_list=None, dst=None, group=None, group_dst=None):
    g = _collective("gather_object", group)
    if g is None:
        return
    root = _group_peer(g, dst, group_dst, "dst")
    if g.rank() == root and object_gather_list is None:
        raise ValueError("Argument ``object_gather_list`` must be specified on destination rank.")
    if g.rank() != root and object_gather_list is not None:
        raise ValueError("Argument ``object_gather_list`` must NOT be specified on non-destination ranks.")
    got = _gather_padded(g, obj, False, root)
    if got is not None:
        for i, o in enumerate(got):
            object_gather_list[i] = o


def scatter_object_list(scatter_object_output_list, scatter_object_input_list=None, src=None, group=None,
                        group_src=None):
    g = _collective("scatter_object_list", group)
    if g is None:
        return
    if not isinstance(scatter_object_output_list, list) or len(scatter_object_output_list) < 1:
        raise ValueError("Expected argument scatter_object_output_list to be a list of size at least 1.")
    root = _group_peer(g, src, group_src, "src")
    holder = [scatter_object_input_list if g.rank() == root else None]
    broadcast_object_list(holder, group=group, group_src=root)
    scatter_object_output_list[0] = holder[0][g.rank()]
