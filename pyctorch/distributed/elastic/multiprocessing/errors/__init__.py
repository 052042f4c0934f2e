"""torch.distributed.elastic.multiprocessing.errors: @record writes a failing worker's exception to
TORCHELASTIC_ERROR_FILE (torch's JSON layout) so the launcher's failure summary shows its
traceback."""
import functools
import json
import os
import time
import traceback

__all__ = ["record", "ChildFailedError", "ErrorHandler", "get_error_handler"]


class ChildFailedError(Exception):
    """Raised by a launcher when a worker failed (name kept for torch code that catches it)."""

    def __init__(self, name, failures):
        self.name = name
        self.failures = failures
        super().__init__(f"{name} FAILED")


class ErrorHandler:
    def initialize(self):
        pass

    def _get_error_file_path(self):
        return os.environ.get("TORCHELASTIC_ERROR_FILE")

    def record_exception(self, e):
        path = self._get_error_file_path()
        if not path:
            return
        data = {"message": {"message": f"{type(e).__name__}: {e}",
                            "extraInfo": {"py_callstack": traceback.format_exc(), "timestamp": str(int(time.time()))}}}
        with open(path, "w") as f:
            json.dump(data, f)


def get_error_handler():
    return ErrorHandler()


def record(fn=None, error_handler=None):
    """Decorator for a worker's entry point: an exception is written to the error file, then re-raised."""
    handler = error_handler or get_error_handler()

    def wrap(f):
        @functools.wraps(f)
        def wrapper(*args, **kwargs):
            handler.initialize()
            try:
                return f(*args, **kwargs)
            except SystemExit as se:
                if se.code == 0:
                    return None
                raise
            except Exception as e:
                handler.record_exception(e)
                raise
        return wrapper

    return wrap(fn) if fn is not None else wrap
