"""torch.distributed.device_mesh: DeviceMesh's names without DeviceMesh itself yet.

The class exists for isinstance checks and annotations (libraries import it whenever
torch.distributed is available); making a mesh raises NotImplementedError.
"""
__all__ = ["DeviceMesh", "init_device_mesh"]


def _missing(name):
    return NotImplementedError(f"pyctorch does not implement torch.distributed.device_mesh.{name} yet")


class DeviceMesh:
    """An n-dimensional arrangement of ranks; pyctorch cannot make one yet."""

    def __init__(self, *args, **kwargs):
        raise _missing("DeviceMesh")


def init_device_mesh(device_type, mesh_shape, *, mesh_dim_names=None, backend_override=None):
    raise _missing("init_device_mesh")
