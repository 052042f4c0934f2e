"""The CUDA runner of the loop machine, run on the CPU (tests/cuda/host_runner.cu, Note [Launch policies] in
csrc/cuda/loops.cuh): every CUDA loop of the op table's pointwise entries over plans of each kind the launch tells
apart (one aligned dim, broadcast and host-scalar inputs, a misaligned start, transposed operands, more dims than the
offset calculator holds), against the CPU's loops; the copies and fills; the errors of integer division; the
multiply-shift division and the 32-bit split. Needs nvcc to build the harness (skips without it), no GPU."""
import ctypes
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import pyctorch
from conftest import assert_same

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NVCC = shutil.which("nvcc")
# one worker under pytest-xdist builds the harness (a minute of nvcc) and runs them all
pytestmark = [pytest.mark.skipif(NVCC is None, reason="nvcc not found: the CUDA runner's host harness cannot be built"),
              pytest.mark.xdist_group("cuda_host")]

MAX_DIMS, MAX_OPERANDS = 64, 6
DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
          "uint16", "uint32", "uint64"]  # the pct_dtype enum's order
FLOATS = {"float16", "bfloat16", "float32", "float64"}
RAW = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}  # storage as raw bits


class Loop(ctypes.Structure):  # pct_cuda_loop (csrc/cuda/loop_plan.h)
    _fields_ = [("ntensors", ctypes.c_int), ("ndim", ctypes.c_int), ("numel", ctypes.c_int64),
                ("device_index", ctypes.c_int), ("shape", ctypes.c_int64 * MAX_DIMS),
                ("strides", (ctypes.c_int64 * MAX_OPERANDS) * MAX_DIMS), ("data", ctypes.c_void_p * MAX_OPERANDS),
                ("dtypes", ctypes.c_int * MAX_OPERANDS), ("host_scalars", ctypes.c_uint),
                ("scalar", ctypes.c_uint64 * MAX_OPERANDS)]


class Ctx(ctypes.Structure):  # pct_pw_ctx (csrc/aten/cpu/pointwise_math.h)
    _fields_ = [("alpha_d", ctypes.c_double), ("alpha_i", ctypes.c_int64), ("p1", ctypes.c_double),
                ("p2", ctypes.c_double), ("p1_i", ctypes.c_int64), ("p2_i", ctypes.c_int64), ("has_p1", ctypes.c_int),
                ("has_p2", ctypes.c_int), ("error", ctypes.c_int), ("has_scalar_b", ctypes.c_int),
                ("scalar_b", ctypes.c_double), ("has_scalar_a", ctypes.c_int), ("scalar_a", ctypes.c_double),
                ("alpha_im", ctypes.c_double)]


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cuda_host")
    out = str(tmp / "host_runner.so")
    # the generated typed arguments, written for this test (a copy of the tree, as make asan's, has no build/)
    subprocess.run([sys.executable, os.path.join(REPO, "csrc", "codegen", "gen_op_args.py"), os.path.join(REPO, "csrc", "aten"),
                    str(tmp / "op_args.h")], check=True)
    # -O0: the harness runs small loops, and optimising the many instantiated loops took nvcc minutes
    cmd = [NVCC, "-std=c++17", "-O0", "-shared", "-Xcompiler", "-fPIC", "-I", os.path.join(REPO, "csrc"),
           "-I", str(tmp), os.path.join(REPO, "tests", "cuda", "host_runner.cu"), "-o", out]
    # nvcc runs without the sanitizer runtime make asan preloads into the interpreter (it crashes under it)
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr[-4000:]
    ctypes.CDLL(pyctorch._C.__file__, mode=ctypes.RTLD_GLOBAL)  # the core's dtype tables, which copy.cuh reads
    h = ctypes.CDLL(out)
    h.host_pointwise.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.POINTER(Loop), ctypes.POINTER(Ctx)]
    h.host_has_loop.argtypes = [ctypes.c_int, ctypes.c_int]
    h.host_copy.argtypes = [ctypes.POINTER(Loop), ctypes.c_int, ctypes.c_int]
    h.host_fill.argtypes = [ctypes.POINTER(Loop), ctypes.c_int, ctypes.c_double, ctypes.c_int64]
    h.host_configure.argtypes = [ctypes.c_int64, ctypes.c_int]
    h.host_take_counts.argtypes = [ctypes.POINTER(ctypes.c_int64)]
    h.host_check_divider.argtypes = [ctypes.c_uint32, ctypes.c_uint32]
    h.host_check_divider.restype = ctypes.c_int64
    return h


def counts(lib):
    c = (ctypes.c_int64 * 3)()
    lib.host_take_counts(c)
    return list(c)


def dt(name):
    return getattr(pyctorch, name)


def itemsize(name):
    return pyctorch.tensor([], dtype=dt(name)).element_size()


def raw_of(t):
    """t's elements as raw bits (a contiguous numpy copy of the storage type's width)."""
    n = itemsize(str(t.dtype).split(".")[-1])
    return t.contiguous().view({1: pyctorch.uint8, 2: pyctorch.int16, 4: pyctorch.int32, 8: pyctorch.int64}[n]) \
        .numpy().view(RAW[n]).copy()


def tensor_of(raw, name):
    """The tensor of dtype `name` whose bits are raw (any layout: made contiguous)."""
    raw = np.array(raw)  # a writable contiguous copy
    n = itemsize(name)
    signed = {1: np.uint8, 2: np.int16, 4: np.int32, 8: np.int64}[n]
    return pyctorch.from_numpy(raw.view(signed)).view(dt(name))


def values(name, n, rng, role):
    """n values of dtype `name` as raw bits: varied, with the floats' edges; no zero divisor for integer division."""
    if name == "bool":
        v = rng.integers(0, 2, n).astype(bool).tolist()
    elif name in FLOATS:
        v = (rng.standard_normal(n) * 3).tolist()
        edges = [0.0, -0.0, float("inf"), float("-inf"), float("nan"), 1.0, -1.0, 0.5, 2.0]
        for i, e in enumerate(edges[:n]):
            v[(i * 7) % n] = e
    elif name.startswith("uint"):
        v = rng.integers(0 if role != "divisor" else 1, 40, n).tolist()
    else:
        v = rng.integers(-20, 21, n)
        if role == "divisor":
            v[v == 0] = 3
        v = v.tolist()
    return raw_of(pyctorch.tensor(v, dtype=dt(name)))


def aligned(n_items, width, shift=0):
    """A zeroed raw buffer of n_items elements of `width` bytes starting 64-byte aligned, plus `shift` elements."""
    buf = np.zeros(n_items + 64 + shift, dtype=RAW[width])
    start = (-buf.ctypes.data % 64) // width
    return buf[start + shift:start + shift + n_items]


def plan_of(operands, shape, host_scalars=()):
    """A plan over `shape` (outermost dim first) of operands given as numpy raw views broadcast to it (operand 0 the
    output); the inputs listed in host_scalars are 0-d values passed by value."""
    p = Loop()
    p.ntensors, p.ndim = len(operands), len(shape)
    p.numel = int(np.prod(shape)) if shape else 1
    for d, s in enumerate(shape):
        p.shape[d] = s
    for k, a in enumerate(operands):
        if k in host_scalars:
            p.host_scalars |= 1 << k
            p.scalar[k] = int(np.asarray(a).reshape(-1)[0])
            continue
        b = np.broadcast_to(a, shape) if shape else a
        for d in range(len(shape)):
            p.strides[d][k] = b.strides[d] if shape[d] > 1 else 0
        p.data[k] = a.ctypes.data
    return p


TABLE = pyctorch._C._op_table()
INDEX = {e["id"]: i for i, e in enumerate(TABLE)}
POINTWISE = [e for e in TABLE if e["kind"] in ("unary", "binary")]


def op_fn(entry):
    name = entry["name"]
    return getattr(pyctorch._C if name.startswith(("_", "special_")) else pyctorch, name)


def out_dtype(entry, name):
    return "bool" if entry["promotion"] in ("compare", "bool_out") else name


def layouts(nin):
    """(name, shape, how each input is laid out): `flat` the aligned contiguous buffer, `bcast` stride 0, `scalar` a
    host scalar, `shifted` contiguous from a misaligned start, `t` transposed, `deep` 12 dims no two of which merge."""
    yield "aligned", (1027,), ["flat"] * nin
    if nin == 2:
        yield "broadcast", (1027,), ["flat", "bcast"]
        yield "host_scalar", (1027,), ["flat", "scalar"]
        yield "scalar_first", (1027,), ["scalar", "flat"]
    yield "shifted", (515,), ["shifted"] * nin
    yield "transposed", (37, 29), ["t"] + ["flat"] * (nin - 1)
    yield "deep", (2,) * 12, ["deep"] * nin


def place(kind, shape, v):
    """Raw values v (one per element of shape, or the first for bcast/scalar) laid out as `kind` (see layouts)."""
    w = v.itemsize
    n = int(np.prod(shape))
    if kind == "bcast":
        a = aligned(1, w)
        a[0] = v[0]
        return np.lib.stride_tricks.as_strided(a, shape, (0,) * len(shape))
    if kind == "scalar":
        return v[:1].reshape(())
    a = aligned(n, w, shift=1 if kind == "shifted" else 0)
    a[:] = v[:n]
    if kind in ("flat", "shifted"):
        return a.reshape(shape)
    if kind == "t":
        return a.reshape(shape[::-1]).T
    if kind == "deep":  # dims reversed and two swapped: strides in no mergeable order
        perm = list(range(len(shape)))[::-1]
        perm[3], perm[7] = perm[7], perm[3]
        return a.reshape(shape).transpose(perm)
    raise AssertionError(kind)


def make_input(kind, shape, name, rng, role):
    return place(kind, shape, values(name, int(np.prod(shape)), rng, role))


def division_op(entry):
    return entry["id"] in ("div_trunc", "floor_divide", "remainder", "fmod")


CASES = [(e["id"], d) for e in POINTWISE for d in DTYPES]


# Note [Ops left to the CPU] in csrc/cuda/pointwise.cuh
LEFT_TO_CPU = {e["id"] for e in POINTWISE if e["id"].startswith("special_") and "polynomial" not in e["id"]} | {
    "igamma", "igammac", "_polygamma_loop"}


def test_ops_left_to_the_cpu(lib):
    for e in POINTWISE:
        has = any(lib.host_has_loop(INDEX[e["id"]], DTYPES.index(d)) for d in DTYPES)
        assert has == (e["id"] not in LEFT_TO_CPU), e["id"]


@pytest.mark.parametrize("op,dtype", CASES)
def test_pointwise_loop_matches_the_cpu(lib, op, dtype):
    """Where the CPU computes op in dtype, the CUDA loop exists (unless the op is left to the CPU) and gives its values;
    where the CPU has no loop for dtype, neither has CUDA."""
    entry = TABLE[INDEX[op]]
    nin = 1 if entry["kind"] == "unary" else 2
    fn = op_fn(entry)
    rng = np.random.default_rng(INDEX[op] * 16 + DTYPES.index(dtype))
    has = lib.host_has_loop(INDEX[op], DTYPES.index(dtype))
    if op in LEFT_TO_CPU:
        assert not has
        return
    if not has:  # the CPU refuses dtype, or computes it in another (a float for an integral input)
        args = [tensor_of(make_input("flat", (4,), dtype, rng, "divisor"), dtype) for _ in range(nin)]
        try:
            r = fn(*args)
        except (NotImplementedError, RuntimeError):
            return
        assert entry["promotion"] == "int_to_float" and dtype not in FLOATS and str(r.dtype) != "torch." + dtype, op
        return
    od = out_dtype(entry, dtype)
    for lname, shape, kinds in layouts(nin):
        ins = [make_input(k, shape, dtype, rng, "divisor" if (j == 1 and division_op(entry)) else "x")
               for j, k in enumerate(kinds)]
        out = aligned(int(np.prod(shape)), itemsize(od)).reshape(shape)
        plan = plan_of([out] + ins, shape, host_scalars=[j + 1 for j, k in enumerate(kinds) if k == "scalar"])
        ctx = Ctx(alpha_d=1.0, alpha_i=1) if nin == 2 else Ctx()
        assert lib.host_pointwise(INDEX[op], DTYPES.index(dtype), ctypes.byref(plan), ctypes.byref(ctx)) == 0
        assert ctx.error == 0, (op, dtype, lname)
        # the CPU's call on the same values (a host scalar as a 0-d tensor)
        args = [tensor_of(a, dtype).reshape(()) if k == "scalar" else tensor_of(np.broadcast_to(a, shape), dtype)
                for a, k in zip(ins, kinds)]
        try:
            expected = fn(*args)
        except (NotImplementedError, RuntimeError):  # pow of bools: only with a Python exponent (pow_checks)
            try:
                expected = fn(*[t.item() if k == "scalar" else t for t, k in zip(args, kinds)])
            except (NotImplementedError, RuntimeError):
                continue
        assert_same(tensor_of(out, od), tensor_of(raw_of(expected).reshape(shape), od), what=f"{op} {dtype} {lname}")


def run_binary(lib, op, dtype, a, b, ctx, host_scalars=()):
    shape = a.shape if a.ndim else b.shape
    out = aligned(shape[0], itemsize(dtype))
    plan = plan_of([out, a, b], shape, host_scalars=host_scalars)
    assert lib.host_pointwise(INDEX[op], DTYPES.index(dtype), ctypes.byref(plan), ctypes.byref(ctx)) == 0
    return out


def as_float32(raw, dtype):
    return tensor_of(raw, dtype).float().numpy()


def test_alpha_is_taken_in_the_compute_type(lib):
    """add/sub's alpha reaches the loop converted to the compute type directly (float for float16/bfloat16), as torch's
    CUDA kernels take it; the CPU rounds it to the tensor's dtype first, which gives other values here."""
    rng = np.random.default_rng(1)
    for dtype, alpha in (("float32", 2.5), ("float16", 0.3), ("bfloat16", 0.3), ("int32", -3), ("int64", 7)):
        a, b = make_input("flat", (1000,), dtype, rng, "x"), make_input("flat", (1000,), dtype, rng, "x")
        out = run_binary(lib, "sub", dtype, a, b, Ctx(alpha_d=float(alpha), alpha_i=int(alpha)))
        on_cpu = raw_of(pyctorch.sub(tensor_of(a, dtype), tensor_of(b, dtype), alpha=alpha))
        if dtype in ("float16", "bfloat16"):  # one fma in float (the exact value, rounded), then the dtype's rounding
            with np.errstate(invalid="ignore"):
                exact = as_float32(a, dtype).astype(np.float64) - np.float64(np.float32(alpha)) * as_float32(b, dtype)
            expected = raw_of(pyctorch.tensor(exact.astype(np.float32).tolist()).to(dt(dtype)))
            assert_same(tensor_of(out, dtype), tensor_of(expected, dtype), exact=True, what=dtype)
            assert (as_float32(out, dtype) != as_float32(on_cpu, dtype)).any(), dtype
        else:
            assert_same(tensor_of(out, dtype), tensor_of(on_cpu, dtype), what=dtype)


def test_cpu_scalars_in_opmath(lib):
    """A float16 add with a CPU scalar on either side uses the scalar's own value in float (ctx->scalar_a/b); a
    division by a CPU scalar multiplies by its reciprocal, taken once in the compute type (torch's CUDA kernels)."""
    rng = np.random.default_rng(2)
    x = make_input("flat", (64,), "float16", rng, "x")
    xf = as_float32(x, "float16")
    half_of = lambda v: raw_of(pyctorch.tensor([float(v)], dtype=pyctorch.float16))[:1]  # noqa: E731
    out = run_binary(lib, "add", "float16", half_of(0.1).reshape(()), x,
                     Ctx(alpha_d=1.0, alpha_i=1, has_scalar_a=1, scalar_a=0.1), host_scalars=[1])
    assert_same(as_float32(out, "float16"), (np.float32(0.1) + xf).astype(np.float16).astype(np.float32), exact=True)
    out = run_binary(lib, "div", "float16", x, half_of(0.3).reshape(()),
                     Ctx(alpha_d=1.0, alpha_i=1, has_scalar_b=1, scalar_b=0.3), host_scalars=[2])
    assert_same(as_float32(out, "float16"), (xf * (np.float32(1) / np.float32(0.3))).astype(np.float16).astype(np.float32),
                exact=True)
    y = make_input("flat", (64,), "float32", rng, "x")
    three = raw_of(pyctorch.tensor([3.0], dtype=pyctorch.float32))[:1].reshape(())
    for op in ("div", "divide", "true_divide"):
        out = run_binary(lib, op, "float32", y, three, Ctx(alpha_d=1.0, alpha_i=1), host_scalars=[2])
        assert_same(out.view(np.float32), y.view(np.float32) * (np.float32(1) / np.float32(3)), exact=True, what=op)
    # a tensor divisor divides
    z = aligned(64, 4)
    z.view(np.float32)[:] = 3
    out = run_binary(lib, "div", "float32", y, z, Ctx(alpha_d=1.0, alpha_i=1))
    assert_same(out.view(np.float32), y.view(np.float32) / np.float32(3), exact=True)


def test_integer_division_by_zero_is_reported(lib):
    for op in ("floor_divide", "div_trunc", "remainder", "fmod"):
        for dtype in ("int32", "int64", "uint8"):
            a = aligned(64, itemsize(dtype))
            a[:] = 5
            b = aligned(64, itemsize(dtype))
            b[:] = 2
            for zero_at in (None, 17):
                if zero_at is not None:
                    b[zero_at] = 0
                out = aligned(64, itemsize(dtype))
                ctx = Ctx(alpha_d=1.0, alpha_i=1)
                plan = plan_of([out, a, b], (64,))
                assert lib.host_pointwise(INDEX[op], DTYPES.index(dtype), ctypes.byref(plan), ctypes.byref(ctx)) == 0
                assert ctx.error == (0 if zero_at is None else 1), (op, dtype, zero_at)
    # a float loop never waits for a flag
    a = aligned(8, 4)
    ctx = Ctx(alpha_d=1.0, alpha_i=1)
    assert lib.host_pointwise(INDEX["floor_divide"], DTYPES.index("float32"),
                              ctypes.byref(plan_of([aligned(8, 4), a, aligned(8, 4)], (8,))), ctypes.byref(ctx)) == 0
    assert ctx.error == 0


def test_the_launch_picks_its_kernel(lib):
    lib.host_configure(1, 0)
    counts(lib)
    f32 = DTYPES.index("float32")
    ctx = Ctx(alpha_d=1.0, alpha_i=1)
    a, b, out = aligned(1000, 4), aligned(1000, 4), aligned(1000, 4)
    lib.host_pointwise(INDEX["add"], f32, ctypes.byref(plan_of([out, a, b], (1000,))), ctypes.byref(ctx))
    assert counts(lib)[:2] == [1, 0]  # aligned and contiguous: vectorized
    lib.host_pointwise(INDEX["add"], f32, ctypes.byref(plan_of([out, a, b[:1]], (1000,))), ctypes.byref(ctx))
    assert counts(lib)[:2] == [1, 0]  # a broadcast input too
    lib.host_pointwise(INDEX["add"], f32, ctypes.byref(plan_of([out[1:], a[1:], b[1:]], (999,))), ctypes.byref(ctx))
    assert counts(lib)[:2] == [0, 1]  # misaligned: strided
    deep = np.zeros(2 ** 12, np.float32)
    view = deep.reshape((2,) * 12).transpose(list(range(12))[::-1])
    lib.host_pointwise(INDEX["neg"], f32, ctypes.byref(plan_of([view, view], (2,) * 12)), ctypes.byref(Ctx()))
    assert counts(lib) == [0, 4, 2 ** 12]  # 12 dims: once per index of the 2 outer ones


def test_plans_past_int32_are_split(lib):
    """A strided plan of more than INT32_MAX elements is halved along its longest dim until each part fits; the parts
    cover it exactly (counted, not run)."""
    lib.host_configure(1, 1)
    counts(lib)
    try:
        f32 = DTYPES.index("float32")
        for shape in ((2 ** 31 + 7,), (3, 2 ** 31), (5, 3, 2 ** 29 + 1)):
            p = Loop()
            p.ntensors, p.ndim, p.numel = 2, len(shape), int(np.prod(shape))
            stride = 4
            for d in reversed(range(len(shape))):
                p.shape[d] = shape[d]
                p.strides[d][0] = p.strides[d][1] = stride
                stride *= shape[d]
            p.data[0] = p.data[1] = 4  # never dereferenced; misaligned so that the strided kernel runs
            assert lib.host_pointwise(INDEX["neg"], f32, ctypes.byref(p), ctypes.byref(Ctx())) == 0
            c = counts(lib)
            assert c[2] == p.numel and c[0] == 0, shape
            assert c[1] * (2 ** 31 - 1) >= p.numel and c[1] <= 8, (shape, c)
    finally:
        lib.host_configure(1, 0)


def test_division_by_multiply_shift(lib):
    for d in list(range(1, 2049)) + [3 ** k for k in range(8, 20)] + [2 ** 31 - 1, 2 ** 30 + 1, 2 ** 31 - 2,
                                                                          641 * 6700417 % 2 ** 31, 1000003, 65537]:
        assert lib.host_check_divider(d, 5000 if d < 2049 else 100) == -1, d


def copy_source(kind, shape, src, dst, rng):
    """Values of dtype src for a copy into dst: where a float becomes an integer, finite ones in dst's range (beyond it
    the device saturates where the CPU wraps, as torch's devices differ)."""
    n = int(np.prod(shape))
    if not (src in FLOATS and dst not in FLOATS):
        return place(kind, shape, values(src, n, rng, "x"))
    low = 0 if dst.startswith("uint") or dst == "bool" else -100
    return place(kind, shape, raw_of(pyctorch.tensor((rng.uniform(low, 100, n) + 0.25).tolist(), dtype=dt(src))))


@pytest.mark.parametrize("dst", DTYPES)
def test_copies_convert_as_the_cpu(lib, dst):
    rng = np.random.default_rng(DTYPES.index(dst))
    for src in DTYPES:
        for kind, shape in (("flat", (1027,)), ("t", (37, 29)), ("scalar", (1027,)), ("bcast", (1027,)),
                            ("shifted", (515,))):
            v = copy_source(kind, shape, src, dst, rng)
            out = aligned(int(np.prod(shape)), itemsize(dst)).reshape(shape)
            plan = plan_of([out, v], shape, host_scalars=[1] if kind == "scalar" else [])
            assert lib.host_copy(ctypes.byref(plan), DTYPES.index(dst), DTYPES.index(src)) == 0
            x = tensor_of(v, src).reshape(()) if kind == "scalar" else tensor_of(np.broadcast_to(v, shape), src)
            expected = raw_of(pyctorch.empty(shape, dtype=dt(dst)).copy_(x)).reshape(shape)
            what = f"{src}->{dst} {kind}"
            if src == dst:  # a copy within a dtype moves bits, NaN payloads included
                assert_same(out, expected, exact=True, what=what)
            else:
                assert_same(tensor_of(out, dst), tensor_of(expected, dst), what=what)


@pytest.mark.parametrize("dtype", DTYPES)
def test_fills_convert_as_the_cpu(lib, dtype):
    lib.host_configure(1, 0)
    for value in (0, 1, -3, 2.75, True, 300, -1.5e300):
        for layout, shape in (("flat", (1027,)), ("t", (37, 29)), ("shifted", (515,))):
            try:
                expected = raw_of(pyctorch.empty(shape, dtype=dt(dtype)).fill_(value))
            except RuntimeError:  # out of the dtype's range: fill_ refuses it before any device work
                continue
            n = int(np.prod(shape))
            out = aligned(n, itemsize(dtype), shift=1 if layout == "shifted" else 0)
            out = out.reshape(shape[::-1]).T if layout == "t" else out.reshape(shape)
            # the value as pct_cuda_fill_on_device hands it over: converted to dtype as the CPU converts, read back
            one = pyctorch.full((), value, dtype=dt(dtype))
            assert lib.host_fill(ctypes.byref(plan_of([out], shape)), DTYPES.index(dtype), one.double().item(),
                                 one.long().item()) == 0
            assert_same(tensor_of(out, dtype), tensor_of(expected.reshape(shape), dtype), exact=True,
                        what=f"fill {value} {dtype} {layout}")
