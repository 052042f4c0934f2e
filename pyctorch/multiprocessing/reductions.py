"""Pickling of tensors and storages between processes through shared memory.

A storage is moved to shared memory once (share_memory_ is a no-op afterwards) and travels
as a duplicate of its memory file's descriptor (multiprocessing.reduction.DupFd: passed with
SCM_RIGHTS, or inherited by a spawned child); the receiver maps the same pages
(UntypedStorage._new_shared_fd_cpu), so nothing is copied and writes on either side are
seen by the other. A tensor travels as its storage plus dtype, offset, sizes and strides,
so views keep their place in the storage. Under the file_system strategy a storage moved to
shared memory by name travels as that name instead (rebuild_storage_filename; Note [Storages
shared by name] in csrc/aten/storage_shared.c); one shared before, anonymously, still travels
by descriptor, and so do the DataLoader's bundles (Note [Descriptor bundles]).

Note [One storage per message]
Tensor.untyped_storage() makes a new Python object each call, so the pickler's memo would
not notice two tensors of one message sharing a storage, and the receiver would map the
memory twice (two storages, unrelated data pointers). The reducer therefore hands out one
_StorageRef per storage while a message is being pickled (a weak-valued dict keyed by the
storage's address; the pickler's memo keeps the ref alive for the whole message), and the
memo turns the second use into a reference to the first: one storage on arrival.

Note [Descriptor bundles]
DupFd passes each descriptor through multiprocessing's resource sharer: the receiver opens
a connection to a thread of the sender, authenticates, and asks for it; one round trip per
storage, and that thread must win the sender's GIL first. The DataLoader (and any sender
with its own channel) instead collects the descriptors of one message while pickling it
(collect_fds), sends them in one SCM_RIGHTS message over a Unix socket beside the queue, and
the receiver unpickles with that bundle in hand (provide_fds): a storage then pickles as
its position in the bundle. Both are thread-local, so every other pickling keeps DupFd.
"""
import os
import threading
import weakref
from multiprocessing.reduction import DupFd, ForkingPickler

from pyctorch import _C

_refs = weakref.WeakValueDictionary()  # storage address -> _StorageRef (Note [One storage per message])
_refs_lock = threading.Lock()


def _after_fork_in_child():
    global _refs_lock
    _refs_lock = threading.Lock()  # a fork while another thread held it would leave it held


os.register_at_fork(after_in_child=_after_fork_in_child)
_local = threading.local()  # .collect: [(fd, storage)] being sent; .bundle: fds being received


class collect_fds:
    """with collect_fds() as fds: pickled storages append (fd, storage) to fds instead of
    using DupFd (Note [Descriptor bundles]); send the fds before the storages die."""

    def __enter__(self):
        self.prev = getattr(_local, "collect", None)
        _local.collect = self.fds = []
        return self.fds

    def __exit__(self, *exc):
        _local.collect = self.prev


class provide_fds:
    """with provide_fds(fds): unpickle a message whose storages travelled in this bundle."""

    def __init__(self, fds):
        self.fds = fds

    def __enter__(self):
        self.prev = getattr(_local, "bundle", None)
        _local.bundle = self.fds

    def __exit__(self, *exc):
        _local.bundle = self.prev


def rebuild_storage_bundled(position, nbytes):
    bundle = getattr(_local, "bundle", None)
    if bundle is None or position >= len(bundle):
        raise RuntimeError("pyctorch.multiprocessing: this storage was sent in a descriptor bundle, and none is "
                           "provided (unpickle it inside provide_fds)")
    return _C.UntypedStorage._new_shared_fd_cpu(bundle[position], nbytes)


def rebuild_storage_filename(manager, name, nbytes):
    """Receiver side of the file_system strategy: map the named file, then return the use the
    sender took for the message (Note [Storages shared by name], csrc/aten/storage_shared.c)."""
    storage = _C.UntypedStorage._new_shared_filename_cpu(manager, name, nbytes)
    storage._shared_decref()
    return storage


def rebuild_storage_fd(df, nbytes):
    """Receiver side: map nbytes of the memory file whose descriptor df carries."""
    fd = df.detach()
    try:
        return _C.UntypedStorage._new_shared_fd_cpu(fd, nbytes)
    finally:
        os.close(fd)


class _StorageRef:
    """Stands for one storage in one message; pickles as its descriptor and size."""
    __slots__ = ("storage", "__weakref__")

    def __init__(self, storage):
        self.storage = storage

    def __reduce__(self):
        collect = getattr(_local, "collect", None)
        if collect is None and self.storage._shared_name() is not None:
            import pyctorch.multiprocessing as mp
            if mp.get_sharing_strategy() == "file_system":
                # by name; the message holds a use until the receiver has mapped it
                manager, name, nbytes = self.storage._share_filename_cpu_()
                self.storage._shared_incref()
                return (rebuild_storage_filename, (manager, name, nbytes))
        fd, nbytes = self.storage._share_fd_cpu_()
        if collect is not None:  # Note [Descriptor bundles]
            collect.append((fd, self.storage))
            return (rebuild_storage_bundled, (len(collect) - 1, nbytes))
        return (rebuild_storage_fd, (DupFd(fd), nbytes))


def _storage_ref(storage):
    storage.share_memory_()  # (by name under file_system unless already shared) first: the address key below must name the moved storage
    key = storage._cdata
    with _refs_lock:
        ref = _refs.get(key)
        if ref is None:
            ref = _refs[key] = _StorageRef(storage)
    return ref


def rebuild_tensor(storage, dtype, offset, size, stride, requires_grad):
    t = _C.empty(0, dtype=getattr(_C, dtype))
    t.set_(storage, offset, size, stride)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _tensor_args(t):
    if t.requires_grad and t.grad_fn is not None:
        raise RuntimeError(
            "Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd does not support "
            "crossing process boundaries.  If you just want to transfer the data, call detach() on the tensor "
            "before serializing (e.g., putting it on the queue).")
    if t.device.type != "cpu":
        raise RuntimeError(f"pyctorch.multiprocessing: cannot share a tensor on {t.device} in this build")
    return (_storage_ref(t.untyped_storage()), str(t.dtype).rsplit(".", 1)[-1], t.storage_offset(),
            tuple(t.shape), t.stride(), t.requires_grad)


def reduce_tensor(t):
    return (rebuild_tensor, _tensor_args(t))


def rebuild_storage(ref):
    return ref


def reduce_storage(storage):
    # through a _StorageRef, so a storage sent with tensors over it arrives as their storage
    return (rebuild_storage, (_storage_ref(storage),))


def init_reductions():
    """Registers the reductions with ForkingPickler (idempotent)."""
    ForkingPickler.register(_C.Tensor, reduce_tensor)
    ForkingPickler.register(_C.UntypedStorage, reduce_storage)
    # nn.Parameter needs no entry: its __reduce_ex__ sends .data, a Tensor, through the above


_MAX_FDS_PER_MESSAGE = 250  # SCM_RIGHTS carries at most 253 descriptors per message


def send_fd_bundle(sock, fds):
    """Sends the descriptors of one message over a SOCK_SEQPACKET Unix socket."""
    import socket
    for start in range(0, len(fds), _MAX_FDS_PER_MESSAGE):
        socket.send_fds(sock, [b"F"], fds[start:start + _MAX_FDS_PER_MESSAGE])


def recv_fd_bundle(sock, count):
    """Receives the `count` descriptors send_fd_bundle sent (the caller closes them)."""
    import socket
    fds = []
    try:
        while len(fds) < count:
            msg, got, flags, _ = socket.recv_fds(sock, 16, _MAX_FDS_PER_MESSAGE)
            fds.extend(got)
            if not msg:
                raise RuntimeError("pyctorch.multiprocessing: the sender closed its descriptor channel")
            if flags & getattr(socket, "MSG_CTRUNC", 0):
                raise RuntimeError("pyctorch.multiprocessing: descriptors were truncated in transit")
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise
    return fds
