"""torch.autograd.Function with save_for_backward, needs_input_grad and a non-tensor argument."""
import torch


class ScaledSoftplus(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input, beta):
        ctx.save_for_backward(input)
        ctx.beta = beta
        return torch.log1p(torch.exp(beta * input)) / beta

    @staticmethod
    def backward(ctx, grad_output):
        (input,) = ctx.saved_tensors
        grad = grad_output * torch.sigmoid(ctx.beta * input) if ctx.needs_input_grad[0] else None
        return grad, None


torch.manual_seed(0)
w = torch.randn(4, 3, requires_grad=True)
x = torch.randn(16, 4)
target = torch.randn(16, 3)
for step in range(40):
    out = ScaledSoftplus.apply(x @ w, 2.0)
    loss = ((out - target) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= 0.1 * w.grad
        w.grad = None
    if step % 10 == 0:
        print("loss", step, f"{loss.item():.8f}")
check = torch.randn(3, dtype=torch.float64, requires_grad=True)
print("gradcheck", torch.autograd.gradcheck(lambda t: ScaledSoftplus.apply(t, 1.5), (check,)))
print("w", [round(v, 6) for v in w.flatten().tolist()])
