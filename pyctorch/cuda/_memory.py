"""torch.cuda.memory_summary: the caching allocator's statistics as torch's table."""

def _format_size(n):
    """Bytes in a 10-character column: the largest unit (B, KiB, ... PiB) that leaves at least 768 of the one below."""
    units = ["B  ", "KiB", "MiB", "GiB", "TiB", "PiB"]
    k = 0
    while k + 1 < len(units) and abs(n) >= 768 * 1024:
        n //= 1024
        k += 1
    return f"{n:6d} {units[k]}"


def _format_count(n):
    """A count in the same column: units of a thousand (K, M, B) above 750 thousand."""
    units = [" ", "K", "M", "B"]
    k = 0
    while k + 1 < len(units) and abs(n) >= 750 * 1000:
        n //= 1000
        k += 1
    return f"{n:8d} {units[k]}"


_METRICS = [
    ("allocated_bytes", "Allocated memory", _format_size),
    ("active_bytes", "Active memory", _format_size),
    ("requested_bytes", "Requested memory", _format_size),
    ("reserved_bytes", "GPU reserved memory", _format_size),
    ("inactive_split_bytes", "Non-releasable memory", _format_size),
    ("allocation", "Allocations", _format_count),
    ("active", "Active allocs", _format_count),
    ("segment", "GPU reserved segments", _format_count),
    ("inactive_split", "Non-releasable allocs", _format_count),
]


def memory_summary(device=None, abbreviated=False):
    """A table of the caching allocator's statistics for a device, laid out as torch's."""
    from . import _index_or_current, memory_stats
    stats = memory_stats(device)
    index = _index_or_current(device) if stats else 0
    rule, thick = "|" + "-" * 75 + "|", "|" + "=" * 75 + "|"
    lines = [thick, "| {:^73s} |".format(f"PyTorch CUDA memory summary, device ID {index}"), rule,
             "| {:^34s} | {:^36s} |".format(f"CUDA OOMs: {stats.get('num_ooms', 0)}",
                                              f"cudaMalloc retries: {stats.get('num_alloc_retries', 0)}"),
             thick, "|        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  |"]
    pools = [("all", "")] if abbreviated else [("all", ""), ("large_pool", "      from large pool"),
                                               ("small_pool", "      from small pool")]
    for key, title, fmt in _METRICS:
        lines.append(rule)
        for pool, label in pools:
            values = [stats.get(f"{key}.{pool}.{field}", 0) for field in ("current", "peak", "allocated", "freed")]
            lines.append("| {:<21s} | {} | {} | {} | {} |".format(label or title, *(fmt(v) for v in values)))
    lines.append(rule)
    lines.append("| {:<21s} | {} | {} | {} | {} |".format(
        "Oversize allocations", *(_format_count(stats.get(f"oversize_allocations.{f}", 0))
                                  for f in ("current", "peak", "allocated", "freed"))))
    lines.append("| {:<21s} | {} | {} | {} | {} |".format(
        "Oversize GPU segments", *(_format_count(stats.get(f"oversize_segments.{f}", 0))
                                   for f in ("current", "peak", "allocated", "freed"))))
    lines.append(thick)
    return "\n".join(lines) + "\n"
