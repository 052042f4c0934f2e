"""torch.futures: a Future holds the result of an asynchronous computation (a DDP comm hook returns
one; Work.get_future() gives one for a collective).

A Future made here is completed by set_result/set_exception (from any thread); then(callback)
gives a Future of callback(this future), run once this one completes (at once if it already has);
wait() blocks until completion and returns the value or raises the exception."""
import threading
from typing import Generic, TypeVar

__all__ = ["Future", "collect_all", "wait_all"]

T = TypeVar("T")


class Future(Generic[T]):
    def __init__(self, *, devices=None):
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._result = None
        self._error = None
        self._callbacks = []

    def done(self):
        return self._event.is_set()

    def wait(self):
        self._event.wait()
        if self._error is not None:
            raise self._error
        return self._result

    def value(self):
        if not self.done():
            raise RuntimeError("completed() INTERNAL ASSERT FAILED: value() of a Future not yet completed")
        return self.wait()

    def _complete(self, result, error):
        with self._lock:
            if self._event.is_set():
                raise RuntimeError("Attempting to mark a completed Future as complete again. Note that a Future "
                                   "can only be marked completed once.")
            self._result, self._error = result, error
            self._event.set()
            callbacks, self._callbacks = self._callbacks, []
        for cb in callbacks:
            cb(self)

    def set_result(self, result):
        self._complete(result, None)

    def set_exception(self, result):
        if not isinstance(result, BaseException):
            raise AssertionError(f"{result} is of type {type(result)}, not an Exception.")
        self._complete(None, result)

    def add_done_callback(self, callback):
        with self._lock:
            if not self._event.is_set():
                self._callbacks.append(callback)
                return
        callback(self)

    def then(self, callback):
        child = Future()

        def run(fut):
            try:
                child.set_result(callback(fut))
            except Exception as e:  # noqa: BLE001  (the child future carries it, as torch words it)
                err = RuntimeError(f"Got the following error when running the callback: {type(e).__name__}: {e}")
                err.__cause__ = e
                child.set_exception(err)

        self.add_done_callback(run)
        return child


def collect_all(futures):
    """A Future of the list of futures, completed when all of them are."""
    out = Future()
    futures = list(futures)
    remaining = [len(futures)]
    lock = threading.Lock()
    if not futures:
        out.set_result([])
        return out

    def one_done(_):
        with lock:
            remaining[0] -= 1
            last = remaining[0] == 0
        if last:
            out.set_result(futures)

    for f in futures:
        f.add_done_callback(one_done)
    return out


def wait_all(futures):
    """Waits for every future; their values in order (the first exception is raised)."""
    return [f.wait() for f in futures]
