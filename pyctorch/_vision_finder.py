"""Serve `import torchvision` from pyctorch's own subset when no torchvision is installed.

Note [The torchvision subset]
timm (and many training scripts) import torchvision at module level: transforms, datasets,
ops.misc.FrozenBatchNorm2d. torchvision's wheels carry C++ operators built against libtorch, so a
real torchvision cannot load beside pyctorch (nor, here, beside the CPU torch 2.13 that is our
test oracle). pyctorch therefore ships a working subset, `pyctorch/_torchvision/`, written only
against the public torch API (`import torch`), so the same files run on pyctorch under the alias
and on real torch (which is how its tests compare the two).

It is opt-in (install_as_torch(torchvision=True), `python -m pyctorch.as_torch --torchvision`,
PYCTORCH_TORCHVISION=1): libraries with optional torchvision support take a findable torchvision
for the whole package (transformers imports torchvision.io and transforms.v2 once find_spec answers,
torchmetrics torchvision.models), so serving the subset to every process would break them.

This finder answers `torchvision` with that folder, loaded under the torchvision names (relative
imports inside then resolve within `torchvision`). It answers only when no other `torchvision` is
found on sys.path: an installed torchvision keeps priority.
The file imports nothing but the standard library, so a process running the real torch can load
it by path (tests/libraries/lib_compare.py does) without importing pyctorch.
"""
import importlib.abc
import importlib.util
import os
import sys

NAME = "torchvision"
FOLDER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_torchvision")


class VisionSubsetFinder(importlib.abc.MetaPathFinder):
    """Answers `import torchvision` with pyctorch/_torchvision/ (Note [The torchvision subset]).

    It sits at the end of sys.meta_path, so the ordinary path finders look first and an installed
    torchvision wins. Submodules (`torchvision.transforms`...) need nothing from it: the package's
    __path__ is the subset's folder, which the path finders then search as for any package.
    """

    def find_spec(self, fullname, path=None, target=None):
        if fullname != NAME:
            return None
        return importlib.util.spec_from_file_location(
            NAME, os.path.join(FOLDER, "__init__.py"), submodule_search_locations=[FOLDER])


def install():
    """Put the finder on sys.meta_path once; returns it."""
    for finder in sys.meta_path:
        if isinstance(finder, VisionSubsetFinder) or type(finder).__name__ == "VisionSubsetFinder":
            return finder
    finder = VisionSubsetFinder()
    sys.meta_path.append(finder)
    return finder


def uninstall():
    """Drop the finder and the torchvision modules it loaded (they hold the torch they were imported with)."""
    sys.meta_path[:] = [f for f in sys.meta_path if type(f).__name__ != "VisionSubsetFinder"]
    for name, module in list(sys.modules.items()):
        if (name == NAME or name.startswith(NAME + ".")) and \
                (getattr(module, "__file__", None) or "").startswith(FOLDER + os.sep):
            del sys.modules[name]
