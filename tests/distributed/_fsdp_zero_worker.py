"""One rank of the ZeroRedundancyOptimizer tests (run_ranks("zero", script="_fsdp_zero_worker.py")).

Every rank computes the same gradients (the whole batch), so ZeRO over AdamW must leave every rank
with exactly the parameters a plain AdamW reaches on one copy of the model, step by step, with
two parameter groups and a learning-rate scheduler; its consolidated state dict must be the plain
optimizer's, and loading one must continue training as the plain optimizer does.
"""
import copy
import datetime
import importlib
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _ddp_worker import RANK, WORLD, close, dist, np_of, report, torch  # noqa: E402
from _fsdp_worker import batch, loss_fn, make_net  # noqa: E402

ZeroRedundancyOptimizer = importlib.import_module(torch.__name__ + ".distributed.optim").ZeroRedundancyOptimizer
STEPS = 4


def groups(net):
    return [{"params": [p for n, p in net.named_parameters() if n.endswith("weight")], "weight_decay": 0.1},
            {"params": [p for n, p in net.named_parameters() if n.endswith("bias")], "lr": 0.02,
             "weight_decay": 0.0}]


def step(net, opt, sched):
    x, y = batch(WORLD)
    loss_fn(net, x, y).backward()
    opt.step()
    opt.zero_grad()
    sched.step()


def pair():
    plain_net, zero_net = make_net(), make_net()
    plain = torch.optim.AdamW(groups(plain_net), lr=0.05)
    zero = ZeroRedundancyOptimizer(groups(zero_net), optimizer_class=torch.optim.AdamW, lr=0.05)
    scheds = [torch.optim.lr_scheduler.StepLR(o, step_size=1, gamma=0.5) for o in (plain, zero)]
    return (plain_net, plain, scheds[0]), (zero_net, zero, scheds[1])


def same_params(a, b, what):
    for (n, p), q in zip(a.named_parameters(), b.parameters()):
        close(np_of(q), np_of(p), 1e-7, f"{what}: {n}")


def check_matches_adamw():
    (pn, po, ps), (zn, zo, zs) = pair()
    for i in range(STEPS):
        step(pn, po, ps)
        step(zn, zo, zs)
        same_params(pn, zn, f"step {i}")
    assert [g["lr"] for g in zo.param_groups] == [g["lr"] for g in po.param_groups], "the scheduler's lr"
    # the state is partitioned: each rank holds state for its own parameters only, all of them together
    owned = [len(zo.optim.state)] if zo.optim is not None else [0]
    counts = [None] * WORLD
    dist.all_gather_object(counts, owned[0])
    assert sum(counts) == len(list(pn.parameters())) and all(c > 0 for c in counts), counts


def check_state_dict():
    (pn, po, ps), (zn, zo, zs) = pair()
    for _ in range(2):
        step(pn, po, ps)
        step(zn, zo, zs)
    zo.consolidate_state_dict(to=0)
    if RANK == 0:
        got, want = zo.state_dict(), po.state_dict()
        assert [{k: v for k, v in g.items()} for g in got["param_groups"]] == want["param_groups"], \
            (got["param_groups"], want["param_groups"])
        assert sorted(got["state"]) == sorted(want["state"]), (sorted(got["state"]), sorted(want["state"]))
        for i, s in want["state"].items():
            for k, v in s.items():
                close(np_of(got["state"][i][k]), np_of(v), 1e-7, f"state {i} {k}")
    else:
        try:
            zo.state_dict()
        except RuntimeError as e:
            assert "consolidate_state_dict" in str(e), e
        else:
            raise AssertionError("state_dict() without consolidation on this rank did not raise")
    # a fresh ZeRO loading the plain optimizer's state continues exactly as the plain one
    net2 = copy.deepcopy(pn)
    zero2 = ZeroRedundancyOptimizer(groups(net2), optimizer_class=torch.optim.AdamW, lr=0.05)
    zero2.load_state_dict(copy.deepcopy(po.state_dict()))  # (state_dict() holds the live state tensors)
    sched2 = torch.optim.lr_scheduler.StepLR(zero2, step_size=1, gamma=0.5)
    sched2.last_epoch = ps.last_epoch
    for i in range(2):
        step(pn, po, ps)
        step(net2, zero2, sched2)
        same_params(pn, net2, f"after loading, step {i}")


def main():
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=30))
    report("matches_adamw", check_matches_adamw)
    report("state_dict", check_state_dict)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
