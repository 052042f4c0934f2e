"""torch.jit.annotations: the typing names TorchScript code imports from here, and the annotation predicates."""
import typing
from typing import Any, Dict, List, Optional, Tuple, Union, get_origin, get_args  # noqa: F401

from ..futures import Future  # noqa: F401
from ._types import BroadcastingList1, BroadcastingList2, BroadcastingList3, _missing_parameter  # noqa: F401


def is_tuple(ann):
    if ann is typing.Tuple:
        raise _missing_parameter("Tuple")
    return getattr(ann, "__module__", None) in ("builtins", "typing") and get_origin(ann) is tuple


def is_list(ann):
    if ann is typing.List:
        raise _missing_parameter("List")
    return getattr(ann, "__module__", None) in ("builtins", "typing") and get_origin(ann) is list


def is_dict(ann):
    if ann is typing.Dict:
        raise _missing_parameter("Dict")
    return getattr(ann, "__module__", None) in ("builtins", "typing") and get_origin(ann) is dict


def is_union(ann):
    if ann is Union:
        raise _missing_parameter("Union")
    import types
    return isinstance(ann, types.UnionType) or (getattr(ann, "__module__", None) == "typing"
                                                and get_origin(ann) is Union)


def is_optional(ann):
    if ann is Optional:
        raise _missing_parameter("Optional")
    return is_union(ann) and len(get_args(ann)) == 2 and type(None) in get_args(ann)


def is_future(ann):
    if ann is Future:
        raise RuntimeError("Attempted to use Future without a contained type. Please add a contained type, e.g. "
                           "Future[int]")
    return get_origin(ann) is Future


def is_tensor(ann):
    from .. import Tensor
    return isinstance(ann, type) and issubclass(ann, Tensor)
