"""pyctorch.multiprocessing.spawn: start N processes running fn(index, *args) and watch them.

Note [Spawned process teardown]
Each child runs fn under _child_main, which (1) asks the kernel to send it SIGINT when the
parent dies (prctl PR_SET_PDEATHSIG, Linux), so a killed parent orphans nothing, and (2)
writes the formatted traceback of an exception to its own error file and exits with 1. The
parent waits on all process sentinels at once; at the first non-zero exit it terminates the
others (SIGTERM, then SIGKILL after the grace period), joins every one of them, and raises:
ProcessRaisedException with the child's traceback when the error file exists, else
ProcessExitedException naming the exit code or the signal. Error files are removed once read.
"""
import ctypes
import multiprocessing
import multiprocessing.connection
import os
import pickle
import signal
import sys
import tempfile
import time
import warnings

__all__ = ["ProcessContext", "ProcessException", "ProcessExitedException", "ProcessRaisedException", "spawn",
           "SpawnContext", "start_processes"]

_PR_SET_PDEATHSIG = 1


class ProcessException(Exception):
    __slots__ = ["error_index", "error_pid"]

    def __init__(self, msg: str, error_index: int, error_pid: int):
        super().__init__(msg)
        self.msg = msg
        self.error_index = error_index
        self.error_pid = error_pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.error_pid)


class ProcessRaisedException(ProcessException):
    """Raised in the parent when fn raised an exception in a child (its traceback is the message)."""


class ProcessExitedException(ProcessException):
    """Raised in the parent when a child exited with a non-zero code or was ended by a signal."""

    __slots__ = ["exit_code"]

    def __init__(self, msg: str, error_index: int, error_pid: int, exit_code: int, signal_name=None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code = exit_code
        self.signal_name = signal_name

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.error_pid, self.exit_code, self.signal_name)


def _die_with_parent(sig):
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0)
    except (OSError, AttributeError):
        pass


def _child_main(fn, index, args, error_file):
    """Entry point of every child (Note [Spawned process teardown])."""
    _die_with_parent(signal.SIGINT)
    try:
        fn(index, *args)
    except KeyboardInterrupt:
        pass  # the parent ended us (or died): leave quietly
    except Exception:
        import traceback
        text = traceback.format_exc()
        with open(error_file, "wb") as f:
            pickle.dump(text, f)
        sys.exit(1)


def _signal_name(number):
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"<Unknown signal {number}>"


class ProcessContext:
    """The processes started by start_processes; join() watches them (Note [Spawned process teardown])."""

    def __init__(self, processes, error_files):
        self.error_files = error_files
        self.processes = processes
        self.sentinels = {p.sentinel: i for i, p in enumerate(processes)}

    def pids(self):
        return [int(p.pid) for p in self.processes]

    def _join_all(self, timeout):
        deadline = time.monotonic() + timeout
        for p in self.processes:
            p.join(max(0.0, deadline - time.monotonic()))

    def _end_all(self, grace_period):
        if grace_period is not None:
            self._join_all(grace_period)
        for p in self.processes:
            if p.is_alive():
                p.terminate()
        self._join_all(30 if grace_period is None else grace_period)
        for p in self.processes:
            if p.is_alive():
                p.kill()
            p.join()

    def _remove_error_files(self):
        for name in self.error_files:
            try:
                os.unlink(name)
            except (OSError, TypeError):
                pass

    def join(self, timeout=None, grace_period=None):
        """Waits up to timeout seconds for a process to finish. Returns True once all of them
        exited cleanly, False while some still run; when one failed, ends the others and
        raises ProcessRaisedException or ProcessExitedException."""
        if not self.sentinels:
            return True
        ready = multiprocessing.connection.wait(list(self.sentinels), timeout=timeout)
        failed = None
        for sentinel in ready:
            index = self.sentinels.pop(sentinel)
            proc = self.processes[index]
            proc.join()
            if proc.exitcode != 0:
                failed = index
                break
        if failed is None:
            if not self.sentinels:
                self._remove_error_files()
                return True
            return False
        self._end_all(grace_period)
        self.sentinels.clear()
        proc = self.processes[failed]
        error_file = self.error_files[failed]
        trace = None
        if os.access(error_file, os.R_OK):
            with open(error_file, "rb") as f:
                trace = pickle.load(f)
        self._remove_error_files()
        if trace is not None:
            raise ProcessRaisedException(f"\n\n-- Process {failed:d} terminated with the following error:\n{trace}",
                                         failed, proc.pid)
        code = proc.exitcode
        if code < 0:
            name = _signal_name(-code)
            raise ProcessExitedException(f"process {failed:d} terminated with signal {name}", error_index=failed,
                                         error_pid=proc.pid, exit_code=code, signal_name=name)
        raise ProcessExitedException(f"process {failed:d} terminated with exit code {code:d}", error_index=failed,
                                     error_pid=proc.pid, exit_code=code)


class SpawnContext(ProcessContext):
    def __init__(self, processes, error_files):
        warnings.warn("SpawnContext is renamed to ProcessContext since 1.4 release.", stacklevel=2)
        super().__init__(processes, error_files)


def _error_file_name():
    # a fresh name the child creates only when it fails (the parent tests its existence)
    fd, name = tempfile.mkstemp(prefix="pyctorch-errorfile-", suffix=".pickle")
    os.close(fd)
    os.unlink(name)
    return name


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Starts nprocs processes running fn(i, *args) with the given start method; joins them
    (join=True, returns None) or returns their ProcessContext (join=False)."""
    ctx = multiprocessing.get_context(start_method)
    processes, error_files = [], []
    try:
        for i in range(nprocs):
            name = _error_file_name()
            proc = ctx.Process(target=_child_main, args=(fn, i, args, name), daemon=daemon)
            proc.start()
            processes.append(proc)
            error_files.append(name)
    except BaseException:
        for p in processes:  # a start that failed midway leaves nothing running
            p.kill()
            p.join()
        raise
    context = ProcessContext(processes, error_files)
    if not join:
        return context
    try:
        while not context.join():
            pass
    except KeyboardInterrupt:
        context._end_all(0)
        context._remove_error_files()
        raise


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Spawns nprocs processes that run fn(i, *args), i being the process index.

    If a process exits with a non-zero status, the others are ended and an exception is raised
    (the child's traceback when it raised). Returns None when join is True, else the
    ProcessContext. start_method other than 'spawn' warns and is ignored (use start_processes)."""
    if start_method != "spawn":
        warnings.warn(f"This method only supports start_method=spawn (got: {start_method}).\n"
                      "To use a different start_method use:\n\t\t torch.multiprocessing.start_processes(...)",
                      FutureWarning, stacklevel=2)
    return start_processes(fn, args, nprocs, join, daemon, start_method="spawn")
