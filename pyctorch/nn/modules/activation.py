"""Activation modules: each wraps its functional form."""
import pyctorch as torch
from .module import Module
from .linear import NonDynamicallyQuantizableLinear
from ..parameter import Parameter
from .. import init
from .. import functional as F

__all__ = ["ReLU", "ReLU6", "LeakyReLU", "GELU", "SiLU", "Mish", "Sigmoid", "Tanh", "Softmax", "LogSoftmax",
           "Softplus", "ELU", "Hardtanh", "PReLU", "Hardswish", "Hardsigmoid", "LogSigmoid", "Softsign",
           "Tanhshrink", "Softshrink", "Hardshrink", "SELU", "GLU", "Softmin", "CELU", "Threshold", "RReLU",
           "Softmax2d", "MultiheadAttention"]


def _activation(name, fn, params=(), repr_fmt=None):
    """A module class wrapping a functional activation; `params` are (name, default) pairs."""
    def __init__(self, *args, **kwargs):
        Module.__init__(self)
        values = dict(params)
        for (k, _), v in zip(params, args):
            values[k] = v
        for k, v in kwargs.items():
            if k not in values:
                raise TypeError(f"{name}.__init__() got an unexpected keyword argument '{k}'")
            values[k] = v
        for k, v in values.items():
            setattr(self, k, v)

    def forward(self, input):
        return fn(input, *[getattr(self, k) for k, _ in params])

    def extra_repr(self):
        if repr_fmt is None:
            return ""
        return repr_fmt.format(**{k: getattr(self, k) for k, _ in params})
    return type(name, (Module,), {"__init__": __init__, "forward": forward, "extra_repr": extra_repr})


def _inplace_repr(self):
    return "inplace=True" if self.inplace else ""


ReLU = _activation("ReLU", F.relu, (("inplace", False),))
ReLU.extra_repr = _inplace_repr
ReLU6 = _activation("ReLU6", F.relu6, (("inplace", False),))
ReLU6.extra_repr = _inplace_repr
LeakyReLU = _activation("LeakyReLU", F.leaky_relu, (("negative_slope", 0.01), ("inplace", False)),
                        "negative_slope={negative_slope}")
GELU = _activation("GELU", F.gelu, (("approximate", "none"),), "approximate='{approximate}'")
SiLU = _activation("SiLU", F.silu, (("inplace", False),))
Mish = _activation("Mish", F.mish, (("inplace", False),))
Sigmoid = _activation("Sigmoid", F.sigmoid)
Tanh = _activation("Tanh", F.tanh)
Softplus = _activation("Softplus", F.softplus, (("beta", 1.0), ("threshold", 20.0)),
                       "beta={beta}, threshold={threshold}")
ELU = _activation("ELU", F.elu, (("alpha", 1.0), ("inplace", False)), "alpha={alpha}")
Hardtanh = _activation("Hardtanh", F.hardtanh, (("min_val", -1.0), ("max_val", 1.0), ("inplace", False)),
                       "min_val={min_val}, max_val={max_val}")
Softmax = _activation("Softmax", F.softmax, (("dim", None),), "dim={dim}")
LogSoftmax = _activation("LogSoftmax", F.log_softmax, (("dim", None),), "dim={dim}")


class PReLU(Module):
    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        super().__init__()
        self.num_parameters = num_parameters
        self.init = init
        self.weight = Parameter(torch.empty(num_parameters, dtype=dtype, device=device))
        self.reset_parameters()

    def reset_parameters(self):
        with torch.no_grad():
            self.weight.fill_(self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


Hardswish = _activation("Hardswish", F.hardswish, (("inplace", False),))
Hardsigmoid = _activation("Hardsigmoid", F.hardsigmoid, (("inplace", False),))
LogSigmoid = _activation("LogSigmoid", F.logsigmoid)
Softsign = _activation("Softsign", F.softsign)
Tanhshrink = _activation("Tanhshrink", F.tanhshrink)
Softshrink = _activation("Softshrink", F.softshrink, (("lambd", 0.5),), "{lambd}")
Hardshrink = _activation("Hardshrink", F.hardshrink, (("lambd", 0.5),), "{lambd}")
SELU = _activation("SELU", F.selu, (("inplace", False),))
SELU.extra_repr = _inplace_repr
GLU = _activation("GLU", F.glu, (("dim", -1),), "dim={dim}")
Softmin = _activation("Softmin", F.softmin, (("dim", None),), "dim={dim}")


class CELU(Module):
    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input):
        return F.celu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class Threshold(Module):
    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        return f"threshold={self.threshold}, value={self.value}" + (", inplace=True" if self.inplace else "")


class RReLU(Module):
    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return f"lower={self.lower}, upper={self.upper}" + (", inplace=True" if self.inplace else "")


class Softmax2d(Module):
    def forward(self, input):
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D instead")
        return F.softmax(input, -3)


class MultiheadAttention(Module):
    __constants__ = ["batch_first"]

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False, add_zero_attn=False,
                 kdim=None, vdim=None, batch_first=False, device=None, dtype=None):
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} and "
                             f"num_heads={num_heads} instead")
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != self.embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = Parameter(torch.empty((embed_dim, embed_dim), dtype=dtype, device=device))
            self.k_proj_weight = Parameter(torch.empty((embed_dim, self.kdim), dtype=dtype, device=device))
            self.v_proj_weight = Parameter(torch.empty((embed_dim, self.vdim), dtype=dtype, device=device))
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = Parameter(torch.empty((3 * embed_dim, embed_dim), dtype=dtype, device=device))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(torch.empty(3 * embed_dim, dtype=dtype, device=device))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, dtype=dtype, device=device)
        if add_bias_kv:
            self.bias_k = Parameter(torch.empty((1, 1, embed_dim), dtype=dtype, device=device))
            self.bias_v = Parameter(torch.empty((1, 1, embed_dim), dtype=dtype, device=device))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self):
        # torch's order (seeded init matches): out_proj's own Linear init ran in its constructor
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True, is_causal=False):
        is_batched = query.dim() == 3
        key_padding_mask = F._canonical_mask(key_padding_mask, "key_padding_mask", F._none_or_dtype(attn_mask),
                                             "attn_mask", query.dtype)
        attn_mask = F._canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, check_other=False)
        if self.batch_first and is_batched:
            # keep `key is value` / `query is key`: they select the packed input projections
            if key is value:
                if query is key:
                    query = key = value = query.transpose(1, 0)
                else:
                    query, key = (x.transpose(1, 0) for x in (query, key))
                    value = key
            else:
                query, key, value = (x.transpose(1, 0) for x in (query, key, value))
        common = dict(training=self.training, key_padding_mask=key_padding_mask, need_weights=need_weights,
                      attn_mask=attn_mask, average_attn_weights=average_attn_weights, is_causal=is_causal)
        if not self._qkv_same_embed_dim:
            out, weights = F.multi_head_attention_forward(
                query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight, self.in_proj_bias,
                self.bias_k, self.bias_v, self.add_zero_attn, self.dropout, self.out_proj.weight, self.out_proj.bias,
                use_separate_proj_weight=True, q_proj_weight=self.q_proj_weight, k_proj_weight=self.k_proj_weight,
                v_proj_weight=self.v_proj_weight, **common)
        else:
            out, weights = F.multi_head_attention_forward(
                query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight, self.in_proj_bias,
                self.bias_k, self.bias_v, self.add_zero_attn, self.dropout, self.out_proj.weight, self.out_proj.bias,
                **common)
        if self.batch_first and is_batched:
            return out.transpose(1, 0), weights
        return out, weights

    def merge_masks(self, attn_mask, key_padding_mask, query):
        """The combined additive mask (N, num_heads, L, S) and its type, as torch's merge_masks."""
        mask_type = None
        merged = None
        if key_padding_mask is not None:
            mask_type = 1
            merged = key_padding_mask
        if attn_mask is not None:
            batch_size, seq_len, _ = query.shape
            mask_type = 2
            if attn_mask.dim() == 3:
                attn_mask_expanded = attn_mask.view(batch_size, -1, seq_len, seq_len)
            else:
                attn_mask_expanded = attn_mask.view(1, 1, seq_len, seq_len).expand(batch_size, self.num_heads, -1, -1)
            merged = attn_mask_expanded
            if key_padding_mask is not None:
                key_padding_mask_expanded = key_padding_mask.view(batch_size, 1, 1, seq_len) \
                    .expand(-1, self.num_heads, -1, -1)
                merged = attn_mask_expanded + key_padding_mask_expanded
        return merged, mask_type
