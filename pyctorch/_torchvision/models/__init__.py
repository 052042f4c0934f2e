"""torchvision.models (pyctorch's subset): the ResNet family and VGG, with their weights enums, and the model
registry (get_model, get_model_weights, get_weight, list_models). Pretrained weights download from torchvision's
URLs through torch.hub."""
from ._api import Weights, WeightsEnum, get_model, get_model_builder, get_model_weights, get_weight, list_models
from .resnet import *  # noqa: F401,F403
from .vgg import *  # noqa: F401,F403
