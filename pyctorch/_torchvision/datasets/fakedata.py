"""FakeData: random images from a per-index seed, without touching the global generator."""
import torch

from .. import transforms
from .vision import VisionDataset


class FakeData(VisionDataset):
    def __init__(self, size=1000, image_size=(3, 224, 224), num_classes=10, transform=None, target_transform=None,
                 random_offset=0):
        super().__init__(None, transform=transform, target_transform=target_transform)
        self.size, self.num_classes, self.image_size, self.random_offset = size, num_classes, image_size, random_offset

    def __getitem__(self, index):
        if index >= len(self):
            raise IndexError(f"{self.__class__.__name__} index out of range")
        # each sample draws from the global generator under its own seed, which is then restored
        state = torch.get_rng_state()
        torch.manual_seed(index + self.random_offset)
        img = torch.randn(*self.image_size)
        target = torch.randint(0, self.num_classes, size=(1,), dtype=torch.long)[0]
        torch.set_rng_state(state)
        img = transforms.ToPILImage()(img)
        if self.transforms is not None:  # transform and target_transform (vision.StandardTransform)
            img, target = self.transforms(img, target)
        return img, target.item()

    def __len__(self):
        return self.size
