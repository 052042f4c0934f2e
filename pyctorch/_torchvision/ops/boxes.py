"""torchvision.ops' box operations on [N, 4] tensors, in plain torch ops (no compiled operators)."""
import torch


def box_area(boxes):
    """Areas of (x1, y1, x2, y2) boxes."""
    return (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])


def box_iou(boxes1, boxes2):
    """[N, M] intersection over union of two sets of (x1, y1, x2, y2) boxes."""
    area1, area2 = box_area(boxes1), box_area(boxes2)
    top_left = torch.max(boxes1[:, None, :2], boxes2[:, :2])
    bottom_right = torch.min(boxes1[:, None, 2:], boxes2[:, 2:])
    wh = (bottom_right - top_left).clamp(min=0)
    inter = wh[:, :, 0] * wh[:, :, 1]
    return inter / (area1[:, None] + area2 - inter)


def box_convert(boxes, in_fmt, out_fmt):
    """Between 'xyxy', 'xywh' and 'cxcywh'."""
    formats = ("xyxy", "xywh", "cxcywh")
    if in_fmt not in formats or out_fmt not in formats:
        raise ValueError("Unsupported Bounding Box Conversions for given in_fmt and out_fmt")
    if in_fmt == out_fmt:
        return boxes.clone()
    a, b, c, d = boxes.unbind(-1)
    if in_fmt == "xywh":
        a, b, c, d = a, b, a + c, b + d
    elif in_fmt == "cxcywh":
        a, b, c, d = a - 0.5 * c, b - 0.5 * d, a + 0.5 * c, b + 0.5 * d
    if out_fmt == "xywh":
        return torch.stack((a, b, c - a, d - b), dim=-1)
    if out_fmt == "cxcywh":
        return torch.stack(((a + c) / 2, (b + d) / 2, c - a, d - b), dim=-1)
    return torch.stack((a, b, c, d), dim=-1)


def nms(boxes, scores, iou_threshold):
    """Indices of the boxes kept by greedy non-maximum suppression, by decreasing score."""
    order = torch.argsort(scores, descending=True, stable=True)
    iou = box_iou(boxes[order], boxes[order]) > iou_threshold
    suppressed = torch.zeros(order.numel(), dtype=torch.bool)
    keep = []
    for i in range(order.numel()):
        if not bool(suppressed[i]):
            keep.append(i)
            suppressed |= iou[i]
    return order[torch.tensor(keep, dtype=torch.long)]


def batched_nms(boxes, scores, idxs, iou_threshold):
    """nms within each category of `idxs`: boxes of different categories never suppress each other."""
    if boxes.numel() == 0:
        return torch.empty((0,), dtype=torch.int64, device=boxes.device)
    offsets = idxs.to(boxes) * (boxes.max() + 1)
    return nms(boxes + offsets[:, None], scores, iou_threshold)
