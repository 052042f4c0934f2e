"""fused_bias_gelu: gelu(x + bias) in one pass, from the C extension beside this file, with its own backward.

    from fused_bias_gelu import fused_bias_gelu
    y = fused_bias_gelu(x, bias)        # x: [..., C], bias: [C], float32 or float64, on the CPU

The extension is compiled on first use by torch.utils.cpp_extension.load (and cached: later runs load the binary);
README.md in this folder shows the setup.py build of the same source. Run this file to check it against the
composition gelu(x + bias).
"""
import os

import pyctorch as torch
from pyctorch.utils import cpp_extension

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "fused_bias_gelu.c")
WARNING_FLAGS = ["-Wall", "-Wextra", "-Werror"]  # the example compiles without a warning; keep it so


def load_extension(build_directory=None, verbose=False):
    """The compiled module (forward, backward); compiled once per source version (cached)."""
    return cpp_extension.load("fused_bias_gelu_ext", [SOURCE], extra_cflags=WARNING_FLAGS,
                              build_directory=build_directory, verbose=verbose)


_ext = None


def _extension():
    global _ext
    if _ext is None:
        _ext = load_extension()
    return _ext


class FusedBiasGelu(torch.autograd.Function):
    """Autograd for the two kernels: forward saves x and bias, backward returns (grad_x, grad_bias)."""

    @staticmethod
    def forward(ctx, x, bias, ext=None):
        ext = ext or _extension()
        ctx.ext = ext
        ctx.save_for_backward(x, bias)
        return ext.forward(x, bias)

    @staticmethod
    def backward(ctx, grad):
        x, bias = ctx.saved_tensors
        grad_x, grad_bias = ctx.ext.backward(grad, x, bias)
        return grad_x, grad_bias, None


def fused_bias_gelu(x, bias, ext=None):
    """gelu(x + bias) (exact GELU), bias broadcast over x's last dim; differentiable in x and bias. `ext` is a module
    from load_extension() (by default the one cached in ~/.cache or $TORCH_EXTENSIONS_DIR)."""
    return FusedBiasGelu.apply(x, bias, ext)


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(4, 8, dtype=torch.float64, requires_grad=True)
    bias = torch.randn(8, dtype=torch.float64, requires_grad=True)
    y = fused_bias_gelu(x, bias)
    expected = torch.nn.functional.gelu(x + bias)
    print("max |fused - composition|:", (y - expected).abs().max().item())
    print("gradcheck:", torch.autograd.gradcheck(fused_bias_gelu, (x, bias)))
