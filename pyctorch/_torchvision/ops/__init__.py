"""torchvision.ops (pyctorch's subset): FrozenBatchNorm2d and the box operations, in plain torch ops."""
from .boxes import batched_nms, box_area, box_convert, box_iou, nms
from .misc import FrozenBatchNorm2d

__all__ = ["FrozenBatchNorm2d", "batched_nms", "box_area", "box_convert", "box_iou", "nms"]
