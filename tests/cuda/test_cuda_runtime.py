"""Streams, events and the caching allocator as torch.cuda exposes them."""
import pytest

import pyctorch as torch


def test_streams_and_events():
    s = torch.cuda.Stream()
    assert s != torch.cuda.default_stream() and torch.cuda.current_stream() == torch.cuda.default_stream()
    with torch.cuda.stream(s):
        assert torch.cuda.current_stream() == s
        y = torch.ones(1000, device="cuda") * 2
    assert torch.cuda.current_stream() == torch.cuda.default_stream()
    torch.cuda.current_stream().wait_stream(s)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    z = y + 1
    end.record()
    end.synchronize()
    assert end.query() and start.elapsed_time(end) >= 0
    assert z.sum().item() == 3000.0
    s.synchronize()
    assert s.query()
    y.record_stream(s)
    torch.cuda.synchronize()


def test_memory_statistics():
    torch.cuda.empty_cache()
    base = torch.cuda.memory_allocated()
    x = torch.empty(1024, 1024, device="cuda")  # 4 MiB: the large pool
    assert torch.cuda.memory_allocated() == base + 4 * 1024 * 1024
    assert torch.cuda.memory_reserved() >= torch.cuda.memory_allocated()
    assert torch.cuda.max_memory_allocated() >= torch.cuda.memory_allocated()
    stats = torch.cuda.memory_stats()
    assert stats["allocated_bytes.large_pool.current"] >= 4 * 1024 * 1024 and "num_alloc_retries" in stats
    del x
    assert torch.cuda.memory_allocated() == base
    torch.cuda.reset_peak_memory_stats()
    assert torch.cuda.max_memory_allocated() == base
    assert "PyTorch CUDA memory summary, device ID 0" in torch.cuda.memory_summary()
    torch.cuda.empty_cache()


def test_a_steady_training_loop_allocates_no_device_memory_after_its_first_step():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4)).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x, y = torch.randn(16, 32, device="cuda"), torch.randint(0, 4, (16,), device="cuda")
    counts = []
    for _ in range(4):
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
        counts.append(torch.cuda.memory_stats()["num_device_alloc"])
    assert counts[1] == counts[2] == counts[3], counts


def test_out_of_memory_raises_torchs_error():
    torch.cuda.empty_cache()
    total = torch.cuda.get_device_properties(0).total_memory
    with pytest.raises(torch.cuda.OutOfMemoryError, match=r"CUDA out of memory. Tried to allocate"):
        torch.empty(2 * total, dtype=torch.uint8, device="cuda")
    assert isinstance(torch.cuda.OutOfMemoryError("x"), RuntimeError)
    torch.ones(10, device="cuda")  # the process stays usable
