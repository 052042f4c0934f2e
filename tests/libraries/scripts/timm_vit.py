"""timm ViT (vit_tiny_patch16_224 shrunk to 32x32 images, patch 8, 2 blocks, random init): forward, backward and
3 SGD steps, in float64 (as timm_resnet18.py), plus a torchvision transform pipeline feeding the batch."""
import torch
import timm
from torchvision import transforms

torch.manual_seed(0)
model = timm.create_model("vit_tiny_patch16_224", pretrained=False, num_classes=10, img_size=32, patch_size=8,
                          depth=2).double()
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
augment = transforms.Compose([transforms.RandomResizedCrop(32, scale=(0.5, 1.0), antialias=False),
                              transforms.RandomHorizontalFlip(),
                              transforms.Normalize((0.5, 0.5, 0.5), (0.25, 0.25, 0.25))])
g = torch.Generator().manual_seed(1)
images = torch.rand(2, 3, 40, 40, generator=g).double()
y = torch.tensor([3, 8])
for step in range(3):
    x = torch.stack([augment(img) for img in images])
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.10f}")
