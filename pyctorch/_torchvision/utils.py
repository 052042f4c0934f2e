"""torchvision.utils (pyctorch's subset): make_grid and save_image."""
import math

import torch


def _normalize_in_place(t, low, high):
    t.clamp_(min=low, max=high)
    t.sub_(low).div_(max(high - low, 1e-5))


def make_grid(tensor, nrow=8, padding=2, normalize=False, value_range=None, scale_each=False, pad_value=0.0):
    """A [C, H', W'] picture of a batch of images laid out `nrow` per row, `padding` pixels apart."""
    if isinstance(tensor, list):
        for t in tensor:
            if not torch.is_tensor(t):
                raise TypeError(f"tensor or list of tensors expected, got a list containing {type(t)}")
        tensor = torch.stack(tensor, dim=0)
    elif not torch.is_tensor(tensor):
        raise TypeError(f"tensor or list of tensors expected, got {type(tensor)}")
    if tensor.dim() == 2:
        tensor = tensor.unsqueeze(0)
    if tensor.dim() == 3:
        if tensor.size(0) == 1:  # one gray image becomes RGB
            tensor = torch.cat((tensor, tensor, tensor), 0)
        tensor = tensor.unsqueeze(0)
    if tensor.dim() == 4 and tensor.size(1) == 1:
        tensor = torch.cat((tensor, tensor, tensor), 1)
    if normalize is True:
        tensor = tensor.clone()
        if value_range is not None and not isinstance(value_range, tuple):
            raise TypeError("value_range has to be a tuple (min, max) if specified. min and max are numbers")
        for t in (tensor if scale_each is True else [tensor]):
            low, high = value_range if value_range is not None else (float(t.min()), float(t.max()))
            _normalize_in_place(t, low, high)
    if tensor.size(0) == 1:
        return tensor.squeeze(0)
    count = tensor.size(0)
    columns = min(nrow, count)
    rows = int(math.ceil(float(count) / columns))
    cell_h, cell_w = int(tensor.size(2) + padding), int(tensor.size(3) + padding)
    grid = tensor.new_full((tensor.size(1), cell_h * rows + padding, cell_w * columns + padding), pad_value)
    for k in range(count):
        y, x = divmod(k, columns)
        grid.narrow(1, y * cell_h + padding, cell_h - padding).narrow(2, x * cell_w + padding,
                                                                       cell_w - padding).copy_(tensor[k])
    return grid


def save_image(tensor, fp, format=None, **kwargs):
    """Write a batch (through make_grid, kwargs go there) or one image as a picture file with Pillow."""
    from PIL import Image
    grid = make_grid(tensor, **kwargs)
    array = grid.mul(255).add_(0.5).clamp_(0, 255).permute(1, 2, 0).to("cpu", torch.uint8).numpy()
    Image.fromarray(array).save(fp, format=format)
