"""torch.nn.attention.flex_attention: the names libraries import, without an implementation yet.

`BlockMask` exists for isinstance checks and annotations (transformers imports it unconditionally);
`create_block_mask` and `flex_attention` raise NotImplementedError naming what is missing.
"""

__all__ = ["AuxRequest", "AuxOutput", "BlockMask", "create_block_mask", "flex_attention", "create_mask",
           "and_masks", "or_masks", "noop_mask"]

from typing import NamedTuple

_DEFAULT_SPARSE_BLOCK_SIZE = 128
_LARGE_SPARSE_BLOCK_SIZE = 1 << 30


class AuxRequest(NamedTuple):
    """Which auxiliary outputs flex_attention should return."""
    lse: bool = False
    max_scores: bool = False


class AuxOutput(NamedTuple):
    """flex_attention's auxiliary outputs."""
    lse: object = None
    max_scores: object = None


def _missing(name):
    return NotImplementedError(f"pyctorch does not implement torch.nn.attention.flex_attention.{name} yet")


class BlockMask:
    """flex_attention's block-sparse mask; pyctorch cannot build one yet."""

    def __init__(self, *args, **kwargs):
        raise _missing("BlockMask")

    @classmethod
    def from_kv_blocks(cls, *args, **kwargs):
        raise _missing("BlockMask.from_kv_blocks")


def create_block_mask(mask_mod, B, H, Q_LEN, KV_LEN, device=None, BLOCK_SIZE=_DEFAULT_SPARSE_BLOCK_SIZE,
                      _compile=False, **kwargs):
    raise _missing("create_block_mask")


def create_mask(mod_fn, B, H, Q_LEN, KV_LEN, device=None):
    raise _missing("create_mask")


def flex_attention(query, key, value, score_mod=None, block_mask=None, scale=None, enable_gqa=False,
                   return_lse=False, kernel_options=None, **kwargs):
    raise _missing("flex_attention")


def noop_mask(batch, head, token_q, token_kv):
    """The mask_mod that keeps every position."""
    return batch.new_ones(size=(), dtype=_bool())


def _bool():
    from ... import bool as bool_
    return bool_


def and_masks(*mask_mods):
    """A mask_mod that is the AND of `mask_mods`."""
    def mask(b, h, q_idx, kv_idx):
        result = b.new_ones((), dtype=_bool())
        for m in mask_mods:
            result = result & m(b, h, q_idx, kv_idx)
        return result
    return mask


def or_masks(*mask_mods):
    """A mask_mod that is the OR of `mask_mods`."""
    def mask(b, h, q_idx, kv_idx):
        result = b.new_zeros((), dtype=_bool())
        for m in mask_mods:
            result = result | m(b, h, q_idx, kv_idx)
        return result
    return mask
