"""The safetensors package's own torch API on the framework: save_file/load_file, save/load of bytes, safe_open,
and save_model/load_model of a model whose two modules share a weight (the package drops the duplicate and the
loader restores the tie)."""
import os
import shutil
import tempfile

import torch
from safetensors import safe_open
from safetensors.torch import load, load_file, load_model, save, save_file, save_model

torch.manual_seed(0)
tensors = {"a": torch.randn(3, 4), "b": torch.arange(10, dtype=torch.int64), "c": torch.randn(2, 2).to(torch.bfloat16),
           "d": torch.tensor([True, False])}
folder = tempfile.mkdtemp()
try:
    path = os.path.join(folder, "t.safetensors")
    save_file(tensors, path, metadata={"note": "pyctorch"})
    back = load_file(path)
    print("load_file", sorted(back), [str(back[k].dtype) for k in sorted(back)],
          all(torch.equal(back[k], tensors[k]) for k in tensors))
    with safe_open(path, framework="pt") as f:
        print("safe_open", f.metadata(), sorted(f.keys()), f.get_slice("a")[1:, :2].sum().item())
    blob = save({"x": torch.linspace(0, 1, 5)})
    print("bytes", len(blob), load(blob)["x"].tolist())

    class Tied(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = torch.nn.Embedding(6, 4)
            self.head = torch.nn.Linear(4, 6, bias=False)
            self.head.weight = self.emb.weight

    model = Tied()
    mpath = os.path.join(folder, "m.safetensors")
    save_model(model, mpath)
    with safe_open(mpath, framework="pt") as f:
        print("saved keys", sorted(f.keys()))
    fresh = Tied()
    missing, unexpected = load_model(fresh, mpath)
    print("load_model", sorted(missing), sorted(unexpected), torch.equal(fresh.head.weight, model.emb.weight),
          fresh.head.weight is fresh.emb.weight, f"{fresh.emb.weight.sum().item():.6f}")
finally:
    shutil.rmtree(folder)
