"""Datasets and process helpers shared by the tests of pyctorch.utils.data. Kept in a module
of their own (importing only pyctorch, numpy and the standard library) so that workers
started with 'spawn' can unpickle them quickly."""
import os
import random
import signal
import time

import numpy as np


class Samples:
    """Map-style: sample i is (tensor of shape (2, 3) filled with i, i, {"f": i/2, "s": str(i)})
    built with module m (pyctorch or torch)."""

    def __init__(self, m, n=20):
        self.m, self.n = m, n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return self.m.full((2, 3), float(i)), i, {"f": i / 2, "s": str(i)}

    def __getstate__(self):  # modules do not pickle (spawn): keep the name
        return {"m": self.m.__name__, "n": self.n}

    def __setstate__(self, state):
        import importlib
        self.m, self.n = importlib.import_module(state["m"]), state["n"]


class Squares:
    """Map-style: sample i is the int i*i (collates to int64)."""

    def __init__(self, n=10):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return i * i


class RandomAugment:
    """Map-style: sample i is (i, draws from the worker's RNGs: module m, python random, numpy)."""

    def __init__(self, m, n=8):
        self.m, self.n = m, n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return i, float(self.m.rand(1).item()), random.random(), float(np.random.rand())


class RaiseAt:
    """Map-style over range(n) that raises ValueError at index `bad` (only while `armed`
    names the current epoch: armed is a shared multiprocessing Value or None)."""

    def __init__(self, n, bad, armed=None, epoch=None):
        self.n, self.bad, self.armed, self.epoch = n, bad, armed, epoch

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i == self.bad and (self.armed is None or self.armed.value == self.epoch.value):
            raise ValueError(f"index {i} is broken")
        return i


class KillSelfAt:
    """Map-style over range(n): the worker process fetching `bad` kills itself with SIGKILL."""

    def __init__(self, n, bad):
        self.n, self.bad = n, bad

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        from pyctorch.utils.data import get_worker_info
        if i == self.bad and get_worker_info() is not None:
            os.kill(os.getpid(), signal.SIGKILL)
        return i


class Sleepy:
    """Map-style over range(n): every sample takes `seconds`."""

    def __init__(self, n, seconds):
        self.n, self.seconds = n, seconds

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        time.sleep(self.seconds)
        return i


def child_pids():
    """Pids of the live (not zombie) child processes of this process, from /proc."""
    me = os.getpid()
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        state, ppid = fields[0], int(fields[1])
        if ppid == me and state != "Z":
            out.append(int(entry))
    return out


def shared_mappings():
    """How many of this process's descriptors and mappings are pyctorch shared memory."""
    fds = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            if "pyctorch_shared" in os.readlink(f"/proc/self/fd/{fd}"):
                fds += 1
        except OSError:
            pass
    with open("/proc/self/maps") as f:
        maps = sum("pyctorch_shared" in line for line in f)
    return fds, maps


def _foreign_live_creator(entry):
    """A file_system-strategy name (pyctorch_fs_<creator pid>_...) whose creator is alive and not this process or
    one of its children: another process's storage in use (a concurrent run), not something this test left."""
    parts = entry.split("_")
    if len(parts) < 3 or parts[1] != "fs" or not parts[2].isdigit():
        return False
    pid = int(parts[2])
    if pid == os.getpid() or pid in child_pids():
        return False
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return True


def our_shm_entries():
    """Entries of /dev/shm that pyctorch could have created (the shm_open fallback names and the file_system
    strategy's names), leaving out those of unrelated live processes."""
    return sorted(e for e in os.listdir("/dev/shm") if e.startswith("pyctorch") and not _foreign_live_creator(e))


def write_through_queue(q_in, q_out):
    """Child process: receive (tensor, view, storage), report what it sees, write to both."""
    t, v, s = q_in.get()
    q_out.put((t.is_shared(), v.data_ptr() - t.data_ptr(), t.untyped_storage() == v.untyped_storage(),
               s.nbytes(), t.tolist()))
    t[0] = 42.0
    v[1] = 7.0
    q_out.put("written")
    q_in.get()  # wait until the parent has looked


class TwoArgError(Exception):
    """An exception whose constructor does not take a single message."""

    def __init__(self, a, b):
        super().__init__(a, b)


class RaiseTwoArg:
    def __len__(self):
        return 2

    def __getitem__(self, i):
        raise TwoArgError(1, 2)


def resource_tracker_pid():
    """The multiprocessing resource tracker (started for 'spawn'; it lives as long as we do)."""
    from multiprocessing import resource_tracker
    return getattr(resource_tracker._resource_tracker, "_pid", None)


def flat(batch):
    """A batch as nested python values (tensors as (dtype, shape, values)), comparable across frameworks."""
    if hasattr(batch, "tolist") and hasattr(batch, "dtype"):
        return (str(batch.dtype), tuple(batch.shape), batch.tolist())
    if isinstance(batch, dict):
        return {k: flat(v) for k, v in batch.items()}
    if isinstance(batch, (list, tuple)):
        return type(batch).__name__, [flat(b) for b in batch]
    return batch
