"""torch.nn.functional: composites over the op table (autograd follows from the ops' formulas)."""
import math

import pyctorch as torch
from . import _reduction as _Reduction

__all__ = ["linear", "relu", "relu_", "leaky_relu", "gelu", "silu", "tanh", "sigmoid", "softmax", "log_softmax",
           "softplus", "elu", "selu", "celu", "relu6", "hardtanh", "mish", "dropout", "mse_loss", "l1_loss", "smooth_l1_loss",
           "huber_loss", "nll_loss", "cross_entropy", "binary_cross_entropy", "binary_cross_entropy_with_logits",
           "one_hot", "normalize", "dropout1d", "dropout2d", "dropout3d", "prelu", "bilinear", "kl_div",
           "cosine_similarity", "pairwise_distance", "cosine_embedding_loss"]


# Note [Functional sections]
# The functions live in package-private section modules (_functional_activation.py, ...,
# _functional_extras.py), each bound here under its name with __module__ set to this module, so
# pyctorch.nn.functional.X, pickling by reference and error messages read as before. Bodies
# look names up in their section's globals: after the wrappers below (autocast, argument
# checks) replace functions here, every section's globals receive this module's final names,
# so a call from one function to another reaches the same (wrapped) object it reached when all
# of them lived in one file. _autocast_wrap_functional() runs again once the extras are bound, so the
# fp32-listed losses among them compute in float32 under autocast, as torch's do.
import importlib as _importlib


def _bind_section(name):
    """Binds every non-dunder name of the section module pyctorch.nn.<name> here."""
    section = _importlib.import_module(__name__.rpartition(".")[0] + "." + name)
    for key, value in vars(section).items():
        if key.startswith("__"):
            continue
        if getattr(value, "__module__", None) == section.__name__:
            value.__module__ = __name__
        globals()[key] = value
    return section


_SECTIONS = [_bind_section("_functional_loss"), _bind_section("_functional_activation"),
             _bind_section("_functional_distance")]

# ---- attention ----
# scaled_dot_product_attention runs the fused kernel _flash_attention_cpu (csrc/aten/cpu/attention.c,
# Note [Flash attention on the CPU]) for floating dtypes without dropout, and torch's math path
# (materialised weights) otherwise: dropout, a mask that needs a gradient.
__all__ += ["scaled_dot_product_attention", "multi_head_attention_forward"]
_SECTIONS.append(_bind_section("_functional_attention"))


# ---- normalization, embedding ----
__all__ += ["layer_norm", "rms_norm", "group_norm", "batch_norm", "instance_norm", "embedding"]
_SECTIONS.append(_bind_section("_functional_norm"))


# ---- pooling, padding, interpolation ----
# Thin wrappers over the table ops of csrc/aten/ops_pool.def, with torch's Python-level
# argument handling (return_indices, None entries of adaptive output sizes, F.interpolate's
# output-size and scale rules).
__all__ += ["max_pool1d", "max_pool2d", "max_pool1d_with_indices", "max_pool2d_with_indices", "avg_pool1d",
            "avg_pool2d", "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_max_pool1d",
            "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d", "adaptive_max_pool2d_with_indices", "pad",
            "interpolate", "upsample", "upsample_nearest", "upsample_bilinear"]
_SECTIONS.append(_bind_section("_functional_pool"))

# ---- 3-d pooling, unpooling, fractional pooling, grid sampling, embedding bag, CTC loss (issue 20) ----
# Wrappers over csrc/aten/ops_nn_extra.def (3-d pools, grid_sampler_2d/3d, _embedding_bag, _ctc_loss) and
# composites (max_unpool*, fractional_max_pool2d, affine_grid).
__all__ += ["max_pool3d", "max_pool3d_with_indices", "avg_pool3d", "adaptive_avg_pool3d", "adaptive_max_pool3d",
            "adaptive_max_pool3d_with_indices", "max_unpool1d", "max_unpool2d", "max_unpool3d",
            "fractional_max_pool2d", "fractional_max_pool2d_with_indices", "grid_sample", "affine_grid",
            "embedding_bag", "ctc_loss"]
_SECTIONS.append(_bind_section("_functional_nn_extra"))


# ---- convolution ----
# torch.conv1d/2d/3d, conv_transpose1d/2d/3d (also exported as pyctorch.<name>), unfold and fold.
# The batched problem is the table op `convolution` (csrc/aten/cpu/conv.c); what torch does in its
# C++ front functions happens here: unbatched inputs, padding='same'/'valid'.
__all__ += ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "unfold", "fold"]
_SECTIONS.append(_bind_section("_functional_conv"))


# ---- autocast (issue 6: mixed precision) ----
# Functions torch's CPU autocast lists as single ops but which are compositions here: inside a
# torch.autocast("cpu") region their floating inputs are cast like an op of the table
# (csrc/autograd/autocast.c, through its weight cache) and their bodies run with autocast off,
# as torch runs an op below its Autocast key; outside a region the wrapper costs one C call.
# Ops of the table (matmul, mm, convolution, cat...) are cast by the dispatcher itself.
def _autocast_composite(fn, lower):
    import functools
    C = torch._C
    active, cast, Tensor, set_enabled = C._autocast_cpu_active, C._autocast_cast, C.Tensor, C.set_autocast_enabled

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        dtype = active()
        if dtype is None:
            return fn(*args, **kwargs)
        if not lower:
            dtype = C.float32
        args = [cast(a, dtype) if isinstance(a, Tensor) else a for a in args]
        kwargs = {k: cast(v, dtype) if isinstance(v, Tensor) else v for k, v in kwargs.items()}
        set_enabled("cpu", False)
        try:
            return fn(*args, **kwargs)
        finally:
            set_enabled("cpu", True)

    wrapper.__wrapped_autocast__ = fn
    return wrapper


def _autocast_wrap_functional():
    # (the convolutions need no wrapper: they reach the convolution op, which the dispatcher casts)
    lower = ("linear", "prelu", "scaled_dot_product_attention")
    fp32 = ("mse_loss", "l1_loss", "huber_loss", "smooth_l1_loss", "nll_loss", "cross_entropy", "binary_cross_entropy",
            "binary_cross_entropy_with_logits", "kl_div", "cosine_embedding_loss", "hinge_embedding_loss",
            "poisson_nll_loss", "margin_ranking_loss", "soft_margin_loss", "triplet_margin_loss", "multi_margin_loss",
            "multilabel_margin_loss", "ctc_loss", "avg_pool3d", "max_pool3d", "adaptive_avg_pool3d",
            "adaptive_max_pool3d")
    g = globals()
    for names, is_lower in ((lower, True), (fp32, False)):
        for name in names:
            if name in g and not hasattr(g[name], "__wrapped_autocast__"):
                g[name] = _autocast_composite(g[name], is_lower)


_autocast_wrap_functional()


# ---- torch-namespace composites (pyctorch/_composites.py): threshold, hardshrink, alpha dropout, pixel shuffle ----
__all__ += ["threshold", "threshold_", "hardshrink", "selu_", "celu_", "alpha_dropout", "feature_alpha_dropout",
            "pixel_shuffle", "pixel_unshuffle"]
from .._composites import pixel_shuffle, pixel_unshuffle, hardshrink, threshold_  # noqa: E402,F401


# ---- nn extras ----
# Activations, local response norm, extra losses, gumbel softmax, LP pooling and channel shuffle, all
# composites of existing ops (autograd follows).
__all__ += ["hardswish", "hardsigmoid", "logsigmoid", "softsign", "tanhshrink", "softshrink", "glu", "softmin",
            "rrelu", "rrelu_", "elu_", "leaky_relu_", "hardtanh_", "local_response_norm", "margin_ranking_loss",
            "hinge_embedding_loss", "soft_margin_loss", "multilabel_soft_margin_loss", "multi_margin_loss",
            "triplet_margin_loss", "triplet_margin_with_distance_loss", "poisson_nll_loss", "gaussian_nll_loss",
            "gumbel_softmax", "lp_pool1d", "lp_pool2d", "channel_shuffle"]
_SECTIONS.append(_bind_section("_functional_extras"))
_autocast_wrap_functional()  # the fp32-listed losses of the extras (margin_ranking_loss, ...) too, as torch's autocast


# Note [Python-level tensor arguments]: torch's TypeError for a non-tensor argument (op names as torch's messages)
from .._arg_check import guard as _guard  # noqa: E402
_guard(globals(), {
    "alpha_dropout": (None, ("input",)), "feature_alpha_dropout": (None, ("input",)),
    "celu_": (None, ("input",)), "elu_": (None, ("input",)), "selu_": (None, ("input",)), "relu_": (None, ("input",)),
    "hardtanh_": (None, ("input",)), "leaky_relu_": (None, ("input",)), "rrelu_": (None, ("input",)),
    "threshold_": (None, ("input",)), "conv1d": (None, ("input", "weight", "bias")),
    "conv2d": (None, ("input", "weight", "bias")), "conv3d": (None, ("input", "weight", "bias")),
    "cosine_similarity": (None, ("x1", "x2")), "pairwise_distance": (None, ("x1", "x2")),
    "cross_entropy": ("cross_entropy_loss", ("input", "target", "weight")),
    "nll_loss": ("nll_loss_nd", ("input", "target", "weight")), "kl_div": (None, ("input", "target")),
    "multi_margin_loss": (None, ("input", "target", "weight")),
    "multilabel_soft_margin_loss": ("log_sigmoid", ("input",)),
    "hardsigmoid": (None, ("input",)), "hardswish": (None, ("input",)), "mish": (None, ("input",)),
    "logsigmoid": ("log_sigmoid", ("input",)), "softshrink": (None, ("input",)), "rrelu": (None, ("input",)),
    "threshold": (None, ("input",)), "linear": (None, ("input", "weight", "bias")),
    "bilinear": (None, ("input1", "input2", "weight", "bias")),
    "max_pool1d": (None, ("input",)), "max_pool2d": (None, ("input",)),
    "max_pool1d_with_indices": (None, ("input",)), "max_pool2d_with_indices": (None, ("input",)),
    "one_hot": (None, ("input",)), "poisson_nll_loss": (None, ("input", "target")),
    "prelu": (None, ("input", "weight")),
    "scaled_dot_product_attention": (None, ("query", "key", "value", "attn_mask")),
    "triplet_margin_loss": (None, ("anchor", "positive", "negative")),
    "batch_norm": (None, ("input", "running_mean?", "running_var?", "weight", "bias")),
    "channel_shuffle": (None, ("input",)), "cosine_embedding_loss": (None, ("input1", "input2", "target")),
})

# Note [Torch function check]: the outermost layer of each function asks whether __torch_function__ takes the call
from ..overrides import _wrap_namespace  # noqa: E402
_wrap_namespace(globals(), __all__)

# Note [Functional sections]: every section sees this module's final names.
for _section in _SECTIONS:
    vars(_section).update({k: v for k, v in globals().items()
                           if not k.startswith("__") and k not in ("_section", "_SECTIONS", "_bind_section", "_importlib")})
del _section, _SECTIONS, _bind_section, _importlib
