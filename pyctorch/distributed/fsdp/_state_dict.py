"""FSDP state dicts (the unit tree below a root, either FSDP flavour).

FULL_STATE_DICT: the unwrapped model's keys and full values (every rank gathers; rank0_only
leaves the other ranks' dicts empty). SHARDED_STATE_DICT: the same keys, each parameter's value
being this rank's piece of its flattened parameter (1-D, possibly empty) where torch gives a
DTensor/ShardedTensor; it loads back at the same world size and wrapping. Buffers that mixed
precision cast come back in their original dtype in a full state dict (as torch's), as they are in
the others. LOCAL_STATE_DICT: the
flat shards under their own names (Module.state_dict as is).
"""
from collections import OrderedDict

import pyctorch as torch
from pyctorch.nn.modules.module import Module, _IncompatibleKeys

from ._runtime import unit_states

FSDP_PREFIX = "_fsdp_wrapped_module."
FLAT_PARAM = "_flat_param"


def clean_key(key):
    return key.replace(FSDP_PREFIX, "")


def _plain_state_dict(root, keep_vars):
    raw = Module.state_dict(root, keep_vars=keep_vars)
    return OrderedDict((clean_key(k), v) for k, v in raw.items() if k.rsplit(".", 1)[-1] != FLAT_PARAM)


def _original_buffer_dtypes(root):
    """{clean key: dtype} of the buffers mixed precision cast at the first forward."""
    return {clean_key(f"{name}.{b}" if name else b): dtype for name, m in root.named_modules()
            for b, dtype in m.__dict__.get("_fsdp_buffer_dtypes", {}).items()}


def full_state_dict(root, config, summon):
    dtypes = _original_buffer_dtypes(root)
    with summon(root, writeback=False):
        sd = OrderedDict((k, v.detach().clone().to(dtypes.get(k, v.dtype)))
                         for k, v in _plain_state_dict(root, keep_vars=False).items())
    if getattr(config, "rank0_only", False) and torch.distributed.get_rank() != 0:
        return OrderedDict()
    return sd


def _load_into(targets, state_dict, strict, root):
    missing = [k for k in targets if k not in state_dict]
    unexpected = [k for k in state_dict if k not in targets]
    errors = [f"size mismatch for {k}: copying a param with shape {state_dict[k].shape} from checkpoint, the shape "
              f"in current model is {t.shape}." for k, t in targets.items()
              if k in state_dict and tuple(state_dict[k].shape) != tuple(t.shape)]
    if strict:
        if unexpected:
            errors.insert(0, "Unexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in unexpected) + ". ")
        if missing:
            errors.insert(0, "Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing) + ". ")
    if errors:
        raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(type(root).__name__,
                                                                                "\n\t".join(errors)))
    with torch.no_grad():
        for k, t in targets.items():
            if k in state_dict:
                t.copy_(state_dict[k])
    return _IncompatibleKeys(missing, unexpected)


def load_full_state_dict(root, state_dict, strict, summon):
    with summon(root, writeback=True):
        return _load_into(_plain_state_dict(root, keep_vars=True), state_dict, strict, root)


def _sharded_targets(root):
    """{clean key: the tensor a sharded state dict reads and writes}: each parameter's piece of the
    shard (unmanaged parameters whole) and the buffers, in the unwrapped model's order."""
    pieces, order = {}, {}
    for state in unit_states(root):
        if state._handle is not None:
            order.update((id(m), names) for m, names in state._handle.module_param_order.items())
            for info, piece in state._handle.fqn_pieces():
                pieces.update(((id(m), n), piece) for m, n in info.places)
    targets = OrderedDict()
    for name, m in root.named_modules():
        prefix = clean_key(name + ".")
        for n in order.get(id(m), list(m._parameters)):
            t = pieces.get((id(m), n), m._parameters.get(n))
            if t is not None and n != FLAT_PARAM:
                targets[prefix + n] = t
        for n, b in m._buffers.items():
            if b is not None and n not in m._non_persistent_buffers_set:
                targets[prefix + n] = b
    return targets


def sharded_state_dict(root):
    return OrderedDict((k, v.detach().clone()) for k, v in _sharded_targets(root).items())


def load_sharded_state_dict(root, state_dict, strict):
    return _load_into(_sharded_targets(root), state_dict, strict, root)
