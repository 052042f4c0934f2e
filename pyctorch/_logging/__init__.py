"""torch._logging: the TORCH_LOGS artifacts pyctorch emits ("graph_breaks", "recompiles", "graph_code") and
`set_logs` to switch them on from Python. Records go to stderr in torch's layout:
`V1129 04:20:00.123456 4242 torch/_dynamo/eval_frame.py:0] [0/1] [__recompiles] <message>`."""
import os
import sys
import threading
import time

__all__ = ["set_logs", "artifact_enabled", "log_artifact"]

_ARTIFACTS = ("graph_breaks", "recompiles", "graph_code", "guards", "graph")
_enabled = None


def _from_env():
    names = set()
    for part in os.environ.get("TORCH_LOGS", "").split(","):
        part = part.strip().lstrip("+")
        if part in _ARTIFACTS:
            names.add(part)
        elif part in ("dynamo", "+dynamo"):
            names.update(("graph_breaks", "recompiles"))
    return names


def artifact_enabled(name):
    global _enabled
    if _enabled is None:
        _enabled = _from_env()
    return name in _enabled


def set_logs(**kwargs):
    """torch._logging.set_logs(graph_breaks=True, recompiles=True, ...): which artifacts are logged from now on
    (the TORCH_LOGS environment variable sets the starting choice). Names pyctorch does not emit are accepted."""
    global _enabled
    _enabled = set()
    for name, on in kwargs.items():
        if name in _ARTIFACTS and on:
            _enabled.add(name)


def log_artifact(name, message, frame_tag=""):
    now = time.time()
    stamp = time.strftime("%m%d %H:%M:%S", time.localtime(now)) + f".{int(now % 1 * 1e6):06d}"
    prefix = f"V{stamp} {threading.get_native_id()} torch/_dynamo/eval_frame.py:0] {frame_tag} [__{name}] "
    for line in message.splitlines():
        sys.stderr.write(prefix + line + "\n")
    sys.stderr.flush()
