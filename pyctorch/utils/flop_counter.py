"""torch.utils.flop_counter: FlopCounterMode counts the floating-point operations of matrix products and
convolutions run inside it, in total and per module (torch.utils.module_tracker.ModuleTracker names them).

Note [Counting flops]
torch counts in a dispatch mode that sees every aten op after its decomposition, and knows formulas for mm,
addmm, bmm, baddbmm, convolution, convolution_backward and the attention kernels. pyctorch sees the op-table
calls made from Python through the op trace hook (Note [Op trace hook], csrc/python/bindings.c), backward
formulas included, and maps each to the aten op torch would count for the same call: matmul to mm (a matrix or
a folded batch against a matrix) or bmm (broadcast batches), as torch's matmul decomposes; a two-operand einsum
to the bmm torch's einsum runs (more operands: contracted pairwise from the left, as torch without opt_einsum).
Products of vectors (dot, mv) are counted by neither. Attention counts nothing: torch's CPU kernel has no
formula (its CUDA kernels do; pyctorch's CUDA attention is not counted yet, sdpa_flop_count gives the figure).
Backward ops go to "Global" and to the modules the tracker finds running then (see module_tracker.py).
"""
import math
import warnings
from collections import defaultdict
from functools import wraps

from .. import Tensor
from .module_tracker import ModuleTracker

__all__ = ["FlopCounterMode", "register_flop_formula", "flop_registry", "get_suffix_str",
           "convert_num_with_suffix", "convert_to_percent_str", "conv_flop_count", "mm_flop", "addmm_flop",
           "bmm_flop", "baddbmm_flop", "conv_flop", "conv_backward_flop", "sdpa_flop_count", "shape_wrapper"]

suffixes = ["", "K", "M", "B", "T"]
flop_registry = {}


def _aten(name):
    from .._ops import ops
    return getattr(ops.aten, name)


def shape_wrapper(f):
    """The formula f called with tensors replaced by their shapes."""
    @wraps(f)
    def nf(*args, out_shape=None, **kwargs):
        def shape(v):
            return tuple(v.shape) if isinstance(v, Tensor) else v
        return f(*[shape(a) for a in args], out_shape=shape(out_shape), **{k: shape(v) for k, v in kwargs.items()})
    return nf


def register_flop_formula(targets, get_raw=False):
    """Decorator: the formula (over shapes, or raw arguments with get_raw=True) of the given aten ops."""
    def register(fn):
        wrapped = fn if get_raw else shape_wrapper(fn)
        wrapped._get_raw = True
        for target in targets if isinstance(targets, (list, tuple)) else [targets]:
            flop_registry[getattr(target, "overloadpacket", target)] = wrapped
        return fn
    return register


def _registry_key(target):
    return getattr(target, "overloadpacket", target)


def mm_flop(a_shape, b_shape, *args, out_shape=None, **kwargs):
    m, k = a_shape
    k2, n = b_shape
    return 2 * m * n * k


def addmm_flop(self_shape, a_shape, b_shape, out_shape=None, **kwargs):
    return mm_flop(a_shape, b_shape)


def bmm_flop(a_shape, b_shape, out_shape=None, **kwargs):
    b, m, k = a_shape
    return 2 * b * m * k * b_shape[-1]


def baddbmm_flop(self_shape, a_shape, b_shape, out_shape=None, **kwargs):
    return bmm_flop(a_shape, b_shape)


def conv_flop_count(x_shape, w_shape, out_shape, transposed=False):
    """2 * batch * (output positions, input positions when transposed) * the weight's elements."""
    batch = x_shape[0]
    positions = (x_shape if transposed else out_shape)[2:]
    return 2 * batch * math.prod(positions) * math.prod(w_shape)


def conv_flop(x_shape, w_shape, _bias, _stride, _padding, _dilation, transposed, *args, out_shape=None, **kwargs):
    return conv_flop_count(x_shape, w_shape, out_shape, transposed=transposed)


def _swap01(shape):
    return [shape[1], shape[0]] + list(shape[2:])


def conv_backward_flop(grad_out_shape, x_shape, w_shape, _bias, _stride, _padding, _dilation, transposed,
                       _output_padding, _groups, output_mask, out_shape=None):
    flops = 0
    if output_mask[0]:  # the input's gradient: a convolution of the output's gradient the other way round
        flops += conv_flop_count(grad_out_shape, w_shape, x_shape, not transposed)
    if output_mask[1]:  # the weight's gradient: the input correlated with the output's gradient
        first, second = (grad_out_shape, x_shape) if transposed else (x_shape, grad_out_shape)
        flops += conv_flop_count(_swap01(first), _swap01(second), _swap01(w_shape), transposed=False)
    return flops


def sdpa_flop_count(query_shape, key_shape, value_shape):
    """The two batched products of attention: Q K^T and P V."""
    b, h, s_q, d_q = query_shape
    s_k = key_shape[2]
    d_v = value_shape[3]
    return 2 * b * h * s_q * s_k * d_q + 2 * b * h * s_q * s_k * d_v


def _register_defaults():
    if flop_registry:
        return
    for name, fn in (("mm", mm_flop), ("addmm", addmm_flop), ("bmm", bmm_flop), ("baddbmm", baddbmm_flop),
                     ("convolution", conv_flop), ("convolution_backward", conv_backward_flop)):
        register_flop_formula(_aten(name))(fn)


def get_suffix_str(number):
    index = max(0, min(len(suffixes) - 1, (len(str(number)) - 2) // 3))
    return suffixes[index]


def convert_num_with_suffix(number, suffix):
    index = suffixes.index(suffix)
    return f"{number / 1000 ** index:.3f}" + suffixes[index]


def convert_to_percent_str(num, denom):
    return "0%" if denom == 0 else f"{num / denom:.2%}"


# ---------------------------------------------------------------------------------------------- the table ops
# What torch's dispatcher would count for a pyctorch table op: [(aten op name, arguments, out_shape)].

def _matmul_calls(a, b, out):
    if b.dim() == 1:
        return []  # dot, mv and a folded batch against a vector: uncounted in torch too
    if a.dim() == 1 and b.dim() == 2:  # the vector as a row: mm
        return [("mm", ((1, a.shape[0]), tuple(b.shape)), None)]
    if b.dim() == 2:  # a matrix, or a batch folded into rows, against a matrix
        return [("mm", ((math.prod(a.shape[:-1]), a.shape[-1]), tuple(b.shape)), None)]
    rows = 1 if a.dim() == 1 else a.shape[-2]  # a vector against batches: a row per batch
    batch = math.prod(out.shape[:-2]) if a.dim() > 1 else math.prod(out.shape[:-1])
    return [("bmm", ((batch, rows, a.shape[-1]), (batch, b.shape[-2], b.shape[-1])), None)]


def _einsum_pair(eq_a, eq_b, keep, sizes):
    """(flops of torch's bmm for contracting two operands, the result's indices)."""
    both = set(eq_a) & set(eq_b)
    kept = [c for c in dict.fromkeys(eq_a + eq_b) if c in keep or c in both]
    batch = [c for c in kept if c in both and c in keep]
    contracted = [c for c in kept if c in both and c not in keep]
    left = [c for c in kept if c in eq_a and c not in both]
    right = [c for c in kept if c in eq_b and c not in both]
    def size(cs):
        return math.prod(sizes[c] for c in cs)
    result = "".join(batch + left + right)
    if not contracted:  # nothing summed: torch multiplies elementwise
        return None, result
    shape_a = (size(batch), size(left), size(contracted))
    shape_b = (size(batch), size(contracted), size(right))
    return ("bmm", (shape_a, shape_b), None), result


def _einsum_calls(equation, tensors):
    eq = equation.replace(" ", "")
    if "..." in eq or len(tensors) < 2:
        return []
    lhs, _, out = eq.partition("->")
    terms = lhs.split(",")
    if not _:
        counts = defaultdict(int)
        for c in lhs.replace(",", ""):
            counts[c] += 1
        out = "".join(sorted(c for c, n in counts.items() if n == 1))
    sizes = {}
    for term, t in zip(terms, tensors):
        for c, n in zip(term, t.shape):
            sizes[c] = n
    calls, current = [], terms[0]
    for i in range(1, len(terms)):
        keep = set(out) | set("".join(terms[i + 1:]))
        call, current = _einsum_pair(current, terms[i], keep, sizes)
        if call is not None:
            calls.append(call)
    return calls


def _table_calls(name, bound, result):
    if name in ("mm", "bmm"):
        return [(name, (bound["input"], bound["mat2"]), result)]
    if name == "addmm":
        return [("addmm", (bound["input"], bound["mat1"], bound["mat2"]), result)]
    if name == "baddbmm":
        return [("baddbmm", (bound["input"], bound["batch1"], bound["batch2"]), result)]
    if name == "matmul":
        return _matmul_calls(bound["input"], bound["other"], result)
    if name == "_einsum":
        return _einsum_calls(bound["equation"], bound["tensors"])
    if name == "convolution":
        return [("convolution", tuple(bound.values()), result)]
    if name == "convolution_backward":
        return [("convolution_backward", tuple(bound.values()), result)]
    return []


class _Hook:
    """The op trace hook while a FlopCounterMode is active (chained with the hook it replaced)."""

    def __init__(self, counter, previous):
        self.counter, self.previous = counter, previous

    def __call__(self, op_index, name, sig_text, mode, args, kwargs, result):
        if self.previous is not None:
            self.previous(op_index, name, sig_text, mode, args, kwargs, result)
        if op_index >= 0:
            self.counter._count(name, sig_text, args, kwargs or {}, result)
        return None


class FlopCounterMode:
    """Counts flops inside `with FlopCounterMode() as f:`; get_total_flops(), get_flop_counts() ({module name:
    {aten op: flops}}, "Global" for everything), get_table(); prints the table on exit when display=True."""

    def __init__(self, mods=None, depth=2, display=True, custom_mapping=None):
        _register_defaults()
        self.flop_counts = defaultdict(lambda: defaultdict(int))
        self.depth = depth
        self.display = display
        if mods is not None:
            warnings.warn("mods argument is not needed anymore, you can stop passing it", stacklevel=2)
        self.flop_registry = {**flop_registry}
        for k, v in (custom_mapping or {}).items():
            self.flop_registry[_registry_key(k)] = v if getattr(v, "_get_raw", False) else shape_wrapper(v)
        self.mod_tracker = ModuleTracker()
        self._hook = None

    def get_total_flops(self):
        return sum(self.flop_counts["Global"].values())

    def get_flop_counts(self):
        return {k: dict(v) for k, v in self.flop_counts.items()}

    def _count(self, name, sig_text, args, kwargs, result):
        from ..export._trace import _bind, _params_of
        calls = _table_calls(name, _bind(_params_of(sig_text), args, kwargs)[0], result)
        for aten_name, call_args, out in calls:
            packet = _aten(aten_name)
            formula = self.flop_registry.get(packet)
            if formula is None:
                continue
            flops = formula(*call_args, out_shape=out)
            for parent in set(self.mod_tracker.parents):
                self.flop_counts[parent][packet] += flops

    def get_table(self, depth=None):
        depth = self.depth if depth is None else depth
        depth = 999999 if depth is None else depth
        total = self.get_total_flops()
        suffix = get_suffix_str(total)
        subsumed = False

        def rows_of(mod_name, level):
            nonlocal subsumed
            mod_total = sum(self.flop_counts[mod_name].values())
            subsumed |= mod_total >= total
            pad = " " * level
            rows = [[pad + mod_name, convert_num_with_suffix(mod_total, suffix), convert_to_percent_str(mod_total,
                                                                                                      total)]]
            for op, v in self.flop_counts[mod_name].items():
                rows.append([pad + " - " + str(op), convert_num_with_suffix(v, suffix),
                             convert_to_percent_str(v, total)])
            return rows
        rows = []
        for mod in sorted(self.flop_counts):
            if mod != "Global" and mod.count(".") + 1 <= depth:
                rows.extend(rows_of(mod, mod.count(".")))
        if "Global" in self.flop_counts and not subsumed:
            for row in rows:
                row[0] = " " + row[0]
            rows = rows_of("Global", 0) + rows
        if not rows:
            rows = [["Global", "0", "0%"]]
        return _format_table(["Module", "FLOP", "% Total"], rows)

    def __enter__(self):
        from .. import _C
        self.flop_counts.clear()
        self.mod_tracker.__enter__()
        self._hook = _Hook(self, None)
        self._hook.previous = _C._set_op_trace_hook(self._hook)
        return self

    def __exit__(self, *args):
        from .. import _C
        _C._set_op_trace_hook(self._hook.previous)
        self._hook = None
        self.mod_tracker.__exit__(*args)
        if self.display:
            print(self.get_table(self.depth))
        return False

    def __call__(self, fn):
        @wraps(fn)
        def wrapped(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)
        return wrapped


def _format_table(header, rows):
    """A plain text table: the first column left-aligned, the others right-aligned, a dashed rule under the
    header (the layout of torch's table, which needs the tabulate package)."""
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]

    def line(cells):
        first = str(cells[0]).ljust(widths[0])
        return "  ".join([first] + [str(c).rjust(w) for c, w in zip(cells[1:], widths[1:])]).rstrip()
    return "\n".join([line(header), "  ".join("-" * w for w in widths)] + [line(r) for r in rows])
