"""torch.fx.experimental: the symbolic-shapes errors torch.export raises."""
