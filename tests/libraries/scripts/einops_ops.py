"""einops on torch tensors: rearrange/reduce/repeat/einsum/pack/unpack and its torch layers, with gradients."""
import torch
from einops import rearrange, reduce, repeat, einsum, pack, unpack
from einops.layers.torch import Rearrange, Reduce
torch.manual_seed(0)
x = torch.randn(2, 3, 4, 6, requires_grad=True)
a = rearrange(x, "b c h (w p) -> b (h w) (p c)", p=2)
b = reduce(x, "b c h w -> b c", "mean")
c = repeat(b, "b c -> b c k", k=3)
d = einsum(x, x, "b c h w, b c h w -> b c")
p, ps = pack([x, x], "b * w")
u = unpack(p, ps, "b * w")[1]
m = torch.nn.Sequential(Rearrange("b c h w -> b (c h w)"), torch.nn.Linear(72, 5), Reduce("b n -> n", "max"))
loss = a.pow(2).sum() + b.sum() + c.sum() + d.sum() + u.sum() + m(x).sum()
loss.backward()
print(f"loss {loss.item():.6f} grad {x.grad.norm().item():.6f} shapes {tuple(a.shape)} {tuple(p.shape)}")
