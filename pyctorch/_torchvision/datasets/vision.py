"""VisionDataset: the root folder and the transform arguments every torchvision dataset shares."""
import os

import torch.utils.data as data


class StandardTransform:
    """`transform` on the input and `target_transform` on the target, as one (input, target) callable."""

    def __init__(self, transform=None, target_transform=None):
        self.transform, self.target_transform = transform, target_transform

    def __call__(self, input, target):
        if self.transform is not None:
            input = self.transform(input)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return input, target


class VisionDataset(data.Dataset):
    _repr_indent = 4

    def __init__(self, root=None, transforms=None, transform=None, target_transform=None):
        if isinstance(root, str):
            root = os.path.expanduser(root)
        self.root = root
        has_separate = transform is not None or target_transform is not None
        if transforms is not None and has_separate:
            raise ValueError("Only transforms or transform/target_transform can be passed as argument")
        self.transform, self.target_transform = transform, target_transform
        self.transforms = StandardTransform(transform, target_transform) if has_separate else transforms

    def __getitem__(self, index):
        raise NotImplementedError

    def __len__(self):
        raise NotImplementedError

    def extra_repr(self):
        return ""

    def __repr__(self):
        lines = [f"Number of datapoints: {self.__len__()}"]
        if self.root is not None:
            lines.append(f"Root location: {self.root}")
        lines += self.extra_repr().splitlines()
        if self.transforms is not None:
            lines += repr(self.transforms).splitlines()
        body = [" " * self._repr_indent + line for line in lines]
        return "\n".join(["Dataset " + self.__class__.__name__] + body)
