"""torchvision.models' ResNet family (He et al. 2015; ResNeXt, Wide ResNet), module for module and in the same
creation and initialisation order as torchvision's, so that a seeded model has torchvision's weights and its
state dict loads torchvision's checkpoints."""
import torch
import torch.nn as nn

from ._api import WeightsEnum, classes_from, classification_weights, load_weights, register_model

__all__ = ["ResNet", "BasicBlock", "Bottleneck", "resnet18", "resnet34", "resnet50", "resnet101", "resnet152",
           "resnext50_32x4d", "resnext101_32x8d", "wide_resnet50_2", "wide_resnet101_2", "ResNet18_Weights",
           "ResNet34_Weights", "ResNet50_Weights", "ResNet101_Weights", "ResNet152_Weights",
           "ResNeXt50_32X4D_Weights", "ResNeXt101_32X8D_Weights", "Wide_ResNet50_2_Weights",
           "Wide_ResNet101_2_Weights"]


def conv3x3(in_planes, out_planes, stride=1, groups=1, dilation=1):
    return nn.Conv2d(in_planes, out_planes, kernel_size=3, stride=stride, padding=dilation, groups=groups,
                     bias=False, dilation=dilation)


def conv1x1(in_planes, out_planes, stride=1):
    return nn.Conv2d(in_planes, out_planes, kernel_size=1, stride=stride, bias=False)


class BasicBlock(nn.Module):
    """Two 3x3 convolutions with a residual connection (ResNet-18/34)."""
    expansion = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None, groups=1, base_width=64, dilation=1,
                 norm_layer=None):
        super().__init__()
        norm_layer = norm_layer or nn.BatchNorm2d
        if groups != 1 or base_width != 64:
            raise ValueError("BasicBlock only supports groups=1 and base_width=64")
        if dilation > 1:
            raise NotImplementedError("Dilation > 1 not supported in BasicBlock")
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn1 = norm_layer(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = norm_layer(planes)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += x if self.downsample is None else self.downsample(x)
        return self.relu(out)


class Bottleneck(nn.Module):
    """1x1 reduce, 3x3 (stride, groups), 1x1 expand by 4, with a residual connection (ResNet-50 and up)."""
    expansion = 4

    def __init__(self, inplanes, planes, stride=1, downsample=None, groups=1, base_width=64, dilation=1,
                 norm_layer=None):
        super().__init__()
        norm_layer = norm_layer or nn.BatchNorm2d
        width = int(planes * (base_width / 64.0)) * groups
        self.conv1 = conv1x1(inplanes, width)
        self.bn1 = norm_layer(width)
        self.conv2 = conv3x3(width, width, stride, groups, dilation)
        self.bn2 = norm_layer(width)
        self.conv3 = conv1x1(width, planes * self.expansion)
        self.bn3 = norm_layer(planes * self.expansion)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        out += x if self.downsample is None else self.downsample(x)
        return self.relu(out)


class ResNet(nn.Module):
    def __init__(self, block, layers, num_classes=1000, zero_init_residual=False, groups=1, width_per_group=64,
                 replace_stride_with_dilation=None, norm_layer=None):
        super().__init__()
        self._norm_layer = norm_layer = norm_layer or nn.BatchNorm2d
        self.inplanes, self.dilation = 64, 1
        replace_stride_with_dilation = replace_stride_with_dilation or [False, False, False]
        if len(replace_stride_with_dilation) != 3:
            raise ValueError("replace_stride_with_dilation should be None or a 3-element tuple, got "
                             f"{replace_stride_with_dilation}")
        self.groups, self.base_width = groups, width_per_group
        self.conv1 = nn.Conv2d(3, self.inplanes, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = norm_layer(self.inplanes)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(block, 64, layers[0])
        self.layer2 = self._make_layer(block, 128, layers[1], stride=2, dilate=replace_stride_with_dilation[0])
        self.layer3 = self._make_layer(block, 256, layers[2], stride=2, dilate=replace_stride_with_dilation[1])
        self.layer4 = self._make_layer(block, 512, layers[3], stride=2, dilate=replace_stride_with_dilation[2])
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512 * block.expansion, num_classes)
        for m in self.modules():  # after construction, in module order: the RNG stream of torchvision
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)
        if zero_init_residual:  # each block starts as the identity
            for m in self.modules():
                last = m.bn3 if isinstance(m, Bottleneck) else m.bn2 if isinstance(m, BasicBlock) else None
                if last is not None and last.weight is not None:
                    nn.init.constant_(last.weight, 0)

    def _make_layer(self, block, planes, blocks, stride=1, dilate=False):
        norm_layer, previous_dilation, downsample = self._norm_layer, self.dilation, None
        if dilate:
            self.dilation *= stride
            stride = 1
        if stride != 1 or self.inplanes != planes * block.expansion:
            downsample = nn.Sequential(conv1x1(self.inplanes, planes * block.expansion, stride),
                                       norm_layer(planes * block.expansion))
        layers = [block(self.inplanes, planes, stride, downsample, self.groups, self.base_width, previous_dilation,
                        norm_layer)]
        self.inplanes = planes * block.expansion
        for _ in range(1, blocks):
            layers.append(block(self.inplanes, planes, groups=self.groups, base_width=self.base_width,
                                dilation=self.dilation, norm_layer=norm_layer))
        return nn.Sequential(*layers)

    def _forward_impl(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))

    def forward(self, x):
        return self._forward_impl(x)


_URL = "https://download.pytorch.org/models/"


class ResNet18_Weights(WeightsEnum):
    IMAGENET1K_V1 = classification_weights(_URL + "resnet18-f37072fd.pth", num_params=11689512)
    DEFAULT = IMAGENET1K_V1


class ResNet34_Weights(WeightsEnum):
    IMAGENET1K_V1 = classification_weights(_URL + "resnet34-b627a593.pth", num_params=21797672)
    DEFAULT = IMAGENET1K_V1


class ResNet50_Weights(WeightsEnum):
    IMAGENET1K_V1 = classification_weights(_URL + "resnet50-0676ba61.pth", num_params=25557032)
    IMAGENET1K_V2 = classification_weights(_URL + "resnet50-11ad3fa6.pth", resize_size=232, num_params=25557032)
    DEFAULT = IMAGENET1K_V2


class ResNet101_Weights(WeightsEnum):
    IMAGENET1K_V1 = classification_weights(_URL + "resnet101-63fe2227.pth", num_params=44549160)
    IMAGENET1K_V2 = classification_weights(_URL + "resnet101-cd907fc2.pth", resize_size=232, num_params=44549160)
    DEFAULT = IMAGENET1K_V2


class ResNet152_Weights(WeightsEnum):
    IMAGENET1K_V1 = classification_weights(_URL + "resnet152-394f9c45.pth", num_params=60192808)
    IMAGENET1K_V2 = classification_weights(_URL + "resnet152-f82ba261.pth", resize_size=232, num_params=60192808)
    DEFAULT = IMAGENET1K_V2


class ResNeXt50_32X4D_Weights(WeightsEnum):
    IMAGENET1K_V1 = classification_weights(_URL + "resnext50_32x4d-7cdf4587.pth", num_params=25028904)
    IMAGENET1K_V2 = classification_weights(_URL + "resnext50_32x4d-1a0047aa.pth", resize_size=232,
                                           num_params=25028904)
    DEFAULT = IMAGENET1K_V2


class ResNeXt101_32X8D_Weights(WeightsEnum):
    IMAGENET1K_V1 = classification_weights(_URL + "resnext101_32x8d-8ba56ff5.pth", num_params=88791336)
    IMAGENET1K_V2 = classification_weights(_URL + "resnext101_32x8d-110c445d.pth", resize_size=232,
                                           num_params=88791336)
    DEFAULT = IMAGENET1K_V2


class Wide_ResNet50_2_Weights(WeightsEnum):
    IMAGENET1K_V1 = classification_weights(_URL + "wide_resnet50_2-95faca4d.pth", num_params=68883240)
    IMAGENET1K_V2 = classification_weights(_URL + "wide_resnet50_2-9ba9bcbe.pth", resize_size=232,
                                           num_params=68883240)
    DEFAULT = IMAGENET1K_V2


class Wide_ResNet101_2_Weights(WeightsEnum):
    IMAGENET1K_V1 = classification_weights(_URL + "wide_resnet101_2-32ee1156.pth", num_params=126886696)
    IMAGENET1K_V2 = classification_weights(_URL + "wide_resnet101_2-d733dc28.pth", resize_size=232,
                                           num_params=126886696)
    DEFAULT = IMAGENET1K_V2


def _resnet(block, layers, weights, progress, kwargs):
    model = ResNet(block, layers, **classes_from(weights, kwargs))
    return load_weights(model, weights, progress)


def _builder(name, block, layers, weights_enum, legacy, **fixed):
    """A builder taking weights= (or the legacy pretrained=True) like torchvision's."""
    def build(*, weights=None, progress=True, **kwargs):
        if kwargs.pop("pretrained", False):
            weights = weights or weights_enum[legacy]
        weights = weights_enum.verify(weights)
        return _resnet(block, layers, weights, progress, {**fixed, **kwargs})
    build.__name__ = build.__qualname__ = name
    build.__doc__ = f"torchvision's {name} (weights: {weights_enum.__name__})."
    build.__annotations__ = {"weights": weights_enum}
    return register_model(name)(build)


resnet18 = _builder("resnet18", BasicBlock, [2, 2, 2, 2], ResNet18_Weights, "IMAGENET1K_V1")
resnet34 = _builder("resnet34", BasicBlock, [3, 4, 6, 3], ResNet34_Weights, "IMAGENET1K_V1")
resnet50 = _builder("resnet50", Bottleneck, [3, 4, 6, 3], ResNet50_Weights, "IMAGENET1K_V1")
resnet101 = _builder("resnet101", Bottleneck, [3, 4, 23, 3], ResNet101_Weights, "IMAGENET1K_V1")
resnet152 = _builder("resnet152", Bottleneck, [3, 8, 36, 3], ResNet152_Weights, "IMAGENET1K_V1")
resnext50_32x4d = _builder("resnext50_32x4d", Bottleneck, [3, 4, 6, 3], ResNeXt50_32X4D_Weights, "IMAGENET1K_V1",
                           groups=32, width_per_group=4)
resnext101_32x8d = _builder("resnext101_32x8d", Bottleneck, [3, 4, 23, 3], ResNeXt101_32X8D_Weights,
                            "IMAGENET1K_V1", groups=32, width_per_group=8)
wide_resnet50_2 = _builder("wide_resnet50_2", Bottleneck, [3, 4, 6, 3], Wide_ResNet50_2_Weights, "IMAGENET1K_V1",
                           width_per_group=128)
wide_resnet101_2 = _builder("wide_resnet101_2", Bottleneck, [3, 4, 23, 3], Wide_ResNet101_2_Weights,
                            "IMAGENET1K_V1", width_per_group=128)
