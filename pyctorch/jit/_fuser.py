"""The JIT fusion settings. pyctorch has no fuser: the settings are validated and stored, and read back as set,
so code that saves, changes and restores them works; they change no computation."""
import contextlib
import warnings

_DEFAULT_FUSION_STRATEGY = [("STATIC", 2), ("DYNAMIC", 10)]
_state = {"fusion_strategy": list(_DEFAULT_FUSION_STRATEGY), "onednn_fusion": False, "optimize": True,
          "fuser": "fuser1"}

_FUSERS = ("fuser0", "fuser1", "fuser2", "fuser3", "none")


def set_fusion_strategy(strategy):
    """Store a list of ("STATIC" | "DYNAMIC", depth) pairs; returns the previous list, as torch does."""
    warnings.warn("`torch.jit.set_fusion_strategy` is deprecated. Please use `torch.compile` instead.",
                  DeprecationWarning, stacklevel=2)
    strategy = [tuple(pair) for pair in strategy]
    for kind, depth in strategy:
        if kind not in ("STATIC", "DYNAMIC"):
            raise ValueError(f"FusionBehavior only supported 'STATIC' or 'DYNAMIC', got: {kind}")
        if not isinstance(depth, int):
            raise TypeError(f"fusion strategy depth must be an int, got {type(depth).__name__}")
    previous = _state["fusion_strategy"]
    _state["fusion_strategy"] = strategy
    return previous


def enable_onednn_fusion(enabled):
    """Store the oneDNN-graph fusion flag (pyctorch has no oneDNN: nothing is fused either way)."""
    _state["onednn_fusion"] = bool(enabled)


def onednn_fusion_enabled():
    return _state["onednn_fusion"]


@contextlib.contextmanager
def optimized_execution(should_optimize):
    """Set the graph-executor optimization flag for the block (stored only)."""
    previous = _state["optimize"]
    _state["optimize"] = should_optimize
    try:
        yield
    finally:
        _state["optimize"] = previous


@contextlib.contextmanager
def fuser(name):
    """Choose a fuser for the block: "fuser0" (legacy), "fuser1" (NNC), "fuser2" (nvFuser), "fuser3" (oneDNN) or
    "none". Validated and stored only."""
    if name not in _FUSERS:
        raise Exception(f"unrecognized fuser option (name: {name})")  # torch raises a bare Exception
    previous = _state["fuser"], _state["onednn_fusion"]
    _state["fuser"] = name
    _state["onednn_fusion"] = name == "fuser3"
    try:
        yield
    finally:
        _state["fuser"], _state["onednn_fusion"] = previous


def last_executed_optimized_graph():
    raise RuntimeError("torch.jit.last_executed_optimized_graph: pyctorch has no TorchScript graph executor, "
                       "so no graph was executed")


class strict_fusion:
    """In torch, errors when a scripted block is not fully fused; outside script mode only a warning, as here."""

    def __init__(self):
        warnings.warn("Only works in script mode", stacklevel=2)

    def __enter__(self):
        pass

    def __exit__(self, type, value, tb):
        pass
