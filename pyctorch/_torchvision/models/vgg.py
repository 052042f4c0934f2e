"""torchvision.models' VGG (Simonyan & Zisserman 2014), with and without batch norm, module for module and in
torchvision's creation and initialisation order."""
import torch
import torch.nn as nn

from ._api import builder, imagenet_weights, init_weights as _init

__all__ = ["VGG", "vgg11", "vgg11_bn", "vgg13", "vgg13_bn", "vgg16", "vgg16_bn", "vgg19", "vgg19_bn",
           "VGG11_Weights", "VGG11_BN_Weights", "VGG13_Weights", "VGG13_BN_Weights", "VGG16_Weights",
           "VGG16_BN_Weights", "VGG19_Weights", "VGG19_BN_Weights"]

# channels of each 3x3 convolution, "M" a 2x2 max pool
CONFIGS = {
    "A": [64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    "B": [64, 64, "M", 128, 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    "D": [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"],
    "E": [64, 64, "M", 128, 128, "M", 256, 256, 256, 256, "M", 512, 512, 512, 512, "M", 512, 512, 512, 512, "M"],
}


class VGG(nn.Module):
    def __init__(self, features, num_classes=1000, init_weights=True, dropout=0.5):
        super().__init__()
        self.features = features
        self.avgpool = nn.AdaptiveAvgPool2d((7, 7))
        self.classifier = nn.Sequential(nn.Linear(512 * 7 * 7, 4096), nn.ReLU(True), nn.Dropout(p=dropout),
                                        nn.Linear(4096, 4096), nn.ReLU(True), nn.Dropout(p=dropout),
                                        nn.Linear(4096, num_classes))
        if init_weights:
            _init(self, linear_std=0.01)

    def forward(self, x):
        return self.classifier(torch.flatten(self.avgpool(self.features(x)), 1))


def make_layers(cfg, batch_norm=False):
    layers, in_channels = [], 3
    for v in cfg:
        if v == "M":
            layers.append(nn.MaxPool2d(kernel_size=2, stride=2))
            continue
        conv = nn.Conv2d(in_channels, v, kernel_size=3, padding=1)
        layers += [conv, nn.BatchNorm2d(v), nn.ReLU(inplace=True)] if batch_norm else [conv, nn.ReLU(inplace=True)]
        in_channels = v
    return nn.Sequential(*layers)


VGG11_Weights = imagenet_weights("VGG11_Weights", __name__, 132863336, "vgg11-8a719046.pth")

VGG11_BN_Weights = imagenet_weights("VGG11_BN_Weights", __name__, 132868840, "vgg11_bn-6002323d.pth")

VGG13_Weights = imagenet_weights("VGG13_Weights", __name__, 133047848, "vgg13-19584684.pth")

VGG13_BN_Weights = imagenet_weights("VGG13_BN_Weights", __name__, 133053736, "vgg13_bn-abd245e5.pth")

VGG16_Weights = imagenet_weights("VGG16_Weights", __name__, 138357544, "vgg16-397923af.pth")

VGG16_BN_Weights = imagenet_weights("VGG16_BN_Weights", __name__, 138365992, "vgg16_bn-6c64b313.pth")

VGG19_Weights = imagenet_weights("VGG19_Weights", __name__, 143667240, "vgg19-dcbb9e9d.pth")

VGG19_BN_Weights = imagenet_weights("VGG19_BN_Weights", __name__, 143678248, "vgg19_bn-c79401a0.pth")


def _builder(name, cfg, batch_norm, weights_cls):
    def construct(weights, kwargs):
        if weights is not None:  # loaded weights replace the initialisation: skip it
            kwargs = dict(kwargs, init_weights=False)
        return VGG(make_layers(CONFIGS[cfg], batch_norm=batch_norm), **kwargs)
    return builder(name, weights_cls, construct)


vgg11 = _builder("vgg11", "A", False, VGG11_Weights)
vgg11_bn = _builder("vgg11_bn", "A", True, VGG11_BN_Weights)
vgg13 = _builder("vgg13", "B", False, VGG13_Weights)
vgg13_bn = _builder("vgg13_bn", "B", True, VGG13_BN_Weights)
vgg16 = _builder("vgg16", "D", False, VGG16_Weights)
vgg16_bn = _builder("vgg16_bn", "D", True, VGG16_BN_Weights)
vgg19 = _builder("vgg19", "E", False, VGG19_Weights)
vgg19_bn = _builder("vgg19_bn", "E", True, VGG19_BN_Weights)
