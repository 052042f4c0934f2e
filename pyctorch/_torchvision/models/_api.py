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
            raise TypeError(f"Invalid Weight class provided; expected {cls.__name__} but received {obj.__class__.__name__}.")
        return obj

    def get_state_dict(self, *args, **kwargs):
        return torch.hub.load_state_dict_from_url(self.url, *args, **kwargs)

    def __repr__(self):
        return f"{self.__class__.__name__}.{self._name_}"

    def __getattr__(self, name):
        if name in ("url", "transforms", "meta"):
            return getattr(self.value, name)
        raise AttributeError(f"{self.__class__.__name__!r} object has no attribute {name!r}")


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


def load_weights(model, weights, progress):
    """Load `weights` (a WeightsEnum member or None) into model; checks the class count first."""
    if weights is not None:
        model.load_state_dict(weights.get_state_dict(progress=progress, check_hash=True))
    return model


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
