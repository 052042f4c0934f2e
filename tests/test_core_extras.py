"""Tensor.resize_ / resize_as_, number / tensor rounding and linspace values, against torch."""
import numpy as np
import pytest

import pyctorch as P
from conftest import CUDA_BUILT, CUDA_USABLE, cuda_refusal, requires_torch, torch as T


def _run(m):
    x = m.arange(6.)
    out = []
    out.append(x.resize_(2, 2).tolist())
    out.append(x.resize_((3,)).tolist())
    y = x.resize_(m.Size([2, 5]))
    out.append((tuple(y.shape), tuple(y.stride()), y.flatten()[:6].tolist(), y is x))
    out.append(x.resize_as_(m.ones(1, 2)).tolist())
    z = m.zeros(0)
    z.resize_(4).fill_(3)
    out.append(z.tolist())
    return out


@requires_torch
def test_resize_matches_torch():
    assert _run(P) == _run(T)


def test_resize_keeps_contents_and_bumps_version():
    x = P.arange(4.)
    v = x._version
    x.resize_(2, 3)
    assert x.shape == (2, 3) and x.is_contiguous() and x._version > v
    np.testing.assert_array_equal(x.flatten()[:4].numpy(), [0, 1, 2, 3])


@pytest.mark.parametrize("call, exc", [
    (lambda: P.ones(2, requires_grad=True).resize_(3), RuntimeError),
    (lambda: P.ones(2).resize_(-1), RuntimeError),
    (lambda: P.ones(2).resize_("a"), TypeError),
    (lambda: P.ones(2).resize_as_(3), TypeError),
    (lambda: P.from_numpy(np.ones(2)).resize_(10), RuntimeError),
])
def test_resize_errors(call, exc):
    with pytest.raises(exc):
        call()


@requires_torch
def test_resize_error_texts_match_torch():
    for m in (P, T):
        with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
            m.ones(2, requires_grad=True).resize_(3)


@requires_torch
def test_number_divided_by_tensor_is_reciprocal_times_number():
    # torch's Tensor.__rtruediv__: self.reciprocal() * other (bit-identical results, 1 ulp from a division)
    vals = np.random.RandomState(0).uniform(0.1, 10, 1000).astype(np.float32)
    for num in (1.7, 3, 0.1):
        p = num / P.tensor(vals)
        t = num / T.tensor(vals)
        np.testing.assert_array_equal(p.numpy(), t.numpy())
    assert (2 / P.tensor([3])).dtype == P.float32


@requires_torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_linspace_is_bit_identical_to_torch(dtype):
    rs = np.random.RandomState(1)
    cases = [(-np.pi, np.pi, 2000), (0, 1, 7), (-3.3, 1e3, 1001), (0.1, 0.2, 3), (2, 2, 5), (1, 0, 1)]
    cases += [(float(rs.uniform(-100, 100)), float(rs.uniform(-100, 100)), int(rs.randint(1, 3000))) for _ in range(20)]
    for a, b, n in cases:
        p = P.linspace(a, b, n, dtype=getattr(P, dtype)).numpy()
        t = T.linspace(a, b, n, dtype=getattr(T, dtype)).numpy()
        np.testing.assert_array_equal(p, t)


def test_openblas_kernel_choice(monkeypatch):
    from pyctorch import _openblas_env as env
    skx = ("AuthenticAMD", {"avx2", "avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512cd"})
    cases = [({}, skx, "SKYLAKEX"),
             ({"OPENBLAS_CORETYPE": "Haswell"}, skx, "Haswell"),            # the user's choice is kept
             ({"PYCTORCH_NO_AVX512": "1"}, skx, None),                     # valgrind builds keep the default
             ({}, ("GenuineIntel", skx[1]), None),                         # OpenBLAS recognises Intel itself
             ({}, ("AuthenticAMD", {"avx2", "avx512f"}), None)]            # not every AVX-512 subset
    # recorded first, so the teardown restores the variable as it was: select_openblas_kernels() writes os.environ
    # itself, and a SKYLAKEX left behind would reach the subprocesses of later tests on a CPU without AVX-512
    monkeypatch.setenv("OPENBLAS_CORETYPE", "")
    monkeypatch.setenv("PYCTORCH_NO_AVX512", "")
    for environ, info, expected in cases:
        monkeypatch.delenv("OPENBLAS_CORETYPE", raising=False)
        monkeypatch.delenv("PYCTORCH_NO_AVX512", raising=False)
        for k, v in environ.items():
            monkeypatch.setenv(k, v)
        monkeypatch.setattr(env, "_cpu_info", lambda info=info: info)
        env.select_openblas_kernels()
        import os
        assert os.environ.get("OPENBLAS_CORETYPE") == expected, (environ, info)


# ---- NumPy scalars in tensor() / as_tensor(), Tensor.new, second names of operators ----

NP_SCALAR_DATA = ["np.float64(2.5)", "[np.float64(1)]", "[np.int16(1), np.int16(2)]", "[np.int16(1), 2]",
                  "[np.float16(1), 2.0]", "[np.uint8(1), np.int8(2)]", "np.bool_(1)", "[np.float32(1), np.float64(2)]",
                  "[1, np.float32(2)]", "[True, np.int8(2)]", "np.int32(7)", "[np.float16(1), np.int64(2)]",
                  "[[np.float64(1)], [2.5]]", "[True, 2]", "[1.5, 2]"]


def _np_scalar_results(m):
    out = []
    for text in NP_SCALAR_DATA:
        for make in (m.tensor, m.as_tensor):
            x = make(eval(text))
            out.append((text, str(x.dtype).split(".")[-1], x.tolist()))
    return out


def test_numpy_scalars_keep_their_dtype():
    got = {(t, d) for t, d, _ in _np_scalar_results(P)}
    assert ("np.int32(7)", "int32") in got and ("[np.int16(1), 2]", "int64") in got
    assert ("[np.float16(1), 2.0]", "float32") in got and ("[np.float64(1)]", "float64") in got


@requires_torch
def test_numpy_scalars_match_torch():
    assert _np_scalar_results(P) == _np_scalar_results(T)


def _new_results(m):
    y = m.tensor([1., 2.], dtype=m.float64)
    a = y.new(2, 3)
    b = y.new(m.Size([4]))
    c = y.new([1, 2])
    d = y.new((2, 3))
    e = y.new(y)
    return [(tuple(a.shape), str(a.dtype)), (tuple(b.shape), str(b.dtype)), (c.tolist(), str(c.dtype)),
            (d.tolist(), str(d.dtype)), e.data_ptr() == y.data_ptr(), tuple(y.new().shape)]


def test_tensor_new():
    assert _new_results(P)[2] == ([1.0, 2.0], "torch.float64")
    with pytest.raises(TypeError):
        P.ones(2).new(P.ones(2, dtype=P.int64))


@requires_torch
def test_tensor_new_matches_torch():
    assert _new_results(P) == _new_results(T)


@requires_torch
@pytest.mark.parametrize("name", ["sgn", "absolute", "negative", "greater", "greater_equal", "less", "less_equal",
                                  "not_equal", "arccos", "arcsin", "arctan", "arccosh", "arcsinh", "arctanh", "fix"])
def test_second_names_match_torch(name):
    x = np.array([-1.5, -0.25, 0.0, 0.5, 1.0, 3.0], np.float32)
    binary = name in ("greater", "greater_equal", "less", "less_equal", "not_equal")
    outs = []
    for m in (P, T):
        t = m.tensor(x)
        args = (t, 0.5) if binary else (t,)
        r = [getattr(m, name)(*args), getattr(t, name)(*args[1:])]
        if hasattr(m.Tensor, name + "_") and not binary:
            r.append(getattr(t.clone(), name + "_")())
        outs.append([v.tolist() for v in r])
    np.testing.assert_allclose(np.array(outs[0], dtype=np.float64), np.array(outs[1], dtype=np.float64), equal_nan=True,
                               rtol=1e-6)


# ---- outputs larger than the last-level cache (Note [Streaming stores] in iter.c) ----

@pytest.mark.parametrize("threads", [1, 2])
def test_large_outputs_written_around_the_cache(threads):
    """Outputs of 36 MB and more go through non-temporal stores: misaligned starts, odd lengths, in-place
    ops, conversions, broadcasting and 2 threads give the same values as numpy."""
    old = P.get_num_threads()
    P.set_num_threads(threads)
    try:
        n = (9 << 20) + 5
        a, b = np.random.RandomState(0).randn(2, n).astype(np.float32)
        A, B = P.from_numpy(a), P.from_numpy(b)
        np.testing.assert_array_equal((A + B).numpy(), a + b)
        out = P.empty(n + 3)[3:]  # 12 bytes past a 64-byte boundary
        P.mul(A, B, out=out)
        np.testing.assert_array_equal(out.numpy(), a * b)
        x = A.clone()
        x.sub_(B)
        np.testing.assert_array_equal(x.numpy(), a - b)
        np.testing.assert_array_equal(A.to(P.float64).numpy(), a.astype(np.float64))
        rows = P.from_numpy(a[: 3 << 20].reshape(3, -1))
        np.testing.assert_array_equal((rows * B[: rows.shape[1]]).numpy(), a[: 3 << 20].reshape(3, -1) * b[: rows.shape[1]])
    finally:
        P.set_num_threads(old)


@requires_torch
@pytest.mark.parametrize("value", [3.5, 2, True, "tensor", "tensor_grad", "tensor_1d"])
def test_torch_fill_matches_torch(value):
    """torch.fill (out of place): a new tensor like the input filled with a number or a 0-d tensor, whose
    gradient flows to the tensor value (grad.sum()) and zeros to the input; a 1-d value is refused."""
    outs = []
    for lib in (P, T):
        x = lib.zeros(2, 3, requires_grad=True)
        v = {"tensor": lib.tensor(1.25), "tensor_grad": lib.tensor(2.0, requires_grad=True),
             "tensor_1d": lib.ones(2)}.get(value, value)
        try:
            y = lib.fill(x, v)
        except RuntimeError as e:
            outs.append(("error", str(e)))
            continue
        (y * lib.arange(6.0).reshape(2, 3)).sum().backward()
        outs.append((y.tolist(), str(y.dtype), x.grad.tolist(),
                     v.grad.item() if isinstance(v, type(x)) and v.requires_grad else None))
    assert outs[0] == outs[1]
    assert P.fill(P.zeros(2, dtype=P.int64), 2.7).tolist() == [2, 2]


def test_getsizeof_of_a_storage_counts_its_bytes():
    """sys.getsizeof(storage) grows with the bytes held, as torch's does (torchinfo sums it for its size report)."""
    import sys
    small, big = P.zeros(0).untyped_storage(), P.zeros(1000).untyped_storage()
    assert sys.getsizeof(big) - sys.getsizeof(small) == 4000
    if T is not None:
        ts, tb = T.zeros(0).untyped_storage(), T.zeros(1000).untyped_storage()
        assert sys.getsizeof(tb) - sys.getsizeof(ts) == sys.getsizeof(big) - sys.getsizeof(small)


def test_device_as_a_context_manager():
    """`with torch.device(d):` makes d the factories' default inside the block and restores the one before, nested
    blocks included (transformers builds models inside one); a device pyctorch lacks refuses at the `with`."""
    outer = P.get_default_device()
    with P.device("cpu") as d:
        assert d == P.device("cpu") and P.get_default_device() == P.device("cpu")
        with P.device("cpu"):
            assert P.zeros(1).device == P.device("cpu")
    assert P.get_default_device() == outer
    if not CUDA_BUILT:
        with pytest.raises(AssertionError, match="not compiled with CUDA"):
            with P.device("cuda"):
                pass
    elif not CUDA_USABLE:  # as torch's CUDA build without a driver: the block opens, its first factory refuses
        refusal, message = cuda_refusal()
        with pytest.raises(refusal, match=message):
            with P.device("cuda"):
                assert P.get_default_device() == P.device("cuda")
                P.zeros(1)
    assert P.get_default_device() == outer
    if T is not None:
        with T.device("cpu") as td:
            assert repr(td) == repr(d)


@pytest.mark.parametrize("condition", [True, False, "tensor_true", "tensor_false"])
def test_torch_assert(condition):
    """torch._assert(condition, message): None, or AssertionError(message), for bools and one-element tensors."""
    results = []
    for lib in [P] + ([T] if T is not None else []):
        c = {"tensor_true": lib.tensor(True), "tensor_false": lib.tensor(False)}.get(condition, condition)
        try:
            results.append(lib._assert(c, "the message"))
        except AssertionError as e:
            results.append(("AssertionError", str(e)))
    assert results[0] == (None if condition in (True, "tensor_true") else ("AssertionError", "the message"))
    assert len(set(map(str, results))) == 1
