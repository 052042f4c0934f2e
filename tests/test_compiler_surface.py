"""torch.compiler, torch._dynamo and torch._C's private helpers: torch's names, eager meaning."""
import subprocess
import sys
import warnings

import numpy as np
import pytest

import pyctorch
from conftest import HAVE_TORCH, requires_torch

if HAVE_TORCH:
    import torch
    import torch._dynamo
    import torch.compiler

compiler = pyctorch.compiler
dynamo = pyctorch._dynamo


def test_reachable_as_attributes_and_under_the_alias():
    code = ("import pyctorch; assert pyctorch.compiler.is_compiling() is False; "
            "assert pyctorch._dynamo.is_compiling() is False")
    subprocess.run([sys.executable, "-c", code], check=True)
    code = ("import torch, torch.compiler, torch._dynamo\n"
            "from torch._dynamo.eval_frame import OptimizedModule\n"
            "import torch._dynamo.config as config\n"
            "assert config is torch._dynamo.config and config.cache_size_limit == 8\n"
            "torch._C._log_api_usage_once('x')\n"
            "print(torch.compiler.compile(torch.nn.Linear(1, 1)).__class__.__name__)\n")
    out = subprocess.run([sys.executable, "-m", "pyctorch.as_torch", "-c", code],
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "OptimizedModule"


def test_is_compiling_family():
    for fn in (compiler.is_compiling, compiler.is_dynamo_compiling, compiler.is_exporting, dynamo.is_compiling):
        assert fn() is False
    assert dynamo.is_dynamo_supported() is True
    seen = []

    def f(x):
        seen.append((compiler.is_compiling(), dynamo.is_compiling(), compiler.is_dynamo_compiling()))
        return x + 1
    pyctorch.compile(f)(pyctorch.ones(2))
    assert seen == [(True, True, True)]


def test_compile_wraps_modules_as_torch_does():
    model = pyctorch.nn.Linear(2, 2)
    for compiled in (compiler.compile(model), pyctorch.compile(model), compiler.compile(mode="max-autotune")(model)):
        assert isinstance(compiled, dynamo.eval_frame.OptimizedModule) and compiled._orig_mod is model
        assert compiled.weight is model.weight and list(compiled.state_dict()) == ["_orig_mod.weight",
                                                                                 "_orig_mod.bias"]


def test_disable_and_graph_decorators_give_functions_back():
    def f(x):
        return x + 1

    for decorate in (compiler.disable, compiler.disable(), compiler.disable(recursive=False), dynamo.disable):
        disabled = decorate(f)
        assert disabled._torchdynamo_disable is True and disabled(pyctorch.ones(1)).item() == 2
        assert disabled.__wrapped__ is f and compiler.disable(pyctorch.compile(f)).__wrapped__ is f
    for decorate in (compiler.allow_in_graph, dynamo.allow_in_graph,
                     dynamo.disallow_in_graph, dynamo.run, compiler.substitute_in_graph(len),
                     dynamo.optimize("inductor", disable=True)):
        assert decorate(f) is f
    for decorate in (dynamo.optimize("inductor"), dynamo.optimize("eager", nopython=True)):
        compiled = decorate(f)
        assert compiled._torchdynamo_orig_callable is f and compiled(pyctorch.ones(1)).item() == 2
    assert compiler.assume_constant_result(f) is f and f._dynamo_marked_constant is True
    assert dynamo.allow_in_graph([f, f]) == [f, f]
    with dynamo.optimize("inductor"):
        pass
    assert dynamo.graph_break() is None and compiler.reset() is None and dynamo.reset() is None
    assert compiler.cudagraph_mark_step_begin() is None


def test_dynamo_export_names_what_is_missing():
    with pytest.raises(NotImplementedError, match="bytecode-level export"):
        dynamo.export(lambda x: x)


@requires_torch
def test_marks_are_recorded_where_torch_records_them():
    ours, theirs = pyctorch.ones(3, 4), torch.ones(3, 4)
    for lib, t in ((dynamo, ours), (torch._dynamo, theirs)):
        lib.mark_dynamic(t, 0)
        lib.maybe_mark_dynamic(t, [1])
        lib.mark_static(t, -1)
    for attr in ("_dynamo_dynamic_indices", "_dynamo_weak_dynamic_indices", "_dynamo_static_indices"):
        assert getattr(ours, attr) == getattr(theirs, attr)
    module = pyctorch.nn.Linear(1, 1)
    dynamo.mark_static(module)
    assert module._dynamo_marked_static is True


@requires_torch
def test_config_flags_and_patch_match_torch():
    names = ["suppress_errors", "cache_size_limit", "recompile_limit", "accumulated_cache_size_limit",
             "verbose", "capture_scalar_outputs", "capture_dynamic_output_shape_ops",
             "automatic_dynamic_shapes", "assume_static_by_default", "specialize_int", "optimize_ddp",
             "error_on_recompile"]
    config = dynamo.config
    for name in names:
        assert getattr(config, name) == getattr(torch._dynamo.config, name), name
    with config.patch(verbose=True, suppress_errors=True):
        assert config.verbose and config.suppress_errors
    assert not config.verbose and not config.suppress_errors
    with config.patch("cache_size_limit", 3):
        assert config.recompile_limit == 3  # one value under its two names, as in torch
    assert config.cache_size_limit == 8

    @config.patch({"capture_scalar_outputs": True})
    def read():
        return config.capture_scalar_outputs
    assert read() is True and config.capture_scalar_outputs is False
    with pytest.raises(AttributeError) as ours:
        config.no_such_flag = 1
    with pytest.raises(AttributeError) as theirs:
        torch._dynamo.config.no_such_flag = 1
    assert str(ours.value) == str(theirs.value)
    saved = config.save_config()
    config.verbose = True
    config.load_config(saved)
    assert config.verbose is False


@requires_torch
def test_set_stance_forms_match_torch():
    import torch._dynamo.eval_frame as their_frame
    our_frame = dynamo.eval_frame

    def trace(lib, frame):
        seen = []

        @lib.compiler.set_stance("force_eager")
        def f():
            return frame._stance.stance
        seen += [frame._stance.stance, f(), frame._stance.stance]
        lib.compiler.set_stance("eager_on_recompile")
        seen.append(frame._stance.stance)
        with lib.compiler.set_stance("fail_on_recompile"):
            seen.append(frame._stance.stance)
        seen.append(frame._stance.stance)
        lib.compiler.set_stance()
        seen.append(frame._stance.stance)
        return seen
    assert trace(pyctorch, our_frame) == trace(torch, their_frame)
    with pytest.raises(RuntimeError, match="force_backend"):
        compiler.set_stance("force_eager", force_backend="eager")


@requires_torch
def test_list_backends_is_torchs_default_list():
    assert dynamo.list_backends() == torch._dynamo.list_backends()
    assert compiler.list_backends() == dynamo.list_backends()
    assert {"eager", "aot_eager"} <= set(dynamo.list_backends(exclude_tags=()))


def test_optimized_module_wraps_and_forwards():
    model = pyctorch.nn.Linear(2, 3)
    wrapped = dynamo.eval_frame.OptimizedModule(model)
    assert wrapped._orig_mod is model and wrapped.weight is model.weight
    assert list(wrapped.state_dict()) == ["_orig_mod.weight", "_orig_mod.bias"]
    x = pyctorch.ones(1, 2)
    assert wrapped(x).tolist() == model(x).tolist()
    assert dynamo.OptimizedModule is dynamo.eval_frame.OptimizedModule


@requires_torch
def test_wrap_numpy_matches_torch():
    def f(a, b):
        return np.add(a, b) * 2, np.sum(a)
    data = np.arange(4.0)
    ours = compiler.wrap_numpy(f)(pyctorch.tensor(data), pyctorch.tensor(data))
    theirs = torch.compiler.wrap_numpy(f)(torch.tensor(data), torch.tensor(data))
    assert [type(x).__name__ for x in ours] == [type(x).__name__ for x in theirs] == ["Tensor", "float64"]
    assert ours[0].tolist() == theirs[0].tolist() and str(ours[0].dtype) == str(theirs[0].dtype)
    assert ours[1] == theirs[1]


@requires_torch
def test_c_private_helpers():
    c = pyctorch._C
    assert c._log_api_usage_once("python.some_api") is None
    assert c._get_tracing_state() is None and c._is_tracing() is False
    assert c._get_cudnn_enabled() is pyctorch.backends.cudnn.enabled
    previous = c._jit_set_profiling_executor(False)
    assert previous == torch._C._jit_set_profiling_executor(False)
    torch._C._jit_set_profiling_executor(previous)
    assert c._jit_set_profiling_executor(previous) is False
    assert c._get_privateuse1_backend_name() == torch._C._get_privateuse1_backend_name()
    assert c._disabled_torch_function_impl(pyctorch.add, (), (pyctorch.ones(1), 1)).tolist() == [2.0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        c._set_cudnn_enabled(True)
