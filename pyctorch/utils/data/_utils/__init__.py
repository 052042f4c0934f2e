"""Helpers of the DataLoader that run in worker processes or on both sides of them: the
worker loop, fetchers, collation, pinning, worker-failure messages, and the exception
wrapper that carries a worker's error and traceback back to the main process."""
import atexit
import pickle
import sys
import traceback

IS_WINDOWS = sys.platform == "win32"

# torch's name for the join timeout of a worker being shut down.
MP_STATUS_CHECK_INTERVAL = 5.0
# How often an idle worker checks that its parent lives and that the loader has not been
# shut down (its None on the index queue may never come: an iterator collected by the
# garbage collector can have its queues' feeder threads stopped before its __del__ runs).
WORKER_IDLE_POLL_INTERVAL = 0.25
# How often the main process, while it waits for a batch, checks that every worker is
# still alive: a worker killed by a signal is reported within about this delay.
WORKER_POLL_INTERVAL = 0.05

# Set when the interpreter shuts down: then worker shutdown is left to multiprocessing's
# own exit handler (queues and modules may already be gone).
python_exit_status = False


def _set_python_exit_flag():
    global python_exit_status
    python_exit_status = True


atexit.register(_set_python_exit_flag)

try:
    import numpy  # noqa: F401
    HAS_NUMPY = True
except ImportError:
    HAS_NUMPY = False


class KeyErrorMessage(str):
    """A KeyError's message shown as written (KeyError would repr() it: quotes, escaped newlines)."""

    def __repr__(self):
        return self


class ExceptionWrapper:
    """An exception caught in one thread or process, as its type and formatted traceback
    (picklable: the traceback objects themselves are not kept), re-raised elsewhere."""

    def __init__(self, exc_info=None, where="in background"):
        if exc_info is None:
            exc_info = sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def __getstate__(self):
        state = dict(self.__dict__)
        try:
            pickle.dumps(self.exc_type)
        except Exception:  # a class the other process cannot import (a local class): keep its name
            state["exc_name"] = self.exc_type.__name__
            state["exc_type"] = RuntimeError
        return state

    def reraise(self):
        """Raises the wrapped exception type with 'Caught X <where>.' and the original traceback."""
        name = getattr(self, "exc_name", None) or self.exc_type.__name__
        msg = f"Caught {name} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = KeyErrorMessage(msg)
        elif getattr(self.exc_type, "message", None):
            raise self.exc_type(message=msg)
        try:
            exc = self.exc_type(msg)
        except Exception:  # a constructor that wants other arguments
            raise RuntimeError(msg) from None
        try:
            raise exc
        finally:
            # no frame -> exception -> traceback -> frame cycle: the frames of the raiser (a
            # DataLoader iterator among them) are freed as soon as the caller drops the error,
            # not by a later garbage collection
            exc = None


from . import collate, fetch, pin_memory, signal_handling, worker  # noqa: E402,F401
