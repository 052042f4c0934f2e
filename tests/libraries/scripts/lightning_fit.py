"""Lightning: a LightningModule fitted for two epochs with validation and checkpointing, then reloaded from the
checkpoint (plain torch code; prints the losses and the reloaded model's output)."""
import os
import sys
import tempfile
import warnings

import torch
from torch.utils.data import DataLoader, TensorDataset

warnings.filterwarnings("ignore")
import lightning as L  # noqa: E402
from lightning.pytorch.callbacks import ModelCheckpoint  # noqa: E402


class Regressor(L.LightningModule):
    def __init__(self, width=16, lr=0.05):
        super().__init__()
        self.save_hyperparameters()
        self.net = torch.nn.Sequential(torch.nn.Linear(4, width), torch.nn.Tanh(), torch.nn.Linear(width, 1))
        self.losses = []

    def forward(self, x):
        return self.net(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = torch.nn.functional.mse_loss(self(x), y)
        self.losses.append(loss.item())
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", torch.nn.functional.mse_loss(self(x), y))

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=self.hparams.lr, momentum=0.9)


torch.manual_seed(0)
x = torch.randn(64, 4)
y = (x @ torch.tensor([[1.0], [-2.0], [0.5], [3.0]])).tanh()
train = DataLoader(TensorDataset(x[:48], y[:48]), batch_size=16, shuffle=True,
                   generator=torch.Generator().manual_seed(1))
val = DataLoader(TensorDataset(x[48:], y[48:]), batch_size=16)
model = Regressor()
with tempfile.TemporaryDirectory() as root:
    checkpoint = ModelCheckpoint(dirpath=root, monitor="val_loss", save_last=True)
    trainer = L.Trainer(max_epochs=2, accelerator="cpu", devices=1, logger=False, enable_progress_bar=False,
                        enable_model_summary=False, default_root_dir=root, callbacks=[checkpoint])
    trainer.fit(model, train, val)
    print("losses", " ".join(f"{v:.6f}" for v in model.losses))
    print(f"val_loss {trainer.callback_metrics['val_loss'].item():.6f}")
    print("files", sorted(os.listdir(root)))
    reloaded = Regressor.load_from_checkpoint(os.path.join(root, "last.ckpt"))
    reloaded.eval()
    with torch.no_grad():
        print("reloaded", " ".join(f"{v:.6f}" for v in reloaded(x[:4]).flatten().tolist()))
    print("hparams", dict(reloaded.hparams))
sys.stdout.flush()
