"""The index family on CUDA through the device-neutral driver (Note [Device indexing] in
csrc/aten/cpu/index_device.c): gather, scatter (src / value, reduce="add" / "multiply"), scatter_add, scatter_reduce
(sum / prod / mean / amax / amin, include_self or not), index_select, index_add / index_copy / index_fill, take, put_,
x[idx], x[idx] = v and index_put_(accumulate=True), against the CPU's results bit for bit (values and gradients) and
torch's CPU results where torch is installed; non-contiguous inputs, negative dims and indices, empty tensors, every
dtype the CPU runs; out-of-range indices raise the CPU's errors; the ops are served by the device, not the fallback."""
import numpy as np
import pytest

import pyctorch as torch

try:
    import torch as _real_torch  # noqa: F401  (the oracle; its comparisons skip without it)
    HAVE_TORCH = True
except ImportError:
    HAVE_TORCH = False

DEV = "cuda"
SIMULATED = torch.cuda.get_device_name(0) == "pyctorch simulated CUDA device"
INDEX_OPS = {"gather", "scatter", "scatter_add", "scatter_reduce", "index_select", "index_add", "index_copy",
             "index_fill", "take", "put", "index_put"}


def gen(seed):
    return torch.Generator().manual_seed(seed)


def rand(*shape, seed=0, dtype=torch.float32):
    return torch.randn(tuple(shape), generator=gen(seed)).to(dtype)


def randint(high, *shape, seed=1):
    return torch.randint(0, high, shape, generator=gen(seed))


def cuda(t):
    return t.to(DEV) if isinstance(t, torch.Tensor) else t


def same(got, want):
    """Bit for bit: the device visits contributions in the CPU's order."""
    assert got.device.type == "cuda" and got.dtype == want.dtype and got.shape == want.shape
    g, w = got.cpu(), want
    if g.dtype in (torch.float16, torch.bfloat16):
        g, w = g.float(), w.float()
    assert np.array_equal(g.numpy(), w.numpy(), equal_nan=True), (g, w)


def both(f, *args, grads=()):
    """f on the CPU and on CUDA (tensor args moved over); the outputs and the gradients of the args at positions
    `grads` must agree bit for bit. Returns the CPU output."""
    def run(xs):
        xs = [x.detach().clone().requires_grad_(True) if i in grads else x for i, x in enumerate(xs)]
        out = f(*xs)
        if grads:
            up = rand(*out.shape, seed=99).to(out.dtype).to(out.device)
            out.backward(up)
        return out.detach(), [xs[i].grad for i in grads]
    want = run(list(args))
    got = run([cuda(a) for a in args])
    same(got[0], want[0])
    for gg, gw in zip(got[1], want[1]):
        same(gg, gw)
    return want[0]


def no_fallback(f):
    """f runs without the CPU fallback (pointwise ops aside: keep f to index ops)."""
    before = torch._C._cuda_fallback_runs()
    r = f()
    assert torch._C._cuda_fallback_runs() == before
    return r


def with_torch(f, args, want):
    """torch's CPU result for the same call agrees with pyctorch's (skipped without torch)."""
    if not HAVE_TORCH:
        return
    import torch as real
    conv = [real.tensor(a.numpy()) if isinstance(a, torch.Tensor) else a for a in args]
    got = f(real, *conv)
    assert np.array_equal(got.numpy(), want.numpy(), equal_nan=True)


def test_index_ops_have_device_kernels():
    assert INDEX_OPS <= set(torch._C._cuda_kernel_ops())


def test_index_ops_do_not_take_the_fallback():
    x, i = cuda(rand(5, 6)), cuda(randint(5, 3, 6))
    v = cuda(randint(5, 4))
    no_fallback(lambda: torch.gather(x, 0, i))
    no_fallback(lambda: x.scatter(0, i, 2.0))
    no_fallback(lambda: x.scatter_add(0, i, x))
    no_fallback(lambda: x.scatter_reduce(0, i, x, "mean", include_self=False))
    no_fallback(lambda: x.index_select(1, v))
    no_fallback(lambda: x.index_add(1, v, x[:, :4], alpha=2))
    no_fallback(lambda: x.take(v))
    no_fallback(lambda: x[v])
    no_fallback(lambda: x[v, v])
    y = x.clone()
    no_fallback(lambda: y.__setitem__(v, x[:4]))
    no_fallback(lambda: y.index_put_((v,), x[:4], accumulate=True))


GATHER_CASES = [  # input shape, dim, index shape
    ((5, 6), 0, (3, 6)), ((5, 6), 1, (5, 4)), ((5, 6), -1, (2, 9)), ((4, 3, 5), 1, (2, 7, 3)),
    ((4, 3, 5), -3, (6, 3, 5)), ((7,), 0, (11,)), ((), 0, ()), ((3, 4), 0, (0, 4)),
]


@pytest.mark.parametrize("shape,dim,ishape", GATHER_CASES)
def test_gather(shape, dim, ishape):
    x = rand(*shape)
    size = x.shape[dim] if x.dim() else 1
    i = randint(size, *ishape, seed=3)
    want = both(lambda x, i: torch.gather(x, dim, i), x, i, grads=(0,))
    with_torch(lambda m, x, i: m.gather(x, dim, i), [x, i], want)


@pytest.mark.parametrize("shape,dim,ishape", GATHER_CASES[:6])
def test_scatter_forms(shape, dim, ishape):
    x = rand(*shape)
    i = randint(x.shape[dim], *ishape, seed=4)
    src = rand(*ishape, seed=5)
    both(lambda x, i, s: x.scatter(dim, i, s), x, i, src, grads=(0, 2))
    both(lambda x, i: x.scatter(dim, i, -1.5), x, i, grads=(0,))
    both(lambda x, i, s: x.scatter(dim, i, s, reduce="add"), x, i, src)
    both(lambda x, i, s: x.scatter(dim, i, s, reduce="multiply"), x, i, src)
    both(lambda x, i: x.scatter(dim, i, 3.0, reduce="multiply"), x, i)
    want = both(lambda x, i, s: x.scatter_add(dim, i, s), x, i, src, grads=(0, 2))
    with_torch(lambda m, x, i, s: x.scatter_add(dim, i, s), [x, i, src], want)


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce(reduce, include_self):
    x = rand(4, 7)
    i = randint(4, 6, 7, seed=6)  # many duplicates
    src = rand(6, 7, seed=7)
    grads = (0, 2) if reduce != "prod" else ()
    want = both(lambda x, i, s: x.scatter_reduce(0, i, s, reduce, include_self=include_self), x, i, src, grads=grads)
    with_torch(lambda m, x, i, s: x.scatter_reduce(0, i, s, reduce, include_self=include_self), [x, i, src], want)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float64, torch.int64, torch.int32,
                                   torch.int16, torch.int8, torch.uint8, torch.bool])
def test_dtypes(dtype):
    x = (rand(5, 6) * 4).to(dtype)
    i = randint(5, 4, 6, seed=8)
    src = (rand(4, 6, seed=9) * 4).to(dtype)
    both(lambda x, i: torch.gather(x, 0, i), x, i)
    both(lambda x, i, s: x.scatter(0, i, s), x, i, src)
    both(lambda x, i, s: x.scatter_add(0, i, s), x, i, src)
    both(lambda x, i: x.index_select(1, i[0]), x, i)
    both(lambda x, i, s: x.index_add(0, i[:, 0], s), x, i, src)
    if dtype != torch.bool:
        for r in ("sum", "prod", "mean", "amax", "amin"):
            both(lambda x, i, s: x.scatter_reduce(0, i, s, r, include_self=False), x, i, src)


def test_int32_indices():
    x, i = rand(5, 6), randint(5, 3, 6, seed=10).int()
    both(lambda x, i: torch.gather(x, 0, i), x, i)
    both(lambda x, i: x.index_select(0, i[0]), x, i)
    both(lambda x, i: x[i], x, i)


def test_duplicate_sums_are_the_cpus_bit_for_bit():
    """Thousands of contributions to a few destinations. The simulated device walks them in the CPU's order, so the
    sums are the CPU's bit for bit; a GPU sums these (too few destinations to fill it) with atomics, as torch's CUDA
    kernels do: exact for int64, order-dependent for float32 (compared with a tolerance there)."""
    src = rand(5000, 64, seed=11) * 1e3
    i = randint(3, 5000, 64, seed=12)
    flat = randint(3, 5000, seed=13)
    cases = [
        (lambda x, i, s: x.scatter_add(0, i, s), torch.zeros(3, 64), i, src),
        (lambda x, i, s: x.index_add(0, i, s), torch.zeros(3, 64), flat, src),
        (lambda x, i, s: x.index_put((i,), s, accumulate=True), torch.zeros(3, 64), flat, src),
        (lambda y, i, s: y.scatter_add(0, i, s), torch.zeros(7), randint(7, 4000, seed=14), src[:4000, 0].contiguous()),
    ]
    for f, x, idx, s in cases:
        for dtype in (torch.float32, torch.int64):
            want = f(x.to(dtype), idx, s.to(dtype))
            got = f(cuda(x.to(dtype)), cuda(idx), cuda(s.to(dtype)))
            if SIMULATED or dtype == torch.int64:
                same(got, want)
            else:
                assert np.allclose(got.cpu().numpy(), want.numpy(), rtol=1e-4, atol=1e-2)
    # the other reductions keep the ordered form everywhere
    both(lambda x, i, s: x.scatter_reduce(0, i, s, "mean"), torch.zeros(3, 64), i, src)
    both(lambda x, i, s: x.scatter_reduce(0, i, s, "amax", include_self=False), torch.zeros(3, 64), i, src)


def test_copies_into_few_destinations():
    """Copies with much serial work per destination (a 1-d scatter, put_, index_copy_ of many rows into few columns):
    distinct indices, so every device gives the CPU's result."""
    perm = torch.randperm(3000, generator=gen(40))
    src = rand(3000, seed=41)
    both(lambda x, i, s: x.scatter(0, i, s), torch.zeros(3000), perm, src)
    both(lambda x, i: x.scatter(0, i, 2.5), torch.zeros(3000), perm[:2000])
    both(lambda x, i, s: x.put(i, s), torch.zeros(60, 50), perm, src)
    both(lambda x, i, s: x.index_copy(0, i, s), torch.zeros(3000, 2), perm, rand(3000, 2, seed=42))
    both(lambda x, i: x.index_fill(0, i, -1.0), torch.zeros(3000, 2), perm[:100])


def test_non_contiguous_inputs():
    x = rand(6, 5).t()                      # (5, 6) transposed
    i = randint(5, 6, 8, seed=15).t()       # (8, 6) transposed
    src = rand(12, 8, seed=16)[::2].t()     # (8, 6) strided
    both(lambda x, i: torch.gather(x, 0, i[:5]), x, i, grads=(0,))
    both(lambda x, i, s: x.scatter_add(0, i, s), x, i, src, grads=(0, 2))
    both(lambda x, i: x.index_select(1, i[0]), x, i, grads=(0,))
    both(lambda x, i: x[i[:, 0]], x, i, grads=(0,))
    # an in-place scatter into a strided view of a device tensor
    base = rand(5, 12, seed=17)
    def inplace(b, i, s):
        b = b.clone()
        b[:, ::2].scatter_(0, i[:5], s[:5], reduce="add")
        return b
    both(inplace, base, i, src)


def test_index_along_ops():
    x = rand(5, 4, 3)
    i = torch.tensor([4, 0, -1 + 5, 2])
    src = rand(5, 4, 3, seed=18)[:, :4]
    both(lambda x, s: x.index_add(1, torch.tensor([3, 0, 3, 1]).to(x.device), s, alpha=-2.5), x, src, grads=(0, 1))
    both(lambda x, s: x.index_copy(0, torch.tensor([1, 4, 0, 2, 3]).to(x.device), s), x, rand(5, 4, 3, seed=19),
         grads=(0, 1))
    both(lambda x: x.index_fill(2, torch.tensor([0, -1]).to(x.device), 7.0), x, grads=(0,))
    both(lambda x, v: x.index_fill(-1, torch.tensor([1]).to(x.device), v), x, torch.tensor(-3.0))
    both(lambda x: x.index_select(-3, i.to(x.device)), x, grads=(0,))
    del src


def test_take_and_put():
    x = rand(4, 5)
    i = torch.tensor([[0, 19, -1], [7, 7, 3]])
    both(lambda x, i: x.take(i), x, i, grads=(0,))
    both(lambda x, i: x.t().take(i), x, i, grads=(0,))
    src = rand(2, 3, seed=20)
    both(lambda x, i, s: x.put(i, s, accumulate=True), x, i, src, grads=(0, 2))
    both(lambda x, i, s: x.clone().put_(i[:, :2].flatten()[:3], s[0]), x, i, src)


def test_advanced_indexing():
    x = rand(5, 6, 7)
    a, b = torch.tensor([[0, 4], [-1, 2]]), torch.tensor([1, -6])
    both(lambda x: x[a.to(x.device)], x, grads=(0,))
    both(lambda x: x[:, b.to(x.device)], x, grads=(0,))
    both(lambda x: x[a.to(x.device), :, b.to(x.device)], x, grads=(0,))
    both(lambda x: x[1:, b.to(x.device), 2:5], x, grads=(0,))

    def setitem(x, v):
        y = x.clone()
        y[a.to(x.device), b.to(x.device)] = v
        return y
    both(setitem, x, rand(2, 2, 7, seed=21), grads=(0, 1))
    both(lambda x, v: x.index_put((a.to(x.device),), v, accumulate=True), x, rand(6, 7, seed=22), grads=(0, 1))
    # indices on the CPU for a CUDA tensor, as torch allows
    xc = cuda(x)
    same(xc[a], x[a])
    same(xc[:, b], x[:, b])


def test_empty_tensors():
    x = rand(4, 0)
    e = torch.zeros(0, dtype=torch.int64)
    both(lambda x: x.index_select(0, torch.tensor([1, 3]).to(x.device)), x)
    both(lambda x: x.index_select(1, e.to(x.device)), x)
    y = rand(3, 4)
    both(lambda y: y.index_select(0, e.to(y.device)), y)
    both(lambda y: torch.gather(y, 1, torch.zeros(3, 0, dtype=torch.int64).to(y.device)), y)
    both(lambda y: y.scatter_add(0, torch.zeros(0, 4, dtype=torch.int64).to(y.device), y[:0]), y)
    both(lambda y: y[e.to(y.device)], y)
    both(lambda y: y.index_add(0, e.to(y.device), y[:0]), y)


def errors(f, *args):
    """The same exception type and text on the CPU and on CUDA."""
    try:
        f(*args)
    except Exception as e:  # noqa: BLE001
        want = e
    else:
        raise AssertionError("the CPU call did not raise")
    with pytest.raises(type(want)) as got:
        f(*[cuda(a) for a in args])
    assert str(got.value) == str(want)
    return want


BAD = [  # (call, args): each raises on the CPU for an index out of range, or a refused argument
    (lambda x, i: torch.gather(x, 0, i), (rand(3, 4), torch.tensor([[0, 3, 1, 2]]))),
    (lambda x, i: torch.gather(x, 1, i), (rand(3, 4), torch.tensor([[0, -1]]))),
    (lambda x, i: x.scatter(0, i, 1.0), (rand(3, 4), torch.tensor([[5]]))),
    (lambda x, i: x.scatter_add(1, i, x), (rand(3, 4), torch.tensor([[0, 1, 2, 4]]))),
    (lambda x, i: x.scatter_reduce(0, i, x, "amax"), (rand(3, 4), torch.tensor([[0], [-4]]))),
    (lambda x, i: x.index_select(0, i), (rand(3, 4), torch.tensor([0, 3]))),
    (lambda x, i: x.index_select(1, i), (rand(3, 4), torch.tensor([-1]))),
    (lambda x, i: x.index_add(0, i, x[:2]), (rand(3, 4), torch.tensor([0, 3]))),
    (lambda x, i: x.index_copy(0, i, x[:2]), (rand(3, 4), torch.tensor([1, -1]))),
    (lambda x, i: x.index_fill(1, i, 0.0), (rand(3, 4), torch.tensor([9]))),
    (lambda x, i: x.take(i), (rand(3, 4), torch.tensor([12]))),
    (lambda x, i: x.put(i, x[0, :1]), (rand(3, 4), torch.tensor([-13]))),
    (lambda x, i: x[i], (rand(3, 4), torch.tensor([0, 3]))),
    (lambda x, i: x[:, i], (rand(3, 4), torch.tensor([[-5]]))),
    (lambda x, i: x.index_put((i,), x[:1], accumulate=True), (rand(3, 4), torch.tensor([3]))),
    (lambda x, i: torch.gather(x, 0, i), (rand(3, 4), torch.tensor([[0.5]]))),
    (lambda x, i: torch.gather(x, 2, i), (rand(3, 4), torch.tensor([[0]]))),
    (lambda x, i: x.scatter(0, i, x[:1].double()), (rand(3, 4), torch.tensor([[0]]))),
    (lambda x, i: torch.gather(x, 0, i), (rand(3, 4), torch.tensor([[0, 1, 2, 0, 1]]))),
]


@pytest.mark.parametrize("k", range(len(BAD)))
def test_errors_match_the_cpu(k):
    f, args = BAD[k]
    errors(f, *args)


def test_first_bad_index_is_reported():
    """Several bad values: the error names the first in the index's order, as the CPU's does."""
    x, i = rand(3, 4), torch.tensor([[0, 7, -9, 5]])
    e = errors(lambda x, i: torch.gather(x, 1, i), x, i)
    assert "index 7 " in str(e)


def test_device_stays_usable_after_an_index_error():
    x = cuda(rand(3, 4))
    with pytest.raises(RuntimeError):
        torch.gather(x, 0, cuda(torch.tensor([[3]])))
    same(torch.gather(x, 0, cuda(torch.tensor([[2]]))), torch.gather(x.cpu(), 0, torch.tensor([[2]])))


def test_complex_dtypes_still_work_through_the_fallback():
    x = torch.complex(rand(3, 4), rand(3, 4, seed=2))
    i = torch.tensor([[0, 2, 1, 0]])
    same(cuda(x).index_select(1, cuda(i[0])), x.index_select(1, i[0]))
    same(cuda(x)[cuda(i[0])], x[i[0]])


def test_embedding_style_training_step_matches_the_cpu():
    """A tiny model whose forward and backward go through gather, index_select and scatter_add."""
    w = rand(10, 4, seed=30)
    tokens = randint(10, 6, seed=31)
    target = randint(4, 6, seed=32)

    def step(w, tokens, target):
        h = w.index_select(0, tokens)                         # (6, 4)
        picked = torch.gather(h, 1, target.unsqueeze(1))      # (6, 1)
        pooled = torch.zeros(3, 4, device=w.device).scatter_add(0, (tokens % 3).unsqueeze(1).expand(6, 4), h)
        return torch.cat([picked.flatten(), pooled.flatten() * 0.5])
    both(step, w, tokens, target, grads=(0,))
