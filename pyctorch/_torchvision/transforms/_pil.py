"""The PIL side of torchvision.transforms.functional: Pillow does the work (imported on first use)."""
import sys

import numpy as np


def _image_module():
    try:
        from PIL import Image
    except ImportError as e:  # a PIL image cannot exist without Pillow, so only the constructors get here
        raise ImportError("this torchvision transform needs Pillow for PIL images: pip install pillow") from e
    return Image


def is_pil_image(img):
    pil = sys.modules.get("PIL.Image")  # no Pillow loaded: nothing can be a PIL image
    return pil is not None and isinstance(img, pil.Image)


def get_dimensions(img):
    width, height = img.size
    return [len(img.getbands()), height, width]


_ARRAY_TYPES = {"I": np.int32, "I;16" if sys.byteorder == "little" else "I;16B": np.int16, "F": np.float32}


def to_array(pic):
    """HWC numpy array of a PIL image, in the integer or float type of its mode."""
    array = np.array(pic, _ARRAY_TYPES.get(pic.mode, np.uint8), copy=True)
    return array.reshape(pic.size[1], pic.size[0], len(pic.getbands()))


def from_array(array, mode=None):
    """A PIL image of an HWC array; without `mode`, Pillow picks it from the dtype and channel count."""
    Image = _image_module()
    channels = array.shape[2]
    if channels not in (1, 2, 3, 4):
        raise ValueError(f"Input pic has {channels} channels: only 1, 2, 3 and 4 can become a PIL image")
    if channels > 1 and array.dtype != np.uint8:
        raise TypeError(f"Input type {array.dtype} is not supported for {channels} channels")
    array = np.ascontiguousarray(array[:, :, 0] if channels == 1 else array)
    return Image.fromarray(array) if mode is None else Image.fromarray(array, mode=mode)


_FILTERS = {"nearest": 0, "nearest-exact": 0, "bilinear": 2, "bicubic": 3, "box": 4, "hamming": 5, "lanczos": 1}


def resize(img, size_wh, mode):
    return img.resize(size_wh, _FILTERS[mode])


def crop(img, top, left, height, width):
    return img.crop((left, top, left + width, top + height))


def hflip(img):
    return img.transpose(_image_module().Transpose.FLIP_LEFT_RIGHT)


def vflip(img):
    return img.transpose(_image_module().Transpose.FLIP_TOP_BOTTOM)


def pad(img, ltrb, fill, padding_mode):
    """Pad a PIL image through numpy (constant fill per band, or edge/reflect/symmetric)."""
    left, top, right, bottom = ltrb
    array = np.asarray(img)
    if min(ltrb) < 0:  # negative padding crops
        array = array[max(-top, 0):array.shape[0] - max(-bottom, 0), max(-left, 0):array.shape[1] - max(-right, 0)]
        left, top, right, bottom = (max(v, 0) for v in ltrb)
    widths = ((top, bottom), (left, right)) + (((0, 0),) if array.ndim == 3 else ())
    if padding_mode == "constant":
        if array.ndim == 3 and isinstance(fill, (tuple, list)):
            planes = [np.pad(array[:, :, c], widths[:2], mode="constant", constant_values=fill[c])
                      for c in range(array.shape[2])]
            out = np.stack(planes, axis=2)
        else:
            out = np.pad(array, widths, mode="constant", constant_values=fill or 0)
    else:
        out = np.pad(array, widths, mode=padding_mode)
    result = _image_module().fromarray(out, mode=img.mode)
    if img.mode == "P":
        result.putpalette(img.getpalette())
    return result


def to_grayscale(img, num_output_channels):
    gray = img.convert("L")
    if num_output_channels == 3:
        return _image_module().merge("RGB", [gray, gray, gray])
    return gray


def enhance(img, which, factor):
    from PIL import ImageEnhance
    return getattr(ImageEnhance, which)(img).enhance(factor)


def adjust_hue(img, hue_factor):
    if img.mode in ("L", "1", "I", "F"):
        return img
    Image = _image_module()
    h, s, v = img.convert("HSV").split()
    shifted = (np.array(h, dtype=np.uint8).astype(np.int16) + int(hue_factor * 255)) % 256
    h = Image.fromarray(shifted.astype(np.uint8), "L")
    return Image.merge("HSV", (h, s, v)).convert(img.mode)


def invert(img):
    from PIL import ImageOps
    return ImageOps.invert(img)
