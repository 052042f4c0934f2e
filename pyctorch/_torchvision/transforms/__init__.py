"""torchvision.transforms (pyctorch's subset: Note [The torchvision subset] in pyctorch/_vision_finder.py)."""
from . import functional
from .transforms import *  # noqa: F401,F403
from .transforms import __all__
