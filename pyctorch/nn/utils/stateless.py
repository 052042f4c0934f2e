"""Calling a module with some of its parameters and buffers replaced for one call
(torch.nn.utils.stateless.functional_call, deprecated there in favour of torch.func.functional_call,
which pyctorch.func re-exports from here)."""
import contextlib
import warnings

__all__ = ["functional_call"]

_MISSING = object()


def _tied_names(module):
    """{name: all names of the same tensor} for the parameters and buffers reachable by several names."""
    names_of = {}
    named = list(module.named_parameters(remove_duplicate=False)) + list(module.named_buffers(remove_duplicate=False))
    for name, tensor in named:
        names_of.setdefault(id(tensor), set()).add(name)
    return {name: names for names in names_of.values() if len(names) > 1 for name in names}


def _untie(module, values):
    """`values` with every name tied to a given one added, holding the given value; two different
    values given for one tied tensor are an error."""
    tied = _tied_names(module)
    given_tied = [name for name in values if name in tied]
    for name in given_tied:
        group = tied[name]
        if len(group.intersection(given_tied)) > 1 and len({id(values[n]) for n in group if n in values}) != 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(group)}, which are tied. "
                             "Consider using tie_weights=False")
    untied = dict(values)
    for name in given_tied:
        for other in tied[name]:
            untied[other] = values[name]
    return untied


def _owner(module, name):
    """(submodule, attribute) for a dotted name."""
    *path, attr = name.split(".")
    for part in path:
        module = getattr(module, part)
    return module, attr


def _swap(module, name, value):
    """Put `value` at `name` and return what was there (_MISSING if nothing). Parameters and
    buffers are swapped in their dicts, so any tensor (not only a Parameter) can stand in."""
    owner, attr = _owner(module, name)
    for slots in (owner._parameters, owner._buffers):
        if attr in slots:
            old = slots[attr]
            if value is _MISSING:
                del slots[attr]
            else:
                slots[attr] = value
            return old
    old = owner.__dict__.get(attr, _MISSING)
    if value is _MISSING:
        owner.__dict__.pop(attr, None)
    else:
        object.__setattr__(owner, attr, value)
    return old


def _check_keys(module, values):
    known = {name for name, _ in module.named_parameters(remove_duplicate=False)}
    known |= {name for name, _ in module.named_buffers(remove_duplicate=False)}
    errors = []
    unexpected = sorted(set(values) - known)
    missing = sorted(known - set(values))
    if unexpected:
        errors.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
    if missing:
        errors.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
    if errors:
        raise RuntimeError("Error(s) in reparametrizing for {}:\n\t{}".format(module._get_name(), "\n\t".join(errors)))


@contextlib.contextmanager
def _reparametrize_module(module, parameters_and_buffers, tie_weights=False, strict=False):
    """Inside the block, `module` holds the given tensors by name; afterwards its own come back
    and the given dict sees tensors the module reassigned during the block."""
    values = _untie(module, parameters_and_buffers) if tie_weights else parameters_and_buffers
    if strict:
        _check_keys(module, values)
    originals = {}
    try:
        for name, value in values.items():
            originals[name] = _swap(module, name, value)
        yield
    finally:
        current = {name: _swap(module, name, old) for name, old in originals.items()}
        parameters_and_buffers.update({k: current[k] for k in parameters_and_buffers
                                       if k in current and current[k] is not _MISSING})


def _merge_dicts(parameter_and_buffer_dicts):
    if isinstance(parameter_and_buffer_dicts, dict):
        return parameter_and_buffer_dicts
    if not isinstance(parameter_and_buffer_dicts, (list, tuple)):
        raise ValueError(f"Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but got "
                         f"{type(parameter_and_buffer_dicts)}")
    merged = {}
    for d in parameter_and_buffer_dicts:
        for key in d:
            if key in merged:
                raise ValueError(f"{key} appeared in multiple dictionaries; behavior of functional call is ambiguous")
        merged.update(d)
    return merged


def _functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """module(*args, **kwargs) with the given dict(s) of name -> tensor standing in for the module's
    parameters and buffers (names as in named_parameters). Tied tensors given once are replaced
    everywhere (tie_weights); strict requires exactly the module's names."""
    values = _merge_dicts(parameter_and_buffer_dicts)
    kwargs = {} if kwargs is None else kwargs
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrize_module(module, values, tie_weights=tie_weights, strict=strict):
        return module(*args, **kwargs)


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """Deprecated spelling of torch.func.functional_call (one dict only)."""
    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 and will be removed "
                  "in a future version of PyTorch. Please use `torch.func.functional_call` instead which is a "
                  "drop-in replacement.", FutureWarning, stacklevel=2)
    return _functional_call(module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights, strict=strict)
