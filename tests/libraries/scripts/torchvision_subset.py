"""pyctorch's torchvision subset (Note [The torchvision subset]): transforms on tensors and PIL images, datasets from
local files and a file:// download, ops and utils. Checks against numpy/PIL formulas assert in every run; the printed
digests are compared between pyctorch (under the alias) and the real torch running the same subset."""
import gzip
import hashlib
import os
import pickle
import random
import shutil
import tarfile
import tempfile

import numpy as np
import torch
import torchvision
from PIL import Image
from torchvision import datasets, ops, transforms, utils
from torchvision.transforms import InterpolationMode
from torchvision.transforms import functional as F


def show(name, t):
    if isinstance(t, Image.Image):
        t = F.pil_to_tensor(t)
    t = torch.as_tensor(t)
    print(f"{name} {tuple(t.shape)} {t.dtype} {t.double().sum().item():.10f} {t.double().abs().max().item():.10f}")


torch.manual_seed(0)
img = torch.rand(3, 20, 28, dtype=torch.float64)
img_u8 = (img * 255).round().to(torch.uint8)
arr = img_u8.permute(1, 2, 0).numpy()
pil = Image.fromarray(np.ascontiguousarray(arr))

# conversions
t = F.to_tensor(pil)
assert t.dtype == torch.float32 and t.shape == (3, 20, 28)
np.testing.assert_allclose(t.numpy(), arr.transpose(2, 0, 1) / 255.0, rtol=1e-6)
assert np.array_equal(F.pil_to_tensor(pil).numpy(), arr.transpose(2, 0, 1))
assert np.array_equal(np.asarray(F.to_pil_image(img_u8)), arr)
assert F.get_dimensions(pil) == [3, 20, 28] == F.get_dimensions(img) and F.get_image_size(img) == [28, 20]
assert np.array_equal(F.convert_image_dtype(img_u8, torch.float32).numpy(), (arr.transpose(2, 0, 1) / 255.0)
                      .astype(np.float32))
show("convert_to_uint8", F.convert_image_dtype(img.float(), torch.uint8))
show("convert_to_int16", F.convert_image_dtype(img_u8, torch.int16))

# normalize and color
mean, std = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
np.testing.assert_allclose(F.normalize(img, mean, std).numpy(),
                           (img.numpy() - np.array(mean)[:, None, None]) / np.array(std)[:, None, None], rtol=1e-12)
gray = F.rgb_to_grayscale(img)
np.testing.assert_allclose(gray[0].numpy(), 0.2989 * img[0].numpy() + 0.587 * img[1].numpy() + 0.114 * img[2].numpy(),
                           rtol=1e-12)
show("brightness", F.adjust_brightness(img, 1.3))
show("contrast", F.adjust_contrast(img, 0.7))
show("saturation", F.adjust_saturation(img, 1.5))
show("hue", F.adjust_hue(img.float(), 0.2))
show("hue_u8", F.adjust_hue(img_u8, -0.3))
show("invert_u8", F.invert(img_u8))
show("blur", F.gaussian_blur(img, [5, 3], [1.5, 0.8]))
show("blur_u8", F.gaussian_blur(img_u8, 3))

# geometry: crops against numpy slicing, flips, padding modes
assert np.array_equal(F.crop(img, 2, 3, 10, 12).numpy(), img.numpy()[:, 2:12, 3:15])
padded_crop = F.crop(img, -2, -3, 25, 33)  # beyond the borders: zeros
assert padded_crop.shape == (3, 25, 33) and np.array_equal(padded_crop[:, 2:22, 3:31].numpy(), img.numpy())
assert float(padded_crop[:, :2].abs().sum()) == 0
assert np.array_equal(F.center_crop(img, 10).numpy(), img.numpy()[:, 5:15, 9:19])
assert F.center_crop(img, [24, 30]).shape == (3, 24, 30)
assert np.array_equal(F.hflip(img).numpy(), img.numpy()[:, :, ::-1])
assert np.array_equal(np.asarray(F.vflip(pil)), arr[::-1])
for mode, np_mode in (("constant", "constant"), ("edge", "edge"), ("reflect", "reflect"), ("symmetric", "symmetric")):
    got = F.pad(img, [1, 2, 3, 4], padding_mode=mode).numpy()
    want = np.pad(img.numpy(), ((0, 0), (2, 4), (1, 3)), mode=np_mode)
    assert np.array_equal(got, want), mode
    assert np.array_equal(np.asarray(F.pad(pil, [1, 2, 3, 4], padding_mode=mode)),
                          np.pad(arr, ((2, 4), (1, 3), (0, 0)), mode=np_mode)), mode
tl, tr, bl, br, center = F.five_crop(img, 8)
assert np.array_equal(br.numpy(), img.numpy()[:, 12:, 20:])

# resize: sizes by torchvision's rule, PIL against Pillow, tensors through interpolate
assert F.resize(img, 10).shape == (3, 10, 14) and F.resize(img, [7, 9]).shape == (3, 7, 9)
assert F.resize(img, 10, max_size=12).shape == (3, 8, 12)
assert F.resize(pil, 10).size == (14, 10)
assert np.array_equal(np.asarray(F.resize(pil, [7, 9], InterpolationMode.BICUBIC)),
                      np.asarray(pil.resize((9, 7), Image.BICUBIC)))
for mode in (InterpolationMode.NEAREST, InterpolationMode.BILINEAR, InterpolationMode.BICUBIC):
    for antialias in (False, True):
        show(f"resize_{mode.value}_{antialias}", F.resize(img, [13, 11], mode, antialias=antialias))
        show(f"resize_u8_{mode.value}_{antialias}", F.resize(img_u8, [31, 17], mode, antialias=antialias))

# random transforms: the same draws from torch's generator (and Python's random for RandomChoice/RandomOrder)
torch.manual_seed(1)
random.seed(1)
pipeline = transforms.Compose([
    transforms.RandomResizedCrop(16, scale=(0.3, 1.0)),
    transforms.RandomHorizontalFlip(),
    transforms.RandomVerticalFlip(0.7),
    transforms.RandomApply([transforms.ColorJitter(0.4, 0.4, 0.4, 0.1)], p=0.8),
    transforms.RandomGrayscale(0.5),
    transforms.RandomCrop(14, padding=2, padding_mode="reflect"),
    transforms.RandomChoice([transforms.GaussianBlur(3), transforms.Lambda(lambda x: x * 0.5)]),
    transforms.RandomOrder([transforms.Pad(1), transforms.CenterCrop(15)]),
    transforms.Normalize(mean, std),
])
for k in range(4):
    show(f"pipeline_{k}", pipeline(img.float()))
pil_pipeline = transforms.Compose([transforms.Resize(18), transforms.RandomCrop(16), transforms.ColorJitter(0.3, 0.3),
                                   transforms.ToTensor()])
for k in range(2):
    show(f"pil_pipeline_{k}", pil_pipeline(pil))
print(repr(pipeline).splitlines()[1].strip())

# ops and utils
boxes = torch.tensor([[0, 0, 10, 10], [1, 1, 11, 11], [20, 20, 30, 30], [0, 0, 5, 5]], dtype=torch.float32)
scores = torch.tensor([0.9, 0.8, 0.7, 0.95])
iou = ops.box_iou(boxes, boxes)
assert abs(float(iou[0, 1]) - 81 / 119) < 1e-6 and float(iou[0, 2]) == 0
assert ops.nms(boxes, scores, 0.5).tolist() == [3, 0, 2]
assert ops.batched_nms(boxes, scores, torch.tensor([0, 1, 0, 0]), 0.5).tolist() == [3, 0, 1, 2]
assert torch.equal(ops.box_convert(ops.box_convert(boxes, "xyxy", "cxcywh"), "cxcywh", "xyxy"), boxes)
frozen = ops.FrozenBatchNorm2d(3)
bn = torch.nn.BatchNorm2d(3).eval()
with torch.no_grad():
    bn.running_mean.copy_(torch.tensor([0.1, 0.2, 0.3]))
    bn.running_var.copy_(torch.tensor([1.5, 0.5, 2.0]))
    bn.weight.copy_(torch.tensor([1.0, 2.0, 3.0]))
frozen.load_state_dict(bn.state_dict())
x = torch.randn(2, 3, 4, 4)
assert torch.allclose(frozen(x), bn(x), atol=1e-6)
grid = utils.make_grid(torch.rand(5, 3, 4, 6), nrow=2, padding=1)
assert grid.shape == (3, 3 * 5 + 1, 2 * 7 + 1)

# models: torchvision's architectures (parameter counts of torchvision's weights metadata, state-dict keys of its
# checkpoints), seeded initialisation and outputs compared between the frameworks
from torchvision import models  # noqa: E402
for builder, count in ((models.resnet18, 11689512), (models.resnet50, 25557032), (models.vgg11_bn, 132868840),
                       (models.resnext50_32x4d, 25028904), (models.wide_resnet50_2, 68883240)):
    model = builder()
    assert sum(p.numel() for p in model.parameters()) == count == builder.__annotations__["weights"].DEFAULT.meta[
        "num_params"], builder.__name__
keys = list(models.resnet18().state_dict())
assert keys[:3] == ["conv1.weight", "bn1.weight", "bn1.bias"] and "layer4.1.bn2.num_batches_tracked" in keys
assert "features.0.weight" in models.vgg16().state_dict() and "classifier.6.bias" in models.vgg16().state_dict()
assert models.get_model_weights("resnet50") is models.ResNet50_Weights
assert models.get_weight("ResNet50_Weights.IMAGENET1K_V2").url.endswith("resnet50-11ad3fa6.pth")
try:
    models.resnet18(weights=models.ResNet18_Weights.DEFAULT, num_classes=10)
    raise AssertionError("num_classes=10 with ImageNet weights was accepted")
except ValueError as e:
    assert "num_classes" in str(e)
torch.manual_seed(3)
for builder in (models.resnet18, models.vgg11):
    model = builder(num_classes=10).eval()
    with torch.no_grad():
        show(builder.__name__, model(torch.randn(2, 3, 32, 32)))
preset = models.ResNet18_Weights.DEFAULT.transforms()
show("preset", preset(img_u8))
show("preset_pil", preset(pil))

# datasets: an image folder, CIFAR10 pickles (with their MD5 check), MNIST IDX files fetched from a file:// mirror
root = tempfile.mkdtemp()
try:
    for cls, n in (("cat", 2), ("dog", 3)):
        os.makedirs(os.path.join(root, "folder", cls))
        for i in range(n):
            Image.fromarray(np.full((6, 5, 3), 40 * i + (cls == "dog") * 100, np.uint8)).save(
                os.path.join(root, "folder", cls, f"{i}.png"))
    open(os.path.join(root, "folder", "dog", "notes.txt"), "w").close()
    folder = datasets.ImageFolder(os.path.join(root, "folder"), transform=transforms.ToTensor())
    assert folder.classes == ["cat", "dog"] and len(folder) == 5 and folder.targets == [0, 0, 1, 1, 1]
    sample, target = folder[3]
    assert target == 1 and sample.shape == (3, 6, 5) and abs(float(sample[0, 0, 0]) - 140 / 255) < 1e-6

    rng = np.random.RandomState(0)
    batch_dir = os.path.join(root, "cifar", "cifar-10-batches-py")
    os.makedirs(batch_dir)
    md5s = {}
    for name, count in (("data_batch_1", 4), ("test_batch", 3), ("batches.meta", 0)):
        content = {"label_names": [f"c{i}" for i in range(10)]} if count == 0 else \
            {"data": rng.randint(0, 256, (count, 3072)).astype(np.uint8), "labels": list(range(count))}
        with open(os.path.join(batch_dir, name), "wb") as f:
            pickle.dump(content, f)
        md5s[name] = hashlib.md5(open(os.path.join(batch_dir, name), "rb").read()).hexdigest()

    class TinyCIFAR10(datasets.CIFAR10):
        base_folder = "cifar-10-batches-py"
        train_list = [["data_batch_1", md5s["data_batch_1"]]]
        test_list = [["test_batch", md5s["test_batch"]]]
        meta = {"filename": "batches.meta", "key": "label_names", "md5": md5s["batches.meta"]}

    archive = os.path.join(root, "cifar-10-python.tar.gz")  # the official archive's layout, fetched by download=True
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(batch_dir, arcname="cifar-10-batches-py")
    TinyCIFAR10.url = "file://" + archive
    TinyCIFAR10.tgz_md5 = hashlib.md5(open(archive, "rb").read()).hexdigest()
    fetched = TinyCIFAR10(os.path.join(root, "fetched"), train=False, download=True)
    assert len(fetched) == 3 and fetched.targets == [0, 1, 2]
    cifar = TinyCIFAR10(os.path.join(root, "cifar"), train=True, transform=transforms.PILToTensor())
    assert len(cifar) == 4 and cifar.classes[3] == "c3" and cifar.targets == [0, 1, 2, 3]
    raw = pickle.load(open(os.path.join(batch_dir, "data_batch_1"), "rb"))["data"]
    assert np.array_equal(cifar[2][0].numpy(), raw[2].reshape(3, 32, 32))
    with open(os.path.join(batch_dir, "test_batch"), "ab") as f:
        f.write(b"corrupted")
    try:
        TinyCIFAR10(os.path.join(root, "cifar"), train=False)
        raise AssertionError("a corrupted batch was accepted")
    except RuntimeError as e:
        assert "corrupted" in str(e)

    mirror = os.path.join(root, "mirror")
    os.makedirs(mirror)
    images = rng.randint(0, 256, (3, 28, 28)).astype(np.uint8)
    labels = np.array([7, 2, 1], np.uint8)
    resources = []
    for prefix in ("train", "t10k"):
        for kind, body in (("images-idx3-ubyte", bytes([0, 0, 8, 3]) + b"".join(
                d.to_bytes(4, "big") for d in images.shape) + images.tobytes()),
                           ("labels-idx1-ubyte", bytes([0, 0, 8, 1]) + (3).to_bytes(4, "big") + labels.tobytes())):
            name = f"{prefix}-{kind}.gz"
            with gzip.open(os.path.join(mirror, name), "wb") as f:
                f.write(body)
            resources.append((name, hashlib.md5(open(os.path.join(mirror, name), "rb").read()).hexdigest()))

    class LocalMNIST(datasets.MNIST):
        pass

    LocalMNIST.mirrors = ["file://" + mirror + "/"]
    LocalMNIST.resources = resources
    mnist = LocalMNIST(os.path.join(root, "data"), train=False, download=True, transform=transforms.ToTensor())
    assert len(mnist) == 3 and mnist.targets.tolist() == [7, 2, 1] and mnist.data.dtype == torch.uint8
    assert np.array_equal(mnist.data.numpy(), images) and mnist[1][0].shape == (1, 28, 28)
    assert os.path.isdir(os.path.join(root, "data", "LocalMNIST", "raw"))
    fake = datasets.FakeData(size=3, image_size=(3, 8, 8), transform=transforms.ToTensor())
    show("fakedata", torch.stack([fake[i][0] for i in range(3)]))
    print("fakedata targets", [fake[i][1] for i in range(3)])
finally:
    shutil.rmtree(root)
print("torchvision", torchvision.__version__)
