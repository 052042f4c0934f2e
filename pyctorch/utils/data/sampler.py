"""Samplers: iterables of dataset indices (or of lists of indices, for BatchSampler).

Random samplers draw exactly what torch's draw, in the same order, so a seeded run visits
the samples in torch's order: RandomSampler without a generator seeds a private Generator
with one int64 drawn from the global generator (on first use of each iterator), then takes
randperm / randint from it."""
import itertools
from typing import Generic, TypeVar

import pyctorch

__all__ = ["BatchSampler", "RandomSampler", "Sampler", "SequentialSampler", "SubsetRandomSampler",
           "WeightedRandomSampler"]

T_co = TypeVar("T_co", covariant=True)


class Sampler(Generic[T_co]):
    """Base class: subclasses define __iter__ (indices) and usually __len__."""

    def __iter__(self):
        raise NotImplementedError


class SequentialSampler(Sampler[int]):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


def _seeded_generator():
    """A Generator seeded from the global one (one int64 draw), as torch's samplers do."""
    seed = int(pyctorch.empty((), dtype=pyctorch.int64).random_().item())
    g = pyctorch.Generator()
    g.manual_seed(seed)
    return g


class RandomSampler(Sampler[int]):
    """A random permutation of the indices (each epoch a new one), or num_samples indices
    drawn with replacement."""

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={self.replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={self.num_samples}")

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n = len(self.data_source)
        g = _seeded_generator() if self.generator is None else self.generator
        count = self.num_samples
        if self.replacement:
            # in chunks of 32 draws, as torch (the chunking decides the random stream)
            for _ in range(count // 32):
                yield from pyctorch.randint(high=n, size=(32,), dtype=pyctorch.int64, generator=g).tolist()
            yield from pyctorch.randint(high=n, size=(count % 32,), dtype=pyctorch.int64, generator=g).tolist()
        else:
            for _ in range(count // n):
                yield from pyctorch.randperm(n, generator=g).tolist()
            yield from pyctorch.randperm(n, generator=g).tolist()[:count % n]

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler[int]):
    """The given indices in a random order (without replacement)."""

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        for i in pyctorch.randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler[int]):
    """num_samples indices drawn with probabilities proportional to weights."""

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got replacement={replacement}")
        w = pyctorch.as_tensor(weights, dtype=pyctorch.double)
        if len(w.shape) != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape {tuple(w.shape)}")
        self.weights = w
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        drawn = pyctorch.multinomial(self.weights, self.num_samples, self.replacement, generator=self.generator)
        yield from iter(drawn.tolist())

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler[list]):
    """Groups the indices of `sampler` into lists of batch_size (the last one shorter unless
    drop_last)."""

    def __init__(self, sampler, batch_size, drop_last):
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        it = iter(self.sampler)
        size = self.batch_size
        if self.drop_last:
            yield from map(list, zip(*([it] * size)))
        else:
            while True:
                batch = list(itertools.islice(it, size))
                if not batch:
                    return
                yield batch

    def __len__(self):
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else (n + self.batch_size - 1) // self.batch_size
