"""Collation: a list of samples into a batch (default_collate), and the conversion of
NumPy values into tensors without batching (default_convert), as torch batches them:

    Tensor -> stacked Tensor (with a new first dimension)
    numpy array -> Tensor (stacked);  numpy scalar -> Tensor of its dtype
    float -> float64 Tensor;  int -> int64 Tensor;  bool -> bool Tensor
    str / bytes -> the list unchanged
    Mapping -> the same mapping type, each key collated;  namedtuple -> the same namedtuple
    tuple -> list of collated fields;  other Sequence -> the same type when it can be built

In a DataLoader worker a batch of tensors is stacked straight into a new shared-memory
storage, so sending it to the main process copies nothing (pyctorch.multiprocessing)."""
import collections
import copy
import re

from pyctorch import _C

np_str_obj_array_pattern = re.compile(r"[SaUO]")

default_collate_err_msg_format = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}")


def default_convert(data):
    """Converts NumPy arrays and scalars (also inside mappings, namedtuples and sequences)
    to tensors, leaving everything else as it is."""
    elem_type = type(data)
    if isinstance(data, _C.Tensor):
        return data
    if elem_type.__module__ == "numpy" and elem_type.__name__ not in ("str_", "string_"):
        if elem_type.__name__ == "ndarray" and np_str_obj_array_pattern.search(data.dtype.str) is not None:
            return data
        return _as_tensor_numpy(data)
    if isinstance(data, collections.abc.Mapping):
        try:
            if isinstance(data, collections.abc.MutableMapping):
                clone = copy.copy(data)
                clone.update({key: default_convert(data[key]) for key in data})
                return clone
            return elem_type({key: default_convert(data[key]) for key in data})
        except TypeError:
            return {key: default_convert(data[key]) for key in data}
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # namedtuple
        return elem_type(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]  # a tuple becomes a list (as torch)
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            if isinstance(data, collections.abc.MutableSequence):
                clone = copy.copy(data)
                for i, d in enumerate(data):
                    clone[i] = default_convert(d)
                return clone
            return elem_type([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data


def _as_tensor_numpy(value):
    """A numpy array or scalar as a tensor of its dtype (scalars through a 0-d array, which
    keeps their exact dtype)."""
    import numpy as np
    if not isinstance(value, np.ndarray):
        value = np.asarray(value)
    return _C.as_tensor(value)


def collate(batch, *, collate_fn_map=None):
    """Collates a batch by the type of its first element: an entry of collate_fn_map for
    that type (exactly, else the first key it is an instance of), else the container
    rules (mapping, namedtuple, sequence) recursing into the fields."""
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        fn = collate_fn_map.get(elem_type)
        if fn is not None:
            return fn(batch, collate_fn_map=collate_fn_map)
        for key, fn in collate_fn_map.items():
            if isinstance(elem, key):
                return fn(batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        try:
            if isinstance(elem, collections.abc.MutableMapping):
                clone = copy.copy(elem)
                clone.update({key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map) for key in elem})
                return clone
            return elem_type({key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map) for key in elem})
        except TypeError:
            return {key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map) for key in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return elem_type(*(collate(samples, collate_fn_map=collate_fn_map) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(e) != size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [collate(samples, collate_fn_map=collate_fn_map) for samples in transposed]
        try:
            if isinstance(elem, collections.abc.MutableSequence):
                clone = copy.copy(elem)
                for i, samples in enumerate(transposed):
                    clone[i] = collate(samples, collate_fn_map=collate_fn_map)
                return clone
            return elem_type([collate(samples, collate_fn_map=collate_fn_map) for samples in transposed])
        except TypeError:
            return [collate(samples, collate_fn_map=collate_fn_map) for samples in transposed]
    raise TypeError(default_collate_err_msg_format.format(elem_type))


def collate_tensor_fn(batch, *, collate_fn_map=None):
    """stack(batch); in a worker, into a fresh shared-memory storage (sent without a copy)."""
    elem = batch[0]
    out = None
    if _worker._worker_info is not None:
        shape = (len(batch),) + tuple(elem.shape)
        nbytes = len(batch) * elem.numel() * elem.element_size()
        out = _C.empty(0, dtype=elem.dtype).set_(_C.UntypedStorage._new_shared(nbytes), 0, shape)
    return _C.stack(batch, 0, out=out)


def collate_numpy_array_fn(batch, *, collate_fn_map=None):
    if np_str_obj_array_pattern.search(batch[0].dtype.str) is not None:
        raise TypeError(default_collate_err_msg_format.format(batch[0].dtype))
    return collate([_C.as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch, *, collate_fn_map=None):
    import numpy as np
    first = type(batch[0])
    if all(type(b) is first for b in batch):
        return _C.as_tensor(np.asarray(batch))  # one dtype: numpy keeps it exactly
    return _C.as_tensor(batch)


def collate_float_fn(batch, *, collate_fn_map=None):
    return _C.tensor(batch, dtype=_C.float64)


def collate_int_fn(batch, *, collate_fn_map=None):
    return _C.tensor(batch)


def collate_str_fn(batch, *, collate_fn_map=None):
    return batch


default_collate_fn_map = {_C.Tensor: collate_tensor_fn}
try:
    import numpy as _np
    default_collate_fn_map[_np.ndarray] = collate_numpy_array_fn
    default_collate_fn_map[(_np.bool_, _np.number, _np.object_)] = collate_numpy_scalar_fn
except ImportError:
    pass
default_collate_fn_map[float] = collate_float_fn
default_collate_fn_map[int] = collate_int_fn
default_collate_fn_map[str] = collate_str_fn
default_collate_fn_map[bytes] = collate_str_fn


def default_collate(batch):
    """Puts a list of samples together into a batch (see the module docstring for the rules)."""
    return collate(batch, collate_fn_map=default_collate_fn_map)


from . import worker as _worker  # noqa: E402  (get_worker_info state; imported last: worker imports us)
