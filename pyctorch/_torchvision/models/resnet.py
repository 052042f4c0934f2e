"""torchvision.models' ResNet family (He et al. 2015; ResNeXt, Wide ResNet), module for module and in the same
creation and initialisation order as torchvision's, so that a seeded model has torchvision's weights and its
state dict loads torchvision's checkpoints."""
import torch
import torch.nn as nn

from ._api import builder, imagenet_weights, init_weights

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
        init_weights(self)  # after construction, in module order: the RNG stream of torchvision
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


ResNet18_Weights = imagenet_weights("ResNet18_Weights", __name__, 11689512, "resnet18-f37072fd.pth")

ResNet34_Weights = imagenet_weights("ResNet34_Weights", __name__, 21797672, "resnet34-b627a593.pth")

ResNet50_Weights = imagenet_weights("ResNet50_Weights", __name__, 25557032,
                                    "resnet50-0676ba61.pth", "resnet50-11ad3fa6.pth")

ResNet101_Weights = imagenet_weights("ResNet101_Weights", __name__, 44549160,
                                     "resnet101-63fe2227.pth", "resnet101-cd907fc2.pth")

ResNet152_Weights = imagenet_weights("ResNet152_Weights", __name__, 60192808,
                                     "resnet152-394f9c45.pth", "resnet152-f82ba261.pth")

ResNeXt50_32X4D_Weights = imagenet_weights("ResNeXt50_32X4D_Weights", __name__, 25028904,
                                           "resnext50_32x4d-7cdf4587.pth", "resnext50_32x4d-1a0047aa.pth")

ResNeXt101_32X8D_Weights = imagenet_weights("ResNeXt101_32X8D_Weights", __name__, 88791336,
                                            "resnext101_32x8d-8ba56ff5.pth", "resnext101_32x8d-110c445d.pth")

Wide_ResNet50_2_Weights = imagenet_weights("Wide_ResNet50_2_Weights", __name__, 68883240,
                                           "wide_resnet50_2-95faca4d.pth", "wide_resnet50_2-9ba9bcbe.pth")

Wide_ResNet101_2_Weights = imagenet_weights("Wide_ResNet101_2_Weights", __name__, 126886696,
                                            "wide_resnet101_2-32ee1156.pth", "wide_resnet101_2-d733dc28.pth")


def _builder(name, block, layers, weights_cls, **fixed):
    return builder(name, weights_cls, lambda weights, kwargs: ResNet(block, layers, **{**fixed, **kwargs}))


resnet18 = _builder("resnet18", BasicBlock, [2, 2, 2, 2], ResNet18_Weights)
resnet34 = _builder("resnet34", BasicBlock, [3, 4, 6, 3], ResNet34_Weights)
resnet50 = _builder("resnet50", Bottleneck, [3, 4, 6, 3], ResNet50_Weights)
resnet101 = _builder("resnet101", Bottleneck, [3, 4, 23, 3], ResNet101_Weights)
resnet152 = _builder("resnet152", Bottleneck, [3, 8, 36, 3], ResNet152_Weights)
resnext50_32x4d = _builder("resnext50_32x4d", Bottleneck, [3, 4, 6, 3], ResNeXt50_32X4D_Weights,
                           groups=32, width_per_group=4)
resnext101_32x8d = _builder("resnext101_32x8d", Bottleneck, [3, 4, 23, 3], ResNeXt101_32X8D_Weights,
                            groups=32, width_per_group=8)
wide_resnet50_2 = _builder("wide_resnet50_2", Bottleneck, [3, 4, 6, 3], Wide_ResNet50_2_Weights,
                           width_per_group=128)
wide_resnet101_2 = _builder("wide_resnet101_2", Bottleneck, [3, 4, 23, 3], Wide_ResNet101_2_Weights,
                            width_per_group=128)
