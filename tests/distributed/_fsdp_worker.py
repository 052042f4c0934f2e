"""One rank of the FSDP tests (dist_helpers.run_ranks(..., script="_fsdp_worker.py")).

Scenarios: `fsdp` (2 ranks): every FSDP flavour trains a small residual MLP and must give, step
by step, the losses and parameters of the unwrapped model trained by one process on the
concatenated batch (computed on every rank), plus the state-dict, summon and no_sync checks;
its {"record"} lines (losses per configuration) are compared with torch's own FSDP
(PCT_DIST_FRAMEWORK=torch). `memory` (4 ranks) and `reference` (1 process): a bigger model under
FULL_SHARD and unsharded; each prints its losses and peak CPU bytes (pyctorch's storage counter).
Initial weights and data come from NumPy, so both frameworks start from the same numbers.
"""
import datetime
import functools
import gc
import importlib
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _ddp_worker import FRAMEWORK, RANK, WORLD, close, dist, np_of, record, report, torch  # noqa: E402

# torch's names from whichever framework the worker runs (pyctorch's package is pyctorch.distributed.fsdp)
_fsdp = importlib.import_module(torch.__name__ + ".distributed.fsdp")
_wrap = importlib.import_module(torch.__name__ + ".distributed.fsdp.wrap")
FSDP = _fsdp.FullyShardedDataParallel
CPUOffload, FullStateDictConfig, MixedPrecision = _fsdp.CPUOffload, _fsdp.FullStateDictConfig, _fsdp.MixedPrecision
ShardedStateDictConfig, ShardingStrategy, StateDictType = (_fsdp.ShardedStateDictConfig, _fsdp.ShardingStrategy,
                                                           _fsdp.StateDictType)
fully_shard = _fsdp.fully_shard
ModuleWrapPolicy = _wrap.ModuleWrapPolicy
size_based_auto_wrap_policy, transformer_auto_wrap_policy = (_wrap.size_based_auto_wrap_policy,
                                                             _wrap.transformer_auto_wrap_policy)

checkpoint = importlib.import_module(torch.__name__ + ".utils.checkpoint").checkpoint
CPU = torch.device("cpu")  # torch's FSDP needs device_id on a machine without an accelerator
IN, OUT, B, STEPS, LR, CLIP = 5, 3, 4, 3, 0.05, 0.5


class Block(torch.nn.Module):
    def __init__(self, h):
        super().__init__()
        self.fc = torch.nn.Linear(h, h)

    def forward(self, x):
        return x + torch.tanh(self.fc(x))


class CheckpointedBlock(Block):
    """Block with its inside under activation checkpointing (recomputed in backward)."""

    def forward(self, x):
        return x + checkpoint(lambda y: torch.tanh(self.fc(y)), x, use_reentrant=False)


class Net(torch.nn.Module):
    def __init__(self, h=8, blocks=2, block_cls=Block):
        super().__init__()
        self.inp = torch.nn.Linear(IN, h)
        self.blocks = torch.nn.Sequential(*[block_cls(h) for _ in range(blocks)])
        self.head = torch.nn.Linear(h, OUT)

    def forward(self, x):
        return self.head(self.blocks(self.inp(x)))

    def predict(self, x):  # a method besides forward that uses the parameters
        return self.head(self.blocks(self.inp(x))).argmax(-1)


def make_net(seed=0, h=8, blocks=2, std=0.3, block_cls=Block):
    net = Net(h, blocks, block_cls)
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for p in net.parameters():
            p.copy_(torch.tensor(rng.normal(0, std, tuple(p.shape)), dtype=torch.float32))
    return net


def batch(world, seed=1):
    rng = np.random.default_rng(seed)
    x = rng.normal(0, 1, (world * B, IN))
    y = rng.normal(0, 1, (world * B, OUT))
    return torch.tensor(x, dtype=torch.float32), torch.tensor(y, dtype=torch.float32)


def local(t, rank=None, world=None):
    r = RANK if rank is None else rank
    n = t.shape[0] // (WORLD if world is None else world)
    return t[r * n:(r + 1) * n]


def loss_fn(model, x, y):
    return (model(x).float() - y).pow(2).mean()


def reference(steps=STEPS, clip=True, **net_kw):
    """Losses and final state of the unwrapped model trained on the whole batch in one process."""
    net = make_net(**net_kw)
    opt = torch.optim.AdamW(net.parameters(), lr=LR)
    x, y = batch(WORLD)
    losses = []
    for _ in range(steps):
        loss = loss_fn(net, x, y)
        loss.backward()
        if clip:
            torch.nn.utils.clip_grad_norm_(net.parameters(), CLIP)
        opt.step()
        opt.zero_grad()
        losses.append(loss.item())
    return losses, {k: np_of(v) for k, v in net.state_dict().items()}


REF = None


def ref():
    global REF
    if REF is None:
        REF = reference()
    return REF


def train(model, steps=STEPS, clip=True):
    """Each rank on its part of the batch; returns the losses of the whole batch (the ranks' mean)."""
    opt = torch.optim.AdamW(model.parameters(), lr=LR)
    x, y = batch(WORLD)
    losses = []
    for _ in range(steps):
        loss = loss_fn(model, local(x), local(y))
        loss.backward()
        if clip:
            model.clip_grad_norm_(CLIP)
        opt.step()
        opt.zero_grad()
        mean = loss.detach().clone()
        dist.all_reduce(mean)
        losses.append(mean.item() / WORLD)
    return losses


def full_state(model):
    with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT):
        return {k: np_of(v) for k, v in model.state_dict().items()}


def expect_reference(name, model, losses):
    want_losses, want_state = ref()
    record(name, losses)
    close(losses, want_losses, 1e-5, f"{name}: losses")
    got = full_state(model)
    assert list(got) == list(want_state), (list(got), list(want_state))
    for k in want_state:
        close(got[k], want_state[k], 1e-5, f"{name}: {k}")


def block_policy():
    return ModuleWrapPolicy({Block})


def wrap(**kw):
    return FSDP(make_net(), device_id=CPU, **kw)


# -- training under each configuration ---------------------------------------------------------
def check_full_shard():
    model = wrap(auto_wrap_policy=block_policy())
    units = [type(m.module).__name__ for m in FSDP.fsdp_modules(model)]
    assert units == ["Net", "Block", "Block"], units
    names = [n for n, _ in model.named_parameters()]
    inner = "_fsdp_wrapped_module.blocks.{}._fsdp_wrapped_module._flat_param"
    assert names == ["_fsdp_wrapped_module._flat_param", inner.format(0), inner.format(1)], names
    expect_reference("full_shard", model, train(model))


def check_shard_grad_op():
    policy = functools.partial(transformer_auto_wrap_policy, transformer_layer_cls={Block})
    model = wrap(sharding_strategy=ShardingStrategy.SHARD_GRAD_OP, auto_wrap_policy=policy)
    expect_reference("shard_grad_op", model, train(model))


def check_no_shard():
    model = wrap(sharding_strategy=ShardingStrategy.NO_SHARD, auto_wrap_policy=block_policy())
    expect_reference("no_shard", model, train(model))


def check_hybrid_shard():
    model = wrap(sharding_strategy=ShardingStrategy.HYBRID_SHARD, auto_wrap_policy=block_policy())
    expect_reference("hybrid_shard", model, train(model))


def check_orig_params_size_policy():
    # 8*8+8 = 72 parameters per block: min_num_params 70 wraps each block's Linear, then the rest at the root
    policy = functools.partial(size_based_auto_wrap_policy, min_num_params=70)
    model = wrap(auto_wrap_policy=policy, use_orig_params=True)
    units = [type(m.module).__name__ for m in FSDP.fsdp_modules(model)]
    assert units == ["Net", "Linear", "Linear"], units
    names = [n.replace("_fsdp_wrapped_module.", "") for n, _ in model.named_parameters()]
    assert names == [k for k in ref()[1]], names
    expect_reference("orig_params", model, train(model))


def check_cpu_offload():
    model = wrap(auto_wrap_policy=block_policy(), cpu_offload=CPUOffload(offload_params=True))
    expect_reference("cpu_offload", model, train(model))
    assert all(p.device.type == "cpu" for p in model.parameters())


def check_fully_shard():
    net = make_net()
    for blk in net.blocks:
        fully_shard(blk)
    fully_shard(net)
    assert type(net).__name__ == "FSDPNet" and type(net.blocks[0]).__name__ == "FSDPBlock", type(net)
    assert isinstance(net, Net) and isinstance(net, _fsdp.FSDPModule)
    opt = torch.optim.AdamW(net.parameters(), lr=LR)
    x, y = batch(WORLD)
    losses = []
    for _ in range(STEPS):
        loss = loss_fn(net, local(x), local(y))
        loss.backward()
        opt.step()
        opt.zero_grad()
        mean = loss.detach().clone()
        dist.all_reduce(mean)
        losses.append(mean.item() / WORLD)
    record("fully_shard", losses)
    close(losses, reference(clip=False)[0], 1e-5, "fully_shard: losses")
    _fsdp.register_fsdp_forward_method(net, "predict")
    with torch.no_grad():
        assert net.predict(x).tolist() == net(x).argmax(-1).tolist()


def check_checkpoint_in_unit():
    model = FSDP(make_net(block_cls=CheckpointedBlock), device_id=CPU, auto_wrap_policy=block_policy())
    expect_reference("checkpoint_in_unit", model, train(model))


def check_mixed_precision():
    mp = MixedPrecision(param_dtype=torch.bfloat16, reduce_dtype=torch.float32, buffer_dtype=torch.bfloat16)
    model = wrap(auto_wrap_policy=block_policy(), mixed_precision=mp)
    losses = train(model)
    record("mixed_bf16", losses)
    close(losses, ref()[0], 0.05, "bf16 losses near float32's")
    assert all(p.dtype == torch.float32 for p in model.parameters()), "the shards keep their float32"
    # buffers run in buffer_dtype; a full state dict gives them back in their own dtype
    bn = FSDP(torch.nn.Sequential(torch.nn.Linear(IN, 4), torch.nn.BatchNorm1d(4)), device_id=CPU, mixed_precision=mp)
    bn(torch.ones(3, IN)).sum().backward()
    assert bn.module[1].running_mean.dtype == torch.bfloat16, bn.module[1].running_mean.dtype
    with FSDP.state_dict_type(bn, StateDictType.FULL_STATE_DICT):
        dtypes = {k: v.dtype for k, v in bn.state_dict().items()}
    assert dtypes["1.running_mean"] == torch.float32 and dtypes["1.num_batches_tracked"] == torch.int64, dtypes


# -- state dicts, summon, no_sync, sync_module_states ------------------------------------------
def check_full_state_dict():
    model = wrap(auto_wrap_policy=block_policy())
    train(model)
    want = ref()[1]
    got = full_state(model)
    with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT, FullStateDictConfig(rank0_only=True)):
        only0 = model.state_dict()
    assert (len(only0) == len(want)) if RANK == 0 else (len(only0) == 0), len(only0)
    fresh = FSDP(make_net(seed=7), device_id=CPU, auto_wrap_policy=block_policy())
    with FSDP.state_dict_type(fresh, StateDictType.FULL_STATE_DICT):
        fresh.load_state_dict({k: torch.tensor(v, dtype=torch.float32) for k, v in got.items()})
    again = full_state(fresh)
    for k in want:
        close(again[k], want[k], 1e-5, f"loaded {k}")


def check_sharded_state_dict():
    model = wrap(auto_wrap_policy=block_policy())
    train(model)
    with FSDP.state_dict_type(model, StateDictType.SHARDED_STATE_DICT, ShardedStateDictConfig()):
        sd = model.state_dict()
    assert list(sd) == list(ref()[1]), list(sd)
    fresh = FSDP(make_net(seed=7), device_id=CPU, auto_wrap_policy=block_policy())
    with FSDP.state_dict_type(fresh, StateDictType.SHARDED_STATE_DICT):
        fresh.load_state_dict(sd)
    got = full_state(fresh)
    for k, v in ref()[1].items():
        close(got[k], v, 1e-5, f"sharded round trip {k}")
    if FRAMEWORK == "pyctorch":  # the pieces of all ranks, in rank order, are the flattened parameter
        pieces = [None] * WORLD
        dist.all_gather_object(pieces, {k: v.tolist() for k, v in sd.items()})
        for k, v in ref()[1].items():
            close(np.concatenate([np.asarray(p[k], dtype=np.float64).reshape(-1) for p in pieces]), v.reshape(-1),
                  1e-5, f"pieces of {k}")


def check_summon_full_params():
    model = wrap(auto_wrap_policy=block_policy())
    init = {k: np_of(v) for k, v in make_net().state_dict().items()}
    with FSDP.summon_full_params(model):
        got = {n: p for n, p in model.named_parameters()}
        assert list(got) == list(init), list(got)
        for k, v in init.items():
            close(np_of(got[k]), v, 0, f"summoned {k}")
        with torch.no_grad():
            got["head.bias"].fill_(1.5)
    with FSDP.summon_full_params(model, writeback=False):
        p = dict(model.named_parameters())["head.bias"]
        close(np_of(p), np.full(OUT, 1.5), 0, "written back")
        with torch.no_grad():
            p.fill_(-3.0)
    close(full_state(model)["head.bias"], np.full(OUT, 1.5), 0, "not written back")


def check_no_sync():
    """Two micro-batches, the first under no_sync: one step as the reference's on the whole batch."""
    model = wrap(auto_wrap_policy=block_policy())
    opt = torch.optim.AdamW(model.parameters(), lr=LR)
    x, y = batch(WORLD)
    lx, ly = local(x), local(y)
    h = B // 2
    with model.no_sync():
        (loss_fn(model, lx[:h], ly[:h]) / 2).backward()
    (loss_fn(model, lx[h:], ly[h:]) / 2).backward()
    opt.step()
    want = reference(steps=1, clip=False)[1]
    got = full_state(model)
    for k in want:
        close(got[k], want[k], 1e-5, f"no_sync {k}")


def check_sync_module_states():
    model = FSDP(make_net(seed=10 + RANK), device_id=CPU, sync_module_states=True, auto_wrap_policy=block_policy())
    want = {k: np_of(v) for k, v in make_net(seed=10).state_dict().items()}
    got = full_state(model)
    for k in want:
        close(got[k], want[k], 0, f"rank 0's {k}")


def check_frees_between_forward_and_backward():
    """FULL_SHARD: after forward only the root's parameters stay gathered, and backward gathers each
    block again; SHARD_GRAD_OP keeps every block gathered from forward to backward (pyctorch's
    storage counter and collective count)."""
    import pyctorch._C as C
    from pyctorch.distributed import distributed_c10d as c10d
    h, blocks = 64, 3
    block_bytes = (h * h + h) * 4
    real = c10d.all_gather_into_tensor
    gathers = [0]

    def counting(*args, **kwargs):
        gathers[0] += 1
        return real(*args, **kwargs)

    c10d.all_gather_into_tensor = counting
    try:
        for strategy, kept, regathered in ((ShardingStrategy.FULL_SHARD, 0, blocks),
                                           (ShardingStrategy.SHARD_GRAD_OP, blocks, 0)):
            model = FSDP(make_net(h=h, blocks=blocks, std=0.05), sharding_strategy=strategy,
                         auto_wrap_policy=block_policy())
            x = torch.ones(2, IN)
            gc.collect()
            base = C._cpu_memory_stats(True)[0]
            gathers[0] = 0
            out = model(x).sum()
            live = C._cpu_memory_stats()[0] - base
            assert gathers[0] == blocks + 1, (strategy, gathers[0])
            assert kept * block_bytes <= live < (kept + 0.5) * block_bytes, (strategy, live, block_bytes)
            out.backward()
            assert gathers[0] == blocks + 1 + regathered, (strategy, gathers[0])
            del out, model
    finally:
        c10d.all_gather_into_tensor = real


# (name, check, runs on torch too): the freeing check reads pyctorch's counters; torch's FSDP refuses
# CPUOffload (pinned memory) and sync_module_states (GPU-only) without an accelerator, and its
# HYBRID_SHARD on a CPU-only machine gives other numbers than the unsharded model (pyctorch documents
# HYBRID_SHARD as FULL_SHARD within one node)
CHECKS = [("full_shard", check_full_shard, True), ("shard_grad_op", check_shard_grad_op, True),
          ("no_shard", check_no_shard, True), ("hybrid_shard", check_hybrid_shard, False),
          ("orig_params_size_policy", check_orig_params_size_policy, True), ("cpu_offload", check_cpu_offload, False),
          ("fully_shard", check_fully_shard, True), ("checkpoint_in_unit", check_checkpoint_in_unit, True),
          ("mixed_precision", check_mixed_precision, True),
          ("full_state_dict", check_full_state_dict, True), ("sharded_state_dict", check_sharded_state_dict, True),
          ("summon_full_params", check_summon_full_params, True), ("no_sync", check_no_sync, True),
          ("sync_module_states", check_sync_module_states, False),
          ("frees_between_forward_and_backward", check_frees_between_forward_and_backward, False)]


def main_fsdp():
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=30))
    for name, fn, on_torch in CHECKS:
        if FRAMEWORK == "pyctorch" or on_torch:
            report(name, fn)
    dist.destroy_process_group()


# -- memory: FULL_SHARD under a budget the unsharded model exceeds ------------------------------
MEM_H, MEM_BLOCKS, MEM_STEPS, MEM_WORLD, MEM_LR = 192, 8, 3, 4, 1e-3


def memory_run(sharded):
    """Trains the bigger model (sharded: this rank's quarter of the batch); records the losses of the
    whole batch and the peak bytes held by CPU storages from just before the first step."""
    import pyctorch._C as C
    net = make_net(h=MEM_H, blocks=MEM_BLOCKS, std=0.05)
    numel = sum(p.numel() for p in net.parameters())
    model = FSDP(net, auto_wrap_policy=block_policy()) if sharded else net
    x, y = batch(MEM_WORLD)
    if sharded:
        x, y = local(x, world=MEM_WORLD), local(y, world=MEM_WORLD)
    gc.collect()
    C._cpu_memory_stats(True)
    opt = torch.optim.AdamW(model.parameters(), lr=MEM_LR)
    losses = []
    for _ in range(MEM_STEPS):
        loss = loss_fn(model, x, y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        mean = loss.detach().clone()
        if sharded:
            dist.all_reduce(mean)
        losses.append(mean.item() / (MEM_WORLD if sharded else 1))
    record("memory", {"losses": losses, "peak": C._cpu_memory_stats()[1], "numel": numel})


def main():
    scenario = sys.argv[1]
    if scenario == "fsdp":
        main_fsdp()
    elif scenario == "memory":
        dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=30))
        memory_run(sharded=True)
        dist.destroy_process_group()
    elif scenario == "reference":
        memory_run(sharded=False)


if __name__ == "__main__":
    main()
    if FRAMEWORK == "torch":
        # torch's Gloo threads can abort the oracle at interpreter exit on a loaded machine ("terminate called
        # without an active exception") after every result is printed: leave without that teardown
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)
