"""torch.nn.functional: scaled_dot_product_attention (the fused CPU kernel or torch's math
path), multi_head_attention_forward and their mask helpers.

(A section of pyctorch.nn.functional, which binds every name defined here, public or private:
import them from there. Calls between sections resolve through the shared namespace that
functional.py sets up, Note [Functional sections].)
"""
import math

import pyctorch as torch


_CPP_TYPE = {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
             "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
             "uint8": "unsigned char", "bool": "bool"}


def _cpp_type(dtype):
    name = str(dtype).split(".")[-1]
    return _CPP_TYPE.get(name, name)


def _attn_broadcast(a, b):
    """Broadcast two batch shapes with torch's message for a mismatch."""
    a, b = tuple(a), tuple(b)
    n = max(len(a), len(b))
    a2, b2 = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    out = []
    for i, (x, y) in enumerate(zip(a2, b2)):
        if x != y and x != 1 and y != 1:
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b ({y}) "
                               f"at non-singleton dimension {i}")
        out.append(y if x == 1 else x)
    return tuple(out)


def _safe_softmax(scores):
    """softmax over the last dim where a row of only -inf gives zeros (torch's _safe_softmax)."""
    from .._dynamo.capture import is_capturing
    dead = (scores == -math.inf).all(-1, keepdim=True)
    # the masked form gives the same bits when no row is dead; a compile capture takes it (no data-dependent branch)
    if is_capturing() or bool(dead.any()):
        return scores.masked_fill(dead, 0.0).softmax(-1).masked_fill(dead, 0.0)
    return scores.softmax(-1)


def _sdpa_math(query, key, value, attn_mask, dropout_p, is_causal, scale):
    """torch's math path: materialises the (..., Tq, Tk) weights; differentiable in every input."""
    tq, tk = query.shape[-2], key.shape[-2]
    s = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    scores = (query @ key.transpose(-2, -1)) * s
    if is_causal:
        keep = torch.ones(tq, tk, dtype=torch.bool, device=query.device).tril()
        scores = scores.masked_fill(keep.logical_not(), -math.inf)
    if attn_mask is not None:
        if attn_mask.dtype == torch.bool:
            scores = scores.masked_fill(attn_mask.logical_not(), -math.inf)
        else:
            scores = scores + attn_mask
    weights = _safe_softmax(scores)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p, True)
    return weights @ value


def _sdpa_check(query, key, value, attn_mask, dropout_p, is_causal, enable_gqa):
    if query.dim() < 2 or key.dim() < 2 or value.dim() < 2:
        raise RuntimeError("Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: "
                           f"{query.dim()} key.dim: {key.dim()} and value.dim: {value.dim()} instead.")
    if query.dtype != key.dtype or query.dtype != value.dtype:
        raise RuntimeError("Expected query, key, and value to have the same dtype, but got query.dtype: "
                           f"{_cpp_type(query.dtype)} key.dtype: {_cpp_type(key.dtype)} and value.dtype: "
                           f"{_cpp_type(value.dtype)} instead.")
    if not query.dtype.is_floating_point:
        from .._composites import _cpp
        raise RuntimeError(f"expected scalar type Float but found {_cpp(query.dtype)}")
    if attn_mask is not None:
        if attn_mask.dtype != torch.bool and attn_mask.dtype != torch.float32 and attn_mask.dtype != query.dtype:
            raise RuntimeError("Expected attn_mask dtype to be bool or float or to match query dtype, but got "
                               f"attn_mask.dtype: {_cpp_type(attn_mask.dtype)} and  query.dtype: "
                               f"{_cpp_type(query.dtype)} instead.")
        if is_causal:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True")
        if attn_mask.dim() < 2:
            raise IndexError(f"Dimension out of range (expected to be in range of [-{max(attn_mask.dim(), 1)}, "
                             f"{max(attn_mask.dim(), 1) - 1}], but got -2)")
    if dropout_p > 1.0:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {dropout_p}")
    if enable_gqa and query.dim() < 3:
        raise IndexError(f"Dimension out of range (expected to be in range of [-{query.dim()}, {query.dim() - 1}], "
                         "but got -3)")


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    _sdpa_check(query, key, value, attn_mask, dropout_p, is_causal, enable_gqa)
    tq, tk, e, ev = query.shape[-2], key.shape[-2], query.shape[-1], value.shape[-1]
    qb, kb, vb = tuple(query.shape[:-2]), tuple(key.shape[:-2]), tuple(value.shape[:-2])
    rep_k = rep_v = 1
    if enable_gqa:
        hq, hk, hv = query.shape[-3], key.shape[-3], value.shape[-3]
        if hk == 0 or hv == 0 or hq % hk or hq % hv:
            raise RuntimeError("Number of heads in key and value must divide the number of heads in query")
        rep_k, rep_v = hq // hk, hq // hv
        kb, vb = kb[:-1] + (hq,), vb[:-1] + (hq,)
    # the shape checks of the two batched products of the math path, with their messages
    nb = 1
    for s in _attn_broadcast(qb, kb):
        nb *= s
    if key.shape[-1] != e:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{nb}, {e}] but got: "
                           f"[{nb}, {key.shape[-1]}].")
    if value.shape[-2] != tk:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{nb}, {tk}] but got: "
                           f"[{nb}, {value.shape[-2]}].")
    attn_shape = _attn_broadcast(qb, kb) + (tq, tk)
    if attn_mask is not None:
        full = _attn_broadcast(attn_shape, attn_mask.shape)
        if full != attn_shape:
            raise RuntimeError(f"output with shape {list(attn_shape)} doesn't match the broadcast shape {list(full)}")
    fused = (query.dtype in (torch.float32, torch.float64, torch.bfloat16, torch.float16) and not dropout_p > 0.0 and
             not (attn_mask is not None and attn_mask.requires_grad and torch.is_grad_enabled()))
    if attn_mask is not None and attn_mask.dtype != torch.bool and attn_mask.dtype != query.dtype:
        # the fused kernel adds a float32 mask to a reduced-precision query's float32 scores as it is
        if not (fused and attn_mask.dtype == torch.float32 and query.dtype in (torch.bfloat16, torch.float16)):
            attn_mask = attn_mask.to(query.dtype)
    if not fused:
        if rep_k > 1:
            key = key.repeat_interleave(rep_k, -3)
        if rep_v > 1:
            value = value.repeat_interleave(rep_v, -3)
        return _sdpa_math(query, key, value, attn_mask, dropout_p, is_causal, scale)
    if attn_mask is not None:
        attn_mask = attn_mask.expand(attn_shape)
    if rep_k > 1 or rep_v > 1:
        # grouped heads without copies: query heads (hq) = (hkv, rep) with kv broadcast along rep
        if rep_k == rep_v:
            hkv = hq // rep_k
            query = query.reshape(qb[:-1] + (hkv, rep_k, tq, e))
            key, value = key.unsqueeze(-3), value.unsqueeze(-3)
            if attn_mask is not None:
                attn_mask = attn_mask.reshape(attn_shape[:-3] + (hkv, rep_k, tq, tk))
        else:  # different groupings for key and value: repeat them
            key = key.repeat_interleave(rep_k, -3) if rep_k > 1 else key
            value = value.repeat_interleave(rep_v, -3) if rep_v > 1 else value
    batch = _attn_broadcast(_attn_broadcast(query.shape[:-2], key.shape[:-2]), value.shape[:-2])
    q = query.expand(batch + (tq, e))
    k = key.expand(batch + (tk, e))
    v = value.expand(batch + (tk, ev))
    if attn_mask is not None:
        attn_mask = attn_mask.expand(batch + (tq, tk))
    out = torch._C._flash_attention_cpu(q, k, v, attn_mask, is_causal, scale)[0]
    if rep_k > 1 and rep_k == rep_v:  # (..., hkv, rep, Tq, Ev) -> (..., hq, Tq, Ev)
        out = out.reshape(batch[:-2] + (hq, tq, ev))
    return out


def _flash_attention_double_backward(grads, grad_out, query, key, value, attn_mask, is_causal, scale, grad_logsumexp,
                                     output_mask):
    """The gradient of _flash_attention_cpu_backward (double backward), composite: with
    S = scale Q K^T + mask, P = softmax(S), dP = dO V^T, D = rowsum(P dP) - glse and
    dS = P (dP - D), the backward computed dQ = scale dS K, dK = scale dS^T Q, dV = P^T dO.
    Given the incoming (gQ, gK, gV), W = scale (gQ K^T + Q gK^T) and U = W P, u = rowsum(U):
        grad dP = U - u P,  grad P = W (dP - D) - u dP + dO gV^T,  grad S = softmax backward,
    from which every input's gradient follows (out and logsumexp get none: their effect is
    counted through query/key/value, which they are functions of)."""
    if query.dtype in (torch.bfloat16, torch.float16):  # in float32, as the kernels (logsumexp is float32)
        widen = lambda t: t if t is None or t.dtype in (torch.bool, torch.float32) else t.float()  # noqa: E731
        res = _flash_attention_double_backward([widen(g) for g in grads], widen(grad_out), widen(query), widen(key),
                                               widen(value), widen(attn_mask), is_causal, scale, grad_logsumexp,
                                               output_mask)
        return tuple(r if r is None or i == 4 else r.to(query.dtype) for i, r in enumerate(res))
    gq, gk, gv = grads
    tq, tk = query.shape[-2], key.shape[-2]
    s = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    scores = (query @ key.transpose(-2, -1)) * s
    if is_causal:
        scores = scores.masked_fill(torch.ones(tq, tk, dtype=torch.bool, device=query.device).tril().logical_not(), -math.inf)
    if attn_mask is not None:
        scores = scores.masked_fill(attn_mask.logical_not(), -math.inf) if attn_mask.dtype == torch.bool \
            else scores + attn_mask
    p = _safe_softmax(scores)
    dp = grad_out @ value.transpose(-2, -1)
    d = (p * dp).sum(-1, keepdim=True)
    if grad_logsumexp is not None:
        d = d - grad_logsumexp.unsqueeze(-1)
    ds = p * (dp - d)
    w = (gq @ key.transpose(-2, -1) + query @ gk.transpose(-2, -1)) * s
    u_mat = w * p
    u = u_mat.sum(-1, keepdim=True)
    g_dp = u_mat - u * p
    g_p = w * (dp - d) - u * dp + grad_out @ gv.transpose(-2, -1)
    g_s = p * (g_p - (p * g_p).sum(-1, keepdim=True))
    g_out = g_dp @ value + p @ gv
    g_q = (g_s @ key + ds @ gk) * s
    g_k = (g_s.transpose(-2, -1) @ query + ds.transpose(-2, -1) @ gq) * s
    g_v = g_dp.transpose(-2, -1) @ grad_out
    g_lse = u.squeeze(-1) if grad_logsumexp is not None else None
    return g_out, g_q, g_k, g_v, g_lse


def _none_or_dtype(input):
    if input is None:
        return None
    if isinstance(input, torch.Tensor):
        return input.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or torch.Tensor")


def _canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other=True):
    """A bool mask (True = masked out) becomes an additive float mask of target_type; float masks pass."""
    if mask is None:
        return None
    is_float = mask.is_floating_point()
    if mask.dtype != torch.bool and not is_float:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        import warnings
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. Use same type for both "
                      "instead.")
    if not is_float:
        mask = torch.zeros_like(mask, dtype=target_type).masked_fill_(mask, float("-inf"))
    return mask


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    """True for batched (L, N, E) inputs, False for unbatched (L, E) ones; AssertionError otherwise."""
    if query.dim() == 3:
        if not (key.dim() == 3 and value.dim() == 3):
            raise AssertionError("For batched (3-D) `query`, expected `key` and `value` to be 3-D but found "
                                 f"{key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 2:
            raise AssertionError("For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D but "
                                 f"found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None and attn_mask.dim() not in (2, 3):
            raise AssertionError("For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but "
                                 f"found {attn_mask.dim()}-D tensor instead")
        return True
    if query.dim() == 2:
        if not (key.dim() == 2 and value.dim() == 2):
            raise AssertionError("For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but found "
                                 f"{key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 1:
            raise AssertionError("For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D but "
                                 f"found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None:
            if attn_mask.dim() not in (2, 3):
                raise AssertionError("For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D "
                                     f"but found {attn_mask.dim()}-D tensor instead")
            if attn_mask.dim() == 3:
                expected = (num_heads, query.shape[0], key.shape[0])
                if tuple(attn_mask.shape) != expected:
                    raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got "
                                         f"{tuple(attn_mask.shape)}")
        return False
    raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {query.dim()}-D query "
                         "tensor")


def _in_projection_packed(q, k, v, w, b=None):
    e = q.size(-1)
    if k is v:
        if q is k:  # self-attention: one product
            proj = linear(q, w, b)
            proj = proj.unflatten(-1, (3, e)).unsqueeze(0).transpose(0, -2).squeeze(-2).contiguous()
            return proj[0], proj[1], proj[2]
        w_q, w_kv = w.split([e, e * 2])
        b_q, b_kv = (None, None) if b is None else b.split([e, e * 2])
        q_proj = linear(q, w_q, b_q)
        kv_proj = linear(k, w_kv, b_kv)
        kv_proj = kv_proj.unflatten(-1, (2, e)).unsqueeze(0).transpose(0, -2).squeeze(-2).contiguous()
        return q_proj, kv_proj[0], kv_proj[1]
    w_q, w_k, w_v = w.chunk(3)
    b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def _in_projection(q, k, v, w_q, w_k, w_v, b_q=None, b_k=None, b_v=None):
    eq, ek, ev = q.size(-1), k.size(-1), v.size(-1)
    if w_q.shape != (eq, eq):
        raise AssertionError(f"expecting query weights shape of {(eq, eq)}, but got {tuple(w_q.shape)}")
    if w_k.shape != (eq, ek):
        raise AssertionError(f"expecting key weights shape of {(eq, ek)}, but got {tuple(w_k.shape)}")
    if w_v.shape != (eq, ev):
        raise AssertionError(f"expecting value weights shape of {(eq, ev)}, but got {tuple(w_v.shape)}")
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def _pad_last(x):
    """x with one zero column appended to its last dim (F.pad(x, (0, 1)))."""
    return torch.cat([x, torch.zeros(tuple(x.shape[:-1]) + (1,), dtype=x.dtype)], dim=-1)


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                                 bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
                                 training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
                                 v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
                                 is_causal=False):
    """torch's multi-head attention on (L, N, E) or unbatched (L, E) inputs. need_weights=True goes
    through the materialised weights (returned, averaged over heads by default); need_weights=False
    through scaled_dot_product_attention (the fused kernel)."""
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", _none_or_dtype(attn_mask), "attn_mask",
                                       query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                           "method `generate_square_subsequent_mask` to create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # the causal hint alone drives scaled_dot_product_attention
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, check_other=False)
        if key_padding_mask is not None:
            is_causal = False
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if key.shape[:2] != value.shape[:2]:
            raise AssertionError(f"key's sequence and batch dims {tuple(key.shape[:2])} do not match value's "
                                 f"{tuple(value.shape[:2])}")
    elif key.shape != value.shape:
        raise AssertionError(f"key shape {tuple(key.shape)} does not match value shape {tuple(value.shape)}")
    if not use_separate_proj_weight:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)
    else:
        if q_proj_weight is None or k_proj_weight is None or v_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is True but q/k/v_proj_weight is None")
        b_q = b_k = b_v = None
        if in_proj_bias is not None:
            b_q, b_k, b_v = in_proj_bias.chunk(3)
        q, k, v = _in_projection(query, key, value, q_proj_weight, k_proj_weight, v_proj_weight, b_q, b_k, b_v)
    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be "
                                   f"{(tgt_len, src_len)}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be "
                                   f"{(bsz * num_heads, tgt_len, src_len)}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")
    if bias_k is not None and bias_v is not None:
        if static_k is not None or static_v is not None:
            raise AssertionError("bias cannot be added to static key/value.")
        k = torch.cat([k, bias_k.repeat(1, bsz, 1)])
        v = torch.cat([v, bias_v.repeat(1, bsz, 1)])
        if attn_mask is not None:
            attn_mask = _pad_last(attn_mask)
        if key_padding_mask is not None:
            key_padding_mask = _pad_last(key_padding_mask)
    elif bias_k is not None or bias_v is not None:
        raise AssertionError("bias_k and bias_v must both be given or both be None")
    q = q.view(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    if static_k is None:
        k = k.view(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    else:
        if static_k.size(0) != bsz * num_heads or static_k.size(2) != head_dim:
            raise AssertionError(f"expecting static_k of shape ({bsz * num_heads}, *, {head_dim}), but got "
                                 f"{tuple(static_k.shape)}")
        k = static_k
    if static_v is None:
        v = v.view(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    else:
        if static_v.size(0) != bsz * num_heads or static_v.size(2) != head_dim:
            raise AssertionError(f"expecting static_v of shape ({bsz * num_heads}, *, {head_dim}), but got "
                                 f"{tuple(static_v.shape)}")
        v = static_v
    if add_zero_attn:
        zero = torch.zeros((bsz * num_heads, 1, head_dim), dtype=k.dtype)
        k = torch.cat([k, zero], dim=1)
        v = torch.cat([v, zero], dim=1)
        if attn_mask is not None:
            attn_mask = _pad_last(attn_mask)
        if key_padding_mask is not None:
            key_padding_mask = _pad_last(key_padding_mask)
    src_len = k.size(1)
    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (bsz, src_len):
            raise AssertionError(f"expecting key_padding_mask shape of {(bsz, src_len)}, but got "
                                 f"{tuple(key_padding_mask.shape)}")
        key_padding_mask = key_padding_mask.view(bsz, 1, 1, src_len).expand(-1, num_heads, -1, -1) \
            .reshape(bsz * num_heads, 1, src_len)
        attn_mask = key_padding_mask if attn_mask is None else attn_mask + key_padding_mask
    if not training:
        dropout_p = 0.0
    if need_weights:
        if is_causal and attn_mask is None:
            raise AssertionError("FIXME: is_causal not implemented for need_weights")
        q_scaled = q * math.sqrt(1.0 / float(q.shape[-1]))
        if attn_mask is not None:
            weights = torch.baddbmm(attn_mask, q_scaled, k.transpose(-2, -1))
        else:
            weights = torch.bmm(q_scaled, k.transpose(-2, -1))
        weights = softmax(weights, dim=-1)
        if dropout_p > 0.0:
            weights = dropout(weights, p=dropout_p)
        out = torch.bmm(weights, v)
        out = out.transpose(0, 1).contiguous().view(tgt_len * bsz, embed_dim)
        out = linear(out, out_proj_weight, out_proj_bias)
        out = out.view(tgt_len, bsz, out.size(1))
        weights = weights.view(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(dim=1)
        if not is_batched:
            out, weights = out.squeeze(1), weights.squeeze(0)
        return out, weights
    if attn_mask is not None:
        if attn_mask.size(0) == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.view(bsz, num_heads, -1, src_len)
    q = q.view(bsz, num_heads, tgt_len, head_dim)
    k = k.view(bsz, num_heads, src_len, head_dim)
    v = v.view(bsz, num_heads, src_len, head_dim)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).contiguous().view(bsz * tgt_len, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias)
    out = out.view(tgt_len, bsz, out.size(1))
    if not is_batched:
        out = out.squeeze(1)
    return out, None
