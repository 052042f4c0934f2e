"""transformers' Trainer (a few steps of a tiny GPT-2 on a tiny dataset), save_pretrained / from_pretrained from a
local folder (safetensors, the tied embedding kept), a model built on the meta device, and low_cpu_mem_usage
loading."""
import contextlib
import io
import os
import shutil
import tempfile

import torch
import transformers
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments

transformers.logging.set_verbosity_error()
torch.manual_seed(0)
cfg = GPT2Config(vocab_size=64, n_embd=32, n_layer=2, n_head=4, n_positions=32)
model = GPT2LMHeadModel(cfg)


class Tokens(torch.utils.data.Dataset):
    def __init__(self):
        self.x = torch.randint(0, 64, (16, 12), generator=torch.Generator().manual_seed(1))

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return {"input_ids": self.x[i], "labels": self.x[i]}


out = tempfile.mkdtemp()
try:
    args = TrainingArguments(output_dir=out, per_device_train_batch_size=4, num_train_epochs=1, learning_rate=1e-3,
                             logging_steps=1, report_to=[], save_strategy="no", seed=0, use_cpu=True,
                             disable_tqdm=True, dataloader_num_workers=0)
    trainer = Trainer(model=model, args=args, train_dataset=Tokens())
    with contextlib.redirect_stdout(io.StringIO()):  # the Trainer's own log lines (with timings)
        trainer.train()
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    print("trainer steps", len(losses), "losses", " ".join(f"{v:.6f}" for v in losses))
    folder = os.path.join(out, "saved")
    model.save_pretrained(folder)
    print("files", " ".join(sorted(f for f in os.listdir(folder) if not f.startswith("."))))
    reloaded = GPT2LMHeadModel.from_pretrained(folder).eval()
    print("tied", reloaded.lm_head.weight.data_ptr() == reloaded.transformer.wte.weight.data_ptr())
    ids = torch.tensor([[1, 2, 3, 4, 5]])
    with torch.no_grad():
        trained = model.eval()(ids, labels=ids).loss.item()
        print("eval loss", f"{trained:.6f}", "reloaded equal", torch.equal(model(ids).logits, reloaded(ids).logits))
        with torch.device("meta"):
            empty = GPT2LMHeadModel(cfg)
        print("meta", empty.lm_head.weight.device.type, empty.lm_head.weight.shape[0])
        lean = GPT2LMHeadModel.from_pretrained(folder, low_cpu_mem_usage=True).eval()
        print("low_cpu_mem_usage equal", torch.equal(lean(ids).logits, reloaded(ids).logits))
finally:
    shutil.rmtree(out)
