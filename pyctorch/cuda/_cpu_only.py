"""torch.cuda as torch's CPU-only build has it: what pyctorch.cuda becomes in a build without the CUDA backend.

Everything that needs a device raises torch's AssertionError("Torch not compiled with CUDA enabled"), and the classes
torch's CPU-only build defines as dummies exist (isinstance checks, subclassing) and refuse to be made with its
message."""
import contextlib

from .. import _C

_NOT_COMPILED = "Torch not compiled with CUDA enabled"


def _no_cuda(*args, **kwargs):
    raise AssertionError(_NOT_COMPILED)


def set_device(device):
    d = device if isinstance(device, _C.device) else (
        _C.device("cuda", device) if isinstance(device, int) else _C.device(device))
    if d.type != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {d}")
    raise AssertionError(_NOT_COMPILED)


init = _lazy_init = initial_seed = synchronize = current_device = _no_cuda
get_device_name = get_device_capability = get_device_properties = _no_cuda
reset_peak_memory_stats = mem_get_info = get_rng_state = set_rng_state = _no_cuda
current_stream = default_stream = ipc_collect = set_per_process_memory_fraction = _no_cuda


class device:
    """Context manager selecting a CUDA device; entering it fails without CUDA."""

    def __init__(self, device):
        self.idx = device

    def __enter__(self):
        raise RuntimeError("PyTorch was compiled without CUDA support")

    def __exit__(self, *exc):
        return False


class device_of(device):
    """device(tensor's device) for CUDA tensors; a no-op for CPU tensors, as in torch."""

    def __init__(self, obj):
        self.idx = -1 if getattr(getattr(obj, "device", None), "type", "cpu") != "cuda" else 0

    def __enter__(self):
        if self.idx != -1:
            raise RuntimeError("PyTorch was compiled without CUDA support")


def stream(stream):
    """Stream context: a null context for None, as in torch."""
    if stream is None:
        return contextlib.nullcontext()
    raise AssertionError(_NOT_COMPILED)


class _DummyCudaType:
    """The classes torch's CPU-only build defines as dummies: they exist (isinstance checks, subclassing,
    class attributes in libraries) and refuse to be made with torch's message."""

    def __new__(cls, *args, **kwargs):
        raise RuntimeError(f"Tried to instantiate dummy base class {cls.__name__}")


class Event(_DummyCudaType):
    pass


class CUDAGraph(_DummyCudaType):
    pass


class Stream(_DummyCudaType):
    def __new__(cls, *args, **kwargs):
        raise RuntimeError("torch.cuda.Stream requires CUDA support")


class StreamContext:
    """Selects a stream inside the block: a no-op for None, as in torch; a stream needs CUDA."""

    def __init__(self, stream):
        self.stream = stream

    def __enter__(self):
        if self.stream is not None:
            raise AssertionError(_NOT_COMPILED)

    def __exit__(self, *exc):
        return False


class graph:
    """CUDA graph capture context (torch.cuda.graph); making one needs a CUDA stream, as in torch."""

    def __init__(self, cuda_graph, pool=None, stream=None, capture_error_mode="global"):
        Stream()


def graph_pool_handle():
    raise RuntimeError("Tried to instantiate dummy base class _graph_pool_handle")


def is_current_stream_capturing():
    raise RuntimeError("Tried to instantiate dummy base class _cuda_isCurrentStreamCapturing")
