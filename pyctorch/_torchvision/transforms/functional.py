"""torchvision.transforms.functional: the image operations of the subset, on tensors and PIL images.

A tensor image is [..., C, H, W]; a PIL image is whatever Pillow holds. Each function takes either
and returns the same kind, as torchvision does. Tensor work is ordinary torch ops (so autograd and
pyctorch's kernels apply); PIL work is Pillow's own (pyctorch/_torchvision/transforms/_pil.py).
"""
import enum
import numbers

import numpy as np
import torch
import torch.nn.functional as nnf

from . import _pil

__all__ = [
    "InterpolationMode", "get_dimensions", "get_image_size", "get_image_num_channels", "to_tensor",
    "pil_to_tensor", "to_pil_image", "convert_image_dtype", "normalize", "resize", "crop", "center_crop",
    "resized_crop", "hflip", "vflip", "pad", "rgb_to_grayscale", "to_grayscale", "adjust_brightness",
    "adjust_contrast", "adjust_saturation", "adjust_hue", "gaussian_blur", "invert", "five_crop", "ten_crop",
]


class InterpolationMode(enum.Enum):
    NEAREST = "nearest"
    NEAREST_EXACT = "nearest-exact"
    BILINEAR = "bilinear"
    BICUBIC = "bicubic"
    BOX = "box"
    HAMMING = "hamming"
    LANCZOS = "lanczos"


# Pillow's integer filter constants, accepted wherever an InterpolationMode is
_FROM_PIL_INT = {0: InterpolationMode.NEAREST, 2: InterpolationMode.BILINEAR, 3: InterpolationMode.BICUBIC,
                 4: InterpolationMode.BOX, 5: InterpolationMode.HAMMING, 1: InterpolationMode.LANCZOS}


def _interpolation(mode):
    if isinstance(mode, InterpolationMode):
        return mode
    if isinstance(mode, int) and mode in _FROM_PIL_INT:
        return _FROM_PIL_INT[mode]
    raise TypeError("Argument interpolation should be a InterpolationMode or a corresponding Pillow integer constant")


def _is_tensor_image(img):
    return isinstance(img, torch.Tensor)


def _check_image(img):
    if _is_tensor_image(img):
        if img.ndim < 2:
            raise TypeError(f"Tensor is not a torch image: it has {img.ndim} dimensions, an image needs 2 or more")
        return True
    if _pil.is_pil_image(img):
        return False
    raise TypeError(f"img should be PIL Image or Tensor. Got {type(img)}")


def get_dimensions(img):
    """[channels, height, width]."""
    if _check_image(img):
        channels = 1 if img.ndim == 2 else img.shape[-3]
        return [channels, img.shape[-2], img.shape[-1]]
    return _pil.get_dimensions(img)


def get_image_size(img):
    """[width, height] (torchvision's order)."""
    _, h, w = get_dimensions(img)
    return [w, h]


def get_image_num_channels(img):
    return get_dimensions(img)[0]


# ----------------------------------------------------------------------------------------------- conversions

def _max_value(dtype):
    if dtype == torch.uint8:
        return 255
    if dtype.is_floating_point:
        return 1.0
    return torch.iinfo(dtype).max


def pil_to_tensor(pic):
    """A PIL image as a [C, H, W] tensor of its own integer type (no scaling)."""
    if not _pil.is_pil_image(pic):
        raise TypeError(f"pic should be PIL Image. Got {type(pic)}")
    array = _pil.to_array(pic)
    return torch.from_numpy(np.ascontiguousarray(array.transpose(2, 0, 1)))


def to_tensor(pic):
    """A PIL image or an HWC ndarray as a CHW tensor; uint8 values are scaled to [0, 1] floats."""
    if isinstance(pic, np.ndarray):
        if pic.ndim not in (2, 3):
            raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
        array = pic[:, :, None] if pic.ndim == 2 else pic
    elif _pil.is_pil_image(pic):
        array = _pil.to_array(pic)
        if pic.mode == "1":
            array = array.astype(np.uint8) * 255
    else:
        raise TypeError(f"pic should be PIL Image or ndarray. Got {type(pic)}")
    img = torch.from_numpy(np.ascontiguousarray(array.transpose(2, 0, 1)))
    if img.dtype == torch.uint8:
        return img.to(dtype=torch.get_default_dtype()).div(255)
    return img


def to_pil_image(pic, mode=None):
    """A CHW tensor or HWC ndarray as a PIL image (floats are taken as [0, 1] and scaled to bytes)."""
    if isinstance(pic, torch.Tensor):
        if pic.ndim not in (2, 3):
            raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
        if pic.ndim == 2:
            pic = pic.unsqueeze(0)
        if pic.is_floating_point() and mode != "F":
            pic = pic.mul(255).byte()
        array = pic.detach().cpu().permute(1, 2, 0).numpy()
    elif isinstance(pic, np.ndarray):
        if pic.ndim not in (2, 3):
            raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
        array = pic[:, :, None] if pic.ndim == 2 else pic
    else:
        raise TypeError(f"pic should be Tensor or ndarray. Got {type(pic)}.")
    return _pil.from_array(array, mode)


def convert_image_dtype(image, dtype=torch.float):
    """Change the dtype and rescale the values to the new type's range, as torchvision does."""
    if not isinstance(image, torch.Tensor):
        raise TypeError("Input img should be Tensor Image")
    if image.dtype == dtype:
        return image
    if image.is_floating_point():
        if dtype.is_floating_point:
            return image.to(dtype)
        if (image.dtype == torch.float32 and dtype in (torch.int32, torch.int64)) or \
                (image.dtype == torch.float64 and dtype == torch.int64):
            raise RuntimeError(f"The cast from {image.dtype} to {dtype} cannot be performed safely.")
        eps = 1e-3  # keeps 1.0 from landing one past the top integer
        top = float(_max_value(dtype))
        return image.mul(top + 1.0 - eps).to(dtype)
    top_in = float(_max_value(image.dtype))
    if dtype.is_floating_point:
        return image.to(dtype).div(top_in)
    top_out = float(_max_value(dtype))
    if top_in > top_out:  # scale down by whole factors of two, as integer division
        factor = int((top_in + 1) // (top_out + 1))
        return torch.div(image, factor, rounding_mode="floor").to(dtype)
    factor = int((top_out + 1) // (top_in + 1))
    return image.to(dtype).mul(factor)


def normalize(tensor, mean, std, inplace=False):
    """(tensor - mean) / std per channel of a float [..., C, H, W] tensor."""
    if not isinstance(tensor, torch.Tensor):
        raise TypeError(f"img should be Tensor Image. Got {type(tensor)}")
    if not tensor.is_floating_point():
        raise TypeError(f"Input tensor should be a float tensor. Got {tensor.dtype}.")
    if tensor.ndim < 3:
        raise ValueError(f"Expected tensor to be a tensor image of size (..., C, H, W). Got tensor.size() = "
                         f"{tensor.size()}")
    if not inplace:
        tensor = tensor.clone()
    mean = torch.as_tensor(mean, dtype=tensor.dtype, device=tensor.device)
    std = torch.as_tensor(std, dtype=tensor.dtype, device=tensor.device)
    if (std == 0).any():
        raise ValueError(f"std evaluated to zero after conversion to {tensor.dtype}, leading to division by zero.")
    if mean.ndim == 1:
        mean = mean.view(-1, 1, 1)
    if std.ndim == 1:
        std = std.view(-1, 1, 1)
    return tensor.sub_(mean).div_(std)


# ----------------------------------------------------------------------------------------------- geometry

def _resized_size(height, width, size, max_size):
    """torchvision's output size: an int (or 1-list) sets the shorter edge, keeping the aspect ratio."""
    if isinstance(size, int):
        size = [size]
    if len(size) == 2:
        if max_size is not None:
            raise ValueError("max_size should only be passed if size specifies the length of the smaller edge, "
                             "i.e. size should be an int or a sequence of length 1 in torchscript mode.")
        return [size[0], size[1]]
    short, long = (width, height) if width <= height else (height, width)
    new_short, new_long = size[0], int(size[0] * long / short)
    if max_size is not None:
        if max_size <= size[0]:
            raise ValueError(f"max_size = {max_size} must be strictly greater than the requested size for the "
                             f"smaller edge size = {size}")
        if new_long > max_size:
            new_short, new_long = int(max_size * new_short / new_long), max_size
    new_w, new_h = (new_short, new_long) if width <= height else (new_long, new_short)
    return [new_h, new_w]


def _as_float_batch(img):
    """[N, C, H, W] float view of an image for interpolate/conv, and how to undo it."""
    squeeze = img.ndim < 4
    lead = img.shape[:-3] if img.ndim > 4 else None
    batch = img.reshape(-1, *img.shape[-3:]) if lead is not None else (img.unsqueeze(0) if img.ndim == 3 else img)
    if img.ndim == 2:
        batch = img.view(1, 1, *img.shape)
    dtype = img.dtype
    if not batch.is_floating_point():
        batch = batch.to(torch.float32)

    def restore(out):
        if not dtype.is_floating_point:
            out = torch.round(out).clamp(0, _max_value(dtype)).to(dtype) if dtype == torch.uint8 else \
                torch.round(out).to(dtype)
        if img.ndim == 2:
            return out[0, 0]
        if lead is not None:
            return out.reshape(*lead, *out.shape[-3:])
        return out[0] if squeeze else out
    return batch, restore


def resize(img, size, interpolation=InterpolationMode.BILINEAR, max_size=None, antialias=True):
    """Resize to `size` ((h, w), or an int for the shorter edge)."""
    interpolation = _interpolation(interpolation)
    if isinstance(size, (list, tuple)) and len(size) not in (1, 2):
        raise ValueError(f"Size must be an int or a 1 or 2 element tuple/list, not a {len(size)} element tuple/list")
    _, height, width = get_dimensions(img)
    out_h, out_w = _resized_size(height, width, list(size) if isinstance(size, (list, tuple)) else size, max_size)
    if [out_h, out_w] == [height, width]:
        return img
    if not _is_tensor_image(img):
        return _pil.resize(img, (out_w, out_h), interpolation.value)
    mode = interpolation.value
    if mode not in ("nearest", "nearest-exact", "bilinear", "bicubic"):
        raise ValueError(f"Interpolation mode {interpolation} is unsupported with Tensor input")
    batch, restore = _as_float_batch(img)
    smooth = mode in ("bilinear", "bicubic")
    out = nnf.interpolate(batch, size=[out_h, out_w], mode=mode, align_corners=False if smooth else None,
                          antialias=bool(antialias) and smooth)
    return restore(out)


def crop(img, top, left, height, width):
    """The [top:top+height, left:left+width] window; parts outside the image are zero (torchvision pads)."""
    if not _check_image(img):
        return _pil.crop(img, top, left, height, width)
    _, h, w = get_dimensions(img)
    right, bottom = left + width, top + height
    if left < 0 or top < 0 or right > w or bottom > h:
        inside = img[..., max(top, 0):min(bottom, h), max(left, 0):min(right, w)]
        padding = [max(-left + min(0, right), 0), max(right - max(w, left), 0),
                   max(-top + min(0, bottom), 0), max(bottom - max(h, top), 0)]
        return _pad_tensor(inside, padding, 0, "constant")
    return img[..., top:bottom, left:right]


def center_crop(img, output_size):
    if isinstance(output_size, numbers.Number):
        output_size = (int(output_size), int(output_size))
    elif isinstance(output_size, (tuple, list)) and len(output_size) == 1:
        output_size = (output_size[0], output_size[0])
    _, h, w = get_dimensions(img)
    crop_h, crop_w = output_size
    if crop_w > w or crop_h > h:  # pad symmetrically first (the extra pixel goes right/bottom)
        padding = [(crop_w - w) // 2 if crop_w > w else 0, (crop_h - h) // 2 if crop_h > h else 0,
                   (crop_w - w + 1) // 2 if crop_w > w else 0, (crop_h - h + 1) // 2 if crop_h > h else 0]
        img = pad(img, padding, fill=0)
        _, h, w = get_dimensions(img)
        if crop_w == w and crop_h == h:
            return img
    top = int(round((h - crop_h) / 2.0))
    left = int(round((w - crop_w) / 2.0))
    return crop(img, top, left, crop_h, crop_w)


def resized_crop(img, top, left, height, width, size, interpolation=InterpolationMode.BILINEAR, antialias=True):
    return resize(crop(img, top, left, height, width), size, interpolation, antialias=antialias)


def hflip(img):
    return img.flip(-1) if _check_image(img) else _pil.hflip(img)


def vflip(img):
    return img.flip(-2) if _check_image(img) else _pil.vflip(img)


def _padding_ltrb(padding):
    if isinstance(padding, numbers.Number):
        return [int(padding)] * 4
    padding = list(padding)
    if len(padding) == 1:
        return padding * 4
    if len(padding) == 2:
        return [padding[0], padding[1], padding[0], padding[1]]
    if len(padding) == 4:
        return padding
    raise ValueError(f"Padding must be an int or a 1, 2, or 4 element tuple, not a {len(padding)} element tuple")


def _symmetric_index(n, before, after, device):
    """Source indices of a symmetric (edge-repeating mirror) padding of length n."""
    idx = torch.arange(-before, n + after, device=device)
    period = 2 * n
    idx = torch.remainder(idx, period)
    return torch.where(idx >= n, period - 1 - idx, idx)


def _pad_tensor(img, ltrb, fill, padding_mode):
    left, right, top, bottom = ltrb
    if padding_mode == "symmetric":
        if min(ltrb) < 0:
            img = crop(img, -min(top, 0), -min(left, 0), img.shape[-2] + min(top, 0) + min(bottom, 0),
                       img.shape[-1] + min(left, 0) + min(right, 0))
            left, right, top, bottom = (max(v, 0) for v in ltrb)
        rows = _symmetric_index(img.shape[-2], top, bottom, img.device)
        cols = _symmetric_index(img.shape[-1], left, right, img.device)
        return img.index_select(-2, rows).index_select(-1, cols)
    mode = {"edge": "replicate"}.get(padding_mode, padding_mode)
    if mode == "constant":
        return nnf.pad(img, [left, right, top, bottom], mode="constant", value=float(fill or 0))
    batch, restore = _as_float_batch(img)
    return restore(nnf.pad(batch, [left, right, top, bottom], mode=mode))


def pad(img, padding, fill=0, padding_mode="constant"):
    """Pad by an int, (lr, tb) or (l, t, r, b); modes constant, edge, reflect, symmetric."""
    if padding_mode not in ("constant", "edge", "reflect", "symmetric"):
        raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")
    left, top, right, bottom = _padding_ltrb(padding)
    if not _check_image(img):
        return _pil.pad(img, (left, top, right, bottom), fill, padding_mode)
    return _pad_tensor(img, [left, right, top, bottom], fill, padding_mode)


def five_crop(img, size):
    if isinstance(size, numbers.Number):
        size = (int(size), int(size))
    elif isinstance(size, (tuple, list)) and len(size) == 1:
        size = (size[0], size[0])
    if len(size) != 2:
        raise ValueError("Please provide only two dimensions (h, w) for size.")
    _, h, w = get_dimensions(img)
    crop_h, crop_w = size
    if crop_w > w or crop_h > h:
        raise ValueError(f"Requested crop size {size} is bigger than input size {(h, w)}")
    return (crop(img, 0, 0, crop_h, crop_w), crop(img, 0, w - crop_w, crop_h, crop_w),
            crop(img, h - crop_h, 0, crop_h, crop_w), crop(img, h - crop_h, w - crop_w, crop_h, crop_w),
            center_crop(img, [crop_h, crop_w]))


def ten_crop(img, size, vertical_flip=False):
    first = five_crop(img, size)
    flipped = five_crop(vflip(img) if vertical_flip else hflip(img), size)
    return first + flipped


# ----------------------------------------------------------------------------------------------- color

def _blend(img1, img2, ratio):
    """ratio * img1 + (1 - ratio) * img2, clamped to the image type's range."""
    top = _max_value(img1.dtype)
    return (ratio * img1 + (1.0 - ratio) * img2).clamp(0, top).to(img1.dtype)


def _grayscale_of(img):
    """ITU-R 601-2 luma of a [..., 3, H, W] image, [..., 1, H, W], in the image's dtype."""
    r, g, b = img.unbind(dim=-3)
    luma = (0.2989 * r + 0.587 * g + 0.114 * b).to(img.dtype)
    return luma.unsqueeze(dim=-3)


def rgb_to_grayscale(img, num_output_channels=1):
    if num_output_channels not in (1, 3):
        raise ValueError("num_output_channels should be either 1 or 3")
    if not _check_image(img):
        return _pil.to_grayscale(img, num_output_channels)
    channels = get_image_num_channels(img)
    if channels not in (1, 3):
        raise TypeError(f"Input image tensor permitted channel values are [1, 3], but found {channels}")
    gray = img if channels == 1 else _grayscale_of(img)
    if num_output_channels == 3:
        return gray.expand(img.shape[:-3] + (3,) + img.shape[-2:])
    return gray


def to_grayscale(img, num_output_channels=1):
    return rgb_to_grayscale(img, num_output_channels)


def _check_factor(name, factor):
    if factor < 0:
        raise ValueError(f"{name}_factor ({factor}) is not non-negative.")


def adjust_brightness(img, brightness_factor):
    _check_factor("brightness", brightness_factor)
    if not _check_image(img):
        return _pil.enhance(img, "Brightness", brightness_factor)
    return _blend(img, torch.zeros_like(img), brightness_factor)


def adjust_contrast(img, contrast_factor):
    _check_factor("contrast", contrast_factor)
    if not _check_image(img):
        return _pil.enhance(img, "Contrast", contrast_factor)
    work = img if img.is_floating_point() else img.to(torch.float32)
    gray = _grayscale_of(img).to(work.dtype) if get_image_num_channels(img) == 3 else work
    mean = gray.mean(dim=(-3, -2, -1), keepdim=True)
    return _blend(img, mean, contrast_factor)


def adjust_saturation(img, saturation_factor):
    _check_factor("saturation", saturation_factor)
    if not _check_image(img):
        return _pil.enhance(img, "Color", saturation_factor)
    if get_image_num_channels(img) == 1:
        return img
    return _blend(img, _grayscale_of(img), saturation_factor)


def _rgb_to_hsv(img):
    r, g, b = img.unbind(dim=-3)
    maxc = img.max(dim=-3).values
    minc = img.min(dim=-3).values
    equal = maxc == minc
    span = maxc - minc
    ones = torch.ones_like(maxc)
    s = span / torch.where(equal, ones, maxc)
    safe = torch.where(equal, ones, span)
    rc, gc, bc = (maxc - r) / safe, (maxc - g) / safe, (maxc - b) / safe
    hr = (maxc == r) * (bc - gc)
    hg = ((maxc == g) & (maxc != r)) * (2.0 + rc - bc)
    hb = ((maxc != g) & (maxc != r)) * (4.0 + gc - rc)
    h = torch.fmod((hr + hg + hb) / 6.0 + 1.0, 1.0)
    return torch.stack((h, s, maxc), dim=-3)


def _hsv_to_rgb(img):
    h, s, v = img.unbind(dim=-3)
    i = torch.floor(h * 6.0)
    f = h * 6.0 - i
    i = i.to(dtype=torch.int32) % 6
    p = (v * (1.0 - s)).clamp(0.0, 1.0)
    q = (v * (1.0 - s * f)).clamp(0.0, 1.0)
    t = (v * (1.0 - s * (1.0 - f))).clamp(0.0, 1.0)
    # each of the six hue sectors takes its (r, g, b) from (v, q, p, t): a one-hot mask picks the sector
    sector = (i.unsqueeze(dim=-3) == torch.arange(6, device=i.device).view(-1, 1, 1)).to(img.dtype)
    red = torch.stack((v, q, p, p, t, v), dim=-3)
    green = torch.stack((t, v, v, q, p, p), dim=-3)
    blue = torch.stack((p, p, t, v, v, q), dim=-3)
    return torch.stack([(sector * channel).sum(dim=-3) for channel in (red, green, blue)], dim=-3)


def adjust_hue(img, hue_factor):
    if not (-0.5 <= hue_factor <= 0.5):
        raise ValueError(f"hue_factor ({hue_factor}) is not in [-0.5, 0.5].")
    if not _check_image(img):
        return _pil.adjust_hue(img, hue_factor)
    if get_image_num_channels(img) == 1:
        return img
    work = convert_image_dtype(img, torch.float32)
    h, s, v = _rgb_to_hsv(work).unbind(dim=-3)
    rgb = _hsv_to_rgb(torch.stack(((h + hue_factor) % 1.0, s, v), dim=-3))
    return convert_image_dtype(rgb, img.dtype)


def invert(img):
    if not _check_image(img):
        return _pil.invert(img)
    return (1.0 if img.is_floating_point() else _max_value(img.dtype)) - img


def _gaussian_kernel1d(size, sigma, dtype, device):
    half = (size - 1) * 0.5
    x = torch.linspace(-half, half, steps=size, dtype=dtype, device=device)
    pdf = torch.exp(-0.5 * (x / sigma).pow(2))
    return pdf / pdf.sum()


def gaussian_blur(img, kernel_size, sigma=None):
    """Separable Gaussian blur with reflect padding (odd, positive kernel sizes)."""
    if isinstance(kernel_size, int):
        kernel_size = [kernel_size, kernel_size]
    if len(kernel_size) != 2:
        raise ValueError(f"If kernel_size is a sequence its length should be 2. Got {len(kernel_size)}")
    for k in kernel_size:
        if k % 2 == 0 or k < 0:
            raise ValueError(f"kernel_size should have odd and positive integers. Got {kernel_size}")
    if sigma is None:
        sigma = [k * 0.15 + 0.35 for k in kernel_size]
    if isinstance(sigma, (int, float)):
        sigma = [float(sigma), float(sigma)]
    elif len(sigma) == 1:
        sigma = [sigma[0], sigma[0]]
    if len(sigma) != 2:
        raise ValueError(f"If sigma is a sequence, its length should be 2. Got {len(sigma)}")
    for s in sigma:
        if s <= 0.0:
            raise ValueError(f"sigma should have positive values. Got {sigma}")
    if not _check_image(img):
        return to_pil_image(gaussian_blur(pil_to_tensor(img), kernel_size, sigma), mode=img.mode)
    batch, restore = _as_float_batch(img)
    kx = _gaussian_kernel1d(kernel_size[0], sigma[0], batch.dtype, batch.device)
    ky = _gaussian_kernel1d(kernel_size[1], sigma[1], batch.dtype, batch.device)
    kernel = (ky[:, None] * kx[None, :]).expand(batch.shape[-3], 1, kernel_size[1], kernel_size[0])
    padded = nnf.pad(batch, [kernel_size[0] // 2, kernel_size[0] // 2, kernel_size[1] // 2, kernel_size[1] // 2],
                     mode="reflect")
    return restore(nnf.conv2d(padded, kernel, groups=batch.shape[-3]))
