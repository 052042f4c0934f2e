"""Random sampling: generators, seeds, state and every random op.

With torch installed, sequences drawn after the same manual_seed are compared bit for
bit (values, dtypes, shapes and strides) against torch 2.13, and so are error types and
messages; the checks at the top run without torch.
"""
import pickle
import threading
import warnings

import numpy as np
import pytest

import pyctorch as P
from conftest import CUDA_USABLE, cuda_refusal
import pyctorch.random as prandom

FLOATS = ["float32", "float64", "float16", "bfloat16"]
ALL = FLOATS + ["int64", "int32", "int16", "int8", "uint8", "bool"]
_BITS = {"float16": "int16", "bfloat16": "int16", "float32": "int32", "float64": "int64"}


def _dname(x):
    return str(x.dtype).split(".")[-1]


def _bits(x, lib):
    """Exact contents as a nested list of integers (floats through a same-size int view)."""
    x = x.contiguous()
    d = _dname(x)
    if d in _BITS:
        x = x.view(getattr(lib, _BITS[d]))
    return x.numpy().tolist()


def _as_list(r):
    return list(r) if isinstance(r, (list, tuple)) else [r]


# ---------------------------------------------------------------- without torch


def test_manual_seed_reproducible():
    for seed in (0, 1, 2**40 + 3):
        g = P.manual_seed(seed)
        assert g is P.default_generator
        assert P.initial_seed() == seed
        a = [P.rand(17), P.randn(33), P.randint(0, 9, (5,)), P.randperm(12), P.multinomial(P.ones(7), 3)]
        P.manual_seed(seed)
        b = [P.rand(17), P.randn(33), P.randint(0, 9, (5,)), P.randperm(12), P.multinomial(P.ones(7), 3)]
        for x, y in zip(a, b):
            assert _bits(x, P) == _bits(y, P)


def test_seed_values():
    assert P.manual_seed(-1).initial_seed() == 2**64 - 1
    assert P.manual_seed(-(2**63)).initial_seed() == 2**63
    assert P.manual_seed("12").initial_seed() == 12  # torch does int(seed)
    with pytest.raises(ValueError, match="Overflow when unpacking long long"):
        P.manual_seed(2**64)
    with pytest.raises(RuntimeError, match="manual_seed expected a long, but got float"):
        P.Generator().manual_seed(1.5)
    s = P.seed()
    assert 0 <= s < 2**64 and P.initial_seed() == s
    assert P.Generator().initial_seed() == 67280421310721


def test_ranges_shapes_dtypes():
    P.manual_seed(3)
    x = P.rand(1000)
    assert x.dtype == P.float32 and tuple(x.shape) == (1000,)
    v = x.numpy()
    assert v.min() >= 0 and v.max() < 1
    assert P.rand(2, 3, dtype=P.float64).dtype == P.float64
    assert tuple(P.randn(2, 3, 4).shape) == (2, 3, 4)
    assert tuple(P.rand(()).shape) == ()
    r = P.randint(-3, 4, (500,)).numpy()
    assert r.dtype == np.int64 and r.min() >= -3 and r.max() < 4
    assert P.randint(5, (2, 2), dtype=P.int8).dtype == P.int8
    assert sorted(P.randperm(50).tolist()) == list(range(50))
    u = P.empty(400).uniform_(-2, 5).numpy()
    assert u.min() >= -2 and u.max() < 5
    assert set(P.bernoulli(P.full((300,), 0.5)).tolist()) <= {0.0, 1.0}
    assert (P.empty(300).exponential_().numpy() >= 0).all()
    assert (P.empty(300, dtype=P.int32).geometric_(0.5).numpy() >= 1).all()
    m = P.multinomial(P.tensor([[0.0, 1.0, 0.0], [0.0, 0.0, 2.0]]), 1)
    assert m.tolist() == [[1], [2]]
    assert sorted(P.multinomial(P.ones(6), 6).tolist()) == list(range(6))


def test_generator_objects():
    g = P.Generator(device="cpu")
    assert str(g.device) == "cpu" and isinstance(g, P.Generator)
    assert g.manual_seed(5) is g and g.initial_seed() == 5
    a = P.rand(10, generator=g)
    g.manual_seed(5)
    assert _bits(P.rand(10, generator=g), P) == _bits(a, P)
    st = g.get_state()
    assert st.dtype == P.uint8 and tuple(st.shape) == (5056,)
    b = P.randn(7, generator=g)
    assert g.set_state(st) is g
    assert _bits(P.randn(7, generator=g), P) == _bits(b, P)
    c = g.clone_state()
    assert _bits(P.rand(4, generator=c), P) == _bits(P.rand(4, generator=g), P)
    g2 = pickle.loads(pickle.dumps(g))
    assert _bits(P.rand(4, generator=g2), P) == _bits(P.rand(4, generator=g), P)
    # the default generator is untouched by a private one
    P.manual_seed(9)
    ref = P.rand(3)
    P.manual_seed(9)
    P.rand(100, generator=g)
    assert _bits(P.rand(3), P) == _bits(ref, P)
    with pytest.raises(RuntimeError, match="CPU Generator does not use offset"):
        g.get_offset()
    with pytest.raises(TypeError):
        P.rand(3, generator="x")


def test_state_errors():
    g = P.Generator()
    with pytest.raises(RuntimeError, match="Invalid mt19937 state"):
        g.set_state(P.zeros(5056, dtype=P.uint8))
    with pytest.raises(RuntimeError, match="of size 5056 but found the input RNG state size to be 5"):
        g.set_state(P.zeros(5, dtype=P.uint8))
    with pytest.raises(TypeError, match="RNG state must be a torch.ByteTensor"):
        g.set_state(P.zeros(5056))
    with pytest.raises(TypeError, match="expected a torch.ByteTensor"):
        g.set_state([1, 2])
    with pytest.raises(RuntimeError, match="RNG state must be contiguous"):
        g.set_state(P.zeros(10112, dtype=P.uint8)[::2])


def test_fork_rng_and_module():
    P.manual_seed(4)
    with prandom.fork_rng():
        P.rand(10)
    after = P.rand(3)
    P.manual_seed(4)
    assert _bits(P.rand(3), P) == _bits(after, P)
    assert prandom.manual_seed(4) is P.default_generator
    st = prandom.get_rng_state()
    x = P.rand(2)
    prandom.set_rng_state(st)
    assert _bits(P.rand(2), P) == _bits(x, P)
    assert prandom.initial_seed() == 4


def test_inplace_returns_self_and_bumps_version():
    x = P.empty(5)
    v = x._version if hasattr(x, "_version") else None
    assert x.uniform_() is x and x.normal_() is x and x.random_(3) is x and x.bernoulli_(0.5) is x
    if v is not None:
        assert x._version > v
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        P.empty(3).expand(2, 3).uniform_()


def test_threads_separate_generators():
    n = 50_000
    ref = [_bits(P.randn(n, generator=P.Generator().manual_seed(i)), P) for i in range(3)]
    out = [None] * 3

    def work(i):
        out[i] = _bits(P.randn(n, generator=P.Generator().manual_seed(i)), P)

    ths = [threading.Thread(target=work, args=(i,)) for i in range(3)]
    for t in ths:
        t.start()
    for t in ths:
        t.join()
    assert out == ref


def test_errors_without_torch():
    with pytest.raises(RuntimeError, match="random_ expects 'from' to be less than 'to', but got from=5 >= to=5"):
        P.randint(5, 5, (3,))
    with pytest.raises(NotImplementedError, match="\"check_uniform_bounds\" not implemented for 'Long'"):
        P.rand(3, dtype=P.int64)
    with pytest.raises(RuntimeError, match="multinomial only supports floating-point dtypes"):
        P.multinomial(P.tensor([1, 2]), 1)
    with pytest.raises(RuntimeError, match="invalid multinomial distribution"):
        P.multinomial(P.tensor([0.0, 0.0]), 1)
    if not CUDA_USABLE:
        refusal, message = cuda_refusal()
        with pytest.raises(refusal, match=message):
            P.rand(3, device="cuda")
    with pytest.raises(RuntimeError, match="normal expects std >= 0.0, but found std -1"):
        P.empty(3).normal_(0, -1)


# ---------------------------------------------------------------- against torch


@pytest.fixture(scope="module")
def T():
    return pytest.importorskip("torch")


SEEDS = (0, 7, 2**33 + 5)


def check(T, fn, seeds=SEEDS):
    """Runs fn(lib) after manual_seed in both libraries; results must match bit for bit."""
    for seed in seeds:
        P.manual_seed(seed)
        T.manual_seed(seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got, want = _as_list(fn(P)), _as_list(fn(T))
        assert len(got) == len(want)
        for a, b in zip(got, want):
            assert _dname(a) == _dname(b)
            assert tuple(a.shape) == tuple(b.shape)
            assert tuple(a.stride()) == tuple(b.stride())
            assert _bits(a, P) == _bits(b, T), (seed, a, b)


SIZES = (1, 2, 3, 15, 16, 17, 31, 33, 100, 1000, 4097)


@pytest.mark.parametrize("dtype", FLOATS)
def test_rand_randn(T, dtype):
    for n in SIZES:
        check(T, lambda L: [L.rand(n, dtype=getattr(L, dtype)), L.randn(n, dtype=getattr(L, dtype)),
                            L.randn(n, dtype=getattr(L, dtype)), L.rand(n, dtype=getattr(L, dtype))], seeds=(0, 11))


def test_rand_shapes_out(T):
    check(T, lambda L: [L.rand(3, 4), L.randn((2, 9)), L.randn(size=(20,)), L.rand(2, 3, out=L.empty(6)),
                        L.randn(4, 5, out=L.empty(5, 4).t()), L.rand(4, 5, out=L.empty(5, 4).t()),
                        L.randn(2, 3, requires_grad=True).detach()])


@pytest.mark.parametrize("dtype", ALL)
def test_randint(T, dtype):
    ranges = [(0, 2), (0, 10), (-5, 5), (3, 100), (0, 2**29), (-(2**40), 2**40)]
    for lo, hi in ranges:
        if dtype == "bool" and (lo, hi) != (0, 2):
            continue
        if dtype in ("int16", "int8", "uint8", "float16", "bfloat16") and hi > 100:
            continue
        if dtype == "uint8" and lo < 0 or dtype == "int32" and hi > 2**31:
            continue
        check(T, lambda L: [L.randint(lo, hi, (3, 17), dtype=getattr(L, dtype)), L.randint(hi, (5,), dtype=getattr(L, dtype)),
                            L.randint_like(L.empty(4, 6, dtype=getattr(L, dtype)).t(), lo, hi)])


def test_randperm(T):
    for dtype in ["int64", "int32", "float32", "float64", "float16", "bfloat16", "int16", "uint8"]:
        for n in (0, 1, 2, 5, 100, 256, 1000):
            if dtype == "uint8" and n > 256:
                continue
            check(T, lambda L: L.randperm(n, dtype=getattr(L, dtype)), seeds=(0, 3))
    check(T, lambda L: [L.randperm(7, out=L.empty(14, dtype=L.int64)[::2]), L.randperm(5, out=L.empty(2, dtype=L.int32))])


def _ramp(L, shape, dtype="float32", off=0.0):
    n = int(np.prod(shape))
    return (L.arange(n, dtype=L.float64).reshape(shape) * 0.37 % 1.9 + off).to(getattr(L, dtype))


@pytest.mark.parametrize("dtype", FLOATS)
def test_normal_overloads(T, dtype):
    for shape in [(1,), (5,), (16,), (4, 9), (33, 3)]:
        check(T, lambda L: [
            L.normal(_ramp(L, shape, dtype), 0.7), L.normal(mean=_ramp(L, shape, dtype)),
            L.normal(_ramp(L, shape, dtype), _ramp(L, shape, dtype, 0.1)),
            L.normal(_ramp(L, shape, dtype), _ramp(L, shape, "float64", 0.1)),
            L.normal(_ramp(L, (2,) + shape, dtype), _ramp(L, shape[-1:], dtype, 0.1)),
            L.normal(1.5, _ramp(L, shape, dtype, 0.1)), L.normal(-3, _ramp(L, shape, dtype)),
            L.normal(1.5, 0.5, shape, dtype=getattr(L, dtype)), L.normal(0, 1, size=shape, dtype=getattr(L, dtype)),
            L.normal(_ramp(L, shape, dtype), 2.0, out=L.empty(shape, dtype=getattr(L, dtype))),
        ], seeds=(0, 5))


@pytest.mark.parametrize("pdtype", FLOATS)
def test_bernoulli(T, pdtype):
    for odt in ["float32", "float64", "int64", "bool", "float16", "uint8"]:
        for shape in [(7,), (20,), (4, 6)]:
            check(T, lambda L: [
                L.bernoulli(_ramp(L, shape, pdtype) / 2),
                L.empty(shape, dtype=getattr(L, odt)).bernoulli_(_ramp(L, shape, pdtype) / 2),
                L.empty(shape, dtype=getattr(L, odt)).bernoulli_(0.3), L.bernoulli(_ramp(L, shape, pdtype), 0.6),
                _ramp(L, shape, pdtype).bernoulli(0.25),
            ], seeds=(1,))
    check(T, lambda L: [
        L.empty(3, 5).t().bernoulli_(_ramp(L, (3,), pdtype) / 2),
        L.bernoulli(_ramp(L, (5, 3), pdtype).t() / 2),
        L.empty(5, 3).t().bernoulli_(_ramp(L, (5, 3), pdtype).t() / 2),
        L.empty(5, 3).t().bernoulli_(_ramp(L, (3, 5), pdtype) / 2),
        L.empty(100, 200)[:, ::2].bernoulli_(L.rand(100, 100, dtype=getattr(L, pdtype))),
        L.bernoulli(_ramp(L, (4,), pdtype) / 2, out=L.empty(4, dtype=L.int64)),
    ])


def test_bernoulli_bad_probability_state(T):
    """torch draws for the elements before a bad probability, then raises."""
    def fn(L):
        x = L.zeros(10)
        p = L.rand(10)
        p[6] = 2.0
        with pytest.raises(RuntimeError, match="Expected p_in >= 0 && p_in <= 1"):
            x.bernoulli_(p)
        return [x, L.rand(3)]
    check(T, fn)


@pytest.mark.parametrize("pdtype", FLOATS)
def test_multinomial(T, pdtype):
    for shape in [(5,), (3, 7), (4, 100), (2, 400)]:
        for ns, repl in [(1, False), (1, True), (3, False), (3, True)]:
            check(T, lambda L: L.multinomial(_ramp(L, shape, pdtype, 0.01), ns, repl), seeds=(0,))
            if len(shape) == 2:
                check(T, lambda L: L.multinomial(_ramp(L, shape[::-1], pdtype, 0.01).t(), ns, replacement=repl), seeds=(0,))
    check(T, lambda L: [
        L.multinomial(_ramp(L, (3, 500), pdtype, 0.01), 50),
        L.multinomial(L.ones(2, 300, dtype=getattr(L, pdtype)) * (L.arange(300) % 3 == 0).to(getattr(L, pdtype)), 100),
        L.multinomial((L.ones(300, 2, dtype=getattr(L, pdtype)) * (L.arange(300) % 3 == 0).to(getattr(L, pdtype)).reshape(300, 1)).t(), 100),
        L.multinomial(L.ones(5), 2, out=L.empty(2, dtype=L.int64)),
    ], seeds=(0,))


def test_multinomial_bad_row_state(T):
    def fn(L):
        o = L.zeros(2, 4, dtype=L.int64)
        with pytest.raises(RuntimeError, match="encountering probability entry = infinity or NaN"):
            L.multinomial(L.tensor([[1.0, 2, 3], [1, float("inf"), 0]]), 4, True, out=o)
        return [o, L.rand(2)]
    check(T, fn)


def _layouts(L, dtype):
    dt = getattr(L, dtype)
    return [
        L.empty(6, 5, dtype=dt), L.empty(5, 6, dtype=dt).t(), L.empty(6, 10, dtype=dt)[:, ::2],
        L.empty(4, 5, 6, dtype=dt).permute(2, 0, 1)[:, 1:3, ::2], L.empty(40, 3, dtype=dt)[::2, 1:].t(),
        L.empty((), dtype=dt), L.empty(1, 7, 1, dtype=dt), L.empty(0, 3, dtype=dt),
        L.empty(64, 256, dtype=dt)[:, ::2], L.empty(300, 41, dtype=dt)[:, 1:].t(),
    ]


INPLACE = [
    ("uniform_", FLOATS, lambda x: [x.uniform_(), x.uniform_(-2, 3)]),
    ("normal_", FLOATS, lambda x: [x.normal_(), x.normal_(1, 3)]),
    ("random_", ALL, lambda x: [x.random_(), x.random_(2), x.random_(0, 2)]),
    ("random_from", ["float32", "float64", "int64", "int32", "int8", "uint8", "float16"], lambda x: x.random_(1, None)),
    ("random_full", ["float32", "float64", "int64", "bfloat16"], lambda x: x.random_(-(2**63), None)),
    ("bernoulli_", ALL, lambda x: [x.bernoulli_(), x.bernoulli_(0.2)]),
    ("exponential_", FLOATS, lambda x: [x.exponential_(), x.exponential_(2.5)]),
    ("cauchy_", FLOATS, lambda x: x.cauchy_(1, 2)),
    ("log_normal_", FLOATS, lambda x: [x.log_normal_(), x.log_normal_(0, 0.5)]),
    ("geometric_", [d for d in ALL if d != "bool"], lambda x: x.geometric_(0.3)),
]


@pytest.mark.parametrize("name,dtypes,fn", INPLACE, ids=[i[0] for i in INPLACE])
def test_inplace_layouts(T, name, dtypes, fn):
    for dtype in dtypes:
        for k in range(10):
            check(T, lambda L: fn(_layouts(L, dtype)[k]), seeds=(3,))


@pytest.mark.parametrize("dtype", FLOATS)
def test_like(T, dtype):
    for k in range(10):
        check(T, lambda L: [L.rand_like(_layouts(L, dtype)[k]), L.randn_like(_layouts(L, dtype)[k]),
                            L.randint_like(_layouts(L, dtype)[k], 10),
                            L.randn_like(_layouts(L, dtype)[k], dtype=L.float64)], seeds=(2,))
    check(T, lambda L: [L.rand_like(L.empty(2, 3, 4, 5, dtype=getattr(L, dtype)), memory_format=L.channels_last),
                        L.randn_like(L.empty(5, 4).t(), memory_format=L.contiguous_format)])


def test_generators_against_torch(T):
    def fn(L):
        g = L.Generator().manual_seed(123)
        g2 = L.Generator()
        r = [L.rand(5, generator=g), L.randn(50, generator=g2), L.randint(0, 7, (9,), generator=g),
             L.randperm(20, generator=g), L.normal(L.zeros(4), 1.0, generator=g),
             L.bernoulli(L.full((6,), 0.5), generator=g), L.multinomial(L.ones(10), 3, generator=g),
             L.empty(7).uniform_(generator=g), L.empty(7).exponential_(generator=g2), L.rand(3)]
        st = g.get_state()
        a = L.rand(8, generator=g)
        g.set_state(st)
        return r + [a, L.rand(8, generator=g), st, g2.get_state(), L.get_rng_state()]
    check(T, fn)


def test_state_interop(T):
    for seed in (0, 5, 2**64 - 1):
        P.manual_seed(seed)
        T.manual_seed(seed)
        P.randn(3)
        T.randn(3)  # leaves a cached Box-Muller sample in both
        sp, st = P.get_rng_state(), T.get_rng_state()
        assert sp.numpy().tolist() == st.numpy().tolist()
        T.set_rng_state(T.tensor(sp.numpy()))
        P.set_rng_state(P.tensor(st.numpy()))
        assert _bits(P.randn(5), P) == _bits(T.randn(5), T)
        g = T.Generator().manual_seed(seed)
        T.randn(7, generator=g)
        pg = P.Generator().set_state(P.tensor(g.get_state().numpy()))
        assert pg.initial_seed() == g.initial_seed()
        assert _bits(P.randn(3, generator=pg), P) == _bits(T.randn(3, generator=g), T)
        T.manual_seed(seed)
        assert P.manual_seed(seed).get_state().numpy().tolist() == T.get_rng_state().numpy().tolist()


ERRORS = [
    "L.randint(5, 3, (3,))", "L.randint(0, (3,))", "L.randint(0, 300, (3,), dtype=L.uint8)",
    "L.randint(-1, 3, (3,), dtype=L.uint8)", "L.randint(0, 3, (3,), dtype=L.bool)", "L.randint(0, 70000, (3,), dtype=L.float16)",
    "L.randint(3, (3,), requires_grad=True)", "L.rand(3, dtype=L.int64)", "L.randn(3, dtype=L.int64)", "L.rand(-1)",
    "L.empty(3).uniform_(2, 1)", "L.empty(3).uniform_(float('-inf'), 1)", "L.empty(3, dtype=L.half).uniform_(0, 1e5)",
    "L.empty(3, dtype=L.half).uniform_(-6e4, 6e4)", "L.empty(3, dtype=L.long).uniform_()", "L.empty(3).normal_(0, float('nan'))",
    "L.empty(3).exponential_(0)", "L.empty(3, dtype=L.long).exponential_()", "L.empty(3).cauchy_(0, 0)",
    "L.empty(3, dtype=L.int16).cauchy_()", "L.empty(3).log_normal_(0, 0)", "L.empty(3, dtype=L.long).log_normal_()",
    "L.empty(3).geometric_(1)", "L.empty(3, dtype=L.bool).geometric_(0.5)", "L.empty(3).bernoulli_(1.5)",
    "L.empty(3).bernoulli_(L.tensor([1, 0, 1]))", "L.empty(2, 3).bernoulli_(L.tensor([0.5, 0.1]))",
    "L.ones(3).bernoulli_(L.rand(2, 3))", "L.empty(3).random_(-1)", "L.empty(3, dtype=L.int8).random_(200, None)",
    "L.empty(3, dtype=L.int32).random_(-2**63, None)", "L.empty(3, dtype=L.float16).random_(-2**63, None)",
    "L.empty(3, dtype=L.float16).random_(3000, None)", "L.empty(3, dtype=L.float32).random_(2**24, None)",
    "L.randperm(-1)", "L.randperm(3000, dtype=L.half)", "L.randperm(5, dtype=L.bool)", "L.randperm(300, dtype=L.uint8)",
    "L.randperm(2**31 + 5, dtype=L.int32)", "L.randperm(-1, out=L.empty(0, dtype=L.long))",
    "L.multinomial(L.tensor([1.0, 2]), 3)", "L.multinomial(L.tensor([1.0, 2]), 0)", "L.multinomial(L.tensor([1.0, -2]), 1)",
    "L.multinomial(L.tensor([0.0, 0]), 2, True)", "L.multinomial(L.tensor([1.0, -2]), 2, True)",
    "L.multinomial(L.tensor(1.0), 1)", "L.multinomial(L.ones(2**24 + 1), 1)", "L.multinomial(L.ones(3), 2, out=L.empty(2))",
    "L.normal(L.zeros(3), -1.0)", "L.normal(L.zeros(3), L.tensor([1.0, -1, 1]))", "L.normal(0.0, -1.0, (3,))",
    "L.normal(L.zeros(3, dtype=L.long), 1.0)", "L.normal(L.zeros(3), L.ones(2))", "L.normal(2.0, 1.0)",
    "L.rand(2, 3, dtype=L.double, out=L.empty(2))", "L.empty(3).expand(2, 3).uniform_()",
    "L.Generator('cpu', 'x')",
]


def _outcome(L, expr):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            r = eval(expr)
            res = ("ok", _dname(r), tuple(r.shape), _bits(r, L))
        except Exception as e:  # noqa: BLE001
            res = ("err", type(e).__name__, str(e).split("\n")[0])
    return res, [str(x.message).split(" (Triggered internally")[0] for x in w]


def test_errors_match_torch(T):
    for expr in ERRORS:
        P.manual_seed(0)
        T.manual_seed(0)
        got, want = _outcome(P, expr), _outcome(T, expr)
        assert got == want, expr


def test_precision_warnings_match_torch(T):
    for expr in ["L.empty(3).random_(0, 2**25)", "L.empty(3, dtype=L.bfloat16).random_(-2**62, 2)",
                 "L.empty(3, dtype=L.float16).random_(-65504, 5)", "L.randint(0, 2**54, (2,), dtype=L.float64)"]:
        P.manual_seed(0)
        T.manual_seed(0)
        assert _outcome(P, expr) == _outcome(T, expr), expr
