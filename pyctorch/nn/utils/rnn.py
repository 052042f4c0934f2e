"""Sequence packing (torch.nn.utils.rnn): PackedSequence, pack/pad helpers.

A PackedSequence holds the steps of a batch of sequences sorted by decreasing length, time-major:
`data` stacks, for t = 0, 1, ..., the rows of the sequences still running at step t, and
`batch_sizes[t]` says how many there are. The recurrent modules read that layout directly."""
from collections import namedtuple

import pyctorch as torch

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence",
           "unpad_sequence", "pack_sequence", "unpack_sequence"]


class PackedSequence(namedtuple("PackedSequence", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])):
    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None and sorted_indices is not None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:  # PackedSequence(data, batch_sizes) passed as a pair
            data, batch_sizes = data
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        data = self.data.to(*args, **kwargs)
        return self if data is self.data else type(self)(data, self.batch_sizes, self.sorted_indices,
                                                          self.unsorted_indices)

    def float(self):
        return self.to(dtype=torch.float32)

    def double(self):
        return self.to(dtype=torch.float64)

    @property
    def is_cuda(self):
        return False

    def is_pinned(self):
        return False


def invert_permutation(permutation):
    if permutation is None:
        return None
    output = torch.empty_like(permutation)
    output.scatter_(0, permutation, torch.arange(0, permutation.numel(), dtype=torch.int64))
    return output


def _lengths_list(lengths):
    if isinstance(lengths, torch.Tensor):
        if lengths.dim() != 1:
            raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got {lengths.dim()}D tensor")
        return [int(v) for v in lengths.tolist()]
    return [int(v) for v in lengths]


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Packs a padded batch (T, B, *) — (B, T, *) with batch_first — of sequences of the given lengths."""
    lengths = _lengths_list(lengths)
    batch_dim = 0 if batch_first else 1
    if len(lengths) != input.shape[batch_dim]:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {len(lengths)} "
                           f"(batch_size={input.shape[batch_dim]})")
    if enforce_sorted:
        sorted_indices = None
    else:
        lengths_t, sorted_indices = torch.sort(torch.tensor(lengths, dtype=torch.int64), descending=True)
        lengths = lengths_t.tolist()
        input = input.index_select(batch_dim, sorted_indices)
    if lengths and lengths[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' "
                           "that is <= 0")
    for a, b in zip(lengths, lengths[1:]):
        if b > a:
            raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
                               "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence "
                               "to sidestep this requirement if you do not need ONNX exportability.")
    if batch_first:
        input = input.transpose(0, 1)
    if lengths and lengths[0] > input.shape[0]:
        raise RuntimeError(f"Expected sequence length to be larger than or equal to {lengths[0]}, "
                           f"but got {input.shape[0]}")
    batch_sizes = [sum(1 for n in lengths if n > t) for t in range(lengths[0] if lengths else 0)]
    data = torch.cat([input[t, :b] for t, b in enumerate(batch_sizes)]) if batch_sizes else input[:0, 0]
    return PackedSequence(data, torch.tensor(batch_sizes, dtype=torch.int64), sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Inverse of pack_padded_sequence: (padded batch, lengths as an int64 tensor)."""
    data, batch_sizes = sequence.data, [int(b) for b in sequence.batch_sizes.tolist()]
    max_len = len(batch_sizes)
    if total_length is not None:
        if total_length < max_len:
            raise ValueError("Expected total_length to be at least the length of the longest sequence in input, "
                             f"but got total_length={total_length} and max sequence length being {max_len}")
    else:
        total_length = max_len
    batch = batch_sizes[0] if batch_sizes else 0
    feature = tuple(data.shape[1:])
    steps, offset = [], 0
    for b in batch_sizes:
        step = data[offset:offset + b]
        offset += b
        if b < batch:
            step = torch.cat([step, data.new_full((batch - b,) + feature, padding_value)])
        steps.append(step)
    steps += [data.new_full((batch,) + feature, padding_value)] * (total_length - max_len)
    padded = torch.stack(steps) if steps else data.new_full((0, batch) + feature, padding_value)
    lengths = torch.tensor([sum(1 for b in batch_sizes if b > i) for i in range(batch)], dtype=torch.int64)
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(1, sequence.unsorted_indices)
        lengths = lengths[sequence.unsorted_indices]
    if batch_first:
        padded = padded.transpose(0, 1)
    return padded, lengths


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stacks tensors of shape (L_i, *) into (max L, B, *) — (B, max L, *) with batch_first — padded."""
    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    if isinstance(sequences, torch.Tensor):
        sequences = sequences.unbind(0)
    sequences = list(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    max_len = max(s.shape[0] for s in sequences)
    rows = []
    for s in sequences:
        missing = max_len - s.shape[0]
        if missing:
            fill = s.new_full((missing,) + tuple(s.shape[1:]), padding_value)
            s = torch.cat([s, fill] if padding_side == "right" else [fill, s])
        rows.append(s)
    out = torch.stack(rows)
    return out if batch_first else out.transpose(0, 1)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq[:int(n)] for seq, n in zip(padded_sequences, _lengths_list(lengths))]


def pack_sequence(sequences, enforce_sorted=True):
    lengths = torch.tensor([s.shape[0] for s in sequences], dtype=torch.int64)
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
