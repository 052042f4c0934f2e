"""The product composites written over other ops (Note [Composite ops]): einsum, tensordot, kron and inner,
float32, forward and forward + backward (the gradient of .sum()), small shapes where the composite's own cost
(its op calls and, for an implicit composite, the nodes they record) shows, and medium ones where the inner
mm/bmm/mul dominates. Threads default to 1. Target: ratio <= 1.0.
"""
import sys

from _harness import rand, setup

TARGET = 1.0

# (name, shapes, call)
CALLS = [
    ("einsum ij,jk->ik", ((16, 16), (16, 16)), lambda m, a, b: m.einsum("ij,jk->ik", a, b)),
    ("einsum bij,bjk->bik", ((16, 64, 64), (16, 64, 64)), lambda m, a, b: m.einsum("bij,bjk->bik", a, b)),
    ("einsum bhqd,bhkd->bhqk", ((4, 4, 64, 32), (4, 4, 64, 32)),
     lambda m, a, b: m.einsum("bhqd,bhkd->bhqk", a, b)),
    ("einsum ii->i", ((256, 256),), lambda m, a: m.einsum("ii->i", a)),
    ("tensordot dims=1", ((16, 16), (16, 16)), lambda m, a, b: m.tensordot(a, b, dims=1)),
    ("tensordot dims=2", ((32, 64, 64), (64, 64, 32)), lambda m, a, b: m.tensordot(a, b, dims=2)),
    ("kron", ((4, 4), (4, 4)), lambda m, a, b: m.kron(a, b)),
    ("kron", ((64, 64), (16, 16)), lambda m, a, b: m.kron(a, b)),
    ("inner", ((16, 16), (16, 16)), lambda m, a, b: m.inner(a, b)),
    ("inner", ((256, 128), (256, 128)), lambda m, a, b: m.inner(a, b)),
]


def forward(m, shapes, call, device):
    xs = [rand(m, s, device) for s in shapes]
    return lambda: call(m, *xs)


def forward_backward(m, shapes, call, device):
    xs = [rand(m, s, device).requires_grad_() for s in shapes]

    def run():
        call(m, *xs).sum().backward()
        for x in xs:
            x.grad = None
    return run


def main():
    args, suite = setup("composites", __doc__, threads="1")
    cases = []
    for name, shapes, call in CALLS:
        params = " ".join("x".join(map(str, s)) for s in shapes)
        cases += [
            (name, params + " fwd", lambda m, s=shapes, c=call: forward(m, s, c, suite.device)),
            (name, params + " fwd+bwd", lambda m, s=shapes, c=call: forward_backward(m, s, c, suite.device)),
        ]
    return suite.bench_cases(cases, TARGET)


if __name__ == "__main__":
    sys.exit(main())
