"""torch._dynamo.eval_frame: what torch.compile returns, its cache of guarded graphs, and the names libraries
import from here (OptimizedModule above all).

Note [Compiled callables]
`pyctorch.compile(fn)` wraps fn in a CompiledCallable (a module in an OptimizedModule, as torch does). Each call
checks the cached entries' guards (guards.py) and runs the first entry that matches: its compiled graph, or fn
eagerly when its capture found a graph break. When none matches, fn runs once under capture (capture.py): that run
is the call's result, and what it recorded becomes a new entry, its graph handed to the backend (backends.py).
After `config.recompile_limit` entries, new argument kinds run eagerly (with torch's warning). Inside a capture
(a compiled function called by another) fn runs plainly, its ops recorded into the outer graph.

Note [Graph breaks]
torch's dynamo splits a function at a graph break and runs the piece it cannot trace in Python. pyctorch has no
frame evaluation hook to resume a frame mid-way, so a break makes the whole call eager for the arguments its
guards describe: the results are eager's, never a wrong graph's. A module's graphs split at its submodules
instead: while the broken forward runs eagerly, each submodule it calls (through ModuleLists and ModuleDicts)
has its forward compiled on its own, with its own guards, breaks and further splits. `fullgraph=True` raises
torch's Unsupported at the break instead; `torch._dynamo.explain` reports the breaks; `TORCH_LOGS=graph_breaks`
logs them.
"""
import contextlib
import functools
import gc
import itertools
import os
import traceback
import warnings
import weakref

from ..nn.modules.module import Module

__all__ = ["OptimizedModule", "OptimizeContext", "CompiledCallable", "disable", "innermost_fn", "is_compiling",
           "user_frame"]

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def is_compiling():
    from .capture import is_capturing
    return is_capturing()


def user_frame():
    """The innermost stack frame outside pyctorch (where the user's code is), as a traceback.FrameSummary."""
    stack = traceback.extract_stack()
    for frame in reversed(stack):
        if not os.path.abspath(frame.filename).startswith(_PACKAGE_DIR):
            return frame
    return stack[-1] if stack else None


_ALL = weakref.WeakSet()      # every CompiledCallable, for reset()
_frame_ids = itertools.count()


class _Entry:
    __slots__ = ("guards", "compiled", "gm", "inputs", "out_spec", "out_leaves", "out_slots", "switches")


def _restore_state(saved):
    from pyctorch import _C
    grad, autocast = saved
    _C._set_grad_enabled(grad)
    for device, (enabled, dtype) in autocast.items():
        _C.set_autocast_enabled(device, enabled)
        _C.set_autocast_dtype(device, dtype)


class CompiledCallable:
    """fn with a cache of guarded graphs (Note [Compiled callables])."""

    def __init__(self, fn, module=None, backend="inductor", fullgraph=False, dynamic=None, options=None):
        self.fn = fn
        self.module = module
        self.backend = backend
        self.fullgraph = fullgraph
        self.dynamic = dynamic
        self.options = options or {}
        self.entries = []
        self.frame_id = next(_frame_ids)
        self.warned_limit = False
        self.children = None  # (submodule, CompiledCallable) pairs of the module-level fallback
        _ALL.add(self)

    def reset(self):
        self.entries = []
        self.warned_limit = False
        self.children = None

    def _eager(self, args, kwargs):
        """fn run eagerly where its graph broke: for a module, with its submodules' forwards compiled on their own
        (Note [Graph breaks]: the graphs split at module boundaries)."""
        if self.module is None:
            return self.fn(*args, **kwargs)
        if self.children is None:
            self.children = [(child, CompiledCallable(type(child).forward.__get__(child), module=child,
                                                      backend=self.backend, fullgraph=False, dynamic=self.dynamic,
                                                      options=self.options))
                             for child in _called_submodules(self.module)]
        patched = []
        try:
            for child, compiled in self.children:
                if "forward" not in vars(child):  # a forward set on the instance by the user stays theirs
                    vars(child)["forward"] = compiled
                    patched.append(child)
            return self.fn(*args, **kwargs)
        finally:
            for child in patched:
                del vars(child)["forward"]

    def __call__(self, *args, **kwargs):
        from .capture import is_capturing
        stance = _stance.stance
        if is_capturing() or stance == "force_eager":
            return self.fn(*args, **kwargs)
        for entry in self.entries:
            inputs = entry.guards.match(args, kwargs)
            if inputs is not None:
                if entry.compiled is None:
                    return self._eager(args, kwargs)
                return _run_entry(entry, inputs)
        if self.entries:
            reasons = [entry.guards.failure(args, kwargs) or "a guard failed" for entry in self.entries]
            if stance == "eager_on_recompile":
                return self.fn(*args, **kwargs)
            if stance == "fail_on_recompile":
                raise RuntimeError("Detected recompile when torch.compile stance is 'fail_on_recompile'. "
                                   f"Triggered by: {reasons[0]}")
            from . import config
            if len(self.entries) >= config.recompile_limit:
                if config.fail_on_recompile_limit_hit:
                    from .exc import FailOnRecompileLimitHit
                    raise FailOnRecompileLimitHit(f"recompile_limit reached with fullgraph=True. Excessive "
                                                  f"recompilations can degrade performance. {reasons[0]}")
                if not self.warned_limit:
                    self.warned_limit = True
                    name = getattr(self.fn, "__qualname__", repr(self.fn))
                    warnings.warn(f"torch._dynamo hit config.recompile_limit ({config.recompile_limit})\n"
                                  f"   function: {name!r}\n   last reason: {reasons[0]}\n"
                                  "To log all recompilation reasons, use TORCH_LOGS=\"recompiles\".")
                return self.fn(*args, **kwargs)
            _log_recompile(self, reasons)
        return self._capture(args, kwargs)

    def _capture(self, args, kwargs):
        from .capture import CompileRun, capture_run
        from .graph_build import build_entry
        from .guards import Guards, user_code_globals
        guards = Guards(self.fn, self.module, args, kwargs)
        run = CompileRun(fullgraph=self.fullgraph)
        input_positions = run.bind_inputs(args, kwargs)
        # no garbage collection inside the run: a finalizer of some earlier object would run there as if the user
        # code had called it (its globals seen, its writes taken for the run's, its ops recorded)
        gc_was_enabled = gc.isenabled()
        gc.disable()
        try:
            with user_code_globals() as seen, capture_run(run):
                result = self.fn(*args, **kwargs)
        finally:
            if gc_was_enabled:
                gc.enable()
        guards.finish(seen.entries.values(), input_positions)
        entry = build_entry(self, run, guards, seen, input_positions, args, kwargs, result)
        self.entries.append(entry)
        return result


def _called_submodules(module):
    """The submodules a module's forward calls: its children, looking through the containers that have no forward
    of their own (ModuleList, ModuleDict)."""
    from ..nn import ModuleDict, ModuleList
    out = []
    for child in module._modules.values():
        if child is None:
            continue
        if isinstance(child, (ModuleList, ModuleDict)):
            out += _called_submodules(child)
        else:
            out.append(child)
    return out


def _run_entry(entry, inputs):
    from pyctorch.utils import _pytree as pytree
    from pyctorch import _C
    if entry.switches:
        saved = (_C.is_grad_enabled(), {d: (_C.is_autocast_enabled(d), _C.get_autocast_dtype(d))
                                        for d in ("cpu", "cuda")})
        try:
            outs = entry.compiled(*inputs)
        except BaseException:
            _restore_state(saved)
            raise
    else:
        outs = entry.compiled(*inputs)
    if entry.out_spec is None:  # the result is the graph's one output
        return outs[0]
    filled = list(entry.out_leaves)
    for slot, value in zip(entry.out_slots, outs):
        filled[slot] = value
    return pytree.tree_unflatten(filled, entry.out_spec)


def _log_recompile(compiled, reasons):
    from .._logging import artifact_enabled, log_artifact
    if not artifact_enabled("recompiles"):
        return
    fn = compiled.fn
    code = getattr(getattr(fn, "__func__", fn), "__code__", None)
    where = f"{code.co_filename}:{code.co_firstlineno}" if code else repr(fn)
    name = getattr(fn, "__name__", type(fn).__name__)
    lines = [f"Recompiling function {name} in {where}", "    triggered by the following guard failure(s):"]
    for k, reason in enumerate(reasons):
        lines.append(f"    - {compiled.frame_id}/{k}: {reason}")
    log_artifact("recompiles", "\n".join(lines), f"[{compiled.frame_id}/{len(compiled.entries)}]")


class OptimizedModule(Module):
    """What torch.compile returns for a module: calls go through a CompiledCallable of the module's __call__
    (hooks included), `_orig_mod` is the module (a submodule, so parameters and state-dict keys carry the prefix),
    and other attributes are the module's."""

    _torchdynamo_orig_callable = None

    def __init__(self, mod, dynamo_ctx=None):
        super().__init__()
        self._orig_mod = mod
        self.dynamo_ctx = dynamo_ctx
        self._torchdynamo_orig_callable = mod.forward
        options = dynamo_ctx if isinstance(dynamo_ctx, dict) else {}
        object.__setattr__(self, "_compiled_call", CompiledCallable(
            mod.__call__, module=mod, backend=options.get("backend", "inductor"),
            fullgraph=options.get("fullgraph", False), dynamic=options.get("dynamic"),
            options=options.get("options")))

    def forward(self, *args, **kwargs):
        return self._compiled_call(*args, **kwargs)

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            if name == "_orig_mod":
                raise
            return getattr(self._orig_mod, name)


class OptimizeContext(contextlib.ContextDecorator):
    """What torch._dynamo.optimize(...) returns: applied to a function it compiles it with the backend (given
    back unchanged with disable=True); as a context manager it does nothing."""

    def __init__(self, backend="inductor", **options):
        self.backend = backend
        self.options = options

    def __call__(self, fn):
        if not callable(fn):
            raise AssertionError(f"A callable function is expected, but {type(fn)} is provided.")
        if self.options.get("disable"):
            return fn
        from .._dropin import compile as compile_
        return compile_(fn, backend=self.backend, fullgraph=bool(self.options.get("nopython", False)),
                        dynamic=self.options.get("dynamic"))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def innermost_fn(fn):
    """Unwraps what torch's dynamo decorators wrapped; pyctorch's leave functions as they are."""
    while hasattr(fn, "_torchdynamo_orig_callable"):
        fn = fn._torchdynamo_orig_callable
    return fn


def disable(fn=None, recursive=True, *, reason=None, wrapping=True):
    """Keep torch.compile away from `fn`: a compiled callable comes back as its original function, and calling the
    result inside a capture is a graph break (Note [Graph breaks]), so that fn's Python runs on every call, as
    torch runs a disabled function outside its graphs. With no `fn`, a decorator."""
    if fn is None:
        return functools.partial(disable, recursive=recursive, reason=reason, wrapping=wrapping)
    if not callable(fn):
        raise AssertionError(f"A callable function is expected, but {type(fn)} is provided.")
    fn = innermost_fn(fn)
    if isinstance(fn, Module):
        return fn  # a module's calls are recorded or not as a whole by whoever compiles it
    why = "torch.compiler.disable" + (f" ({reason})" if reason else "") + \
        f": {getattr(fn, '__qualname__', repr(fn))} runs outside the graph"

    @functools.wraps(fn)
    def disabled(*args, **kwargs):
        from .capture import active_compile_run
        run = active_compile_run()
        if run is not None:
            run.graph_break(why)
        return fn(*args, **kwargs)
    disabled._torchdynamo_disable = True
    return disabled


class DynamoStance:
    """The stance set by torch.compiler.set_stance: how compiled code would run."""
    __slots__ = ("stance", "skip_guard_eval_unsafe", "backend")

    def __init__(self, stance="default", skip_guard_eval_unsafe=False, backend=None):
        self.stance, self.skip_guard_eval_unsafe, self.backend = stance, skip_guard_eval_unsafe, backend

    def __eq__(self, other):
        return isinstance(other, DynamoStance) and \
            (self.stance, self.skip_guard_eval_unsafe, self.backend) == \
            (other.stance, other.skip_guard_eval_unsafe, other.backend)

    def __repr__(self):
        return (f"DynamoStance(stance={self.stance!r}, skip_guard_eval_unsafe={self.skip_guard_eval_unsafe}, "
                f"backend={self.backend!r})")


_stance = DynamoStance()


def _set_stance_now(stance):
    """Install `stance`; returns the one it replaces."""
    global _stance
    previous, _stance = _stance, stance
    return previous
