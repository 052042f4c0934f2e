"""torch.cuda: CUDA devices, streams, events and the caching allocator's memory statistics.

Three cases, as torch has them:
- a build without the CUDA backend (no nvcc): torch's CPU-only build. Queries answer "no GPU" (is_available() False,
  device_count() 0, memory counters 0), seeding is a no-op, and what needs a device raises torch's
  AssertionError("Torch not compiled with CUDA enabled");
- the backend built, on a machine without a driver or GPU: torch's CUDA build there. is_available() is False,
  device_count() 0, and what needs a device raises torch's RuntimeError ("Found no NVIDIA driver on your system...");
- a GPU (or the simulated device of tests, Note [Simulated CUDA device] in csrc/cuda/cuda_driver.h).
The backend's library is loaded on the first call that needs it (Note [Lazy CUDA] in csrc/aten/cuda_api.h): importing
this module, seeding and the memory counters of an unused backend load nothing.
"""
from collections import OrderedDict

from .. import _C
from .._C import OutOfMemoryError  # noqa: F401  (torch.cuda.OutOfMemoryError is torch.OutOfMemoryError)
from . import amp  # noqa: F401  (torch.cuda.amp.GradScaler / autocast)
from ._memory import memory_summary  # noqa: F401

__all__ = ["is_available", "device_count", "is_initialized", "init", "manual_seed", "manual_seed_all",
           "seed", "seed_all", "initial_seed", "synchronize", "current_device", "set_device",
           "get_device_name", "get_device_capability", "get_device_properties", "get_arch_list",
           "is_bf16_supported", "memory_allocated", "max_memory_allocated", "memory_reserved",
           "max_memory_reserved", "memory_stats", "memory_summary", "empty_cache", "reset_peak_memory_stats",
           "reset_max_memory_allocated", "mem_get_info", "get_rng_state", "set_rng_state", "get_rng_state_all",
           "set_rng_state_all", "current_stream", "default_stream", "device", "device_of",
           "stream", "ipc_collect", "set_per_process_memory_fraction", "Stream", "Event", "CUDAGraph",
           "StreamContext", "graph", "graph_pool_handle", "is_current_stream_capturing", "OutOfMemoryError"]

_NOT_COMPILED = "Torch not compiled with CUDA enabled"
_BUILT = _C._cuda_built()


def _lazy_init():
    """Raises torch's error when no device can be used (not compiled; no driver; no GPU)."""
    if not _BUILT:
        raise AssertionError(_NOT_COMPILED)
    if _C._cuda_device_count() == 0:
        _C._cuda_current_device()  # raises the backend's error: no driver, no device


init = _lazy_init


def is_available():
    """True when a CUDA device can be used."""
    return _BUILT and _C._cuda_device_count() > 0


def device_count():
    return _C._cuda_device_count() if _BUILT else 0


def is_initialized():
    return _BUILT and _C._cuda_is_initialized()


def _device_index(device, optional=True):
    """The ordinal a device argument names (None, an int, "cuda:1", torch.device): -1 for the current device."""
    if device is None:
        return -1
    if isinstance(device, int):
        return device
    if isinstance(device, str):
        device = _C.device(device)
    if isinstance(device, _C.device):
        if device.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {device}")
        return -1 if device.index is None else device.index
    raise ValueError(f"Expected a cuda device, but got: {device!r}")


def current_device():
    _lazy_init()
    return _C._cuda_current_device()


def set_device(device):
    index = _device_index(device)
    if index >= 0:
        _lazy_init()
        _C._cuda_set_device(index)


def synchronize(device=None):
    _lazy_init()
    _C._device_synchronize(_C.device("cuda", _index_or_current(device)))


def _index_or_current(device):
    index = _device_index(device)
    return _C._cuda_current_device() if index < 0 else index


class _CudaDeviceProperties:
    """torch.cuda.get_device_properties's result."""

    def __init__(self, props):
        for key, value in props.items():
            setattr(self, key, value)
        self.gcnArchName = "NVIDIA"

    def __repr__(self):
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, minor={self.minor}, "
                f"total_memory={self.total_memory // (1024 * 1024)}MB, "
                f"multi_processor_count={self.multi_processor_count}, uuid={self.uuid}, "
                f"L2_cache_size={self.L2_cache_size // (1024 * 1024)}MB)")


def get_device_properties(device=None):
    _lazy_init()
    return _CudaDeviceProperties(_C._cuda_device_properties(_index_or_current(device)))


def get_device_name(device=None):
    return get_device_properties(device).name


def get_device_capability(device=None):
    p = get_device_properties(device)
    return p.major, p.minor


def get_arch_list():
    return ["sm_80", "sm_90"] if is_available() else []


def is_bf16_supported(including_emulation=True):
    return is_available() and get_device_capability()[0] >= 8


# ---- seeds: recorded lazily, as torch does (random ops on CUDA tensors use the CPU generator for now: the CUDA
# fallback runs their CPU kernels) ----
_seeds = {}
_DEFAULT_SEED = 67280421310721


def manual_seed(seed):
    _seeds[max(_device_index(None), 0) if not is_initialized() else _C._cuda_current_device()] = int(seed)


def manual_seed_all(seed):
    seed = int(seed)
    for i in range(max(device_count() if is_initialized() else 0, 1)):
        _seeds[i] = seed
    _seeds["all"] = seed


def seed():
    import random
    manual_seed(random.getrandbits(63))


def seed_all():
    import random
    manual_seed_all(random.getrandbits(63))


def initial_seed():
    _lazy_init()
    return _seeds.get(_C._cuda_current_device(), _seeds.get("all", _DEFAULT_SEED))


def get_rng_state(device="cuda"):
    """The state of a device's generator: its seed and offset (16 bytes, as torch's Philox state)."""
    _lazy_init()
    from .. import tensor, uint8
    seed_value = _seeds.get(_index_or_current(device), _seeds.get("all", _DEFAULT_SEED))
    return tensor(list(seed_value.to_bytes(8, "little")) + [0] * 8, dtype=uint8)


def set_rng_state(new_state, device="cuda"):
    _lazy_init()
    data = bytes(new_state.tolist())
    if len(data) != 16:
        raise RuntimeError(f"Expected a CUDA generator state of 16 bytes but got {len(data)}")
    _seeds[_index_or_current(device)] = int.from_bytes(data[:8], "little")


def get_rng_state_all():
    return [get_rng_state(i) for i in range(device_count())]


def set_rng_state_all(new_states):
    for i, state in enumerate(new_states):
        set_rng_state(state, i)


# ---- memory: the caching allocator (Note [Caching allocator] in csrc/aten/caching_allocator.h) ----

def memory_stats(device=None):
    """torch's flat statistics of the caching allocator, sorted by name; empty before CUDA is used."""
    if not is_initialized():
        return OrderedDict()
    stats = _C._cuda_memory_stats(_index_or_current(device))
    return OrderedDict(sorted(stats.items()))


def _stat(name, device):
    return memory_stats(device).get(name, 0)


def memory_allocated(device=None):
    return _stat("allocated_bytes.all.current", device)


def max_memory_allocated(device=None):
    return _stat("allocated_bytes.all.peak", device)


def memory_reserved(device=None):
    return _stat("reserved_bytes.all.current", device)


def max_memory_reserved(device=None):
    return _stat("reserved_bytes.all.peak", device)


def empty_cache():
    if _BUILT:
        _C._cuda_empty_cache()


def reset_peak_memory_stats(device=None):
    _lazy_init()
    _C._cuda_reset_peak_memory_stats(_index_or_current(device))


reset_max_memory_allocated = reset_max_memory_cached = reset_peak_memory_stats


def mem_get_info(device=None):
    _lazy_init()
    return _C._cuda_mem_get_info(_index_or_current(device))


def set_per_process_memory_fraction(fraction, device=None):
    _lazy_init()
    if not isinstance(fraction, float):
        raise TypeError("Invalid type for fraction argument, must be `float`")
    _C._cuda_set_memory_fraction(fraction, _index_or_current(device))


def ipc_collect():
    _lazy_init()


def _pin_memory(tensor):
    _lazy_init()
    return _C._cuda_pin_memory(tensor)


def _is_pinned(tensor):
    return _C._cuda_is_pinned(tensor)


# ---- devices as contexts ----

class device:
    """Makes a CUDA device current inside the block (None or a negative ordinal: no change)."""

    def __init__(self, device):
        self.idx = _device_index(device)
        self.prev_idx = -1

    def __enter__(self):
        if self.idx >= 0:
            _lazy_init()
            self.prev_idx = _C._cuda_current_device()
            if self.prev_idx != self.idx:
                _C._cuda_set_device(self.idx)

    def __exit__(self, *exc):
        if self.idx >= 0 and self.prev_idx != self.idx:
            _C._cuda_set_device(self.prev_idx)
        return False


class device_of(device):
    """device(tensor's device) for CUDA tensors; a no-op for CPU tensors, as in torch."""

    def __init__(self, obj):
        d = getattr(obj, "device", None)
        super().__init__(d.index if d is not None and d.type == "cuda" else -1)


# ---- streams and events (Note [Streams] in csrc/aten/backend.h) ----

class Stream:
    """A CUDA stream: the backend's stream id on a device (0: the default stream)."""

    def __new__(cls, device=None, priority=0, stream_id=None, device_index=None, device_type=None, stream_ptr=None):
        _lazy_init()
        self = object.__new__(cls)
        index = _index_or_current(device if device_index is None else device_index)
        self.device_index = index
        self.stream_id = _C._stream_new(_C.device("cuda", index), priority) if stream_id is None else stream_id
        return self

    def __init__(self, *args, **kwargs):
        pass

    @property
    def device(self):
        return _C.device("cuda", self.device_index)

    @property
    def device_type(self):
        return 1  # torch's DeviceType.CUDA

    def _where(self):
        return _C.device("cuda", self.device_index)

    @property
    def cuda_stream(self):
        """The runtime's cudaStream_t as an int (0: the device's default stream), as torch's; what C code that
        launches on this stream takes (pct_ext_current_cuda_stream in extensions)."""
        return _C._cuda_stream_handle(self.device_index, self.stream_id)

    def query(self):
        return _C._stream_query(self._where(), self.stream_id)

    def synchronize(self):
        _C._stream_synchronize(self._where(), self.stream_id)

    def record_event(self, event=None):
        event = Event() if event is None else event
        event.record(self)
        return event

    def wait_event(self, event):
        event.wait(self)

    def wait_stream(self, stream):
        self.wait_event(stream.record_event())

    def __eq__(self, other):
        return isinstance(other, Stream) and (self.device_index, self.stream_id) == (other.device_index, other.stream_id)

    def __hash__(self):
        return hash((self.device_index, self.stream_id))

    def __repr__(self):
        return f"<torch.cuda.Stream device=cuda:{self.device_index} cuda_stream={self.cuda_stream:#x}>"


class ExternalStream(Stream):
    def __new__(cls, stream_ptr, device=None):
        raise NotImplementedError("pyctorch.cuda.ExternalStream: streams made outside pyctorch are not supported")


def current_stream(device=None):
    _lazy_init()
    index = _index_or_current(device)
    return Stream(device_index=index, stream_id=_C._current_stream(_C.device("cuda", index)))


def default_stream(device=None):
    _lazy_init()
    return Stream(device_index=_index_or_current(device), stream_id=0)


def set_stream(stream):
    if stream is not None:
        _C._set_current_stream(_C.device("cuda", stream.device_index), stream.stream_id)


class StreamContext:
    """Makes a stream current inside the block (and its device); a no-op for None, as in torch."""

    def __init__(self, stream):
        self.stream = stream
        self.prev = None

    def __enter__(self):
        if self.stream is None:
            return None
        self.prev = current_stream(self.stream.device_index)
        self.prev_device = _C._cuda_current_device()
        if self.prev_device != self.stream.device_index:
            _C._cuda_set_device(self.stream.device_index)
        set_stream(self.stream)
        return self.stream

    def __exit__(self, *exc):
        if self.stream is not None:
            set_stream(self.prev)
            if self.prev_device != self.stream.device_index:
                _C._cuda_set_device(self.prev_device)
        return False


def stream(stream):
    """Stream context: a null context for None, as in torch."""
    return StreamContext(stream)


class Event:
    """A CUDA event (timing off unless asked for, as torch's)."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False, external=False):
        if interprocess:
            raise NotImplementedError("pyctorch.cuda.Event: interprocess events are not supported")
        self.enable_timing = enable_timing
        self.blocking = blocking
        self._handle = None
        self._device = None

    def _made(self, device_index):
        if self._handle is None:
            _lazy_init()
            self._device = device_index
            self._handle = _C._cuda_event_new(device_index, self.enable_timing, self.blocking)
        return self._handle

    def record(self, stream=None):
        stream = current_stream() if stream is None else stream
        _C._cuda_event_record(self._made(stream.device_index), stream.device_index, stream.stream_id)

    def wait(self, stream=None):
        if self._handle is None:
            return
        stream = current_stream() if stream is None else stream
        _C._cuda_stream_wait_event(stream.device_index, stream.stream_id, self._handle)

    def query(self):
        return True if self._handle is None else _C._cuda_event_query(self._handle)

    def synchronize(self):
        if self._handle is not None:
            _C._cuda_event_synchronize(self._handle)

    def elapsed_time(self, end_event):
        if self._handle is None or end_event._handle is None:
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        return _C._cuda_event_elapsed(self._handle, end_event._handle)

    def __repr__(self):
        return f"<torch.cuda.Event {'uninitialized' if self._handle is None else hex(id(self._handle))}>"


# ---- CUDA graphs: not implemented (torch's classes exist for isinstance checks) ----

class CUDAGraph:
    def __new__(cls, *args, **kwargs):
        raise NotImplementedError("pyctorch.cuda.CUDAGraph: CUDA graph capture is not implemented")


class graph:
    """CUDA graph capture context (torch.cuda.graph): not implemented."""

    def __init__(self, cuda_graph, pool=None, stream=None, capture_error_mode="global"):
        raise NotImplementedError("pyctorch.cuda.graph: CUDA graph capture is not implemented")


def graph_pool_handle():
    raise NotImplementedError("pyctorch.cuda.graph_pool_handle: CUDA graph capture is not implemented")


def is_current_stream_capturing():
    return False


if not _BUILT:  # torch's CPU-only build: its dummies and "not compiled" errors replace what needs a device
    from ._cpu_only import (CUDAGraph, Event, Stream, StreamContext, current_stream, default_stream,  # noqa: F401,F811
                            device, device_of, get_device_capability, get_device_name, get_device_properties,
                            get_rng_state, graph, graph_pool_handle, init, initial_seed, ipc_collect,
                            is_current_stream_capturing, mem_get_info, reset_peak_memory_stats, set_device,
                            set_per_process_memory_fraction, set_rng_state, stream, synchronize, current_device)
    _lazy_init = init
