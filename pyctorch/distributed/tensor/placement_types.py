"""torch.distributed.tensor.placement_types: how a DTensor lies on a device mesh dimension.

These are plain values (equality, hashing, repr as in torch) with the shard-size arithmetic torch
uses; pyctorch has no DTensor or DeviceMesh yet, so nothing here moves data.
"""
__all__ = ["Placement", "Shard", "Replicate", "Partial"]


class Placement:
    """Base of the placement types."""

    def is_shard(self, dim=None):
        return False

    def is_replicate(self):
        return False

    def is_partial(self, reduce_op=None):
        return False


class Shard(Placement):
    """Sharded along tensor dimension `dim` over a mesh dimension (chunks as torch.chunk makes them)."""

    def __init__(self, dim):
        self.dim = dim

    def is_shard(self, dim=None):
        return dim is None or dim == self.dim

    @staticmethod
    def local_shard_size_and_offset(curr_local_size, num_chunks, rank):
        """(this rank's chunk size, its offset) when `curr_local_size` is split into num_chunks."""
        full_chunk = (curr_local_size + num_chunks - 1) // num_chunks
        start = full_chunk * rank
        end = min(curr_local_size, start + full_chunk)
        return max(0, end - start), min(curr_local_size, start)

    _local_shard_size_and_offset = local_shard_size_and_offset

    def __eq__(self, other):
        return type(other) is type(self) and other.dim == self.dim

    def __hash__(self):
        return hash((type(self).__name__, self.dim))

    def __repr__(self):
        return f"Shard(dim={self.dim})"

    def __str__(self):
        return f"S({self.dim})"


class _StridedShard(Shard):
    """A Shard whose chunks interleave with an outer sharding of the same dimension (split_factor)."""

    def __init__(self, dim, split_factor):
        super().__init__(dim)
        self.split_factor = split_factor

    def __eq__(self, other):
        return type(other) is type(self) and (other.dim, other.split_factor) == (self.dim, self.split_factor)

    def __hash__(self):
        return hash((type(self).__name__, self.dim, self.split_factor))

    def __repr__(self):
        return f"_StridedShard(dim={self.dim}, sf={self.split_factor})"

    def __str__(self):
        return f"_S({self.dim}, {self.split_factor})"


class Replicate(Placement):
    """The whole tensor on every rank of the mesh dimension."""

    def is_replicate(self):
        return True

    def __eq__(self, other):
        return type(other) is Replicate

    def __hash__(self):
        return -1

    def __repr__(self):
        return "Replicate()"

    def __str__(self):
        return "R"


class Partial(Placement):
    """Each rank holds a partial value; the full one is their reduction with `reduce_op`."""

    def __init__(self, reduce_op="sum"):
        self.reduce_op = reduce_op

    def is_partial(self, reduce_op=None):
        return reduce_op is None or reduce_op == self.reduce_op

    def __eq__(self, other):
        return type(other) is type(self) and other.reduce_op == self.reduce_op

    def __hash__(self):
        return 1 + hash(self.reduce_op)

    def __repr__(self):
        return f"Partial({self.reduce_op})"

    def __str__(self):
        return f"P({self.reduce_op})"
