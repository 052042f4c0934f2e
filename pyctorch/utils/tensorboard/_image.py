"""Image summaries: any dataformats layout to height x width x channels, to uint8, encoded as PNG by pillow."""
import io

import numpy as np
from tensorboard.compat.proto.summary_pb2 import Summary

from ._convert_np import make_np


def grid_of_images(nchw, ncols=8):
    """Lay a batch N x C x H x W (C 1 or 3) out as one C=3 image, up to ncols per row, black where empty."""
    if nchw.ndim != 4 or nchw.shape[1] not in (1, 3):
        raise AssertionError(f"a batch of images needs 1 or 3 channels, got shape {nchw.shape}")
    if nchw.shape[1] == 1:
        nchw = np.repeat(nchw, 3, axis=1)
    n, _, h, w = nchw.shape
    ncols = min(n, ncols)
    nrows = -(-n // ncols)
    canvas = np.zeros((3, h * nrows, w * ncols), dtype=nchw.dtype)
    for i in range(n):
        row, col = divmod(i, ncols)
        canvas[:, row * h:(row + 1) * h, col * w:(col + 1) * w] = nchw[i]
    return canvas


def to_hwc(array, dataformats):
    """Reorder `array` laid out as `dataformats` (a permutation of some of N, C, H, W) to H x W x C.

    A batch (N present) becomes a grid; one channel, or no C at all, becomes grey RGB."""
    layout = dataformats.upper()
    if len(set(layout)) != len(layout):
        raise AssertionError(f"dataformats {dataformats!r} names a dimension twice")
    if array.ndim != len(layout):
        raise AssertionError(f"the image has shape {array.shape} but dataformats {dataformats!r} "
                             f"names {len(layout)} dimensions")
    if len(layout) == 4:
        return grid_of_images(array.transpose([layout.index(c) for c in "NCHW"])).transpose(1, 2, 0)
    if len(layout) == 3:
        hwc = array.transpose([layout.index(c) for c in "HWC"])
        return np.repeat(hwc, 3, axis=2) if hwc.shape[2] == 1 else hwc
    if len(layout) == 2:
        hw = array.transpose([layout.index(c) for c in "HW"])
        return np.stack([hw, hw, hw], axis=2)
    raise AssertionError(f"dataformats {dataformats!r}: expected 2, 3 or 4 of N, C, H, W")


def to_uint8(hwc):
    """uint8 pixels stay as they are; anything else is taken as [0, 1] and scaled to [0, 255], then clipped.

    The float32 round trip and the truncating cast are what torch's writer does, so pixels agree."""
    scale = 1 if hwc.dtype == np.uint8 else 255
    return (hwc.astype(np.float32) * scale).clip(0, 255).astype(np.uint8)


def encode_png(hwc_uint8):
    """Summary.Image of an H x W x C (C 3 or 4) uint8 array, PNG-encoded."""
    from PIL import Image  # pillow is needed only by image summaries
    height, width, channels = hwc_uint8.shape
    buffer = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(hwc_uint8)).save(buffer, format="PNG")
    return Summary.Image(height=height, width=width, colorspace=channels, encoded_image_string=buffer.getvalue())


def image(tag, img, dataformats="NCHW"):
    pixels = to_uint8(to_hwc(make_np(img), dataformats))
    return Summary(value=[Summary.Value(tag=tag, image=encode_png(pixels))])


def figure_to_chw(figure, close=True):
    """Render a matplotlib figure with the Agg canvas to a 3 x H x W uint8 array."""
    import matplotlib.pyplot as plt
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    rgba = np.asarray(canvas.buffer_rgba())
    if close:
        plt.close(figure)
    return np.ascontiguousarray(rgba[:, :, :3].transpose(2, 0, 1))
