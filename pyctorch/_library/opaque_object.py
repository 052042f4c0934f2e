"""torch._library.opaque_object: the registry of opaque types.

An opaque type is a user class whose objects a custom op receives as they are. torch distinguishes "reference"
types (the object is passed by identity; the class must use OpaqueBaseMeta) and "value" types (compared by `__eq__`,
hashed, and rebuilt from `__fx_repr__` in generated code). The registry keeps each registered class with its kind,
and subclasses of a registered class count as registered, with torch's checks and messages at registration.
"""
import enum
import logging
from dataclasses import dataclass, field

from .._opaque_base import OpaqueBase, OpaqueBaseMeta

__all__ = ["register_opaque_type", "is_opaque_type", "is_opaque_value_type", "is_opaque_reference_type",
           "is_opaque_value", "get_opaque_type_name", "MemberType", "OpaqueBase", "OpaqueBaseMeta"]

log = logging.getLogger(__name__)


class MemberType(enum.Enum):
    """How graph capture treats a member of an opaque object: evaluated on the real object or inlined."""
    USE_REAL = "use_real"
    INLINED = "inlined"


@dataclass
class _OpaqueTypeInfo:
    class_name: str
    opaque_typ: str
    guard_fn: object = None
    members: dict = field(default_factory=dict)
    hoist: bool = False
    reconstruct_fn: object = None


_OPAQUE_TYPES = {}
_OPAQUE_TYPES_BY_NAME = {}


def _resolve_opaque_type_info(cls):
    if not isinstance(cls, type):
        return None
    for klass in cls.__mro__:
        info = _OPAQUE_TYPES.get(klass)
        if info is not None:
            return info
    return None


def register_opaque_type(cls, *, typ, hoist=False, guard_fn=None, members=None, reconstruct_fn=None):
    """Registers cls as an opaque type of kind typ ("reference" or "value") that custom ops may take."""
    from .. import _C
    from ..utils import _pytree
    if cls.__module__ == "builtins" or cls is _C.Tensor:
        raise ValueError(f"Unable to register built-in type {cls} as an opaque type. Please wrap it in a custom class "
                         "and register the custom class as opaque.")
    if cls in _pytree.SUPPORTED_NODES:
        raise ValueError(f"{cls} cannot be registered as an opaque object as it has been registered as a pytree. "
                         "Opaque objects must be pytree leaves.")
    if typ != "value" and not isinstance(cls, OpaqueBaseMeta):
        raise TypeError(f"Opaque type {cls} must subclass torch._opaque_base.OpaqueBase or "
                        "'metaclass=torch._opaque_base.OpaqueBaseMeta'.")
    if typ not in ("reference", "value"):
        raise AssertionError(f"Opaque type must be either 'reference' or 'value', got {typ!r}")
    if typ == "value":
        is_enum = issubclass(cls, enum.Enum)
        if not is_enum and cls.__eq__ is object.__eq__:
            raise TypeError(f"Value-type opaque object of type {cls} is expected to have a non-default `__eq__` "
                            "implementation.")
        if cls.__hash__ is None:
            raise TypeError(f"Value-type opaque object of type {cls} is expected to have a non-default `__hash__` "
                            "implementation.")
        if not is_enum and not hasattr(cls, "__fx_repr__"):
            raise TypeError(f"Value-type opaque object of type {cls} is expected to have a `__fx_repr__` method "
                            "implementation.")
        if guard_fn is not None:
            raise TypeError(f"No need to specify `guard_fn` for value-type opaque class {cls} as it will be guarded "
                            "based on `__eq__`.")
    name = f"{cls.__module__}.{cls.__qualname__}"
    info = _OpaqueTypeInfo(name, typ, guard_fn, dict(members or {}), hoist, reconstruct_fn)
    _OPAQUE_TYPES[cls] = info
    _OPAQUE_TYPES_BY_NAME[name] = info


def is_opaque_type(cls):
    """Whether cls (a class, or its registered name) is a registered opaque type or a subclass of one."""
    if isinstance(cls, str):
        return cls in _OPAQUE_TYPES_BY_NAME
    if not isinstance(cls, type):
        log.warning("Passed invalid type `%s` to is_opaque_type, returning False", cls)
        return False
    return _resolve_opaque_type_info(cls) is not None


def _kind(cls):
    if isinstance(cls, str):
        info = _OPAQUE_TYPES_BY_NAME.get(cls)
    else:
        info = _resolve_opaque_type_info(cls) if isinstance(cls, type) else None
    return info.opaque_typ if info is not None else None


def is_opaque_value_type(cls):
    """Whether cls is a registered opaque value type (or a subclass of one)."""
    return _kind(cls) == "value"


def is_opaque_reference_type(cls):
    """Whether cls is a registered opaque reference type (or a subclass of one)."""
    return _kind(cls) == "reference"


def is_opaque_value(value):
    """Whether value is an instance of a registered opaque type."""
    return _resolve_opaque_type_info(type(value)) is not None


def get_opaque_type_name(cls):
    """The registered name of an opaque type (module.qualname)."""
    info = _resolve_opaque_type_info(cls)
    if info is None:
        raise ValueError(f"Class {cls} is not registered as an opaque type. "
                         f"Call register_opaque_type({cls.__name__}) first.")
    return info.class_name
