"""torchvision.datasets (pyctorch's subset): folders of images, CIFAR, the MNIST family, FakeData."""
from .cifar import CIFAR10, CIFAR100
from .fakedata import FakeData
from .folder import DatasetFolder, ImageFolder
from .mnist import KMNIST, MNIST, FashionMNIST
from .vision import VisionDataset

__all__ = ["CIFAR10", "CIFAR100", "DatasetFolder", "FakeData", "FashionMNIST", "ImageFolder", "KMNIST", "MNIST",
           "VisionDataset"]
