"""A working subset of torchvision, served as `torchvision` when none is installed.

See Note [The torchvision subset] in pyctorch/_vision_finder.py. What it holds: `transforms` (the
common classes and `functional`, on tensors and PIL images), `datasets` (ImageFolder/DatasetFolder,
CIFAR10/100, MNIST/FashionMNIST/KMNIST from local files or a download, FakeData), `models` (the
ResNet family and VGG with their weights enums and the model registry), `ops` (FrozenBatchNorm2d and
the box operations) and `utils` (make_grid, save_image). Not here: the other models, `io`,
`transforms.v2` and the compiled operators (roi_align...).
"""
from . import datasets, models, ops, transforms, utils

__version__ = "0.28.0"  # the torchvision release that goes with torch 2.13

_image_backend = "PIL"


def get_image_backend():
    return _image_backend


def set_image_backend(backend):
    global _image_backend
    if backend not in ("PIL", "accimage"):
        raise ValueError(f"Invalid backend '{backend}'. Options are 'PIL' and 'accimage'")
    if backend == "accimage":
        raise ValueError("pyctorch's torchvision subset supports only the PIL image backend")
    _image_backend = backend
