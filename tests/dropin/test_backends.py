"""torch.backends / torch.cuda / top-level flags scripts set, the Tensor aliases torch code uses:
pyctorch's answers against torch's CPU-only build (and against what this build really has)."""
import os
import subprocess
import sys
import warnings

import pytest

import pyctorch as P
from conftest import requires_torch, torch as T

B = P.backends
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_backend_availability_is_honest():
    assert B.cudnn.is_available() is False and B.cudnn.version() is None
    assert B.cuda.is_built() is P._C._cuda_built()  # the CUDA backend is built where nvcc was found
    assert B.mps.is_available() is False and B.mps.is_built() is False
    assert B.mkldnn.is_available() is False and B.mkl.is_available() is False
    assert B.openmp.is_available() is bool(P._C._build_info()["openmp"])
    flags = open("/proc/cpuinfo").read() if sys.platform.startswith("linux") else ""
    cap = B.cpu.get_cpu_capability()
    assert cap in ("AVX512", "AVX2", "DEFAULT")
    if " avx512f" in flags:
        assert cap == "AVX512"


def test_backend_flags_are_stored():
    assert (B.cudnn.enabled, B.cudnn.benchmark, B.cudnn.deterministic, B.cudnn.allow_tf32) == (True, False, False, True)
    try:
        B.cudnn.benchmark = True
        B.cudnn.deterministic = True
        assert B.cudnn.benchmark and B.cudnn.deterministic
        with B.cudnn.flags(enabled=False, benchmark=False):
            assert not B.cudnn.enabled and not B.cudnn.benchmark
        assert B.cudnn.enabled and B.cudnn.benchmark
    finally:
        B.cudnn.benchmark = B.cudnn.deterministic = False
    m = B.cuda.matmul
    assert m.allow_tf32 is False and m.allow_bf16_reduced_precision_reduction is True
    assert m.allow_fp16_reduced_precision_reduction is True
    try:
        m.allow_tf32 = True
        assert m.allow_tf32 and P.get_float32_matmul_precision() == "high"
        P.set_float32_matmul_precision("highest")
        assert m.allow_tf32 is False
        P.set_float32_matmul_precision("medium")
        assert m.allow_tf32 is True
        m.allow_bf16_reduced_precision_reduction = False
        assert m.allow_bf16_reduced_precision_reduction is False
    finally:
        P.set_float32_matmul_precision("highest")
        m.allow_bf16_reduced_precision_reduction = True
    with pytest.raises(AttributeError, match="Unknown attribute foo"):
        m.foo = 1
    with pytest.raises(AttributeError, match="Unknown attribute foo"):
        m.foo
    assert B.cuda.flash_sdp_enabled()
    with B.cuda.sdp_kernel(enable_flash=False):
        assert not B.cuda.flash_sdp_enabled() and B.cuda.math_sdp_enabled()
    assert B.cuda.flash_sdp_enabled()


@requires_torch
def test_defaults_match_torch_cpu_build():
    tb = T.backends
    assert (B.cudnn.enabled, B.cudnn.benchmark, B.cudnn.deterministic, B.cudnn.allow_tf32, B.cudnn.is_available()) == \
        (tb.cudnn.enabled, tb.cudnn.benchmark, tb.cudnn.deterministic, tb.cudnn.allow_tf32, tb.cudnn.is_available())
    for name in ("allow_tf32", "allow_fp16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction"):
        assert getattr(B.cuda.matmul, name) == getattr(tb.cuda.matmul, name)
    assert (B.mps.is_available(), B.mps.is_built()) == (tb.mps.is_available(), tb.mps.is_built())
    assert P.get_float32_matmul_precision() == T.get_float32_matmul_precision()
    assert P.are_deterministic_algorithms_enabled() == T.are_deterministic_algorithms_enabled()


def _outcome(fn):
    try:
        return ("ok", fn())
    except Exception as e:
        return (type(e).__name__, str(e))


@requires_torch
def test_cuda_module_matches_torch_cpu_build():
    probes = {
        "is_available": lambda M: M.cuda.is_available(),
        "device_count": lambda M: M.cuda.device_count(),
        "is_initialized": lambda M: M.cuda.is_initialized(),
        "manual_seed": lambda M: M.cuda.manual_seed(1),
        "manual_seed_all": lambda M: M.cuda.manual_seed_all(1),
        "seed": lambda M: M.cuda.seed(),
        "initial_seed": lambda M: M.cuda.initial_seed(),
        "synchronize": lambda M: M.cuda.synchronize(),
        "current_device": lambda M: M.cuda.current_device(),
        "get_device_name": lambda M: M.cuda.get_device_name(),
        "get_device_capability": lambda M: M.cuda.get_device_capability(),
        "get_device_properties": lambda M: M.cuda.get_device_properties(0),
        "set_device cpu": lambda M: M.cuda.set_device("cpu"),
        "memory_allocated": lambda M: M.cuda.memory_allocated(),
        "max_memory_allocated": lambda M: M.cuda.max_memory_allocated(),
        "memory_reserved": lambda M: M.cuda.memory_reserved(),
        "memory_stats": lambda M: dict(M.cuda.memory_stats()),
        "empty_cache": lambda M: M.cuda.empty_cache(),
        "is_bf16_supported": lambda M: M.cuda.is_bf16_supported(),
        "get_rng_state": lambda M: M.cuda.get_rng_state(),
        "get_rng_state_all": lambda M: M.cuda.get_rng_state_all(),
        "get_arch_list": lambda M: M.cuda.get_arch_list(),
        "device enter": lambda M: M.cuda.device(0).__enter__(),
        "device_of cpu": lambda M: M.cuda.device_of(M.ones(1)).__enter__(),
        "stream None": lambda M: M.cuda.stream(None).__enter__(),
        "init": lambda M: M.cuda.init(),
        "ones on cuda": lambda M: M.ones(1, device="cuda"),
        "to cuda": lambda M: M.ones(1).cuda(),
    }
    # With the CUDA backend built (nvcc found) and no driver, pyctorch answers as torch's CUDA build there: the
    # queries as torch's CPU-only build (the oracle here), and what needs a device with the no-driver RuntimeError.
    needs_device = {"initial_seed", "synchronize", "current_device", "get_device_name", "get_device_capability",
                    "get_device_properties", "get_rng_state", "device enter", "init", "ones on cuda", "to cuda"}
    for name, probe in probes.items():
        if P._C._cuda_built() and name in needs_device:
            if not P.cuda.is_available():
                kind, message = _outcome(lambda: probe(P))
                assert kind == "RuntimeError" and message.startswith("Found no NVIDIA driver"), (name, message)
            continue
        assert _outcome(lambda: probe(P)) == _outcome(lambda: probe(T)), name
    assert P.cuda.set_device is not None
    if not P._C._cuda_built():
        with pytest.raises(AssertionError, match="not compiled with CUDA"):
            P.cuda.set_device(0)


@requires_torch
def test_cuda_amp_is_a_disabled_passthrough_like_torch():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ps, ts = P.cuda.amp.GradScaler(), T.cuda.amp.GradScaler()
        for M, s in ((P, ps), (T, ts)):
            M.manual_seed(0)
            w = M.nn.Parameter(M.ones(3))
            opt = M.optim.SGD([w], lr=0.5)
            loss = (w * M.arange(3.0)).sum()
            scaled = s.scale(loss)
            assert scaled is loss
            scaled.backward()
            s.unscale_(opt)
            s.step(opt)
            s.update()
            assert s.is_enabled() is False and s.get_scale() == 1.0 and s.state_dict() == {}
            s.load_state_dict({})
        assert ps.scale([1, 2]) == ts.scale([1, 2])
        with P.cuda.amp.autocast():
            pass
    with pytest.warns(UserWarning, match="CUDA is not available"), warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        P.cuda.amp.GradScaler(enabled=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        warnings.simplefilter("ignore", FutureWarning)
        P.cuda.amp.GradScaler(enabled=False)  # no "disabling" warning when not asked for


def test_compile_wraps_the_callable():
    model = P.nn.Linear(2, 2)
    x = P.randn(3, 2)
    for compiled in (P.compile(model), P.compile(model, mode="max-autotune", fullgraph=True, dynamic=False,
                                                 backend="inductor")):
        assert compiled._orig_mod is model and P.equal(compiled(x), model(x))

    @P.compile
    def f(x):
        return x + 1

    @P.compile(mode="reduce-overhead")
    def g(x):
        return x * 2

    assert f(P.ones(1)).item() == 2 and g(P.ones(1)).item() == 2
    with pytest.raises(RuntimeError, match="Either mode or options"):
        P.compile(f, mode="default", options={})
    with pytest.raises(AssertionError, match="A callable function is expected"):
        P.compile(3)


def test_global_flags_in_a_fresh_process():
    # set-once and global state: checked in a subprocess so this process keeps its defaults
    code = """
import pyctorch as torch, warnings
print(torch.get_num_interop_threads() == torch.get_num_threads())
torch.set_num_interop_threads(3); print(torch.get_num_interop_threads())
for f in (lambda: torch.set_num_interop_threads(2), lambda: torch.set_num_interop_threads(0)):
    try: f()
    except RuntimeError as e: print(e)
torch.use_deterministic_algorithms(True, warn_only=True)
print(torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled(),
      torch.get_deterministic_debug_mode())
torch.set_deterministic_debug_mode("error"); print(torch.get_deterministic_debug_mode())
try: torch.use_deterministic_algorithms(1)
except TypeError as e: print("TypeError")
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    torch.set_float32_matmul_precision("bogus"); print(torch.get_float32_matmul_precision(), len(w))
torch.set_default_device("cpu"); print(torch.get_default_device())
for dev in ("cuda", "meta"):
    try: torch.set_default_device(dev); print(torch.get_default_device())
    except (AssertionError, RuntimeError) as e: print(type(e).__name__, e)
torch.set_default_device(None); print(torch.get_default_device())
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "PYTHONPATH": REPO})
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines == [
        "True", "3",
        "Error: cannot set number of interop threads after parallel work has started or "
        "set_num_interop_threads called",
        "set_num_interop_threads expects a positive integer",
        "True True 1", "2", "TypeError", "highest 1", "cpu",
        # the CUDA device is a default where the backend is built (its factories refuse later without a driver)
        "cuda" if P._C._cuda_built() else "AssertionError Torch not compiled with CUDA enabled",
        "meta",
        "cpu",
    ]


@requires_torch
def test_tensor_aliases_match_torch():
    for M in (P, T):
        x, y = M.tensor([1.0, -2.0, 3.0]), M.tensor([1.0, 2.0, 3.5])
        yield_ = [x.isclose(y).tolist(), x.allclose(x + 1e-9), x.equal(x), M.equal(x, y), M.equal(x, x[:2]),
                  x.where(x > 0, M.tensor(0.0)).tolist(), M.ones(2, 2).ravel().shape, M.ravel(M.ones(2, 3)).shape,
                  x.absolute().tolist(), x.negative().tolist(), x.clamp_min(0).tolist(), x.clamp_max(0).tolist(),
                  x.greater(0).tolist(), x.less_equal(1).tolist(), x.not_equal(y).tolist(), M.is_complex(x),
                  f"{M.tensor(3.14159):.3f}", f"{M.tensor(7)}", format(M.tensor(2.5), "8.2f"), M.inf, M.pi, M.e,
                  M.newaxis]
        if M is P:
            ours = yield_
        else:
            theirs = yield_
    assert [str(v) for v in ours] == [str(v) for v in theirs]
    with pytest.raises(TypeError, match="unsupported format string"):
        f"{P.ones(2):.2f}"
