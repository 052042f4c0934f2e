"""Anomaly detection: nodes remember their forward traceback; backward raises at the first NaN."""
from .. import _C

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled"]

is_anomaly_enabled = _C.is_anomaly_enabled


class detect_anomaly:
    """Context manager (and decorator) turning anomaly detection on."""

    def __init__(self, check_nan=True):
        self.check_nan = check_nan

    def __enter__(self):
        self.prev = _C.is_anomaly_enabled()
        _C._set_anomaly_enabled(True)

    def __exit__(self, *exc):
        _C._set_anomaly_enabled(self.prev)

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*a, **k):
            with self.__class__(self.check_nan):
                return fn(*a, **k)
        return wrapper


class set_detect_anomaly:
    """Sets anomaly detection on construction; as a context manager restores it on exit."""

    def __init__(self, mode, check_nan=True):
        self.prev = _C.is_anomaly_enabled()
        _C._set_anomaly_enabled(bool(mode))

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _C._set_anomaly_enabled(self.prev)
