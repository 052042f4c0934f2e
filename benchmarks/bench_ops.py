"""Everyday tensor ops on a (1024, 1024) float32 tensor (4 MB: out of the first caches, in the last), one row each,
as training and research code calls them: activations, clamps and roundings, fused arithmetic (addcmul, lerp, where),
layout copies (transpose, flip, roll, narrow), dtype conversions, row reductions with and without indices, indexing
(gather, index_select, masked_fill), sorting, and a few binary transcendentals. The survey that finds the ops whose
kernels lag torch's; the hot paths with scripts of their own (GEMM, convolution, norms, softmax, attention) are not
repeated here. Threads default to 1 and 2. Target: ratio <= 1.0.
"""
import sys

import numpy as np

from _harness import setup

TARGET = 1.0


def operands(m):
    rs = np.random.RandomState(0)
    x = m.tensor(rs.randn(1024, 1024).astype(np.float32))
    y = m.tensor(rs.randn(1024, 1024).astype(np.float32))
    w = m.tensor(rs.randn(1024).astype(np.float32))
    idx = m.tensor(rs.randint(0, 1024, (1024, 1024)))
    rows = m.tensor(rs.randint(0, 1024, (4096,)))
    return x, y, w, idx, rows


def case(expr):
    """make(m) for an expression over m, F (torch.nn.functional), x, y, w, idx, rows, mask and xb (x in bfloat16)"""
    def make(m):
        x, y, w, idx, rows = operands(m)
        env = dict(m=m, F=m.nn.functional, x=x, y=y, w=w, idx=idx, rows=rows, mask=x > 0, xb=x.bfloat16(),
                   xa=x.abs() + 0.1)
        code = compile(expr, "<bench_ops>", "eval")
        return lambda: eval(code, env)
    return make


CASES = [
    ("silu", "F.silu(x)"), ("gelu", "F.gelu(x)"), ("sigmoid", "x.sigmoid()"), ("relu", "x.relu()"),
    ("clamp(-1, 1)", "x.clamp(-1, 1)"), ("clamp(min=0)", "x.clamp(min=0)"), ("round", "x.round()"),
    ("floor", "x.floor()"), ("sign", "x.sign()"), ("abs", "x.abs()"),
    ("addcmul", "m.addcmul(x, x, y, value=0.5)"), ("lerp", "m.lerp(x, y, 0.3)"), ("where", "m.where(mask, x, y)"),
    ("x * w + w", "x * w + w"), ("x - x.mean(-1, keepdim)", "x - x.mean(-1, keepdim=True)"),
    ("x.t().contiguous()", "x.t().contiguous()"), ("copy_(y.t())", "x.clone().copy_(y.t())"),
    ("flip(-1)", "x.flip(-1)"), ("roll(3, -1)", "x.roll(3, -1)"), ("narrow + contiguous", "x[:, 1:513].contiguous()"),
    ("expand + contiguous", "w.expand(1024, 1024).contiguous()"), ("cat", "m.cat([x, y], 0)"),
    ("x.half()", "x.half()"), ("x.bfloat16()", "x.bfloat16()"), ("bfloat16.float()", "xb.float()"),
    ("mean(-1)", "x.mean(-1)"), ("var(-1)", "x.var(-1)"), ("amax(-1)", "x.amax(-1)"), ("max(-1)", "x.max(-1)"),
    ("argmax(-1)", "x.argmax(-1)"), ("logsumexp(-1)", "x.logsumexp(-1)"), ("cumsum(-1)", "x.cumsum(-1)"),
    ("gather(1, idx)", "x.gather(1, idx)"), ("index_select(0, 4096 rows)", "x.index_select(0, rows)"),
    ("masked_fill", "x.masked_fill(mask, 0.0)"), ("topk(10, -1)", "x.topk(10, -1)"), ("sort(-1)", "x.sort(-1)"),
    ("x ** 1.5", "xa ** 1.5"), ("pow(x, y)", "m.pow(xa, y)"), ("atan2", "m.atan2(x, y)"), ("hypot", "m.hypot(x, y)"),
    ("zeros", "m.zeros(1024, 1024)"), ("fill_", "x.fill_(1.0)"),
]


def main():
    args, suite = setup("ops", __doc__, threads="1,2")
    return suite.bench_cases([(name, "(1024, 1024) float32", case(expr)) for name, expr in CASES], TARGET)


if __name__ == "__main__":
    sys.exit(main())
