"""torchvision.models' weights API: Weights, WeightsEnum, get_model/get_model_weights/list_models, and the
ImageClassification preset the weights name as their transforms."""
import enum
import functools
from dataclasses import dataclass, field

import torch

from ..transforms import functional as F

_MODELS = {}


@dataclass(eq=False)
class Weights:
    """Where a set of pretrained weights is (url), the preprocessing it expects, and its metadata."""
    url: str
    transforms: object
    meta: dict = field(default_factory=dict)

    def __eq__(self, other):
        if not isinstance(other, Weights):
            return NotImplemented
        return self.url == other.url and self.meta == other.meta

    def __hash__(self):
        return hash(self.url)


class WeightsEnum(enum.Enum):
    """An enum of Weights; members read through to their Weights (url, transforms, meta)."""

    @classmethod
    def verify(cls, obj):
        if obj is None:
            return None
        if isinstance(obj, str):
            obj = cls[obj.replace(cls.__name__ + ".", "")]
        elif not isinstance(obj, cls):
            raise TypeError(f"Invalid Weight class provided; expected {cls.__name__} but received "
                            f"{obj.__class__.__name__}.")
        return obj

    def get_state_dict(self, *args, **kwargs):
        return torch.hub.load_state_dict_from_url(self.url, *args, **kwargs)

    def __repr__(self):
        return f"{self.__class__.__name__}.{self._name_}"

    def __getattr__(self, name):
        if name in ("url", "transforms", "meta"):
            return getattr(self.value, name)
        raise AttributeError(f"{self.__class__.__name__!r} object has no attribute {name!r}")


def weights_enum(name, module, versions, default):
    """The WeightsEnum subclass `name` (of `module`) with members {version: Weights} and DEFAULT an alias of one."""
    members = dict(versions)
    members["DEFAULT"] = members[default]
    return WeightsEnum(name, members, module=module, qualname=name)


_URL = "https://download.pytorch.org/models/"


def imagenet_weights(name, module, num_params, *files):
    """The WeightsEnum of a classification net's ImageNet checkpoints (files under torchvision's URL): IMAGENET1K_V1
    from the first, V2 (evaluated after a resize to 232) from a second; DEFAULT the last."""
    versions = {"IMAGENET1K_V1": classification_weights(_URL + files[0], num_params=num_params)}
    if len(files) > 1:
        versions["IMAGENET1K_V2"] = classification_weights(_URL + files[1], resize_size=232, num_params=num_params)
    return weights_enum(name, module, versions, default=list(versions)[-1])


def register_model(name=None):
    def wrap(fn):
        _MODELS[name or fn.__name__] = fn
        return fn
    return wrap


def list_models(module=None):
    return sorted(_MODELS)


def get_model_builder(name):
    try:
        return _MODELS[name.lower()]
    except KeyError:
        raise ValueError(f"Unknown model {name}") from None


def get_model(name, **config):
    return get_model_builder(name)(**config)


def get_model_weights(name):
    builder = get_model_builder(name) if isinstance(name, str) else name
    return builder.__annotations__["weights"]


def get_weight(name):
    enum_name, member = name.split(".")
    for builder in _MODELS.values():
        weights = builder.__annotations__.get("weights")
        if weights is not None and weights.__name__ == enum_name:
            return weights[member]
    raise ValueError(f"Unknown weights enum name: {name}")


def builder(name, weights_cls, construct):
    """A model builder taking weights= (or the legacy pretrained=True, meaning IMAGENET1K_V1) as torchvision's:
    construct(weights, kwargs) makes the model, the weights then load into it; registered under `name`."""
    def build(*, weights=None, progress=True, **kwargs):
        if kwargs.pop("pretrained", False):
            weights = weights or weights_cls.IMAGENET1K_V1
        weights = weights_cls.verify(weights)
        return load_weights(construct(weights, classes_from(weights, kwargs)), weights, progress)
    build.__name__ = build.__qualname__ = name
    build.__doc__ = f"torchvision's {name} (weights: {weights_cls.__name__})."
    build.__annotations__ = {"weights": weights_cls}
    return register_model(name)(build)


def load_weights(model, weights, progress):
    """Load `weights` (a WeightsEnum member or None) into model; checks the class count first."""
    if weights is not None:
        model.load_state_dict(weights.get_state_dict(progress=progress, check_hash=True))
    return model


def init_weights(model, linear_std=None):
    """torchvision's initialisation of its classification nets, module by module in module order (the RNG stream
    of torchvision): convolutions Kaiming-normal (fan_out, relu) with zero biases, batch/group norms 1 and 0, and,
    when linear_std is given, linear layers normal(0, linear_std) with zero biases."""
    import torch.nn as nn
    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            if m.bias is not None:
                nn.init.constant_(m.bias, 0)
        elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
            nn.init.constant_(m.weight, 1)
            nn.init.constant_(m.bias, 0)
        elif isinstance(m, nn.Linear) and linear_std is not None:
            nn.init.normal_(m.weight, 0, linear_std)
            nn.init.constant_(m.bias, 0)


def classes_from(weights, kwargs):
    """num_classes as the weights fix it (an explicit other value is an error, as in torchvision)."""
    if weights is not None and "num_classes" in weights.meta:
        expected = weights.meta["num_classes"]
        if kwargs.get("num_classes", expected) != expected:
            raise ValueError(f"The parameter 'num_classes' expected value {expected} but got "
                             f"{kwargs['num_classes']} instead.")
        kwargs["num_classes"] = expected
    return kwargs


class ImageClassification(torch.nn.Module):
    """The evaluation preset of classification weights: resize, center crop, to float, normalize."""

    def __init__(self, *, crop_size, resize_size=256, mean=(0.485, 0.456, 0.406), std=(0.229, 0.224, 0.225),
                 interpolation=F.InterpolationMode.BILINEAR, antialias=True):
        super().__init__()
        self.crop_size, self.resize_size = [crop_size], [resize_size]
        self.mean, self.std = list(mean), list(std)
        self.interpolation, self.antialias = interpolation, antialias

    def forward(self, img):
        img = F.resize(img, self.resize_size, interpolation=self.interpolation, antialias=self.antialias)
        img = F.center_crop(img, self.crop_size)
        if not isinstance(img, torch.Tensor):
            img = F.pil_to_tensor(img)
        img = F.convert_image_dtype(img, torch.float)
        return F.normalize(img, mean=self.mean, std=self.std)


def classification_weights(url, crop_size=224, resize_size=256, **meta):
    return Weights(url=url, transforms=functools.partial(ImageClassification, crop_size=crop_size,
                                                         resize_size=resize_size),
                   meta={"num_classes": 1000, "min_size": (1, 1), **meta})
