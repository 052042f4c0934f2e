"""torch.jit.save / load / export_opnames: they read and write TorchScript programs, which pyctorch cannot
build or run (Note [Eager TorchScript]); each raises a RuntimeError that says what to use instead."""

_ADVICE = ("save the weights with torch.save(model.state_dict(), path) and rebuild the model in Python "
           "before model.load_state_dict(torch.load(path)), or save the whole module with torch.save(model, path)")


def save(m, f, _extra_files=None):
    raise RuntimeError("torch.jit.save: TorchScript serialization is not available in pyctorch (it has no "
                       f"TorchScript compiler); {_ADVICE}")


def load(f, map_location=None, _extra_files=None, _restore_shapes=False):
    raise RuntimeError("torch.jit.load: TorchScript serialization is not available in pyctorch, so TorchScript "
                       f"archives cannot be loaded; {_ADVICE}")


def save_jit_module_to_flatbuffer(m, f, _extra_files=None):
    raise RuntimeError("torch.jit.save_jit_module_to_flatbuffer: TorchScript serialization is not available in "
                       f"pyctorch; {_ADVICE}")


def jit_module_from_flatbuffer(f):
    raise RuntimeError("torch.jit.jit_module_from_flatbuffer: TorchScript serialization is not available in "
                       f"pyctorch; {_ADVICE}")


def export_opnames(m):
    raise RuntimeError("torch.jit.export_opnames: pyctorch has no TorchScript graph, so there is no operator "
                       "list to export")
