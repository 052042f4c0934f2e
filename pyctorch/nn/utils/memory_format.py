"""torch.nn.utils.memory_format: lay out only the convolution weights of a model in a memory format.

model.to(memory_format=...) converts every 4-d (or 5-d) parameter; these helpers convert only the weights of
Conv2d/ConvTranspose2d (Conv3d/ConvTranspose3d), recursively, keeping the Parameter objects."""


__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def _convert(module, memory_format, kinds):
    if isinstance(module, kinds):
        laid_out = module.weight.detach().clone(memory_format=memory_format)
        module.weight.data = laid_out.resize_(laid_out.size(), memory_format=memory_format)
    for child in module.children():
        _convert(child, memory_format, kinds)
    return module


def convert_conv2d_weight_memory_format(module, memory_format):
    """module with the weight of every nn.Conv2d / nn.ConvTranspose2d in it laid out in memory_format."""
    from ..modules.conv import Conv2d, ConvTranspose2d
    return _convert(module, memory_format, (Conv2d, ConvTranspose2d))


def convert_conv3d_weight_memory_format(module, memory_format):
    """module with the weight of every nn.Conv3d / nn.ConvTranspose3d in it laid out in memory_format."""
    from ..modules.conv import Conv3d, ConvTranspose3d
    return _convert(module, memory_format, (Conv3d, ConvTranspose3d))


