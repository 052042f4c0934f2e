"""Convolution layers: Conv1d/2d/3d and ConvTranspose1d/2d/3d (torch.nn.modules.conv)."""
import math

import pyctorch as torch
from .module import Module
from ..parameter import Parameter
from .. import functional as F
from .. import init

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"]


def _ntuple(n):
    def parse(x):
        if isinstance(x, (list, tuple)):
            return tuple(x)
        return (x,) * n
    return parse


_single, _pair, _triple = _ntuple(1), _ntuple(2), _ntuple(3)


def _reverse_repeat_tuple(t, n):
    """(1, 2) -> (2, 2, 1, 1): the padding of each dim, last dim first, as F.pad takes it."""
    return tuple(x for x in reversed(t) for _ in range(n))


class _ConvNd(Module):
    __constants__ = ["stride", "padding", "dilation", "groups", "padding_mode", "output_padding", "in_channels",
                     "out_channels", "kernel_size"]

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, transposed, output_padding,
                 groups, bias, padding_mode, device=None, dtype=None):
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        valid_padding_strings = {"same", "valid"}
        if isinstance(padding, str):
            if padding not in valid_padding_strings:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {valid_padding_strings}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        valid_padding_modes = {"zeros", "reflect", "replicate", "circular"}
        if padding_mode not in valid_padding_modes:
            raise ValueError(f"padding_mode must be one of {valid_padding_modes}, but got padding_mode='{padding_mode}'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = output_padding
        self.groups = groups
        self.padding_mode = padding_mode
        # F.pad's argument for the non-zero padding modes (last dim first)
        if isinstance(self.padding, str):
            self._reversed_padding_repeated_twice = [0, 0] * len(kernel_size)
            if padding == "same":
                for d, k, i in zip(dilation, kernel_size, range(len(kernel_size) - 1, -1, -1)):
                    total = d * (k - 1)
                    left = total // 2
                    self._reversed_padding_repeated_twice[2 * i] = left
                    self._reversed_padding_repeated_twice[2 * i + 1] = total - left
        else:
            self._reversed_padding_repeated_twice = _reverse_repeat_tuple(self.padding, 2)
        if transposed:
            shape = (in_channels, out_channels // groups, *kernel_size)
        else:
            shape = (out_channels, in_channels // groups, *kernel_size)
        self.weight = Parameter(torch.empty(shape, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(torch.empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        # torch's default: kaiming_uniform_(a=sqrt(5)), i.e. U(-1/sqrt(fan_in), 1/sqrt(fan_in)), bias from fan_in
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self):
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * len(self.padding):
            s += f", padding={self.padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


def _conv_module(n, tuple_fn, fname):
    class _Conv(_ConvNd):
        def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                     bias=True, padding_mode="zeros", device=None, dtype=None):
            kernel_size_ = tuple_fn(kernel_size)
            stride_ = tuple_fn(stride)
            padding_ = padding if isinstance(padding, str) else tuple_fn(padding)
            dilation_ = tuple_fn(dilation)
            super().__init__(in_channels, out_channels, kernel_size_, stride_, padding_, dilation_, False,
                             tuple_fn(0), groups, bias, padding_mode, device=device, dtype=dtype)

        def _conv_forward(self, input, weight, bias):
            fn = getattr(F, fname)  # looked up per call, as torch's modules call F.conv*d
            if self.padding_mode != "zeros":
                return fn(F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode), weight, bias,
                          self.stride, tuple_fn(0), self.dilation, self.groups)
            return fn(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

        def forward(self, input):
            return self._conv_forward(input, self.weight, self.bias)
    _Conv.__name__ = _Conv.__qualname__ = f"_Conv{n}dBase"
    return _Conv


class Conv1d(_conv_module(1, _single, "conv1d")):
    pass


class Conv2d(_conv_module(2, _pair, "conv2d")):
    pass


class Conv3d(_conv_module(3, _triple, "conv3d")):
    pass


class _ConvTransposeNd(_ConvNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, transposed, output_padding,
                 groups, bias, padding_mode, device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {self.__class__.__name__}')
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, transposed, output_padding,
                         groups, bias, padding_mode, device=device, dtype=dtype)

    def _output_padding(self, input, output_size, stride, padding, kernel_size, num_spatial_dims, dilation=None):
        """The output_padding that makes forward's result output_size (torch's rule and errors)."""
        if output_size is None:
            return _single(self.output_padding)
        has_batch_dim = input.dim() == num_spatial_dims + 2
        num_non_spatial_dims = 2 if has_batch_dim else 1
        if len(output_size) == num_non_spatial_dims + num_spatial_dims:
            output_size = output_size[num_non_spatial_dims:]
        if len(output_size) != num_spatial_dims:
            raise ValueError(f"ConvTranspose{num_spatial_dims}D: for {input.dim()}D input, output_size must have "
                             f"{num_spatial_dims} or {num_non_spatial_dims + num_spatial_dims} elements "
                             f"(got {len(output_size)})")
        min_sizes, max_sizes = [], []
        for d in range(num_spatial_dims):
            dim_size = ((input.size(d + num_non_spatial_dims) - 1) * stride[d] - 2 * padding[d]
                        + (dilation[d] if dilation is not None else 1) * (kernel_size[d] - 1) + 1)
            min_sizes.append(dim_size)
            max_sizes.append(min_sizes[d] + stride[d] - 1)
        for i, size in enumerate(output_size):
            if size < min_sizes[i] or size > max_sizes[i]:
                raise ValueError(f"requested an output size of {output_size}, but valid sizes range from {min_sizes} "
                                 f"to {max_sizes} (for an input of {input.size()[2:]})")
        return [output_size[d] - min_sizes[d] for d in range(num_spatial_dims)]


def _conv_transpose_module(n, tuple_fn, fname):
    class _ConvT(_ConvTransposeNd):
        def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                     bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
            super().__init__(in_channels, out_channels, tuple_fn(kernel_size), tuple_fn(stride), tuple_fn(padding),
                             tuple_fn(dilation), True, tuple_fn(output_padding), groups, bias, padding_mode,
                             device=device, dtype=dtype)

        def forward(self, input, output_size=None):
            if self.padding_mode != "zeros":
                raise ValueError(f"Only `zeros` padding mode is supported for {self.__class__.__name__}")
            output_padding = self._output_padding(input, output_size, self.stride, self.padding, self.kernel_size,
                                                  n, self.dilation)
            return getattr(F, fname)(input, self.weight, self.bias, self.stride, self.padding, output_padding,
                                     self.groups, self.dilation)
    _ConvT.__name__ = _ConvT.__qualname__ = f"_ConvTranspose{n}dBase"
    return _ConvT


class ConvTranspose1d(_conv_transpose_module(1, _single, "conv_transpose1d")):
    pass


class ConvTranspose2d(_conv_transpose_module(2, _pair, "conv_transpose2d")):
    pass


class ConvTranspose3d(_conv_transpose_module(3, _triple, "conv_transpose3d")):
    pass


# ---------------------------------------------------------------- lazy variants (nn.modules.lazy)
from ..parameter import UninitializedParameter  # noqa: E402
from .lazy import LazyModuleMixin  # noqa: E402

__all__ += ["LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d",
            "LazyConvTranspose3d"]


class _LazyConvXdMixin(LazyModuleMixin):
    """in_channels comes from the channel dimension of the first input (batched or not)."""

    def _make_placeholders(self, out_channels, bias, device, dtype):
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def _get_in_channels(self, input):
        dims_unbatched = self._get_num_spatial_dims() + 1
        if input.dim() not in (dims_unbatched, dims_unbatched + 1):
            raise RuntimeError(f"Expected {dims_unbatched}D (unbatched) or {dims_unbatched + 1}D (batched) input to "
                               f"{self.__class__.__name__}, but got input of size: {input.shape}")
        return input.shape[1] if input.dim() == dims_unbatched + 1 else input.shape[0]

    def initialize_parameters(self, input, *args, **kwargs):
        if not self.has_uninitialized_params():
            return
        self.in_channels = self._get_in_channels(input)
        if self.in_channels % self.groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if self.transposed:
            shape = (self.in_channels, self.out_channels // self.groups, *self.kernel_size)
        else:
            shape = (self.out_channels, self.in_channels // self.groups, *self.kernel_size)
        with torch.no_grad():
            self.weight.materialize(shape)
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()

    def _get_num_spatial_dims(self):
        return len(self.kernel_size)


def _lazy_conv(eager):
    class _LazyConv(_LazyConvXdMixin, eager):
        cls_to_become = eager

        def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                     padding_mode="zeros", device=None, dtype=None):
            # built with no channels and no bias; the placeholders replace the parameters
            super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode)
            self._make_placeholders(out_channels, bias, device, dtype)
    return _LazyConv


def _lazy_conv_transpose(eager):
    class _LazyConvT(_LazyConvXdMixin, eager):
        cls_to_become = eager

        def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, bias=True,
                     dilation=1, padding_mode="zeros", device=None, dtype=None):
            super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation,
                             padding_mode)
            self._make_placeholders(out_channels, bias, device, dtype)
    return _LazyConvT


class LazyConv1d(_lazy_conv(Conv1d)):
    """Conv1d whose in_channels is taken from the first input."""


class LazyConv2d(_lazy_conv(Conv2d)):
    """Conv2d whose in_channels is taken from the first input."""


class LazyConv3d(_lazy_conv(Conv3d)):
    """Conv3d whose in_channels is taken from the first input."""


class LazyConvTranspose1d(_lazy_conv_transpose(ConvTranspose1d)):
    """ConvTranspose1d whose in_channels is taken from the first input."""


class LazyConvTranspose2d(_lazy_conv_transpose(ConvTranspose2d)):
    """ConvTranspose2d whose in_channels is taken from the first input."""


class LazyConvTranspose3d(_lazy_conv_transpose(ConvTranspose3d)):
    """ConvTranspose3d whose in_channels is taken from the first input."""
