"""accelerate: Accelerator().prepare on a model, optimizer, scheduler and DataLoader, a few steps with
accelerator.backward, save_state / load_state (plain torch code; prints the losses and what was saved)."""
import os
import sys
import tempfile
import warnings

import torch
from torch.utils.data import DataLoader, TensorDataset

warnings.filterwarnings("ignore")
from accelerate import Accelerator  # noqa: E402
from accelerate.utils import set_seed  # noqa: E402

set_seed(0)
x = torch.randn(48, 6)
y = (x.sum(1, keepdim=True) > 0).float()
model = torch.nn.Sequential(torch.nn.Linear(6, 12), torch.nn.GELU(), torch.nn.Linear(12, 1))
optimizer = torch.optim.AdamW(model.parameters(), lr=0.01)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
loader = DataLoader(TensorDataset(x, y), batch_size=12, shuffle=True)
accelerator = Accelerator(cpu=True)
model, optimizer, loader, scheduler = accelerator.prepare(model, optimizer, loader, scheduler)
losses = []
for xb, yb in loader:
    loss = torch.nn.functional.binary_cross_entropy_with_logits(model(xb), yb)
    accelerator.backward(loss)
    optimizer.step()
    scheduler.step()
    optimizer.zero_grad()
    losses.append(loss.item())
print("losses", " ".join(f"{v:.6f}" for v in losses))
print("lr", scheduler.get_last_lr())
print("weights", " ".join(f"{p.double().sum().item():.6f}" for p in model.parameters()))
with tempfile.TemporaryDirectory() as root:
    accelerator.save_state(root)
    print("files", sorted(os.listdir(root)))
    before = [p.detach().clone() for p in model.parameters()]
    with torch.no_grad():
        for p in model.parameters():
            p.add_(1.0)
    accelerator.load_state(root)
    print("restored", all(torch.equal(a, b) for a, b in zip(before, model.parameters())))
    saved = [f for f in os.listdir(root) if f.startswith("model")][0]
    print("saved model file", saved)
    if os.environ.get("KEEP_ACCELERATE_STATE"):
        import shutil
        shutil.copytree(root, os.environ["KEEP_ACCELERATE_STATE"], dirs_exist_ok=True)
sys.stdout.flush()
