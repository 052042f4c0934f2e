"""torch.cpu: the CPU device module (what torch.cuda is for GPUs), and torch.cpu.amp.

The CPU backend runs every op to completion on the calling thread, so it has one stream, which is always idle
(Note [Streams] in csrc/aten/backend.h): Stream, Event and the stream context exist, as in torch, so that code written
for any device runs here, and they reach the backend's stream slots through _C."""
from contextlib import AbstractContextManager

from .. import _C
from . import amp  # noqa: F401

__all__ = ["is_available", "is_initialized", "synchronize", "current_device", "current_stream", "stream",
           "set_device", "device_count", "Stream", "StreamContext", "Event", "amp"]


def is_available():
    return True


def is_initialized():
    return True


def synchronize(device=None):
    """Waits for the CPU's queued work: there is none, every op has finished when it returns."""
    _C._device_synchronize("cpu")


def current_device():
    return "cpu"


def device_count():
    return 1


def set_device(device):
    """There is one CPU device: nothing to select."""


class Stream:
    """A CPU stream: the backend's one stream (id 0)."""

    def __init__(self, priority=-1):
        self.stream_id = _C._stream_new("cpu", priority)

    def wait_stream(self, stream):
        pass

    def record_event(self):
        pass

    def wait_event(self, event):
        pass

    def synchronize(self):
        _C._stream_synchronize("cpu", self.stream_id)

    def query(self):
        return _C._stream_query("cpu", self.stream_id)


class Event:
    """A CPU event: its work is always done."""

    def query(self):
        return True

    def record(self, stream=None):
        pass

    def synchronize(self):
        pass

    def wait(self, stream=None):
        pass


_default_stream = Stream()
_current = _default_stream


def current_stream(device=None):
    """The stream selected by the innermost torch.cpu.stream() block (the default stream outside any)."""
    return _current


class StreamContext(AbstractContextManager):
    """Selects a stream inside the block; None selects nothing."""

    def __init__(self, stream):
        self.stream = stream
        self.prev_stream = _default_stream

    def __enter__(self):
        global _current
        if self.stream is None:
            return
        self.prev_stream = _current
        _C._set_current_stream("cpu", self.stream.stream_id)
        _current = self.stream

    def __exit__(self, *exc):
        global _current
        if self.stream is None:
            return
        _C._set_current_stream("cpu", self.prev_stream.stream_id)
        _current = self.prev_stream


def stream(stream):
    """torch.cpu.stream(s): a StreamContext selecting s."""
    return StreamContext(stream)
