"""transformers GPT-2: 5 AdamW steps on fixed token batches, then greedy generate (plain torch code)."""
import torch
from transformers import GPT2Config, GPT2LMHeadModel

torch.manual_seed(0)
config = GPT2Config(n_layer=2, n_head=2, n_embd=32, vocab_size=100, n_positions=64)
model = GPT2LMHeadModel(config)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
g = torch.Generator().manual_seed(1)
model.train()
for step in range(5):
    ids = torch.randint(0, 100, (2, 16), generator=g)
    out = model(input_ids=ids, labels=ids)
    opt.zero_grad()
    out.loss.backward()
    opt.step()
    print(f"step {step} loss {out.loss.item():.6f}")
model.eval()
prompt = torch.randint(0, 100, (1, 5), generator=g)
with torch.no_grad():
    gen = model.generate(prompt, max_new_tokens=8, do_sample=False)
print("tokens", " ".join(str(t) for t in gen[0].tolist()))
