"""MNIST, FashionMNIST and KMNIST from the IDX files of root/<ClassName>/raw (local, or downloaded)."""
import os

import numpy as np
import torch

from .utils import download_and_extract_archive
from .vision import VisionDataset

# IDX element type codes -> numpy big-endian types (the format is big-endian)
_IDX_TYPES = {8: ">u1", 9: ">i1", 11: ">i2", 12: ">i4", 13: ">f4", 14: ">f8"}


def read_idx_file(path):
    """An IDX file ("magic" 0 0 type ndim, then ndim big-endian sizes, then the data) as a tensor."""
    with open(path, "rb") as f:
        raw = f.read()
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] not in _IDX_TYPES or not 1 <= raw[3] <= 3:
        raise RuntimeError(f"{path} is not an IDX file")
    ndim = raw[3]
    shape = tuple(int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim))
    array = np.frombuffer(raw, dtype=_IDX_TYPES[raw[2]], offset=4 + 4 * ndim)
    if array.size != int(np.prod(shape)):
        raise RuntimeError(f"{path}: {array.size} values for a shape of {shape}")
    return torch.from_numpy(array.astype(array.dtype.newbyteorder("=")).reshape(shape))


class MNIST(VisionDataset):
    mirrors = ["https://ossci-datasets.s3.amazonaws.com/mnist/", "http://yann.lecun.com/exdb/mnist/"]
    resources = [("train-images-idx3-ubyte.gz", "f68b3c2dcbeaaa9fbdd348bbdeb94873"),
                 ("train-labels-idx1-ubyte.gz", "d53e105ee54ea40749a09fcbcd1e9432"),
                 ("t10k-images-idx3-ubyte.gz", "9fb629c4189551a2d022fa330f9573f3"),
                 ("t10k-labels-idx1-ubyte.gz", "ec29112dd5afa0611ce80d1b7f02629c")]
    classes = ["0 - zero", "1 - one", "2 - two", "3 - three", "4 - four", "5 - five", "6 - six", "7 - seven",
               "8 - eight", "9 - nine"]

    def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.train = train
        if download:
            self.download()
        if not self._check_exists():
            raise RuntimeError("Dataset not found. You can use download=True to download it")
        prefix = "train" if train else "t10k"
        self.data = read_idx_file(os.path.join(self.raw_folder, f"{prefix}-images-idx3-ubyte"))
        self.targets = read_idx_file(os.path.join(self.raw_folder, f"{prefix}-labels-idx1-ubyte")).long()

    @property
    def raw_folder(self):
        return os.path.join(self.root, self.__class__.__name__, "raw")

    @property
    def class_to_idx(self):
        return {name: i for i, name in enumerate(self.classes)}

    def _check_exists(self):
        return all(os.path.isfile(os.path.join(self.raw_folder, os.path.splitext(name)[0]))
                   for name, _ in self.resources)

    def download(self):
        if self._check_exists():
            return
        os.makedirs(self.raw_folder, exist_ok=True)
        for filename, md5 in self.resources:
            errors = []
            for mirror in self.mirrors:
                try:
                    download_and_extract_archive(mirror + filename, self.raw_folder, filename=filename, md5=md5)
                    break
                except Exception as e:  # the next mirror may work; all failures are reported below
                    errors.append(f"{mirror}: {e}")
            else:
                raise RuntimeError(f"Error downloading {filename}:\n" + "\n".join(errors))

    def __getitem__(self, index):
        from PIL import Image
        img, target = self.data[index], int(self.targets[index])
        img = Image.fromarray(img.numpy())  # uint8 [H, W]: mode "L"
        if self.transforms is not None:  # transform and target_transform (vision.StandardTransform)
            img, target = self.transforms(img, target)
        return img, target

    def __len__(self):
        return len(self.data)

    def extra_repr(self):
        return f"Split: {'Train' if self.train is True else 'Test'}"


class FashionMNIST(MNIST):
    mirrors = ["http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/"]
    resources = [("train-images-idx3-ubyte.gz", "8d4fb7e6c68d591d4c3dfef9ec88bf0d"),
                 ("train-labels-idx1-ubyte.gz", "25c81989df183df01b3e8a0aad5dffbe"),
                 ("t10k-images-idx3-ubyte.gz", "bef4ecab320f06d8554ea6380940ec79"),
                 ("t10k-labels-idx1-ubyte.gz", "bb300cfdad3c16e7a12a480ee83cd310")]
    classes = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag",
               "Ankle boot"]


class KMNIST(MNIST):
    mirrors = ["http://codh.rois.ac.jp/kmnist/dataset/kmnist/"]
    resources = [("train-images-idx3-ubyte.gz", "bdb82020997e1d708af4cf47b453dcf7"),
                 ("train-labels-idx1-ubyte.gz", "e144d726b3acfaa3e44228e80efcd344"),
                 ("t10k-images-idx3-ubyte.gz", "5c965bf0a639b31b8f53240b1b52f4d7"),
                 ("t10k-labels-idx1-ubyte.gz", "7320c461ea6c1c855c0b718fb2a4b134")]
    classes = ["o", "ki", "su", "tsu", "na", "ha", "ma", "ya", "re", "wo"]
