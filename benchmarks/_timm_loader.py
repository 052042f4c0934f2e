"""timm imported once per framework in one process, so bench_models can time timm's models on pyctorch and on torch
side by side.

timm's modules bind `torch` (and `torchvision`) when they are imported. So the copy for pyctorch is imported while
the torch alias is installed (Note [The torch alias]) and the copy for torch while the real torch's modules are in
sys.modules; each time the `torch*`, `torchvision*` and `timm*` entries of sys.modules are set aside first and put
back after, leaving two independent timm module trees. Both copies get pyctorch's torchvision subset when no
torchvision is installed (Note [The torchvision subset]). Code that imports inside a function at call time would
see whichever torch sys.modules holds then (the real one); the models timed here do not.
"""
import importlib
import os
import sys

_COPIES = {}
_NAMES = ("torch", "torchvision", "timm")


def _owned(name):
    return any(name == n or name.startswith(n + ".") for n in _NAMES)


def _vision_finder():
    spec = importlib.util.spec_from_file_location(
        "pyctorch_vision_finder", os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                               "pyctorch", "_vision_finder.py"))
    finder = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(finder)
    return finder


def timm_for(framework):
    """The timm package imported against `framework` (the pyctorch or the torch module); None without timm."""
    key = framework.__name__
    if key in _COPIES:
        return _COPIES[key]
    if importlib.util.find_spec("timm") is None:
        return None
    saved = {name: module for name, module in sys.modules.items() if _owned(name)}
    for name in saved:
        del sys.modules[name]
    finder = _vision_finder()
    try:
        if key == "pyctorch":
            from pyctorch.as_torch import install_as_torch
            install_as_torch(torchvision=False)
        else:
            sys.modules.update({n: m for n, m in saved.items() if n == "torch" or n.startswith("torch.")})
        finder.install()  # the same torchvision subset for both copies
        _COPIES[key] = importlib.import_module("timm")
    finally:
        if key == "pyctorch":
            from pyctorch.as_torch import uninstall_as_torch
            uninstall_as_torch()
        finder.uninstall()
        # drop the copy's timm and torchvision modules (and, for pyctorch, leftover torch aliases); torch modules
        # the real torch imported meanwhile stay: importing one twice registers its operators twice
        for name in [n for n in sys.modules if _owned(n)]:
            if key == "pyctorch" or not (name == "torch" or name.startswith("torch.")):
                del sys.modules[name]
        sys.modules.update(saved)
    return _COPIES[key]
