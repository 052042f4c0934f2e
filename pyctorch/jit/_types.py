"""Type helpers of torch.jit: annotate, Final, isinstance (container-aware), Attribute, BroadcastingList."""
import builtins
import collections
import collections.abc
import types
import typing
import warnings
from typing import Final, get_args, get_origin  # noqa: F401  (torch.jit.Final is typing.Final)

# torch.jit.Attribute(value, type): in a ScriptModule's __init__ it declares an attribute's type; a
# ScriptModule stores `value` (see _script.ScriptModule.__setattr__), anything else keeps the pair.
Attribute = collections.namedtuple("Attribute", ["value", "type"])


def annotate(the_type, the_value):
    """A type hint for the compiler; returns `the_value` unchanged."""
    return the_value


class BroadcastingListCls:
    """`BroadcastingList2[int]`: an int or a list of two ints in a TorchScript signature (no meaning in Python)."""

    def __getitem__(self, types):
        return None


BroadcastingList1 = BroadcastingList2 = BroadcastingList3 = BroadcastingListCls()

_BARE_CONTAINERS = {dict: "dict", list: "list", tuple: "tuple", typing.Dict: "Dict", typing.List: "List",
                    typing.Optional: "Optional", typing.Tuple: "Tuple"}


def _missing_parameter(name):
    if name.endswith("ict"):
        return RuntimeError(f"Attempted to use {name} without contained types. Please add contained type, e.g. "
                            f"{name}[int, int]")
    return RuntimeError(f"Attempted to use {name} without a contained type. Please add a contained type, e.g. "
                        f"{name}[int]")


def _check_parameterized(target_type):
    try:
        name = _BARE_CONTAINERS.get(target_type)
    except TypeError:  # unhashable target
        name = None
    if name is not None:
        raise _missing_parameter(name)


def _warn_if_empty(obj):
    if obj == [] or obj == {} or obj == ():
        warnings.warn("The inner type of a container is lost when calling torch.jit.isinstance in eager mode. For "
                      "example, List[int] would become list and therefore falsely return True for List[float] or "
                      "List[str].", stacklevel=4)


def _matches(obj, target_type):
    """obj is an instance of target_type, where target_type may be List[T], Dict[K, V], Tuple[...] or a Union."""
    _check_parameterized(target_type)  # bare List / dict / Optional... (typing.List has an origin but no args)
    origin = get_origin(target_type)
    if origin is None:
        return builtins.isinstance(obj, target_type)
    args = get_args(target_type)
    if origin is list:
        _warn_if_empty(obj)
        return builtins.isinstance(obj, list) and all(_matches(x, args[0]) for x in obj)
    if origin is dict:
        _warn_if_empty(obj)
        return (builtins.isinstance(obj, dict)
                and all(_matches(k, args[0]) and _matches(v, args[1]) for k, v in obj.items()))
    if origin is tuple:
        _warn_if_empty(obj)
        return (builtins.isinstance(obj, tuple) and len(obj) == len(args)
                and all(_matches(x, t) for x, t in zip(obj, args)))
    if origin is typing.Union or origin is types.UnionType:  # Optional[T] is Union[T, None]
        # torch's eager check stops at the first parameterized member of a Union; every member is tried here
        return obj is None or any(_matches(obj, t) for t in args)
    return False


def isinstance(obj, target_type):
    """Python's isinstance that also looks inside List[...], Dict[...], Tuple[...], Optional[...] and Union[...].

    As torch's eager version: a bare `list`/`List`/`dict`/`Dict`/`tuple`/`Tuple`/`Optional` raises (give the
    element types), an empty container matches any element type (with a warning), and target_type may be
    a tuple of such types.
    """
    if builtins.isinstance(target_type, collections.abc.Container) and not get_origin(target_type):
        if not builtins.isinstance(target_type, tuple):
            raise RuntimeError("The second argument to `torch.jit.isinstance` must be a type or a tuple of types")
        return any(isinstance(obj, t) for t in target_type)
    return _matches(obj, target_type)


_isinstance = isinstance


def _unwrap_optional(x):
    if x is None:
        raise AssertionError("Unwrapping null optional")
    return x
