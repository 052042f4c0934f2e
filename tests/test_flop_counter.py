"""torch.utils.flop_counter and torch.utils.module_tracker, and the global module forward hooks they stand on:
the same counts as torch for the same programs (forward per module, forward+backward in total)."""
import importlib

import pytest

import pyctorch
from conftest import requires_torch, torch


def counter_module(m):
    return importlib.import_module(m.__name__ + ".utils.flop_counter")


def frameworks():
    return [pyctorch] + ([torch] if torch is not None else [])


def make_net(m):
    class Net(m.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = m.nn.Linear(8, 16)
            self.conv = m.nn.Conv2d(3, 4, 3, padding=1, groups=1)
            self.grouped = m.nn.Conv1d(4, 6, 3, groups=2, stride=2)
            self.up = m.nn.ConvTranspose1d(6, 2, 3, stride=2)
            self.block = m.nn.Sequential(m.nn.Linear(16, 16, bias=False), m.nn.ReLU())

        def forward(self, x, y, z):
            h = self.block(self.fc(x))
            return h.sum() + self.conv(y).sum() + (x @ x.T).sum() + self.up(self.grouped(z)).sum()
    m.manual_seed(0)
    return Net(), m.randn(5, 8, requires_grad=True), m.randn(2, 3, 6, 6, requires_grad=True), m.randn(2, 4, 9)


def counts(m, backward):
    net, x, y, z = make_net(m)
    with counter_module(m).FlopCounterMode(display=False, depth=3) as fc:
        out = net(x, y, z)
        if backward:
            out.backward()
    return fc.get_total_flops(), {k: {str(op): v for op, v in d.items()} for k, d in fc.get_flop_counts().items()}


@requires_torch
def test_forward_counts_per_module_match_torch():
    assert counts(pyctorch, False) == counts(torch, False)


@requires_torch
def test_forward_and_backward_totals_match_torch():
    ours, theirs = counts(pyctorch, True), counts(torch, True)
    assert ours[0] == theirs[0] and ours[1]["Global"] == theirs[1]["Global"]


MATMULS = {
    "mm": lambda m: m.mm(m.randn(3, 4), m.randn(4, 5)),
    "addmm": lambda m: m.addmm(m.randn(3, 5), m.randn(3, 4), m.randn(4, 5)),
    "bmm": lambda m: m.bmm(m.randn(2, 3, 4), m.randn(2, 4, 5)),
    "baddbmm": lambda m: m.baddbmm(m.randn(2, 3, 5), m.randn(2, 3, 4), m.randn(2, 4, 5)),
    "folded": lambda m: m.matmul(m.randn(7, 3, 4), m.randn(4, 2)),
    "2d@3d": lambda m: m.randn(3, 4) @ m.randn(6, 4, 2),
    "broadcast": lambda m: m.matmul(m.randn(2, 1, 3, 4), m.randn(5, 4, 2)),
    "1d@2d": lambda m: m.matmul(m.randn(4), m.randn(4, 3)),
    "1d@3d": lambda m: m.matmul(m.randn(4), m.randn(2, 4, 5)),
    "2d@1d": lambda m: m.matmul(m.randn(3, 4), m.randn(4)),
    "3d@1d": lambda m: m.matmul(m.randn(2, 3, 4), m.randn(4)),
    "dot": lambda m: m.matmul(m.randn(4), m.randn(4)),
    "einsum batched": lambda m: m.einsum("bij,bjk->bik", m.randn(2, 3, 4), m.randn(2, 4, 5)),
    "einsum chain": lambda m: m.einsum("ij,jk,kl->il", m.randn(2, 3), m.randn(3, 4), m.randn(4, 5)),
    "einsum outer": lambda m: m.einsum("i,j->ij", m.randn(3), m.randn(4)),
    "einsum rowdot": lambda m: m.einsum("ij,ij->i", m.randn(3, 4), m.randn(3, 4)),
    "einsum implicit": lambda m: m.einsum("ij,jk", m.randn(3, 4), m.randn(4, 5)),
    "attention": lambda m: m.nn.functional.scaled_dot_product_attention(*(m.randn(1, 2, 3, 4) for _ in range(3))),
    "multihead": lambda m: m.nn.MultiheadAttention(8, 2)(*(m.randn(3, 1, 8) for _ in range(3))),
}


@requires_torch
@pytest.mark.parametrize("case", sorted(MATMULS))
def test_products_count_as_torch_decomposes_them(case):
    found = {}
    for m in frameworks():
        with counter_module(m).FlopCounterMode(display=False) as fc:
            MATMULS[case](m)
        found[m.__name__] = {str(op): v for op, v in fc.get_flop_counts().get("Global", {}).items()}
    assert found["pyctorch"] == found["torch"]


def test_hand_computed_counts_and_table(capsys):
    fcm = counter_module(pyctorch)
    lin = pyctorch.nn.Linear(10, 20)
    with fcm.FlopCounterMode(depth=1) as fc:
        lin(pyctorch.randn(4, 10))
    assert fc.get_total_flops() == 2 * 4 * 10 * 20
    printed = capsys.readouterr().out
    assert printed.strip() == fc.get_table(1).strip()
    lines = printed.splitlines()
    assert lines[0].split() == ["Module", "FLOP", "%", "Total"]
    assert any(line.split()[:2] == ["Linear", "1600.000"] for line in lines)  # torch's suffix rule: none below 10^4
    assert any(line.split()[:3] == ["-", "aten.addmm", "1600.000"] for line in lines)
    with fcm.FlopCounterMode(display=False) as empty:
        pyctorch.ones(3).add(1)
    assert empty.get_total_flops() == 0 and empty.get_table().splitlines()[-1].split()[0] == "Global"
    assert fcm.get_suffix_str(1234567) == "K" and fcm.convert_num_with_suffix(1234567, "M") == "1.235M"  # as torch
    assert fcm.convert_to_percent_str(3, 7) == "42.86%" and fcm.convert_to_percent_str(1, 0) == "0%"


def test_custom_formula_and_registration():
    fcm = counter_module(pyctorch)
    aten = pyctorch.ops.aten

    def ten_per_mm(a_shape, b_shape, *args, out_shape=None, **kwargs):
        return 10
    with fcm.FlopCounterMode(display=False, custom_mapping={aten.mm: ten_per_mm}) as fc:
        pyctorch.mm(pyctorch.randn(3, 4), pyctorch.randn(4, 5))
    assert fc.get_total_flops() == 10
    with fcm.FlopCounterMode(display=False) as plain:  # the default formula is untouched
        pyctorch.mm(pyctorch.randn(3, 4), pyctorch.randn(4, 5))
    assert plain.get_total_flops() == 120


@requires_torch
def test_module_tracker_parents_match_torch():
    seen = {}
    for m in frameworks():
        tracker_mod = importlib.import_module(m.__name__ + ".utils.module_tracker")
        net = m.nn.Sequential(m.nn.Linear(2, 2), m.nn.Sequential(m.nn.ReLU()))
        log = []
        with tracker_mod.ModuleTracker() as tracker:
            hook = m.nn.modules.module.register_module_forward_hook(
                lambda mod, args, out: log.append(sorted(tracker.parents)))
            try:
                net(m.ones(1, 2))
            finally:
                hook.remove()
        seen[m.__name__] = log
    assert seen["pyctorch"] == seen["torch"]


@requires_torch
def test_global_forward_hooks_match_torch():
    order = {}
    for m in frameworks():
        log = []
        mod = m.nn.modules.module
        pre = mod.register_module_forward_pre_hook(lambda module, args: log.append(("pre", type(module).__name__)))
        post = mod.register_module_forward_hook(
            lambda module, args, kwargs, out: log.append(("post", type(module).__name__, tuple(out.shape))),
            with_kwargs=True)
        net = m.nn.Sequential(m.nn.Linear(2, 3))
        net.register_forward_hook(lambda module, args, out: log.append(("own", type(module).__name__)))
        try:
            net(m.ones(1, 2))
        finally:
            pre.remove()
            post.remove()
        net(m.ones(1, 2))  # removed: only the module's own hook runs
        order[m.__name__] = log
    assert order["pyctorch"] == order["torch"]


def test_flop_counter_chains_the_export_hook():
    """Counting inside torch.export's capture leaves the capture working."""
    fcm = counter_module(pyctorch)

    class M(pyctorch.nn.Module):
        def forward(self, x):
            return x @ x.T

    with fcm.FlopCounterMode(display=False) as fc:
        program = pyctorch.export.export(M(), (pyctorch.randn(3, 4),))
    assert fc.get_total_flops() == 2 * 3 * 4 * 3
    assert any("mm" in str(n.target) or "matmul" in str(n.target) for n in program.graph.nodes)
