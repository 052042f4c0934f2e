"""The reduction argument of the losses, and the legacy size_average/reduce flags that override it
(torch.nn._reduction: same names, same warning)."""
import warnings

__all__ = ["get_enum", "legacy_get_string", "legacy_get_enum"]

_ENUM = {"none": 0, "mean": 1, "sum": 2}


def get_enum(reduction):
    """0, 1, 2 for 'none', 'mean', 'sum' (the deprecated 'elementwise_mean' is 'mean', with a warning)."""
    if reduction == "elementwise_mean":
        warnings.warn("reduction='elementwise_mean' is deprecated. Please use reduction='mean' instead.")
        return 1
    code = _ENUM.get(reduction) if isinstance(reduction, str) else None
    if code is None:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return code


def legacy_get_string(size_average, reduce, emit_warning=True):
    """The reduction that the legacy flags ask for (None counts as True), warning that they are deprecated."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    result = ("mean" if size_average else "sum") if reduce else "none"
    if emit_warning:
        warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{result}' instead.")
    return result


def legacy_get_enum(size_average, reduce, emit_warning=True):
    return get_enum(legacy_get_string(size_average, reduce, emit_warning))


def resolve(size_average, reduce, reduction):
    """`reduction`, unless a legacy flag is given: then the flags decide (and warn), as in every torch loss."""
    if size_average is not None or reduce is not None:
        return legacy_get_string(size_average, reduce)
    return reduction
