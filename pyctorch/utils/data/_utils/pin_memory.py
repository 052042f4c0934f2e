"""pin_memory for whole batches: pins every tensor inside nested containers. Without an
accelerator there is nothing to pin (the DataLoader warns once and skips this)."""
import collections
import copy

import pyctorch


def pin_memory(data, device=None):
    if isinstance(data, pyctorch.Tensor):
        return data.pin_memory(device)
    if isinstance(data, (str, bytes)):
        return data
    if isinstance(data, collections.abc.Mapping):
        try:
            if isinstance(data, collections.abc.MutableMapping):
                clone = copy.copy(data)
                clone.update({k: pin_memory(v, device) for k, v in data.items()})
                return clone
            return type(data)({k: pin_memory(v, device) for k, v in data.items()})
        except TypeError:
            return {k: pin_memory(v, device) for k, v in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # namedtuple
        return type(data)(*(pin_memory(v, device) for v in data))
    if isinstance(data, tuple):
        return [pin_memory(v, device) for v in data]
    if isinstance(data, collections.abc.Sequence):
        try:
            if isinstance(data, collections.abc.MutableSequence):
                clone = copy.copy(data)
                for i, v in enumerate(data):
                    clone[i] = pin_memory(v, device)
                return clone
            return type(data)([pin_memory(v, device) for v in data])
        except TypeError:
            return [pin_memory(v, device) for v in data]
    if hasattr(data, "pin_memory"):
        return data.pin_memory()
    return data
