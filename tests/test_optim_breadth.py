"""The optimizers added for API breadth (Adadelta, ASGD, Rprop, SparseAdam, Adafactor) and
optim.swa_utils against torch: parameters after several steps for each option set, state_dict
layout and values, a torch state_dict loaded mid-run, and the averaging helpers."""
import io
import warnings

import numpy as np
import pytest

from conftest import HAVE_TORCH, assert_same, requires_torch

import pyctorch
import pyctorch.optim
from pyctorch.optim import swa_utils

if HAVE_TORCH:
    import torch

SHAPES = [((3, 4), "float32"), ((5,), "float64"), ((2, 3, 2), "float32"), ((), "float64")]
STEPS = 6

class _TensorLR(float):
    """An lr given as a 0-d tensor of the running library (torch accepts tensor learning rates)."""


# (optimizer name, constructor options): one entry per option combination worth checking
OPTIMIZER_CASES = [
    ("Adadelta", {}),
    ("Adadelta", {"lr": 0.5, "rho": 0.8, "eps": 1e-5, "weight_decay": 0.1, "maximize": True}),
    ("Adadelta", {"foreach": True}),
    ("ASGD", {}),
    ("ASGD", {"lr": 0.05, "lambd": 1e-2, "alpha": 0.5, "t0": 2, "weight_decay": 0.05}),
    ("ASGD", {"t0": 3, "maximize": True, "foreach": False}),
    ("Rprop", {}),
    ("Rprop", {"lr": 0.05, "etas": (0.3, 1.5), "step_sizes": (1e-3, 0.2), "maximize": True}),
    ("Rprop", {"foreach": True, "differentiable": False}),
    ("Adafactor", {}),
    ("Adafactor", {"lr": 0.05, "beta2_decay": -0.5, "eps": (1e-6, 1e-2), "d": 2.0, "weight_decay": 0.1}),
    ("Adafactor", {"maximize": True, "foreach": False}),
] + [(name, {"lr": _TensorLR(0.05)}) for name in ("Adadelta", "ASGD", "Rprop", "Adafactor")]


def _case_id(case):
    name, opts = case
    return name + ("-" + "-".join(f"{k}={v}" for k, v in opts.items()) if opts else "")


def _arrays(seed):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape).astype(dt) for shape, dt in SHAPES]


def _loss(params, targets):
    """Quadratic plus quartic, so the gradients change from step to step."""
    total = 0
    for k, (p, t) in enumerate(zip(params, targets)):
        total = total + ((p - t) * (p - t) * (k + 1.0)).sum().double() + (p ** 4 * 0.1).sum().double()
    return total


class Run:
    """One library's parameters, targets and optimizer for a case."""

    def __init__(self, lib, name, opts):
        self.lib = lib
        self.params = [lib.tensor(a, requires_grad=True) for a in _arrays(0)]
        self.targets = [lib.tensor(a) for a in _arrays(1)]
        # two groups so group-level options and state indices are both exercised
        groups = [{"params": self.params[:2]}, {"params": self.params[2:]}]
        opts = {k: lib.tensor(float(v)) if isinstance(v, _TensorLR) else v for k, v in opts.items()}
        self.opt = getattr(lib.optim, name)(groups, **opts)

    def steps(self, n):
        for _ in range(n):
            self.opt.zero_grad()
            _loss(self.params, self.targets).backward()
            self.opt.step()


# float32 drifts by an ulp per step (fused multiply-adds in torch); float64 agrees to ~1e-15
TOL = {"float32": (2e-5, 2e-6), "float64": (1e-10, 1e-12)}


@requires_torch
@pytest.mark.parametrize("case", OPTIMIZER_CASES, ids=_case_id)
def test_steps_and_state_dict_match_torch(case):
    name, opts = case
    ours, theirs = Run(pyctorch, name, opts), Run(torch, name, opts)
    ours.steps(STEPS)
    theirs.steps(STEPS)
    assert_same(ours.params, theirs.params, tol=TOL)
    ps, ts = ours.opt.state_dict(), theirs.opt.state_dict()
    assert_same(ps, ts, tol=TOL)
    assert_same(ps["param_groups"], ts["param_groups"], exact=True)  # a tensor lr exactly


@requires_torch
@pytest.mark.parametrize("case", OPTIMIZER_CASES[::3], ids=_case_id)
def test_torch_state_dict_loads_and_continues(case):
    """A fresh pyctorch optimizer given torch's state_dict after some steps continues as torch."""
    name, opts = case
    saved = Run(torch, name, opts)
    saved.steps(3)
    # torch reloads its own state the same way (loading casts float state to each param's dtype)
    ours, theirs = Run(pyctorch, name, opts), Run(torch, name, opts)
    with pyctorch.no_grad(), torch.no_grad():
        for p, t, s in zip(ours.params, theirs.params, saved.params):
            p.copy_(pyctorch.tensor(s.detach().numpy()))
            t.copy_(s)
    # through torch.save and pyctorch.load, as a checkpoint would travel
    buffer = io.BytesIO()
    torch.save(saved.opt.state_dict(), buffer)
    buffer.seek(0)
    ours.opt.load_state_dict(pyctorch.load(buffer))
    theirs.opt.load_state_dict(saved.opt.state_dict())
    ours.steps(3)
    theirs.steps(3)
    assert_same(ours.params, theirs.params, tol=TOL)
    ps, ts = ours.opt.state_dict(), theirs.opt.state_dict()
    assert_same(ps, ts, tol=TOL)
    assert_same(ps["param_groups"], ts["param_groups"], exact=True)  # a tensor lr exactly


# (optimizer name, constructor options, what torch raises): checks torch makes at construction or step
ERROR_CASES = [
    ("Adadelta", {"rho": 1.5}, ValueError),
    ("ASGD", {"weight_decay": -1}, ValueError),
    ("Rprop", {"etas": (1.2, 0.5)}, ValueError),
    ("Adafactor", {"d": 0.5}, ValueError),
    ("Adafactor", {"beta2_decay": 0.1}, ValueError),
    ("SparseAdam", {"lr": 0.0}, ValueError),
    ("Adadelta", {"foreach": True, "differentiable": True}, AssertionError),
    ("Rprop", {"capturable": True}, AssertionError),
    ("ASGD", {"capturable": True}, AssertionError),
    ("Adadelta", {"capturable": True}, AssertionError),
    # differentiable=True records the update, which torch refuses on leaf parameters
    ("Adadelta", {"differentiable": True}, RuntimeError),
    # Note [SparseAdam without sparse tensors]: dense gradients raise as in torch
    ("SparseAdam", {}, RuntimeError),
]


@requires_torch
@pytest.mark.parametrize("case", ERROR_CASES, ids=lambda c: _case_id(c[:2]))
def test_errors_match_torch(case):
    name, opts, error = case
    messages = []
    for lib in (pyctorch, torch):
        with pytest.raises(error) as info:
            Run(lib, name, opts).steps(1)
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_defaults_match_torch_signatures():
    expected = {
        "Adadelta": {"lr": 1.0, "rho": 0.9, "eps": 1e-6, "weight_decay": 0, "foreach": None, "maximize": False,
                     "capturable": False, "differentiable": False},
        "ASGD": {"lr": 1e-2, "lambd": 1e-4, "alpha": 0.75, "t0": 1e6, "weight_decay": 0, "foreach": None,
                 "maximize": False, "differentiable": False, "capturable": False},
        "Rprop": {"lr": 1e-2, "etas": (0.5, 1.2), "step_sizes": (1e-6, 50), "foreach": None, "maximize": False,
                  "differentiable": False, "capturable": False},
        "SparseAdam": {"lr": 1e-3, "betas": (0.9, 0.999), "eps": 1e-8, "maximize": False},
        "Adafactor": {"lr": 1e-2, "beta2_decay": -0.8, "eps": (None, 1e-3), "d": 1.0, "weight_decay": 0.0,
                      "foreach": None, "maximize": False},
    }
    for name, defaults in expected.items():
        opt = getattr(pyctorch.optim, name)([pyctorch.zeros(2, requires_grad=True)])
        assert opt.defaults == defaults, name
        if HAVE_TORCH:
            assert getattr(torch.optim, name)([torch.zeros(2, requires_grad=True)]).defaults == defaults


# ---------------------------------------------------------------- swa_utils

def _model(lib):
    """Linear -> BatchNorm1d -> Linear with weights from a fixed numpy seed, in train mode."""
    model = lib.nn.Sequential(lib.nn.Linear(4, 3), lib.nn.BatchNorm1d(3), lib.nn.Linear(3, 2))
    rng = np.random.default_rng(5)
    with lib.no_grad():
        for p in model.parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape)).astype("float32")))
    return model


def _perturb_and_forward(lib, model, k):
    rng = np.random.default_rng(100 + k)
    with lib.no_grad():
        for p in model.parameters():
            p.add_(lib.tensor(rng.standard_normal(tuple(p.shape)).astype("float32")) * 0.1)
    model(lib.tensor(rng.standard_normal((6, 4)).astype("float32")))  # moves BN running stats


# (label, AveragedModel options built for a library)
AVERAGING_CASES = [
    ("swa-default", lambda lib: {}),
    ("swa-default-buffers", lambda lib: {"use_buffers": True}),
    ("ema-multi", lambda lib: {"multi_avg_fn": lib.optim.swa_utils.get_ema_multi_avg_fn(0.9)}),
    ("ema-multi-buffers", lambda lib: {"multi_avg_fn": lib.optim.swa_utils.get_ema_multi_avg_fn(0.8),
                                       "use_buffers": True}),
    ("swa-multi", lambda lib: {"multi_avg_fn": lib.optim.swa_utils.get_swa_multi_avg_fn()}),
    ("ema-avg-fn", lambda lib: {"avg_fn": lib.optim.swa_utils.get_ema_avg_fn(0.95)}),
    ("swa-avg-fn", lambda lib: {"avg_fn": lib.optim.swa_utils.get_swa_avg_fn()}),
]


@requires_torch
@pytest.mark.parametrize("case", AVERAGING_CASES, ids=lambda c: c[0])
def test_averaged_model_matches_torch(case):
    _, options = case
    results = []
    for lib in (pyctorch, torch):
        model = _model(lib)
        averaged = lib.optim.swa_utils.AveragedModel(model, **options(lib))
        for k in range(4):
            _perturb_and_forward(lib, model, k)
            averaged.update_parameters(model)
        results.append(averaged.state_dict())
    ours, theirs = results
    assert_same(ours, theirs, tol=TOL)


@requires_torch
@pytest.mark.parametrize("strategy,anneal_epochs", [("cos", 3), ("linear", 4), ("cos", 0)])
def test_swalr_schedule_and_state_dict_match_torch(strategy, anneal_epochs):
    lrs, states = [], []
    for lib in (pyctorch, torch):
        opt = lib.optim.SGD([lib.zeros(2, requires_grad=True)], lr=0.5)
        sched = lib.optim.swa_utils.SWALR(opt, swa_lr=0.05, anneal_epochs=anneal_epochs, anneal_strategy=strategy)
        seen = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for _ in range(6):
                opt.step()
                sched.step()
                seen.append(sched.get_last_lr()[0])
        lrs.append(seen)
        states.append(sched.state_dict())
    np.testing.assert_allclose(lrs[0], lrs[1], rtol=1e-12)
    assert states[0].keys() == states[1].keys()


def test_swa_argument_checks():
    with pytest.raises(ValueError, match="Invalid decay value"):
        swa_utils.get_ema_multi_avg_fn(1.5)
    with pytest.raises(AssertionError, match="Only one of avg_fn and multi_avg_fn"):
        swa_utils.AveragedModel(pyctorch.nn.Linear(2, 2), avg_fn=swa_utils.get_swa_avg_fn(),
                                multi_avg_fn=swa_utils.get_swa_multi_avg_fn())
    opt = pyctorch.optim.SGD([pyctorch.zeros(1, requires_grad=True)], lr=0.1)
    with pytest.raises(ValueError, match="anneal_strategy must be one of"):
        swa_utils.SWALR(opt, 0.01, anneal_strategy="step")


@requires_torch
def test_update_bn_matches_torch():
    stats = []
    for lib in (pyctorch, torch):
        model = _model(lib)
        rng = np.random.default_rng(9)
        loader = [(lib.tensor(rng.standard_normal((5, 4)).astype("float32")), 0) for _ in range(3)]
        model.eval()
        lib.optim.swa_utils.update_bn(loader, model)
        assert not model.training and model[1].momentum == 0.1
        stats.append([model[1].running_mean, model[1].running_var, model[1].num_batches_tracked])
    assert_same(*stats, tol=TOL)


def _through_two_steps(lib, name, opts):
    """differentiable=True: gradients of the updated parameter w.r.t. its start and its gradient."""
    start = lib.tensor(np.arange(1.0, 5.0), requires_grad=True)
    param = start.clone()  # non-leaf: the steps stay in the graph
    grad = lib.tensor(np.array([0.5, -1.0, 2.0, 0.1]), requires_grad=True)
    param.grad = grad
    opt = getattr(lib.optim, name)([param], differentiable=True, **opts)
    for _ in range(2):
        opt.step()
    (param * lib.arange(4.0)).sum().backward()
    return param, start.grad, grad.grad


@requires_torch
@pytest.mark.parametrize("case", [("Adadelta", {"weight_decay": 0.1}), ("ASGD", {"t0": 0})], ids=_case_id)
def test_differentiable_step_gradients_match_torch(case):
    assert_same(_through_two_steps(pyctorch, *case), _through_two_steps(torch, *case), tol=TOL)
