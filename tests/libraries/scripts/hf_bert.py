"""transformers BERT sequence classification: forward + backward on a fixed batch (plain torch code)."""
import torch
from transformers import BertConfig, BertForSequenceClassification

torch.manual_seed(0)
config = BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                    intermediate_size=64, max_position_embeddings=64, num_labels=3)
model = BertForSequenceClassification(config)
model.train()
g = torch.Generator().manual_seed(1)
ids = torch.randint(0, 100, (2, 12), generator=g)
mask = torch.ones(2, 12, dtype=torch.long)
mask[1, 9:] = 0
labels = torch.tensor([0, 2])
out = model(input_ids=ids, attention_mask=mask, labels=labels)
out.loss.backward()
print(f"loss {out.loss.item():.6f}")
print("logits", " ".join(f"{v:.6f}" for v in out.logits.flatten().tolist()))
gn = torch.sqrt(sum((p.grad.double() ** 2).sum() for p in model.parameters() if p.grad is not None))
print(f"grad_norm {gn.item():.6f}")
