"""The pointwise ops the fuser can put into a generated C kernel: each one's float32 C expression and the C
expressions of its partial derivatives (for the backward kernel), written from the values of the element.

An op is described by a Pointwise with
  operands(node) -> list of operands (fx Nodes or Python numbers), or None when this call is not fusable
                    (a keyword or a form the table below does not cover);
  forward(x, y=None) -> C expression of the result from the operands' C expressions x;
  partials(x, y) -> for each operand, the C expression of d result / d operand (y: the result's variable).
"""
import math

__all__ = ["POINTWISE", "c_float", "op_name"]


def c_float(value):
    """A Python number as an exact float32 C constant (eager casts a scalar to the tensor's dtype)."""
    value = float(value)
    if math.isnan(value):
        return "NAN"
    if math.isinf(value):
        return "INFINITY" if value > 0 else "(-INFINITY)"
    return f"((float){value.hex()})"


def op_name(node):
    target = node.target
    name = target if isinstance(target, str) else getattr(target, "__name__", "")
    return name


class Pointwise:
    def __init__(self, arity, forward, partials, keywords=()):
        self.arity, self.forward, self.partials, self.keywords = arity, forward, partials, keywords

    def operands(self, node):
        args = list(node.args)
        if any(k not in self.keywords for k in node.kwargs) or len(args) != self.arity:
            return None
        return args


def _unary(forward, partial):
    return Pointwise(1, lambda x: forward(x[0]), lambda x, y: [partial(x[0], y)])


_SQRT1_2 = c_float(math.sqrt(0.5))
_INV_SQRT_2PI = c_float(1 / math.sqrt(2 * math.pi))
_GELU_K = c_float(math.sqrt(2 / math.pi))
_TWO_OVER_SQRT_PI = c_float(2 / math.sqrt(math.pi))


class _AddSub(Pointwise):
    def __init__(self, sign):
        super().__init__(2, None, None, keywords=("alpha",))
        self.sign = sign

    def operands(self, node):
        args = super().operands(node)
        alpha = node.kwargs.get("alpha", 1)
        if args is None or not isinstance(alpha, (int, float)) or isinstance(alpha, bool):
            return None
        self.alpha = alpha
        return args

    def bind(self, node):
        alpha = node.kwargs.get("alpha", 1)
        sign = self.sign
        scaled = sign * alpha
        a = c_float(scaled)
        if scaled == 1:
            return (lambda x: f"({x[0]} + {x[1]})"), (lambda x, y: ["1.0f", "1.0f"])
        if scaled == -1:
            return (lambda x: f"({x[0]} - {x[1]})"), (lambda x, y: ["1.0f", "-1.0f"])
        return (lambda x: f"({x[0]} + {a} * {x[1]})"), (lambda x, y: ["1.0f", a])


class _Gelu(Pointwise):
    def __init__(self):
        super().__init__(1, None, None, keywords=("approximate",))

    def operands(self, node):
        args = super().operands(node)
        if args is None or node.kwargs.get("approximate", "none") not in ("none", "tanh"):
            return None
        return args

    def bind(self, node):
        if node.kwargs.get("approximate", "none") == "tanh":
            def fwd(x):
                v = x[0]
                return f"(0.5f * {v} * (1.0f + tanhf({_GELU_K} * ({v} + 0.044715f * {v} * {v} * {v}))))"

            def part(x, y):
                v = x[0]
                t = f"tanhf({_GELU_K} * ({v} + 0.044715f * {v} * {v} * {v}))"
                return [f"(0.5f * (1.0f + {t}) + 0.5f * {v} * (1.0f - {t} * {t}) * {_GELU_K} * "
                        f"(1.0f + 3.0f * 0.044715f * {v} * {v}))"]
            return fwd, part

        def fwd_erf(x):
            return f"(0.5f * {x[0]} * (1.0f + erff({x[0]} * {_SQRT1_2})))"

        def part_erf(x, y):
            v = x[0]
            return [f"(0.5f * (1.0f + erff({v} * {_SQRT1_2})) + {v} * {_INV_SQRT_2PI} * expf(-0.5f * {v} * {v}))"]
        return fwd_erf, part_erf


class _Pow(Pointwise):
    def __init__(self):
        super().__init__(2, None, None)

    def operands(self, node):
        args = super().operands(node)
        if args is None or not isinstance(args[1], (int, float)) or isinstance(args[1], bool):
            return None
        return args

    def bind(self, node):
        c = float(node.args[1])
        if c == 2.0:
            return (lambda x: f"({x[0]} * {x[0]})"), (lambda x, y: [f"(2.0f * {x[0]})", "0.0f"])
        if c == 3.0:
            return (lambda x: f"({x[0]} * {x[0]} * {x[0]})"), (lambda x, y: [f"(3.0f * {x[0]} * {x[0]})", "0.0f"])
        k, k1 = c_float(c), c_float(c - 1)
        return (lambda x: f"powf({x[0]}, {k})"), (lambda x, y: [f"({k} * powf({x[0]}, {k1}))", "0.0f"])


def _binary(forward, partials):
    return Pointwise(2, forward, partials)


POINTWISE = {
    "add": _AddSub(1), "sub": _AddSub(-1),
    "mul": _binary(lambda x: f"({x[0]} * {x[1]})", lambda x, y: [x[1], x[0]]),
    "div": _binary(lambda x: f"({x[0]} / {x[1]})", lambda x, y: [f"(1.0f / {x[1]})", f"(-{y} / {x[1]})"]),
    "neg": _unary(lambda v: f"(-{v})", lambda v, y: "-1.0f"),
    "tanh": _unary(lambda v: f"tanhf({v})", lambda v, y: f"(1.0f - {y} * {y})"),
    "sigmoid": _unary(lambda v: f"(1.0f / (1.0f + expf(-{v})))", lambda v, y: f"({y} * (1.0f - {y}))"),
    "exp": _unary(lambda v: f"expf({v})", lambda v, y: y),
    "log": _unary(lambda v: f"logf({v})", lambda v, y: f"(1.0f / {v})"),
    "sqrt": _unary(lambda v: f"sqrtf({v})", lambda v, y: f"(0.5f / {y})"),
    "rsqrt": _unary(lambda v: f"(1.0f / sqrtf({v}))", lambda v, y: f"(-0.5f * {y} * {y} * {y})"),
    "relu": _unary(lambda v: f"(({v} > 0.0f || {v} != {v}) ? {v} : 0.0f)",
                   lambda v, y: f"({v} > 0.0f ? 1.0f : 0.0f)"),
    "abs": _unary(lambda v: f"fabsf({v})", lambda v, y: f"({v} > 0.0f ? 1.0f : ({v} < 0.0f ? -1.0f : 0.0f))"),
    "sin": _unary(lambda v: f"sinf({v})", lambda v, y: f"cosf({v})"),
    "cos": _unary(lambda v: f"cosf({v})", lambda v, y: f"(-sinf({v}))"),
    "reciprocal": _unary(lambda v: f"(1.0f / {v})", lambda v, y: f"(-{y} * {y})"),
    "square": _unary(lambda v: f"({v} * {v})", lambda v, y: f"(2.0f * {v})"),
    "erf": _unary(lambda v: f"erff({v})", lambda v, y: f"({_TWO_OVER_SQRT_PI} * expf(-{v} * {v}))"),
    "silu": _unary(lambda v: f"({v} / (1.0f + expf(-{v})))",
                   lambda v, y: f"((1.0f / (1.0f + expf(-{v}))) * (1.0f + {v} * (1.0f - 1.0f / (1.0f + expf(-{v})))))"),
    "gelu": _Gelu(), "pow": _Pow(),
}


def expressions(node):
    """(operands, forward, partials) of a fusable pointwise call, or None."""
    spec = POINTWISE.get(op_name(node))
    if spec is None:
        return None
    operands = spec.operands(node)
    if operands is None:
        return None
    if hasattr(spec, "bind"):
        forward, partials = spec.bind(node)
    else:
        forward, partials = spec.forward, spec.partials
    return operands, forward, partials
