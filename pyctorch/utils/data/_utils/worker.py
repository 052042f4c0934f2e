"""The DataLoader worker process: its loop, its seeding and get_worker_info().

A worker reads (task index, sampler entry) pairs from its own index queue, fetches and
collates the batch, and puts (task index, batch) on the result queue shared by all
workers; a None on the index queue ends it, a _ResumeIteration starts a new epoch of a
persistent worker. Errors travel as ExceptionWrapper and are raised by the main process.

Note [Worker seeding]
Worker i seeds pyctorch's global generator and Python's `random` with base_seed + i, and
NumPy's legacy global generator with 4 words of SeedSequence([i, low32(base_seed),
high32(base_seed), 0]) (the words torch's workers use), where base_seed is drawn by the
main process once per iterator; so random augmentations differ between workers and repeat
under the same manual_seed, exactly as in torch.
"""
import os
import queue
import random
from dataclasses import dataclass

import pyctorch

from . import HAS_NUMPY, WORKER_IDLE_POLL_INTERVAL, ExceptionWrapper

_worker_info = None


@dataclass(frozen=True)
class WorkerInfo:
    """What get_worker_info() returns inside a worker."""
    id: int
    num_workers: int
    seed: int
    dataset: object
    rng: object = None
    worker_method: str = "multiprocessing"


def get_worker_info():
    """In a DataLoader worker process: its WorkerInfo (id, num_workers, seed, dataset, the
    worker's own copy of it). In the main process: None."""
    return _worker_info


@dataclass(frozen=True)
class _IterableDatasetStopIteration:
    """A worker's iterable dataset is exhausted."""
    worker_id: int


@dataclass(frozen=True)
class _ResumeIteration:
    """Start the next epoch (persistent workers)."""
    seed: object = None


class ManagerWatchdog:
    """Notices that the process that started this worker is gone (we were re-parented)."""

    def __init__(self):
        self.manager_pid = os.getppid()
        self.manager_dead = False

    def is_alive(self):
        if not self.manager_dead:
            self.manager_dead = os.getppid() != self.manager_pid
        return not self.manager_dead


def _numpy_seed_words(base_seed, worker_id):
    import numpy as np
    return np.random.SeedSequence([worker_id, base_seed & 0xFFFFFFFF, base_seed >> 32, 0]).generate_state(4)


def _seed_worker(base_seed, worker_id):
    """Note [Worker seeding]; returns the worker's seed."""
    seed = base_seed + worker_id
    random.seed(seed)
    pyctorch.manual_seed(seed)
    if HAS_NUMPY:
        import numpy as np
        np.random.seed(_numpy_seed_words(base_seed, worker_id))
    return seed


def _pack(idx, data, worker_id, fd_sock):
    """(worker_id, descriptor count, pickled (idx, data)). The pickling happens here, in the
    worker's own thread, so that an unpicklable batch becomes an error the main process
    raises instead of a message lost in the queue's feeder thread; the shared-memory
    descriptors of the batch go over fd_sock first (Note [Descriptor bundles] in
    pyctorch/multiprocessing/reductions.py)."""
    from multiprocessing.reduction import ForkingPickler

    from pyctorch.multiprocessing.reductions import collect_fds, send_fd_bundle
    try:
        with collect_fds() as fds:
            payload = bytes(ForkingPickler.dumps((idx, data)))
    except Exception:
        err = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
        return (worker_id, 0, bytes(ForkingPickler.dumps((idx, err))))
    if fds:
        send_fd_bundle(fd_sock, [fd for fd, _ in fds])
    return (worker_id, len(fds), payload)


def _worker_loop(dataset_kind, dataset, index_queue, data_queue, done_event, auto_collation, collate_fn, drop_last,
                 base_seed, init_fn, worker_id, num_workers, persistent_workers, fd_sock):
    from ..dataloader import _DatasetKind
    import pyctorch.multiprocessing  # noqa: F401  (registers the shared-memory reductions, spawn included)
    try:
        pyctorch.set_num_threads(1)  # workers are many; intra-op threads would oversubscribe
        seed = _seed_worker(base_seed, worker_id)
        global _worker_info
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
        init_exception = None
        fetcher = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = _DatasetKind.create_fetcher(dataset_kind, dataset, auto_collation, collate_fn, drop_last)
        except Exception:
            init_exception = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
        # iteration_end: an iterable dataset ran out; ignore tasks until the epoch is resumed
        iteration_end = False
        watchdog = ManagerWatchdog()
        while watchdog.is_alive():
            try:
                r = index_queue.get(timeout=WORKER_IDLE_POLL_INTERVAL)
            except queue.Empty:
                if done_event.is_set():
                    break
                continue
            if isinstance(r, _ResumeIteration):
                data_queue.put(_pack(r, None, worker_id, fd_sock))
                iteration_end = False
                fetcher = _DatasetKind.create_fetcher(dataset_kind, dataset, auto_collation, collate_fn, drop_last)
                continue
            if r is None:
                break  # shutdown (done_event set) or the end of our share
            if done_event.is_set() or iteration_end:
                continue
            idx, index = r
            if init_exception is not None:
                data, init_exception = init_exception, None
            else:
                try:
                    data = fetcher.fetch(index)
                except Exception as e:
                    if isinstance(e, StopIteration) and dataset_kind == _DatasetKind.Iterable:
                        data = _IterableDatasetStopIteration(worker_id)
                        iteration_end = True
                    else:
                        data = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
            data_queue.put(_pack(idx, data, worker_id, fd_sock))
            del data, idx, index, r  # drop our references to the batch while we wait
    except KeyboardInterrupt:
        pass  # the main process handles the interrupt and shuts us down
    if done_event.is_set():
        # nobody reads what is still queued: do not wait for the feeder thread at exit
        data_queue.cancel_join_thread()
        data_queue.close()
