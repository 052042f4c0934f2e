"""The batched tensor of vmap: levels, wrapping, unwrapping (Note [vmap batching rules] in vmap.py).

A BatchedTensor is a Tensor subclass whose own tensor is a "shell": a detached alias of one sample of the physical
tensor (an empty tensor for an empty batch), so shape, dtype, device and ndim read the logical values with no work.
`_phys` is the physical tensor, its batch dim first; `_level` the vmap level (1 for the outermost vmap). The
physical tensor of a level-L BatchedTensor is a plain tensor or a BatchedTensor of a lower level, so fully unwrapped
its dims are: the batch dims of its levels in increasing level order, then the logical dims.
"""
import threading

from .. import _C

_state = threading.local()


class _Level:
    __slots__ = ("size", "randomness")

    def __init__(self, size, randomness):
        self.size, self.randomness = size, randomness


def _stack():
    s = getattr(_state, "levels", None)
    if s is None:
        s = _state.levels = []
    return s


def push_level(size, randomness):
    """A new vmap level (numbered from 1, the outermost)."""
    s = _stack()
    s.append(_Level(size, randomness))
    return len(s)


def pop_level(level):
    s = _stack()
    del s[level - 1:]


def level_info(level):
    return _stack()[level - 1]


def active_levels():
    return list(range(1, len(_stack()) + 1))


class BatchedTensor(_C.Tensor):
    """A tensor inside vmap: the logical sample view of `_phys` (batch dim 0) at vmap level `_level`."""
    __slots__ = ("_phys", "_level")

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        from . import batching_rules
        return batching_rules.dispatch(func, types, args, kwargs or {})

    def __repr__(self):
        return f"BatchedTensor(lvl={self._level}, bdim=0, value=\n{self._phys!r}\n)"

    __str__ = __repr__

    def __format__(self, spec):
        if not spec:
            return repr(self)
        return self.item().__format__(spec)  # torch's .item() error

    # the number slots do not go through __torch_function__: each sends its call there, for torch's error
    def __bool__(self):
        return _torch_function_of(self, "__bool__")

    def __int__(self):
        return _torch_function_of(self, "__int__")

    def __float__(self):
        return _torch_function_of(self, "__float__")

    def __index__(self):
        return _torch_function_of(self, "__index__")

    def __complex__(self):
        return _torch_function_of(self, "__complex__")


def _torch_function_of(self, slot):
    from . import batching_rules
    return batching_rules.dispatch(getattr(_C.Tensor, slot), (BatchedTensor,), (self,), {})


def wrap(phys, level):
    """The BatchedTensor at `level` whose physical tensor is phys (batch dim 0)."""
    with _C.DisableTorchFunctionSubclass():
        plain = phys.detach()
        if plain.shape[0]:
            plain = plain.select(0, 0)
        else:
            plain = plain.new_empty(tuple(plain.shape[1:]))
    out = _C.Tensor._make_subclass(BatchedTensor, plain, False)
    out._phys = phys
    out._level = level
    return out


def is_batched(x, level=None):
    return type(x) is BatchedTensor and (level is None or x._level == level)


def levels_of(x):
    """The vmap levels x is batched at, increasing."""
    out = []
    while type(x) is BatchedTensor:
        out.append(x._level)
        x = x._phys
    return out[::-1]


def full_phys(x):
    """x fully unwrapped: a plain tensor whose leading dims are the batch dims of levels_of(x)."""
    while type(x) is BatchedTensor:
        x = x._phys
    return x


def rewrap(plain, levels):
    """The inverse of full_phys: plain's leading dims are the batch dims of `levels` (increasing)."""
    for lv in levels:
        plain = wrap(plain, lv)
    return plain


def promote(x, levels):
    """x batched at every level of `levels` (a superset of its own): the missing batch dims are expanded (views), so
    gradients taken with respect to the result are per sample."""
    own = levels_of(x)
    if own == list(levels):
        return x
    full = full_phys(x)
    for pos, lv in enumerate(levels):
        if lv not in own:
            full = full.unsqueeze(pos)
            sizes = list(full.shape)
            sizes[pos] = level_info(lv).size
            full = full.expand(sizes)
    return rewrap(full, levels)
