"""torch.distributed.optim.ZeroRedundancyOptimizer: optimizer state sharded across ranks (ZeRO
stage 1).

Every rank holds every parameter and gradient (as with DDP), but each parameter is owned by one
rank, and only its owner keeps optimizer state for it and steps it: the parameters are split
greedily, largest first, onto the rank owning the fewest elements so far (the same split on every
rank, since it depends only on the shapes). After the local step each owner broadcasts its
parameters, so all ranks leave step() with the same model. `param_groups` is the full list the
caller built (a learning-rate scheduler sees and changes it); its hyperparameters are copied into
the local optimizer before each step. parameters_as_bucket_view is accepted and changes nothing
(the broadcasts are coalesced per owner and dtype anyway); overlap_with_ddp is not supported.
"""
import pyctorch as torch
from pyctorch.nn.parallel.distributed import _broadcast_coalesced
from pyctorch.optim.optimizer import Optimizer

from .. import distributed_c10d as c10d

__all__ = ["ZeroRedundancyOptimizer"]

_NOT_CONSOLIDATED = ("Optimizer state has not been consolidated on this rank. Please call "
                     "`consolidate_state_dict(to=...)` on all ranks beforehand if you meant to save the global state.")


class ZeroRedundancyOptimizer(Optimizer):
    def __init__(self, params, optimizer_class, process_group=None, parameters_as_bucket_view=False,
                 overlap_with_ddp=False, **defaults):
        if overlap_with_ddp:
            raise NotImplementedError("ZeroRedundancyOptimizer(overlap_with_ddp=True) is not supported by pyctorch "
                                      "yet")
        self._group = c10d._get_default_group() if process_group is None else process_group
        self.world_size = self._group.size()
        self.rank = self._group.rank()
        self.global_rank = c10d.get_global_rank(self._group, self.rank)
        self.parameters_as_bucket_view = parameters_as_bucket_view
        self._optim_constructor = optimizer_class
        self._optim_defaults = defaults
        self._all_state_dicts = []
        self._partitions = None
        self.optim = None
        super().__init__(params, defaults)  # (add_param_group builds the local optimizer)

    # -- the partition ---------------------------------------------------------------------------
    def _partition(self):
        """[rank][group index] -> that rank's parameters of the group."""
        if self._partitions is None:
            sizes = [0] * self.world_size
            parts = [[[] for _ in self.param_groups] for _ in range(self.world_size)]
            for g, group in enumerate(self.param_groups):
                for p in sorted(group["params"], key=lambda t: t.numel(), reverse=True):
                    r = sizes.index(min(sizes))
                    parts[r][g].append(p)
                    sizes[r] += p.numel()
            self._partitions = parts
        return self._partitions

    def _build_local_optimizer(self):
        mine = self._partition()[self.rank]
        groups = [{**{k: v for k, v in g.items() if k != "params"}, "params": ps}
                  for g, ps in zip(self.param_groups, mine)]
        old = self.optim
        self.optim = self._optim_constructor([g for g in groups if g["params"]], **self._optim_defaults) \
            if any(mine) else None
        if old is not None and self.optim is not None:
            for p, s in old.state.items():  # keep the state of parameters this rank still owns
                if any(p is q for g in self.optim.param_groups for q in g["params"]):
                    self.optim.state[p] = s

    def _local_groups(self):
        """(full group, local group) pairs."""
        mine = self._partition()[self.rank]
        local = iter(self.optim.param_groups) if self.optim is not None else iter(())
        return [(g, next(local)) for g, ps in zip(self.param_groups, mine) if ps]

    def add_param_group(self, param_group):
        super().add_param_group(param_group)
        self._partitions = None
        self._build_local_optimizer()

    # -- stepping --------------------------------------------------------------------------------
    def step(self, closure=None, **kwargs):
        for full, local in self._local_groups():
            local.update({k: v for k, v in full.items() if k != "params"})
        loss = None
        if self.optim is not None:
            loss = self.optim.step(closure=closure, **kwargs)
        elif closure is not None:
            with torch.enable_grad():
                loss = closure()
        self._broadcast_params()
        for full, local in self._local_groups():
            full.update({k: v for k, v in local.items() if k != "params"})
        return loss

    def _broadcast_params(self):
        """Each owner sends its parameters (one flat broadcast per owner and dtype, as DDP's initial
        broadcast)."""
        for r, groups in enumerate(self._partition()):
            owned = [p for ps in groups for p in ps]
            if owned:
                _broadcast_coalesced(self._group, owned, r)

    # -- state dicts -----------------------------------------------------------------------------
    def _global_index(self):
        index, out = 0, {}
        for g in self.param_groups:
            for p in g["params"]:
                out.setdefault(id(p), index)
                index += 1
        return out

    def _local_to_global(self, rank):
        """Local state-dict index (rank's local optimizer) -> global index."""
        glob = self._global_index()
        params = [p for ps in self._partition()[rank] for p in ps]
        return {i: glob[id(p)] for i, p in enumerate(params)}

    def consolidate_state_dict(self, to=0):
        """Collects every rank's optimizer state on rank `to` (a collective: call it on all ranks)."""
        local = self.optim.state_dict() if self.optim is not None else {"state": {}, "param_groups": []}
        gathered = [None] * self.world_size if self.rank == to else None
        c10d.gather_object(local, gathered, dst=c10d.get_global_rank(self._group, to), group=self._group)
        self._all_state_dicts = gathered if self.rank == to else []

    def state_dict(self):
        """The state dict a plain optimizer over all the parameters would give (after
        consolidate_state_dict on this rank)."""
        if not self._all_state_dicts:
            raise RuntimeError(_NOT_CONSOLIDATED)
        sd = Optimizer.state_dict(self)
        state = {}
        for rank, local in enumerate(self._all_state_dicts):
            to_global = self._local_to_global(rank)
            for i, s in local["state"].items():
                state[to_global[i]] = s
        sd["state"] = dict(sorted(state.items()))
        return sd

    def load_state_dict(self, state_dict):
        """Loads a state dict of the whole model (every rank keeps the state of its own parameters)."""
        Optimizer.load_state_dict(self, state_dict)
        mine = {id(p) for ps in self._partition()[self.rank] for p in ps}
        if self.optim is not None:
            for p, s in list(self.state.items()):
                if isinstance(p, torch.Tensor) and id(p) in mine:
                    self.optim.state[p] = s
        self.state.clear()
        for full, local in self._local_groups():
            local.update({k: v for k, v in full.items() if k != "params"})

    def __repr__(self):
        return f"ZeroRedundancyOptimizer(optim={self._optim_constructor.__name__}, world_size={self.world_size})"
