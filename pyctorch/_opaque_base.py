"""torch._opaque_base: the base class of opaque types (objects a custom op takes whole, without looking inside).

`isinstance(x, OpaqueBase)` asks the registry of pyctorch/_library/opaque_object.py whether x's type was registered;
against a concrete subclass it is the ordinary subclass check."""


class OpaqueBaseMeta(type):
    def __instancecheck__(cls, instance):
        if cls is OpaqueBase:
            from ._library.opaque_object import is_opaque_value
            return is_opaque_value(instance)
        return super().__instancecheck__(instance)


class OpaqueBase(metaclass=OpaqueBaseMeta):
    pass
