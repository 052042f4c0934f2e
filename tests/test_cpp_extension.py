"""torch.utils.cpp_extension: load / load_inline / CppExtension + BuildExtension, the public C header
(pyctorch/include/pyctorch/extension.h) and the example extension (examples/extension/).

The example is compiled once for the module (a module-scoped fixture), with -Wall -Wextra -Werror. Every test skips
when no C compiler is found (Python's sysconfig CC, or $CC): nothing else is needed.
"""
import gc
import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig

import numpy as np
import pytest

import pyctorch as torch
from pyctorch.utils import cpp_extension
from conftest import HAVE_TORCH

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE_DIR = os.path.join(ROOT, "examples", "extension")
WARNINGS = ["-Wall", "-Wextra", "-Werror"]

pytestmark = [
    pytest.mark.skipif(shutil.which(cpp_extension._c_compiler()[0]) is None,
                       reason="no C compiler found (sysconfig's CC or $CC): extensions cannot be built"),
    pytest.mark.xdist_group("cpp_extension"),
]


def _import_file(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def build_root(tmp_path_factory):
    return tmp_path_factory.mktemp("extensions")


@pytest.fixture(scope="module")
def example(build_root):
    """(the Python wrapper module, the compiled extension) of examples/extension."""
    wrapper = _import_file("fused_bias_gelu_example", os.path.join(EXAMPLE_DIR, "fused_bias_gelu.py"))
    ext = wrapper.load_extension(build_directory=str(build_root / "example"))
    return wrapper, ext


# The header's API, each function through a small C function, compared with what Python sees of the same tensor.
INLINE_API = r"""
static PyObject *describe(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *t;
    if (!PyArg_ParseTuple(args, "O", &t)) return NULL;
    const int n = pct_ext_ndim(t);
    if (n < 0) return NULL;
    PyObject *sizes = PyTuple_New(n), *strides = PyTuple_New(n);
    if (!sizes || !strides) { Py_XDECREF(sizes); Py_XDECREF(strides); return NULL; }
    for (int d = 0; d < n; d++) {
        PyTuple_SET_ITEM(sizes, d, PyLong_FromLongLong(pct_ext_sizes(t)[d]));
        PyTuple_SET_ITEM(strides, d, PyLong_FromLongLong(pct_ext_strides(t)[d]));
    }
    const char *data = pct_ext_numel(t) ? pct_ext_const_data_ptr(t) : NULL;
    if (pct_ext_numel(t) && !data) { Py_DECREF(sizes); Py_DECREF(strides); return NULL; }
    return Py_BuildValue("{s:i,s:N,s:N,s:L,s:L,s:i,s:s,s:L,s:i,s:i,s:i,s:i,s:K}", "ndim", n, "sizes", sizes,
                         "strides", strides, "numel", (long long)pct_ext_numel(t),
                         "offset", (long long)pct_ext_storage_offset(t), "dtype", pct_ext_dtype_of(t),
                         "dtype_name", pct_ext_dtype_name(pct_ext_dtype_of(t)),
                         "element_size", (long long)pct_ext_element_size(pct_ext_dtype_of(t)),
                         "device_type", pct_ext_device_type_of(t), "device_index", pct_ext_device_index(t),
                         "requires_grad", pct_ext_requires_grad(t),
                         "contiguous", pct_ext_is_contiguous(t), "data", (unsigned long long)(uintptr_t)data);
}

static PyObject *is_tensor(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *o;
    if (!PyArg_ParseTuple(args, "O", &o)) return NULL;
    return PyBool_FromLong(pct_ext_is_tensor(o));
}

/* make(kind, dtype, sizes): kind 0 empty, 1 zeros; filled with 0, 1, 2... (as double) when kind is 0 and the dtype
 * is float64 */
static PyObject *make(PyObject *self, PyObject *args)
{
    (void)self;
    int kind, dtype;
    PyObject *shape;
    if (!PyArg_ParseTuple(args, "iiO!", &kind, &dtype, &PyTuple_Type, &shape)) return NULL;
    int64_t sizes[8];
    const int n = (int)PyTuple_GET_SIZE(shape);
    PCT_EXT_CHECK_VALUE(n <= 8, "make: at most 8 dims, got %d", n);
    for (int d = 0; d < n; d++) sizes[d] = PyLong_AsLongLong(PyTuple_GET_ITEM(shape, d));
    if (PyErr_Occurred()) return NULL;
    PyObject *t = kind ? pct_ext_zeros(n, sizes, dtype, PCT_EXT_CPU, -1)
                       : pct_ext_empty(n, sizes, dtype, PCT_EXT_CPU, -1);
    if (t && !kind && dtype == PCT_EXT_FLOAT64) {
        double *p = pct_ext_data_ptr(t);
        for (int64_t i = 0; i < pct_ext_numel(t); i++) p[i] = (double)i;
    }
    return t;
}

static PyObject *like(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *t;
    if (!PyArg_ParseTuple(args, "O", &t)) return NULL;
    return pct_ext_empty_like(t);
}

static PyObject *contiguous(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *t;
    if (!PyArg_ParseTuple(args, "O", &t)) return NULL;
    return pct_ext_contiguous(t);
}

static PyObject *writable(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *t;
    if (!PyArg_ParseTuple(args, "O", &t)) return NULL;
    if (!pct_ext_data_ptr(t)) return NULL;
    Py_RETURN_NONE;
}

/* fail(kind, value): raises the error kind with a message formatted by printf's %g and %lld */
static PyObject *fail(PyObject *self, PyObject *args)
{
    (void)self;
    int kind;
    double value;
    if (!PyArg_ParseTuple(args, "id", &kind, &value)) return NULL;
    if (kind == 5) {
        PCT_EXT_CHECK(value > 0, "value %g must be positive (%lld)", value, (long long)42);
        Py_RETURN_NONE;
    }
    return pct_ext_error((pct_ext_error_kind)kind, "kind %d with value %g and %lld", kind, value, (long long)-7);
}
"""
INLINE_FUNCTIONS = {"describe": "describe(t) -> dict", "is_tensor": "", "make": "", "like": "", "contiguous": "",
                    "writable": "", "fail": "fail(kind, value) raises"}


@pytest.fixture(scope="module")
def api(build_root):
    return cpp_extension.load_inline("pct_ext_api_test", INLINE_API, functions=INLINE_FUNCTIONS,
                                     extra_cflags=WARNINGS, build_directory=str(build_root / "api"))


# ---------------------------------------------------------------------------------------------- the example


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("shape", [(7,), (3, 5), (2, 3, 4), (0, 4)])
def test_example_forward_matches_composition(example, dtype, shape):
    wrapper, ext = example
    torch.manual_seed(0)
    x = torch.randn(*shape, dtype=dtype)
    bias = torch.randn(shape[-1], dtype=dtype)
    y = wrapper.fused_bias_gelu(x, bias, ext=ext)
    expected = torch.nn.functional.gelu(x + bias)
    assert y.dtype == dtype and y.shape == x.shape
    tol = 1e-6 if dtype == torch.float32 else 1e-13
    np.testing.assert_allclose(y.numpy(), expected.numpy(), rtol=tol, atol=tol)
    if HAVE_TORCH:  # the oracle: torch's own gelu on the same values
        import torch as real
        ref = real.nn.functional.gelu(real.from_numpy(x.numpy()) + real.from_numpy(bias.numpy()))
        np.testing.assert_allclose(y.numpy(), ref.numpy(), rtol=tol, atol=tol)


def test_example_non_contiguous_input(example):
    wrapper, ext = example
    x = torch.randn(6, 4, dtype=torch.float64).t()  # [4, 6], strides (1, 4)
    bias = torch.randn(12, dtype=torch.float64)[::2]  # stride 2
    assert not x.is_contiguous() and not bias.is_contiguous()
    y = wrapper.fused_bias_gelu(x, bias, ext=ext)
    np.testing.assert_allclose(y.numpy(), torch.nn.functional.gelu(x + bias).numpy(), rtol=1e-13, atol=1e-13)


def test_example_gradcheck_float64(example):
    wrapper, ext = example
    torch.manual_seed(1)
    x = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    bias = torch.randn(4, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda a, b: wrapper.fused_bias_gelu(a, b, ext=ext), (x, bias))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_example_grads_match_composition(example, dtype):
    wrapper, ext = example
    torch.manual_seed(2)
    xv, bv, gv = torch.randn(2, 3, 5, dtype=dtype), torch.randn(5, dtype=dtype), torch.randn(2, 3, 5, dtype=dtype)
    x, bias = xv.clone().requires_grad_(), bv.clone().requires_grad_()
    wrapper.fused_bias_gelu(x, bias, ext=ext).backward(gv)
    x2, bias2 = xv.clone().requires_grad_(), bv.clone().requires_grad_()
    torch.nn.functional.gelu(x2 + bias2).backward(gv)
    tol = 1e-5 if dtype == torch.float32 else 1e-12
    np.testing.assert_allclose(x.grad.numpy(), x2.grad.numpy(), rtol=tol, atol=tol)
    np.testing.assert_allclose(bias.grad.numpy(), bias2.grad.numpy(), rtol=tol, atol=tol)
    if HAVE_TORCH:
        import torch as real
        rx = real.from_numpy(xv.numpy()).requires_grad_()
        rb = real.from_numpy(bv.numpy()).requires_grad_()
        real.nn.functional.gelu(rx + rb).backward(real.from_numpy(gv.numpy()))
        np.testing.assert_allclose(x.grad.numpy(), rx.grad.numpy(), rtol=tol, atol=tol)
        np.testing.assert_allclose(bias.grad.numpy(), rb.grad.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("make_args, exc, text", [
    (lambda: (torch.ones(2, 3, dtype=torch.int64), torch.ones(3, dtype=torch.int64)), TypeError, "float32 or float64"),
    (lambda: (torch.ones(2, 3), torch.ones(3, dtype=torch.float64)), TypeError, "same dtype"),
    (lambda: ([1.0, 2.0], torch.ones(2)), TypeError, "must be a Tensor"),
    (lambda: (torch.ones(2, 3), torch.ones(4)), ValueError, "bias has 4 elements but x's last dim is 3"),
    (lambda: (torch.ones(2, 3), torch.ones(1, 3)), ValueError, "1-d bias"),
    (lambda: (torch.ones(()), torch.ones(1)), ValueError, "at least 1 dim"),
    (lambda: (torch.ones(2, 3, device="meta"), torch.ones(3, device="meta")), RuntimeError, "CPU tensor"),
])
def test_example_errors(example, make_args, exc, text):
    _, ext = example
    with pytest.raises(exc, match=text):
        ext.forward(*make_args())


def test_example_backward_errors(example):
    _, ext = example
    x, bias = torch.ones(2, 3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
    with pytest.raises(ValueError, match="grad must have x's shape"):
        ext.backward(torch.ones(3, 2, dtype=torch.float64), x, bias)
    with pytest.raises(TypeError, match="grad must have x's dtype float64, got float32"):
        ext.backward(torch.ones(2, 3), x, bias)
    with pytest.raises(TypeError, match="takes exactly 3 arguments"):
        ext.backward(x, bias)


def test_example_no_leak(example):
    """References of the arguments and Python's memory blocks stay flat over many calls, the failing ones included."""
    _, ext = example
    x, bias, grad = torch.randn(4, 8), torch.randn(8), torch.randn(4, 8)
    bad = torch.ones(4, 8, dtype=torch.int32)

    def run(n):
        for _ in range(n):
            ext.forward(x, bias)
            ext.backward(grad, x, bias)
            try:
                ext.forward(bad, bias)
            except TypeError:
                pass
            try:
                ext.backward(grad, x, torch.ones(3))
            except ValueError:
                pass

    run(200)  # warm-up
    gc.collect()
    refs = [sys.getrefcount(t) for t in (x, bias, grad, bad)]
    blocks = sys.getallocatedblocks()
    run(3000)
    gc.collect()
    assert [sys.getrefcount(t) for t in (x, bias, grad, bad)] == refs
    # one leaked object per call would be 3000 or more; other tests of the same worker may leave threads that allocate
    assert sys.getallocatedblocks() - blocks < 1000


# ---------------------------------------------------------------------------------------------- the header's API


def test_api_describes_tensors(api):
    base = torch.arange(24, dtype=torch.float64).reshape(2, 3, 4)
    for t in (base, base.transpose(0, 2), base[1, 1:, ::2], torch.ones((), dtype=torch.int16), torch.ones(0, 3),
              torch.from_numpy(np.arange(6.0)[1::2]),
              torch.zeros(5, dtype=torch.bool).requires_grad_(False), torch.randn(3, requires_grad=True)):
        d = api.describe(t)
        assert d["ndim"] == t.dim() and d["sizes"] == tuple(t.shape) and d["strides"] == t.stride()
        assert d["numel"] == t.numel() and d["offset"] == t.storage_offset()
        assert d["dtype_name"] == str(t.dtype).replace("torch.", "") and d["element_size"] == t.element_size()
        assert d["device_type"] == 0 and d["device_index"] == -1 and d["requires_grad"] == t.requires_grad
        assert d["contiguous"] == t.is_contiguous()
        if t.numel():
            assert d["data"] == t.data_ptr()
    # the dtype ids are the header's documented, stable values
    ids = {torch.bool: 0, torch.uint8: 1, torch.int8: 2, torch.int16: 3, torch.int32: 4, torch.int64: 5,
           torch.float16: 6, torch.bfloat16: 7, torch.float32: 8, torch.float64: 9, torch.complex64: 13,
           torch.complex128: 14}
    for dt, i in ids.items():
        assert api.describe(torch.zeros(1, dtype=dt))["dtype"] == i
    meta = api.describe  # a meta tensor has shape but no data
    with pytest.raises(NotImplementedError):
        meta(torch.ones(2, device="meta"))


def test_api_type_checks(api):
    assert api.is_tensor(torch.ones(1)) and api.is_tensor(torch.nn.Parameter(torch.ones(1)))
    assert not api.is_tensor(np.ones(1)) and not api.is_tensor(None)
    for f in (api.describe, api.like, api.contiguous, api.writable):
        with pytest.raises(TypeError, match="expected a Tensor, but got list"):
            f([1, 2])


def test_api_allocation(api):
    t = api.make(0, 9, (2, 3))  # empty float64, filled by the C code
    assert type(t) is torch.Tensor and t.dtype == torch.float64 and t.shape == (2, 3) and t.is_contiguous()
    np.testing.assert_array_equal(t.numpy(), np.arange(6.0).reshape(2, 3))
    assert not t.requires_grad and t.device.type == "cpu"
    (t * 2).sum()  # an ordinary tensor: ops run on it
    z = api.make(1, 5, (4,))
    assert z.dtype == torch.int64 and z.tolist() == [0, 0, 0, 0]
    assert api.make(1, 8, ()).shape == ()
    like = api.like(torch.ones(3, 2, dtype=torch.float16).t())
    assert like.shape == (2, 3) and like.dtype == torch.float16 and like.is_contiguous()
    with pytest.raises(RuntimeError, match="negative dimension"):
        api.make(0, 8, (2, -1))
    with pytest.raises(ValueError, match="unknown dtype id 99"):
        api.make(0, 99, (2,))


def test_api_contiguous(api):
    t = torch.randn(3, 4)
    assert api.contiguous(t) is t
    c = api.contiguous(t.t())
    assert c.is_contiguous() and c.shape == (4, 3) and torch.equal(c, t.t())
    x = torch.randn(3, 4, requires_grad=True)
    api.contiguous(x.t()).sum().backward()  # recorded by autograd like Tensor.contiguous()
    np.testing.assert_array_equal(x.grad.numpy(), np.ones((3, 4), np.float32))


def test_api_read_only_memory(api):
    a = np.ones(3)
    a.setflags(write=False)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = torch.from_numpy(a)
    api.describe(t)  # reading is fine
    with pytest.raises(RuntimeError, match="read-only"):
        api.writable(t)


@pytest.mark.parametrize("kind, exc", [(0, RuntimeError), (1, ValueError), (2, TypeError), (3, IndexError),
                                       (4, NotImplementedError)])
def test_api_error_kinds(api, kind, exc):
    with pytest.raises(exc) as info:
        api.fail(kind, 2.5)
    assert type(info.value) is exc
    assert str(info.value) == f"kind {kind} with value 2.5 and -7"


def test_api_check_macro(api):
    assert api.fail(5, 1.0) is None
    with pytest.raises(RuntimeError, match=r"^value -0.25 must be positive \(42\)$"):
        api.fail(5, -0.25)


def test_api_capsule_and_docstrings(api):
    import ctypes
    capsule = torch._C._C_API
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    header = (ctypes.c_int * 2).from_address(get(capsule, b"pyctorch._C._C_API"))
    assert header[0] == 1  # PCT_EXT_ABI_VERSION
    assert header[1] >= 2 * 4 + 19 * ctypes.sizeof(ctypes.c_void_p)  # the version-1 table's entries
    assert api.describe.__doc__ == "describe(t) -> dict" and api.fail.__doc__ == "fail(kind, value) raises"


# ---------------------------------------------------------------------------------------------- the build machinery


def test_paths():
    (inc,) = cpp_extension.include_paths()
    assert os.path.isfile(os.path.join(inc, "pyctorch", "extension.h"))
    assert cpp_extension.library_paths() == []
    assert isinstance(cpp_extension.is_ninja_available(), bool)


def test_load_cache_does_not_recompile(tmp_path, monkeypatch):
    src = tmp_path / "cached.c"
    src.write_text(INLINE_MODULE.format(name="cached_ext", value=1))
    build = tmp_path / "build"
    first = cpp_extension.load("cached_ext", [str(src)], extra_cflags=WARNINGS, build_directory=str(build))
    assert first.value() == 1
    (so,) = [p for p in os.listdir(build) if p.endswith(".so")]
    mtime = os.stat(build / so).st_mtime_ns

    def no_compiler(cmd, name, verbose):
        raise AssertionError(f"recompiled: {cmd}")

    monkeypatch.setattr(cpp_extension, "_run", no_compiler)
    again = cpp_extension.load("cached_ext", [str(src)], extra_cflags=WARNINGS, build_directory=str(build))
    assert again.value() == 1 and os.stat(build / so).st_mtime_ns == mtime
    monkeypatch.undo()
    # a changed source (or changed flags) builds anew, and the new module is the one loaded
    src.write_text(INLINE_MODULE.format(name="cached_ext", value=2))
    changed = cpp_extension.load("cached_ext", [str(src)], extra_cflags=WARNINGS, build_directory=str(build))
    assert changed.value() == 2 and first.value() == 1
    assert [p for p in os.listdir(build) if p.endswith(".so")] != [so]


INLINE_MODULE = """#include <pyctorch/extension.h>
static PyObject *value(PyObject *self, PyObject *args) {{ (void)self; (void)args; return PyLong_FromLong({value}); }}
static PyMethodDef methods[] = {{{{"value", value, METH_NOARGS, NULL}}, {{NULL, NULL, 0, NULL}}}};
static struct PyModuleDef def = {{PyModuleDef_HEAD_INIT, "{name}", NULL, -1, methods, NULL, NULL, NULL, NULL}};
PyMODINIT_FUNC PyInit_{name}(void) {{ if (pct_ext_import() < 0) return NULL; return PyModule_Create(&def); }}
"""


def test_load_plain_library(tmp_path):
    """is_python_module=False: a shared library loaded into the process; load returns its path."""
    import ctypes
    src = tmp_path / "plain.c"
    src.write_text("int pct_test_answer(void) { return 42; }\n")
    path = cpp_extension.load("plain_lib", [str(src)], extra_cflags=WARNINGS, build_directory=str(tmp_path),
                              is_python_module=False)
    assert os.path.isfile(path) and ctypes.CDLL(path).pct_test_answer() == 42
    with pytest.raises(ValueError, match="ASCII identifier"):
        cpp_extension.load("not-a-name", [str(src)], build_directory=str(tmp_path))


def test_load_default_directory_from_env(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_EXTENSIONS_DIR", str(tmp_path))
    m = cpp_extension.load_inline("env_dir_ext", "static PyObject *seven(PyObject *s, PyObject *a)"
                                  "{ (void)s; (void)a; return PyLong_FromLong(7); }", functions="seven")
    assert m.seven() == 7
    assert any(p.endswith(".so") for p in os.listdir(tmp_path / "env_dir_ext"))


def test_load_inline_cxx(tmp_path):
    src = ('#include <vector>\nstatic PyObject *total(PyObject *self, PyObject *args) {\n'
           '  (void)self; PyObject *t; if (!PyArg_ParseTuple(args, "O", &t)) return NULL;\n'
           '  PCT_EXT_CHECK_TYPE(pct_ext_dtype_of(t) == PCT_EXT_FLOAT64, "float64 only");\n'
           '  PyObject *c = pct_ext_contiguous(t); if (!c) return NULL;\n'
           '  const double *p = static_cast<const double *>(pct_ext_const_data_ptr(c));\n'
           '  std::vector<double> v(p, p + pct_ext_numel(c)); double s = 0; for (double e : v) s += e;\n'
           '  Py_DECREF(c); return PyFloat_FromDouble(s); }\n')
    m = cpp_extension.load_inline("cxx_ext", src, functions=["total"], source_language="c++",
                                  extra_cflags=WARNINGS, build_directory=str(tmp_path))
    assert m.total(torch.arange(10, dtype=torch.float64).reshape(2, 5).t()) == 45.0
    with pytest.raises(TypeError, match="float64 only"):
        m.total(torch.ones(2))


STREAM_SOURCE = r"""
static PyObject *current_stream(PyObject *self, PyObject *args)
{
    (void)self;
    int device;
    void *stream = (void *)1;
    if (!PyArg_ParseTuple(args, "i", &device)) return NULL;
    if (pct_ext_current_cuda_stream(device, &stream) < 0) return NULL;
    return PyLong_FromVoidPtr(stream);
}
"""

_STREAM_CHILD = """
import sys
import pyctorch as torch
from pyctorch.utils import cpp_extension
m = cpp_extension.load_inline("stream_ext", sys.argv[2], functions=["current_stream"], build_directory=sys.argv[1])
if not torch.cuda.is_available():
    try:
        m.current_stream(-1)
    except RuntimeError as e:
        print("refused:", e)
    sys.exit(0)
assert m.current_stream(-1) == m.current_stream(0) == torch.cuda.current_stream().cuda_stream == 0
s = torch.cuda.Stream()
assert s.cuda_stream != 0
with torch.cuda.stream(s):
    assert m.current_stream(-1) == s.cuda_stream == torch.cuda.current_stream().cuda_stream
assert m.current_stream(0) == 0
print("streams ok")
"""


@pytest.mark.skipif(not torch._C._cuda_built(), reason="the CUDA backend is not built (no nvcc)")
@pytest.mark.parametrize("devices", ["0", "1"])
def test_current_cuda_stream(tmp_path, devices):
    """pct_ext_current_cuda_stream gives the stream torch.cuda.stream() makes current (Stream.cuda_stream), on the
    simulated device (a child process: the device is chosen when the backend loads); with no device, torch's
    RuntimeError."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]))
    env.pop("PYCTORCH_SIMULATE_CUDA_DEVICES", None)
    if devices != "0":
        env["PYCTORCH_SIMULATE_CUDA_DEVICES"] = devices
    done = subprocess.run([sys.executable, "-c", _STREAM_CHILD, str(tmp_path), STREAM_SOURCE], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    if devices == "0":
        assert done.stdout.startswith("refused: pct_ext_current_cuda_stream: no CUDA device"), done.stdout
    else:
        assert done.stdout.strip() == "streams ok", done.stdout + done.stderr


def test_compile_error_raises_with_compiler_output(tmp_path):
    with pytest.raises(RuntimeError) as info:
        cpp_extension.load_inline("broken_ext", "static PyObject *f(PyObject *s, PyObject *a) "
                                  "{ return undeclared_thing_here; }", functions=["f"], build_directory=str(tmp_path))
    text = str(info.value)
    assert text.startswith("Error building extension 'broken_ext'")
    assert "undeclared_thing_here" in text and "error" in text
    assert not any(p.endswith(".so") for p in os.listdir(tmp_path))
    with pytest.raises(ValueError, match="functions must be C identifiers"):
        cpp_extension.load_inline("bad_names_ext", "", functions=["not a name"], build_directory=str(tmp_path))
    with pytest.raises(FileNotFoundError):
        cpp_extension.load("missing_ext", [str(tmp_path / "nope.c")], build_directory=str(tmp_path))


def test_setup_py_build(tmp_path, example):
    """examples/extension/setup.py: CppExtension + BuildExtension through setuptools, in a subprocess."""
    for f in ("setup.py", "fused_bias_gelu.c"):
        shutil.copy(os.path.join(EXAMPLE_DIR, f), tmp_path / f)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace"], cwd=tmp_path, env=env,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "warning:" not in done.stdout + done.stderr  # the compiler's (gcc and clang write "file:line: warning:")
    (so,) = [p for p in os.listdir(tmp_path) if p.endswith(sysconfig.get_config_var("EXT_SUFFIX"))]
    built = _import_file("fused_bias_gelu_ext", str(tmp_path / so))
    wrapper, ext = example
    x, bias = torch.randn(3, 4, dtype=torch.float64), torch.randn(4, dtype=torch.float64)
    assert torch.equal(wrapper.fused_bias_gelu(x, bias, ext=built), ext.forward(x, bias))


def test_build_extension_options():
    from setuptools import Distribution
    ext = cpp_extension.CppExtension("m", ["a.c"], extra_compile_args=["-O1"])
    assert cpp_extension.include_paths()[0] in ext.include_dirs and ext.language == "c"
    assert cpp_extension.CppExtension("m", ["a.cpp"]).language == "c++"
    dist = Distribution({"ext_modules": [ext]})
    plain = cpp_extension.BuildExtension(dist)
    suffixless = cpp_extension.BuildExtension.with_options(no_python_abi_suffix=True, use_ninja=False)(dist)
    assert plain.get_ext_filename("m").endswith(sysconfig.get_config_var("EXT_SUFFIX"))
    assert suffixless.get_ext_filename("m") == "m.so"


def test_build_extension_dict_flags_and_cxx(tmp_path, monkeypatch):
    """In-process setuptools build: a C and a C++ source in one extension, torch's dict form of extra_compile_args
    (the "cxx" list reaches both), C11 for the C file and C++17 for the C++ one, no_python_abi_suffix."""
    from setuptools import Distribution
    (tmp_path / "part.cpp").write_text(
        'extern "C" long part_value(void) { if constexpr (sizeof(long) >= 4) return VALUE * 2; else return 0; }\n')
    (tmp_path / "mixed_ext.c").write_text(
        "#include <pyctorch/extension.h>\nlong part_value(void);\n"
        "static PyObject *value(PyObject *s, PyObject *a) { (void)s; (void)a;\n"
        "  _Static_assert(__STDC_VERSION__ == 201112L, \"C11\"); return PyLong_FromLong(part_value() + VALUE); }\n"
        "static PyMethodDef methods[] = {{\"value\", value, METH_NOARGS, NULL}, {NULL, NULL, 0, NULL}};\n"
        "static struct PyModuleDef def = {PyModuleDef_HEAD_INIT, \"mixed_ext\", NULL, -1, methods, NULL, NULL, NULL,"
        " NULL};\nPyMODINIT_FUNC PyInit_mixed_ext(void) { if (pct_ext_import() < 0) return NULL;"
        " return PyModule_Create(&def); }\n")
    monkeypatch.chdir(tmp_path)
    ext = cpp_extension.CppExtension("mixed_ext", ["mixed_ext.c", "part.cpp"],
                                     extra_compile_args={"cxx": ["-DVALUE=5", "-Wall", "-Wextra", "-Werror"]})
    assert ext.language == "c++"
    dist = Distribution({"name": "mixed_ext", "ext_modules": [ext], "script_args": ["build_ext", "--inplace"],
                         "cmdclass": {"build_ext": cpp_extension.BuildExtension.with_options(
                             no_python_abi_suffix=True)}})
    dist.parse_command_line()
    dist.run_commands()
    assert ext.extra_compile_args == {"cxx": ["-DVALUE=5", "-Wall", "-Wextra", "-Werror"]}  # given back as it was
    assert _import_file("mixed_ext", str(tmp_path / "mixed_ext.so")).value() == 15


def test_cuda_extension_needs_nvcc(monkeypatch):
    monkeypatch.setattr(cpp_extension, "CUDA_HOME", None)
    with pytest.raises(OSError, match="nvcc"):
        cpp_extension.CUDAExtension("m", ["k.cu"])
    with pytest.raises(OSError, match="nvcc"):
        cpp_extension.include_paths("cuda")


CUDA_SOURCE = r"""
__global__ void add_one_kernel(float *x, long long n)
{
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1.0f;
}

extern "C" PyObject *add_one_(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *t;
    if (!PyArg_ParseTuple(args, "O", &t)) return NULL;
    PCT_EXT_CHECK(pct_ext_device_type_of(t) == PCT_EXT_CUDA, "add_one_: expected a CUDA tensor");
    PCT_EXT_CHECK_TYPE(pct_ext_dtype_of(t) == PCT_EXT_FLOAT32 && pct_ext_is_contiguous(t) == 1,
                       "add_one_: expected a contiguous float32 tensor");
    float *p = static_cast<float *>(pct_ext_data_ptr(t));
    const long long n = pct_ext_numel(t);
    if (n && !p) return NULL;
    void *stream;
    if (pct_ext_current_cuda_stream(pct_ext_device_index(t), &stream) < 0) return NULL;
    if (n) add_one_kernel<<<(unsigned)((n + 255) / 256), 256, 0, (cudaStream_t)stream>>>(p, n);
    cudaError_t err = cudaStreamSynchronize((cudaStream_t)stream);
    if (err != cudaSuccess) return pct_ext_error(PCT_EXT_RUNTIME_ERROR, "CUDA error: %s", cudaGetErrorString(err));
    Py_INCREF(t);
    return t;
}
"""


@pytest.mark.skipif(cpp_extension.CUDA_HOME is None or not os.path.exists(os.path.join(cpp_extension.CUDA_HOME or "",
                    "bin", "nvcc")), reason="nvcc not found: CUDA sources cannot be built")
def test_load_inline_cuda(tmp_path, monkeypatch):
    """A .cu source through nvcc, linked with cudart: it builds and imports everywhere nvcc is; it runs where a GPU
    is (elsewhere the C check refuses a CPU tensor)."""
    monkeypatch.delenv("LD_PRELOAD", raising=False)  # make asan preloads its runtime, under which nvcc crashes
    m = cpp_extension.load_inline("cuda_ext", "PyObject *add_one_(PyObject *self, PyObject *args);",
                                  cuda_sources=CUDA_SOURCE, functions=["add_one_"], extra_cflags=WARNINGS,
                                  build_directory=str(tmp_path))
    with pytest.raises(RuntimeError, match="expected a CUDA tensor"):
        m.add_one_(torch.zeros(4))
    if torch.cuda.is_available():
        t = torch.arange(1000, dtype=torch.float32, device="cuda")
        assert m.add_one_(t) is t
        np.testing.assert_array_equal(t.cpu().numpy(), np.arange(1000, dtype=np.float32) + 1)
