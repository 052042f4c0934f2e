"""torch.__future__: the switches for how nn.Module._apply (to(), float(), cuda(), ...) installs converted parameters.

overwrite: each converted parameter becomes a new Parameter object in the module (the old object is left as it was);
otherwise the existing Parameter object gets the converted tensor (`param.data = new`), which is the default.
swap: torch swaps the two tensors' contents (torch.utils.swap_tensors) so the module keeps its Parameter objects; in
pyctorch the default path already keeps the objects and gives them the converted tensor, so swap takes that path,
and the flag is what load_state_dict and libraries read (parametrize, FSDP)."""

_overwrite_module_params_on_conversion = False
_swap_module_params_on_conversion = False

__all__ = ["set_overwrite_module_params_on_conversion", "get_overwrite_module_params_on_conversion",
           "set_swap_module_params_on_conversion", "get_swap_module_params_on_conversion"]


def set_overwrite_module_params_on_conversion(value: bool) -> None:
    """Whether nn.Module._apply gives each converted parameter a new Parameter object."""
    global _overwrite_module_params_on_conversion
    _overwrite_module_params_on_conversion = value


def get_overwrite_module_params_on_conversion() -> bool:
    return _overwrite_module_params_on_conversion


def set_swap_module_params_on_conversion(value: bool) -> None:
    """Whether nn.Module._apply keeps the module's Parameter objects and swaps their contents (takes precedence over
    overwrite)."""
    global _swap_module_params_on_conversion
    _swap_module_params_on_conversion = value


def get_swap_module_params_on_conversion() -> bool:
    return _swap_module_params_on_conversion
