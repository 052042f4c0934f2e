"""pyctorch.optim.lr_scheduler against torch.optim.lr_scheduler: lr (and momentum) sequences step by step,
get_last_lr, step(epoch), state_dict round trips, warnings, errors; plus hand-computed sequences."""
import math
import re
import warnings

import pytest

from conftest import HAVE_TORCH, requires_torch

import pyctorch
from pyctorch.optim import lr_scheduler as S

if HAVE_TORCH:
    import torch


def _opt(lib, kind="SGD", lrs=(0.1, 0.05)):
    a = lib.zeros(3, requires_grad=True)
    b = lib.zeros(2, requires_grad=True)
    groups = [{"params": [a]}, {"params": [b], "lr": lrs[1]}]
    if kind == "SGD":
        return lib.optim.SGD(groups, lr=lrs[0], momentum=0.9)
    return getattr(lib.optim, kind)(groups, lr=lrs[0])


def _momenta(opt):
    return tuple(g["betas"][0] if "betas" in g else g.get("momentum") for g in opt.param_groups)


class _Scale:
    """A callable object: its __dict__ is saved by LambdaLR.state_dict."""

    def __init__(self, base):
        self.base = base

    def __call__(self, epoch):
        return self.base ** epoch


def _case_id(value):
    """A parameter's test id without object addresses (a lambda's repr differs between processes, and pytest-xdist
    needs every worker to collect the same ids)."""
    return re.sub(r" at 0x[0-9a-f]+", "", str(value))[:60]


CASES = [
    ("StepLR", dict(step_size=4, gamma=0.5)),
    ("MultiStepLR", dict(milestones=[3, 7, 7, 20], gamma=0.3)),
    ("ExponentialLR", dict(gamma=0.93)),
    ("CosineAnnealingLR", dict(T_max=7, eta_min=0.001)),
    ("CosineAnnealingLR", dict(T_max=10)),
    ("CosineAnnealingWarmRestarts", dict(T_0=5, T_mult=2, eta_min=0.01)),
    ("CosineAnnealingWarmRestarts", dict(T_0=3)),
    ("LambdaLR", dict(lr_lambda=lambda e: 0.95 ** e)),
    ("LambdaLR", dict(lr_lambda=[lambda e: 1 / (e + 1), _Scale(0.9)])),
    ("MultiplicativeLR", dict(lr_lambda=lambda e: 0.97)),
    ("LinearLR", dict(start_factor=0.2, end_factor=0.9, total_iters=9)),
    ("LinearLR", dict()),
    ("ConstantLR", dict(factor=0.4, total_iters=6)),
    ("PolynomialLR", dict(total_iters=12, power=2.0)),
    ("OneCycleLR", dict(max_lr=[1.0, 0.5], total_steps=40)),
    ("OneCycleLR", dict(max_lr=1.0, epochs=4, steps_per_epoch=10, anneal_strategy="linear", three_phase=True)),
    ("OneCycleLR", dict(max_lr=0.3, total_steps=40, cycle_momentum=False, pct_start=0.25, div_factor=10.0)),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=4, step_size_down=6)),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=3, mode="triangular2")),
    ("CyclicLR", dict(base_lr=[0.01, 0.02], max_lr=0.1, step_size_up=5, mode="exp_range", gamma=0.9)),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=5, scale_fn=lambda x: 0.5 ** x, scale_mode="iterations")),
]


def _sequence(lib, name, kw, kind, steps):
    opt = _opt(lib, kind)
    sched = getattr(lib.optim.lr_scheduler, name)(opt, **kw)
    out = [(tuple(sched.get_last_lr()), _momenta(opt))]
    for _ in range(steps):
        opt.step()
        sched.step()
        out.append((tuple(sched.get_last_lr()), _momenta(opt)))
        assert list(sched.get_last_lr()) == [g["lr"] for g in opt.param_groups]
    return out, sched, opt


@requires_torch
@pytest.mark.parametrize("kind", ["SGD", "Adam"])
@pytest.mark.parametrize("name,kw", CASES, ids=_case_id)
def test_lr_sequence_matches_torch(name, kw, kind):
    steps = 39 if name == "OneCycleLR" else 36
    p, psched, popt = _sequence(pyctorch, name, kw, kind, steps)
    t, tsched, topt = _sequence(torch, name, kw, kind, steps)
    assert p == t  # exactly: the same float arithmetic in the same order
    assert psched.last_epoch == tsched.last_epoch and psched.base_lrs == tsched.base_lrs
    assert [g["initial_lr"] for g in popt.param_groups] == [g["initial_lr"] for g in topt.param_groups]
    assert set(psched.state_dict()) == set(tsched.state_dict())


@requires_torch
@pytest.mark.parametrize("name,kw", [("StepLR", dict(step_size=3, gamma=0.5)),
                                     ("MultiStepLR", dict(milestones=[2, 5, 5], gamma=0.5)),
                                     ("ExponentialLR", dict(gamma=0.9)), ("CosineAnnealingLR", dict(T_max=6)),
                                     ("LinearLR", dict(total_iters=4)), ("ConstantLR", dict(total_iters=3)),
                                     ("PolynomialLR", dict(total_iters=5, power=3.0)),
                                     ("LambdaLR", dict(lr_lambda=lambda e: 1.0 / (1 + e)))])
def test_step_with_epoch_uses_closed_form(name, kw):
    res = {}
    for lib in (pyctorch, torch):
        opt = _opt(lib)
        sched = getattr(lib.optim.lr_scheduler, name)(opt, **kw)
        seq = []
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            for epoch in (4, 1, 7, 7, 2, 12):
                opt.step()
                sched.step(epoch)
                seq.append(tuple(sched.get_last_lr()))
        assert any("epoch parameter in `scheduler.step()`" in str(x.message) for x in w)
        res[lib.__name__] = seq
    assert res["pyctorch"] == res["torch"]


@requires_torch
@pytest.mark.parametrize("T_0,T_mult", [(5, 1), (4, 2), (3, 3)])
def test_warm_restarts_fractional_epochs(T_0, T_mult):
    res = {}
    for lib in (pyctorch, torch):
        opt = _opt(lib)
        sched = lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=T_0, T_mult=T_mult, eta_min=0.001)
        seq = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for epoch in range(12):
                for batch in range(5):
                    opt.step()
                    sched.step(epoch + batch / 5)
                    seq.append((tuple(sched.get_last_lr()), sched.T_cur, sched.T_i, sched.last_epoch))
        res[lib.__name__] = seq
    assert res["pyctorch"] == res["torch"]


@requires_torch
@pytest.mark.parametrize("composite", ["sequential", "chained", "sequential3"])
def test_composite_schedulers_match_torch(composite):
    def run(lib):
        L = lib.optim.lr_scheduler
        opt = _opt(lib)
        if composite == "sequential":
            sched = L.SequentialLR(opt, [L.LinearLR(opt, start_factor=0.1, total_iters=5),
                                         L.CosineAnnealingLR(opt, T_max=20)], milestones=[5])
        elif composite == "sequential3":
            sched = L.SequentialLR(opt, [L.ConstantLR(opt, factor=0.5, total_iters=3),
                                         L.ExponentialLR(opt, gamma=0.9), L.StepLR(opt, step_size=4)],
                                   milestones=[4, 12])
        else:
            sched = L.ChainedScheduler([L.ConstantLR(opt, factor=0.1, total_iters=4),
                                        L.ExponentialLR(opt, gamma=0.9), L.MultiStepLR(opt, [6, 11], 0.5)])
        seq = [tuple(sched.get_last_lr())]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for _ in range(32):
                opt.step()
                sched.step()
                seq.append(tuple(sched.get_last_lr()))
        return seq, sched

    (p, psched), (t, tsched) = run(pyctorch), run(torch)
    assert p == t
    assert set(psched.state_dict()) == set(tsched.state_dict())


@requires_torch
@pytest.mark.parametrize("kw,losses", [
    (dict(), [1.0, 0.9, 0.9, 0.95] * 12),
    (dict(mode="max", factor=0.5, patience=2, threshold=0.01, threshold_mode="abs", cooldown=2, min_lr=[0.01, 0.02]),
     [0.1, 0.2, 0.2, 0.205, 0.21, 0.1, 0.1, 0.3] * 6),
    (dict(patience=0, factor=0.3, min_lr=0.004, eps=1e-3), [5, 4, 4, 4.1, 3, 3, 3, 3] * 6),
    (dict(patience=1, threshold=0.2, cooldown=1), [10, 9, 8.5, 8.4, 6, 6.1, 6, 4.7, 5] * 5),
])
def test_reduce_lr_on_plateau_matches_torch(kw, losses):
    res = {}
    for lib in (pyctorch, torch):
        opt = _opt(lib)
        sched = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, **kw)
        seq = []
        for loss in losses:
            opt.step()
            sched.step(loss)
            seq.append((tuple(sched.get_last_lr()), sched.num_bad_epochs, sched.cooldown_counter, sched.best))
        res[lib.__name__] = (seq, set(sched.state_dict()))
    assert res["pyctorch"] == res["torch"]


@pytest.mark.parametrize("name,kw", [c for c in CASES if c[0] not in ("LambdaLR", "MultiplicativeLR")
                                     or isinstance(c[1]["lr_lambda"], list)], ids=_case_id)
def test_state_dict_round_trip(name, kw):
    """A scheduler restored from a state dict after 11 steps continues exactly like the original."""
    opt = _opt(pyctorch)
    sched = getattr(S, name)(opt, **kw)
    for _ in range(11):
        opt.step()
        sched.step()
    sd = sched.state_dict()
    assert "optimizer" not in sd
    # the usual checkpoint order: build both, then load the optimizer (its lrs and initial_lr travel
    # with its state) and the scheduler
    opt2 = _opt(pyctorch)
    fresh_kw = dict(kw)
    if name == "LambdaLR":
        fresh_kw["lr_lambda"] = [lambda e: 1 / (e + 1), _Scale(0.5)]  # overwritten by the load
    sched2 = getattr(S, name)(opt2, **fresh_kw)
    opt2.load_state_dict(opt.state_dict())
    sched2.load_state_dict(sd)
    if name == "LambdaLR":
        assert sched2.lr_lambdas[1].base == 0.9
    for _ in range(15):
        for o, s in ((opt, sched), (opt2, sched2)):
            o.step()
            s.step()
        assert sched.get_last_lr() == sched2.get_last_lr()
        assert _momenta(opt) == _momenta(opt2)


def test_reduce_lr_on_plateau_state_dict_and_hand_values():
    opt = _opt(pyctorch)
    sched = S.ReduceLROnPlateau(opt, factor=0.5, patience=1)
    seq = []
    for loss in [1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.5]:
        sched.step(loss)
        seq.append(sched.get_last_lr()[0])
    assert seq == [0.1, 0.1, 0.05, 0.05, 0.05, 0.025, 0.025]
    sd = sched.state_dict()
    sched2 = S.ReduceLROnPlateau(_opt(pyctorch), mode="max")
    sched2.load_state_dict(sd)
    assert sched2.mode == "min" and sched2.best == 0.5 and sched2.num_bad_epochs == sched.num_bad_epochs
    assert sched2._is_better(0.4, 0.5) and not sched2._is_better(0.49999, 0.5)


def test_hand_computed_sequences():
    def lrs(make, n):
        opt = _opt(pyctorch)
        sched = make(opt)
        out = [sched.get_last_lr()[0]]
        for _ in range(n):
            opt.step()
            sched.step()
            out.append(sched.get_last_lr()[0])
        return out

    assert lrs(lambda o: S.StepLR(o, 2, 0.5), 5) == pytest.approx([0.1, 0.1, 0.05, 0.05, 0.025, 0.025])
    assert lrs(lambda o: S.MultiStepLR(o, [1, 3, 3], 0.1), 4) == pytest.approx([0.1, 0.01, 0.01, 1e-4, 1e-4])
    assert lrs(lambda o: S.ConstantLR(o, 0.5, 2), 3) == pytest.approx([0.05, 0.05, 0.1, 0.1])
    assert lrs(lambda o: S.LinearLR(o, 0.5, 1.0, 4), 5) == pytest.approx([0.05, 0.0625, 0.075, 0.0875, 0.1, 0.1])
    cos = lrs(lambda o: S.CosineAnnealingLR(o, T_max=8, eta_min=0.0), 16)
    assert cos == pytest.approx([0.05 * (1 + math.cos(math.pi * e / 8)) for e in range(17)], abs=1e-12)
    one = lrs(lambda o: S.OneCycleLR(o, max_lr=1.0, total_steps=10, cycle_momentum=False), 9)
    assert one[0] == pytest.approx(0.04) and one[2] == pytest.approx(1.0) and one[9] == pytest.approx(0.04 / 1e4)
    tri = lrs(lambda o: S.CyclicLR(o, 0.0, 1.0, step_size_up=2, cycle_momentum=False), 8)
    assert tri == pytest.approx([0, 0.5, 1, 0.5, 0, 0.5, 1, 0.5, 0])
    tri2 = lrs(lambda o: S.CyclicLR(o, 0.0, 1.0, step_size_up=1, mode="triangular2", cycle_momentum=False), 6)
    assert tri2 == pytest.approx([0, 1, 0, 0.5, 0, 0.25, 0])


def test_cycle_momentum_sets_momentum_and_betas():
    opt = _opt(pyctorch)
    S.OneCycleLR(opt, max_lr=0.1, total_steps=10)
    assert opt.param_groups[0]["momentum"] == 0.95 and opt.param_groups[0]["max_momentum"] == 0.95
    adam = _opt(pyctorch, "Adam")
    S.CyclicLR(adam, 0.01, 0.1, step_size_up=2, base_momentum=0.7, max_momentum=0.85)
    assert adam.param_groups[1]["betas"] == (0.85, 0.999)
    with pytest.raises(ValueError, match="optimizer must support momentum or beta1"):
        S.CyclicLR(_opt(pyctorch, "Adagrad"), 0.01, 0.1)
    S.CyclicLR(_opt(pyctorch, "Adagrad"), 0.01, 0.1, cycle_momentum=False)


def test_step_order_warnings():
    opt = _opt(pyctorch)
    sched = S.StepLR(opt, 3)
    with pytest.warns(UserWarning, match="Detected call of `lr_scheduler.step\\(\\)` before `optimizer.step\\(\\)`"):
        sched.step()
    opt = _opt(pyctorch)
    sched = S.StepLR(opt, 3)
    opt.step()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sched.step()
        sched.step()  # only the first scheduler step is checked
    opt = _opt(pyctorch)
    sched = S.ExponentialLR(opt, 0.5)
    opt.step = lambda closure=None: None  # replaced after the scheduler wrapped it
    with pytest.warns(UserWarning, match="Seems like `optimizer.step\\(\\)` has been overridden"):
        sched.step()
    with pytest.warns(UserWarning, match="please use `get_last_lr\\(\\)`"):
        sched.get_lr()
    # wrapping is done once, however many schedulers share the optimizer
    opt = _opt(pyctorch)
    S.StepLR(opt, 2)
    wrapped = opt.step
    S.ExponentialLR(opt, 0.9)
    assert opt.step is wrapped and getattr(opt.step, "_wrapped_by_lr_sched", False)


def test_errors():
    opt = _opt(pyctorch)
    with pytest.raises(TypeError, match="is not an Optimizer"):
        S.StepLR(object(), 2)
    with pytest.raises(KeyError, match="param 'initial_lr' is not specified in param_groups\\[0\\]"):
        S.StepLR(opt, 2, last_epoch=3)
    with pytest.raises(ValueError, match="Expected 2 lr_lambdas, but got 1"):
        S.LambdaLR(opt, [lambda e: 1.0])
    with pytest.raises(TypeError, match="lr_lambda should be a function"):
        S.MultiplicativeLR(opt, 0.5)
    with pytest.raises(ValueError, match="Constant multiplicative factor expected to be between 0 and 1"):
        S.ConstantLR(opt, factor=1.5)
    with pytest.raises(ValueError, match="Starting multiplicative factor expected"):
        S.LinearLR(opt, start_factor=0)
    with pytest.raises(ValueError, match="Expected positive integer T_0"):
        S.CosineAnnealingWarmRestarts(opt, T_0=0)
    with pytest.raises(ValueError, match="Expected integer T_mult >= 1"):
        S.CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=0)
    with pytest.raises(ValueError, match="Expected non-negative epoch"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            S.CosineAnnealingWarmRestarts(opt, T_0=2).step(-1)
    with pytest.raises(ValueError, match="You must define either total_steps OR"):
        S.OneCycleLR(opt, max_lr=0.1)
    with pytest.raises(ValueError, match="Expected float between 0 and 1 pct_start"):
        S.OneCycleLR(opt, max_lr=0.1, total_steps=10, pct_start=1.5)
    with pytest.raises(ValueError, match="anneal_strategy must be one of"):
        S.OneCycleLR(opt, max_lr=0.1, total_steps=10, anneal_strategy="exp")
    with pytest.raises(ValueError, match="max_lr must have the same length as optimizer.param_groups"):
        S.OneCycleLR(opt, max_lr=[0.1, 0.2, 0.3], total_steps=10)
    sched = S.OneCycleLR(_opt(pyctorch), max_lr=0.1, total_steps=2)
    with pytest.raises(ValueError, match="Tried to step 3 times. The specified number of total steps is 2"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the optimizer never steps here
            for _ in range(3):
                sched.step()
    with pytest.raises(ValueError, match="mode is invalid and scale_fn is None"):
        S.CyclicLR(opt, 0.01, 0.1, mode="sine")
    with pytest.raises(ValueError, match="Factor should be < 1.0"):
        S.ReduceLROnPlateau(opt, factor=1.0)
    with pytest.raises(ValueError, match="mode bad is unknown!"):
        S.ReduceLROnPlateau(opt, mode="bad")
    with pytest.raises(ValueError, match="threshold mode bad is unknown!"):
        S.ReduceLROnPlateau(opt, threshold_mode="bad")
    with pytest.raises(ValueError, match="expected 2 min_lrs, got 1"):
        S.ReduceLROnPlateau(opt, min_lr=[0.1])
    plateau = S.ReduceLROnPlateau(opt)
    with pytest.raises(ValueError, match="does not support `ReduceLROnPlateau`"):
        S.SequentialLR(opt, [S.StepLR(opt, 2), plateau], milestones=[2])
    with pytest.raises(ValueError, match="expects number of schedulers provided to be one more"):
        S.SequentialLR(opt, [S.StepLR(opt, 2), S.StepLR(opt, 3)], milestones=[2, 4])
    with pytest.raises(ValueError, match="expects all schedulers to belong to the same optimizer"):
        S.ChainedScheduler([S.StepLR(opt, 2), S.StepLR(_opt(pyctorch), 2)])
    with pytest.raises(ValueError, match="expects at least one scheduler to be chained"):
        S.ChainedScheduler([])


def test_tensor_lr_is_filled_in_place():
    p = pyctorch.zeros(2, requires_grad=True)
    opt = pyctorch.optim.SGD([p], lr=pyctorch.tensor(0.1))
    lr_tensor = opt.param_groups[0]["lr"]
    sched = S.StepLR(opt, 1, gamma=0.5)
    opt.step()
    sched.step()
    assert opt.param_groups[0]["lr"] is lr_tensor and lr_tensor.item() == pytest.approx(0.05)
    assert isinstance(sched.get_last_lr()[0], pyctorch.Tensor) and sched.get_last_lr()[0] is not lr_tensor
    assert sched.base_lrs[0].item() == pytest.approx(0.1)


def test_module_exports():
    import pyctorch.optim.lr_scheduler as mod
    for name in ("LRScheduler", "StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR",
                 "CosineAnnealingWarmRestarts", "LambdaLR", "MultiplicativeLR", "LinearLR", "ConstantLR",
                 "OneCycleLR", "CyclicLR", "SequentialLR", "ChainedScheduler", "ReduceLROnPlateau", "PolynomialLR"):
        assert name in mod.__all__ and getattr(pyctorch.optim.lr_scheduler, name) is getattr(mod, name)
    assert issubclass(S.ReduceLROnPlateau, S.LRScheduler) and S._LRScheduler is S.LRScheduler
