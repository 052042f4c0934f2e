"""DataLoader: iterates over a dataset in batches, in the main process or in worker
processes, with torch's arguments, defaults, errors and random streams.

Note [DataLoader random streams]
Each iterator (each epoch) first draws base_seed, one int64 from `generator` (or the global
generator), then the sampler draws its own numbers on first use (RandomSampler: one int64
seed, then randperm), in torch's order; so `pyctorch.manual_seed(s)` gives torch's sample
order and torch's worker seeds (Note [Worker seeding] in _utils/worker.py).

Note [Multi-process loading]
Task k is the k-th entry of the index sampler (a list of indices, or one index); it goes to
the index queue of the next active worker, round-robin, and at most prefetch_factor *
num_workers tasks are outstanding. Workers put (k, batch) on one result queue; the main
process returns batches in task order (in_order=True: early ones wait in _task_info) or as
they come. Batches are pickled in the worker through pyctorch.multiprocessing: the collated
tensors are already in shared memory (collate_tensor_fn), so only descriptors and metadata
travel. While it waits, the main process checks every WORKER_POLL_INTERVAL that its active
workers live, so a killed worker raises "DataLoader worker (pid N) is killed by signal"
rather than hanging; exhaustion, break, deletion or an error shut the workers down (a None
on each index queue, join, then terminate the stragglers).
"""
import itertools
import math
import multiprocessing as python_multiprocessing
import os
import queue
import socket
import time
import warnings
from multiprocessing.reduction import ForkingPickler

import pyctorch
from pyctorch.multiprocessing.reductions import provide_fds, recv_fd_bundle

from . import _utils
from ._utils import ExceptionWrapper
from ._utils.collate import default_collate, default_convert
from ._utils.worker import get_worker_info
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader", "get_worker_info", "default_collate", "default_convert"]


class _DatasetKind:
    Map = 0
    Iterable = 1

    @staticmethod
    def create_fetcher(kind, dataset, auto_collation, collate_fn, drop_last):
        if kind == _DatasetKind.Map:
            return _utils.fetch._MapDatasetFetcher(dataset, auto_collation, collate_fn, drop_last)
        return _utils.fetch._IterableDatasetFetcher(dataset, auto_collation, collate_fn, drop_last)


class _InfiniteConstantSampler(Sampler):
    """The sampler of an IterableDataset: None forever (the dataset decides when to stop)."""

    def __iter__(self):
        while True:
            yield None


def _wait_until_exited(thread, timeout):
    """Waits (up to timeout seconds) until a joined thread's OS thread is gone, not only its Python part.

    join() returns when the thread's Python code is done; the thread then still runs its C-level teardown
    (thread-local destructors; under ASan, returning its allocator cache, which takes allocator locks).
    A fork in that window copies a held lock into the child, which then deadlocks at its first malloc
    (GCC 12's libasan does not lock its allocator around fork). Linux lists live threads in /proc."""
    tid = getattr(thread, "native_id", None)
    if tid is None or not os.path.isdir("/proc/self/task"):
        return
    deadline = time.monotonic() + timeout
    while os.path.exists("/proc/self/task/%d" % tid) and time.monotonic() < deadline:
        time.sleep(0.001)


def _accelerator_available():
    from pyctorch._tensor_shared import _accelerator
    return _accelerator() is not None


def _cpu_count():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count()


class DataLoader:
    """Combines a dataset and a sampler and iterates over batches of the dataset (see
    torch.utils.data.DataLoader: same arguments and defaults)."""

    _DataLoader__initialized = False

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None, persistent_workers=False,
                 pin_memory_device="", in_order=True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing.let num_workers > 0 to "
                             "enable multiprocessing, otherwise set prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")

        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order

        if isinstance(dataset, IterableDataset):
            self._dataset_kind = _DatasetKind.Iterable
            if shuffle not in {False, None}:
                raise ValueError(
                    f"DataLoader with IterableDataset: expected unspecified shuffle option, but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError(
                    f"DataLoader with IterableDataset: expected unspecified sampler option, but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified batch_sampler option, but got "
                                 f"batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
            self._dataset_kind = _DatasetKind.Map

        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and "
                                 "drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with drop_last")

        if sampler is None:
            if self._dataset_kind == _DatasetKind.Iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self.__initialized = True
        self._IterableDataset_len_called = None  # what len(self) reported for an IterableDataset
        self._iterator = None
        self.check_worker_number_rationality()

    def _get_iterator(self):
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        self.check_worker_number_rationality()
        return _MultiProcessingDataLoaderIter(self)

    @property
    def multiprocessing_context(self):
        return self.__multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, multiprocessing_context):
        if multiprocessing_context is not None:
            if self.num_workers <= 0:
                raise ValueError("multiprocessing_context can only be used with multi-process loading (num_workers > 0), "
                                 f"but got num_workers={self.num_workers}")
            if isinstance(multiprocessing_context, str):
                valid = python_multiprocessing.get_all_start_methods()
                if multiprocessing_context not in valid:
                    raise ValueError("multiprocessing_context option should specify a valid start method in "
                                     f"{valid!r}, but got multiprocessing_context={multiprocessing_context!r}")
                multiprocessing_context = python_multiprocessing.get_context(multiprocessing_context)
            if not isinstance(multiprocessing_context, python_multiprocessing.context.BaseContext):
                raise TypeError("multiprocessing_context option should be a valid context object or a string "
                                f"specifying the start method, but got multiprocessing_context={multiprocessing_context}")
        self.__multiprocessing_context = multiprocessing_context

    def __setattr__(self, attr, val):
        if self.__initialized and attr in ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset",
                                           "persistent_workers"):
            raise ValueError(f"{attr} attribute should not be set after {self.__class__.__name__} is initialized")
        super().__setattr__(attr, val)

    def __iter__(self):
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def __len__(self):
        if self._dataset_kind == _DatasetKind.Iterable:
            # the dataset's own length, in batches: a guess, since workers share it as they please
            length = self._IterableDataset_len_called = len(self.dataset)
            if self.batch_size is not None:
                length = length // self.batch_size if self.drop_last else math.ceil(length / self.batch_size)
            return length
        return len(self._index_sampler)

    def check_worker_number_rationality(self):
        """Warns when more workers are asked for than this process may use CPUs."""
        if not self.num_workers:
            return
        suggest = _cpu_count()
        if suggest is not None and self.num_workers <= suggest:
            return
        cpuset = "" if hasattr(os, "sched_getaffinity") else " (`cpuset` is not taken into account)"
        if suggest is not None:
            what = (f"Our suggested max number of worker in current system is {suggest}{cpuset}, which is smaller than "
                    "what this DataLoader is going to create.")
        else:
            what = "DataLoader is not able to compute a suggested max number of worker in current system."
        warnings.warn(f"This DataLoader will create {self.num_workers} worker processes in total. {what} Please be aware "
                      "that excessive worker creation might get DataLoader running slow or even freeze, lower the worker "
                      "number to avoid potential slowness/freeze if necessary.", stacklevel=2)


class _BaseDataLoaderIter:
    def __init__(self, loader):
        self._dataset = loader.dataset
        self._dataset_kind = loader._dataset_kind
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        if loader.pin_memory and loader.pin_memory_device:
            warnings.warn("pin_memory_device is deprecated, the current accelerator will be used as the device,"
                          f"ignore pin_memory_device='{loader.pin_memory_device}'.", stacklevel=2)
        have_accelerator = _accelerator_available() if loader.pin_memory else False
        if loader.pin_memory and not have_accelerator:
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, then device pinned memory "
                          "won't be used.", stacklevel=2)
        self._pin_memory = loader.pin_memory and have_accelerator
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._sampler_iter = iter(self._index_sampler)
        # Note [DataLoader random streams]
        self._base_seed = pyctorch.empty((), dtype=pyctorch.int64).random_(generator=loader.generator).item()
        self._persistent_workers = loader.persistent_workers
        self._num_yielded = 0

    def __iter__(self):
        return self

    def _reset(self, loader, first_iter=False):
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._IterableDataset_len_called = loader._IterableDataset_len_called

    def _next_index(self):
        return next(self._sampler_iter)  # StopIteration ends the epoch

    def _next_data(self):
        raise NotImplementedError

    def __next__(self):
        data = self._next_data()
        if self._pin_memory:
            data = _utils.pin_memory.pin_memory(data)
        self._num_yielded += 1
        if (self._dataset_kind == _DatasetKind.Iterable and self._IterableDataset_len_called is not None
                and self._num_yielded > self._IterableDataset_len_called):
            msg = (f"Length of IterableDataset {self._dataset} was reported to be {self._IterableDataset_len_called}"
                   f"(when accessing len(dataloader)), but {self._num_yielded} samples have been fetched. ")
            if self._num_workers > 0:
                msg += ("For multiprocessing data-loading, this could be caused by not properly configuring the "
                        "IterableDataset replica at each worker. Please see "
                        "https://pytorch.org/docs/stable/data.html#torch.utils.data.IterableDataset for examples.")
            warnings.warn(msg, stacklevel=2)
        return data

    def __len__(self):
        return len(self._index_sampler)

    def __getstate__(self):
        raise NotImplementedError("{} cannot be pickled", self.__class__.__name__)


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader):
        super().__init__(loader)
        self._dataset_fetcher = _DatasetKind.create_fetcher(self._dataset_kind, self._dataset, self._auto_collation,
                                                            self._collate_fn, self._drop_last)

    def _next_data(self):
        index = self._next_index()
        return self._dataset_fetcher.fetch(index)


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    """Note [Multi-process loading]."""

    def __init__(self, loader):
        super().__init__(loader)
        self._prefetch_factor = loader.prefetch_factor
        self._in_order = loader.in_order
        if loader.multiprocessing_context is None:
            import pyctorch.multiprocessing as ctx
        else:
            ctx = loader.multiprocessing_context
            import pyctorch.multiprocessing  # noqa: F401  (the reductions, for a plain context too)
        self._worker_init_fn = loader.worker_init_fn
        self._owner_pid = os.getpid()
        self._shutdown = False
        self._workers = []
        self._index_queues = []
        self._fd_socks = []  # per worker: our end of its descriptor channel
        self._worker_result_queue = ctx.Queue()
        self._workers_done_event = ctx.Event()
        try:
            for i in range(self._num_workers):
                index_queue = ctx.Queue()
                index_queue.cancel_join_thread()  # never block our exit on undelivered indices
                ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
                self._fd_socks.append(ours)
                try:
                    w = ctx.Process(target=_utils.worker._worker_loop,
                                    args=(self._dataset_kind, self._dataset, index_queue, self._worker_result_queue,
                                          self._workers_done_event, self._auto_collation, self._collate_fn,
                                          self._drop_last, self._base_seed, self._worker_init_fn, i,
                                          self._num_workers, self._persistent_workers, theirs))
                    w.daemon = True
                    w.start()
                finally:
                    theirs.close()  # the worker has its own copy now
                ours.settimeout(60.0)  # a bundle is sent before its message: never a long wait
                self._index_queues.append(index_queue)
                self._workers.append(w)
        except BaseException:
            self._workers_status = [True] * len(self._workers)
            self._shutdown_workers()
            raise
        self._data_queue = self._worker_result_queue
        self._reset(loader, first_iter=True)

    def _reset(self, loader, first_iter=False):
        super()._reset(loader, first_iter)
        self._send_idx = 0   # the next task to hand out
        self._rcvd_idx = 0   # the next task to return (in order)
        # task -> (worker,) while outstanding, (worker, data) once arrived early
        self._task_info = {}
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers
        self._workers_num_tasks = [0] * self._num_workers
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:
            # persistent workers: start their next epoch; what the last one left is dropped
            for q in self._index_queues:
                q.put(_utils.worker._ResumeIteration())
            waiting = self._num_workers
            while waiting > 0:
                idx, _ = self._get_data()
                if isinstance(idx, _utils.worker._ResumeIteration):
                    waiting -= 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _failed_workers(self):
        """Active workers that are gone, marked unavailable."""
        failed = []
        for wid, w in enumerate(self._workers):
            if self._workers_status[wid] and not w.is_alive():
                failed.append(w)
                self._mark_worker_as_unavailable(wid)
        return failed

    def _try_get_data(self, timeout):
        """(True, (idx, data)) or (False, None) after `timeout` seconds; RuntimeError when an
        active worker died meanwhile (checked every WORKER_POLL_INTERVAL)."""
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            try:
                msg = self._data_queue.get(timeout=max(0.0, min(_utils.WORKER_POLL_INTERVAL, remaining)))
            except queue.Empty:
                failed = self._failed_workers()
                if failed:
                    if len(failed) == 1:
                        raise RuntimeError(_utils.signal_handling.worker_failure_message(failed[0].pid,
                                                                                          failed[0].exitcode))
                    pids = ", ".join(str(w.pid) for w in failed)
                    raise RuntimeError(f"DataLoader worker (pid(s) {pids}) exited unexpectedly")
                if remaining <= 0:
                    return False, None
                continue
            return True, self._unpack(msg)

    def _unpack(self, msg):
        """A worker's message: its descriptor bundle first, then the pickle that refers to it."""
        worker_id, nfds, payload = msg
        if not nfds:
            return ForkingPickler.loads(payload)
        fds = recv_fd_bundle(self._fd_socks[worker_id], nfds)
        try:
            with provide_fds(fds):
                return ForkingPickler.loads(payload)
        finally:
            for fd in fds:
                os.close(fd)

    def _get_data(self):
        if self._timeout > 0:
            ok, data = self._try_get_data(self._timeout)
            if not ok:
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
            return data
        while True:
            ok, data = self._try_get_data(3600.0)
            if ok:
                return data

    def _next_data(self):
        while True:
            # skip tasks of workers that ended (iterable datasets) and have nothing pending
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info:
                    if len(info) == 2 or self._workers_status[info[0]]:
                        break
                    del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration
            info = self._task_info[self._rcvd_idx]
            if len(info) == 2:  # arrived earlier, out of order
                del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
                return self._process_data(info[1], info[0])
            if self._shutdown or self._tasks_outstanding <= 0:
                raise RuntimeError("pyctorch internal error: DataLoader has no outstanding task to wait for; please "
                                   "report a bug")
            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if self._dataset_kind == _DatasetKind.Iterable and isinstance(data, _utils.worker._IterableDatasetStopIteration):
                if self._persistent_workers:
                    self._workers_status[data.worker_id] = False
                else:
                    self._mark_worker_as_unavailable(data.worker_id)
                self._try_put_index()
                continue
            if idx != self._rcvd_idx:
                if not self._in_order:
                    worker_id = self._task_info.pop(idx)[0]
                    return self._process_data(data, worker_id)
                self._task_info[idx] += (data,)
            else:
                worker_id = self._task_info.pop(idx)[0]
                self._rcvd_idx += 1
                return self._process_data(data, worker_id)

    def _try_put_index(self):
        max_tasks = self._prefetch_factor * self._num_workers
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):  # the next active worker (with room, out of order)
            wid = next(self._worker_queue_idx_cycle)
            if self._workers_status[wid]:
                if self._in_order or self._workers_num_tasks[wid] < max_tasks // sum(self._workers_status):
                    break
        else:
            return  # no active worker left
        self._index_queues[wid].put((self._send_idx, index))
        self._task_info[self._send_idx] = (wid,)
        self._workers_num_tasks[wid] += 1
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _process_data(self, data, worker_idx):
        self._workers_num_tasks[worker_idx] -= 1
        self._try_put_index()
        if isinstance(data, ExceptionWrapper):
            data.reraise()
        return data

    def _mark_worker_as_unavailable(self, worker_id, shutdown=False):
        # a None ends the worker's loop: it is done with this epoch (or with everything)
        self._index_queues[worker_id].put(None)
        self._workers_status[worker_id] = False

    def _shutdown_workers(self):
        if _utils is None or _utils.python_exit_status is not False:
            return  # interpreter exit: multiprocessing terminates daemonic workers itself
        if self._shutdown or os.getpid() != self._owner_pid:
            return  # done, or a forked copy of this iterator (in a worker): not ours to stop
        self._shutdown = True
        try:
            self._workers_done_event.set()
            for wid in range(len(self._workers)):
                if self._persistent_workers or self._workers_status[wid]:
                    self._mark_worker_as_unavailable(wid, shutdown=True)
            deadline = time.monotonic() + _utils.MP_STATUS_CHECK_INTERVAL
            for w in self._workers:
                w.join(timeout=max(0.0, deadline - time.monotonic()))
            for q in self._index_queues:
                q.cancel_join_thread()
                q.close()
        finally:
            for w in self._workers:
                if w.is_alive():
                    w.terminate()
                    w.join(timeout=_utils.MP_STATUS_CHECK_INTERVAL)
            self._worker_result_queue.cancel_join_thread()
            self._worker_result_queue.close()
            for sock in self._fd_socks:
                sock.close()  # descriptors still in transit are released with it
            # Wait (briefly) for the queues' feeder threads to finish: the next iterator forks its workers,
            # and a fork while another thread is inside malloc or holds a lock can leave the child deadlocked
            # (seen under ASan, whose allocator lock is not reset in the child). The workers are gone, so a
            # feeder can only block on a full pipe, which close() above has made it give up.
            for q in self._index_queues + [self._worker_result_queue]:
                feeder = getattr(q, "_thread", None)
                if feeder is not None:
                    feeder.join(timeout=1.0)
                    _wait_until_exited(feeder, timeout=1.0)

    def __del__(self):
        if getattr(self, "_workers", None) is not None:
            self._shutdown_workers()
