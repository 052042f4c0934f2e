"""DistributedSampler: each of num_replicas processes reads its own 1/num_replicas of the
dataset (rank r takes every num_replicas-th index from r), padded or trimmed so that all
replicas see the same number of samples; shuffled with seed + epoch (set_epoch)."""
import math

import pyctorch

from .sampler import Sampler

__all__ = ["DistributedSampler"]


def _process_group_value(getter_name):
    """World size or rank of the default process group; without one, torch's ValueError
    (pyctorch.distributed may be absent from this build: then no group can exist)."""
    try:
        import pyctorch.distributed as dist
    except ImportError:
        dist = None
    if dist is not None and getattr(dist, "is_available", lambda: True)() and dist.is_initialized():
        return getattr(dist, getter_name)()
    raise ValueError("Default process group has not been initialized, please make sure to call init_process_group.")


class DistributedSampler(Sampler):
    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False):
        if num_replicas is None:
            num_replicas = _process_group_value("get_world_size")
        if rank is None:
            rank = _process_group_value("get_rank")
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(self.dataset)
        if self.drop_last and n % self.num_replicas != 0:
            # drop the tail so every replica gets the same count
            self.num_samples = math.ceil((n - self.num_replicas) / self.num_replicas)
        else:
            self.num_samples = math.ceil(n / self.num_replicas)
        self.total_size = self.num_samples * self.num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            g = pyctorch.Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = pyctorch.randperm(n, generator=g).tolist()
        else:
            indices = list(range(n))
        if not self.drop_last:
            pad = self.total_size - len(indices)
            if pad <= len(indices):
                indices += indices[:pad]
            else:
                indices += (indices * math.ceil(pad / len(indices)))[:pad]
        else:
            indices = indices[:self.total_size]
        if len(indices) != self.total_size:
            raise AssertionError(f"Number of indices ({len(indices)}) does not match total_size ({self.total_size})")
        indices = indices[self.rank:self.total_size:self.num_replicas]
        if len(indices) != self.num_samples:
            raise AssertionError(
                f"Number of subsampled indices ({len(indices)}) does not match num_samples ({self.num_samples})")
        return iter(indices)

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """Sets the epoch, so that shuffle=True gives each epoch its own order (the same on all replicas)."""
        self.epoch = epoch
