"""transformers Llama causal LM: forward + backward on a fixed batch (plain torch code)."""
import torch
from transformers import LlamaConfig, LlamaForCausalLM

torch.manual_seed(0)
config = LlamaConfig(vocab_size=100, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                     num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)
model = LlamaForCausalLM(config)
model.train()
g = torch.Generator().manual_seed(1)
ids = torch.randint(0, 100, (2, 16), generator=g)
out = model(input_ids=ids, labels=ids)
out.loss.backward()
print(f"loss {out.loss.item():.6f}")
gn = torch.sqrt(sum((p.grad.double() ** 2).sum() for p in model.parameters() if p.grad is not None))
print(f"grad_norm {gn.item():.6f}")
print("grad0", " ".join(f"{v:.6f}" for v in model.model.layers[0].self_attn.q_proj.weight.grad.flatten()[:6].tolist()))
