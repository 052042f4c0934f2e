"""torch.distributed.tensor._utils: the helpers libraries import (they need a DeviceMesh, which pyctorch
does not have yet)."""


def compute_local_shape_and_global_offset(global_shape, mesh, placements, *args, **kwargs):
    raise NotImplementedError("pyctorch does not implement torch.distributed.tensor._utils."
                              "compute_local_shape_and_global_offset yet (no DeviceMesh)")
