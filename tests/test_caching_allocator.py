"""The device-neutral caching allocator (Note [Caching allocator] in csrc/aten/caching_allocator.h) over a simulated
device (csrc/aten/caching_sim.h), through _C._CachingAllocatorSim.

torch here is a CPU build with no CUDA allocator to compare with, so the specification is torch's
c10/cuda/CUDACachingAllocator.cpp: its constants (kMinBlockSize 512, kSmallSize 1 MiB, kSmallBuffer 2 MiB,
kLargeBuffer 20 MiB, kMinLargeAlloc 10 MiB, kRoundLarge 2 MiB), its rules and its out-of-memory message. The simulator
fills every block with a pattern of its own and checks it at free and at close, so overlapping live blocks fail the
test that made them (and AddressSanitizer sees blocks handed out of segments given back)."""
import ctypes
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pyctorch as P

Sim = P._C._CachingAllocatorSim
KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30

OOM_RE = re.compile(
    r"CUDA out of memory\. Tried to allocate (?P<tried>\S+ \S+)\. GPU 0 has a total capacity of (?P<total>\S+ \S+) "
    r"of which (?P<free>\S+ \S+) is free\. (?:(?P<allowed>\S+ \S+) allowed; )?Of the allocated memory "
    r"(?P<allocated>\S+ \S+) is allocated by PyTorch, and (?P<unallocated>\S+ \S+) is reserved by PyTorch but "
    r"unallocated\. If reserved but unallocated memory is large try setting "
    r"PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation\.  See documentation for Memory "
    r"Management  \(https://pytorch\.org/docs/stable/notes/cuda\.html#environment-variables\)$")


def rounded(n):
    """torch's round_size without roundup_power2_divisions: a multiple of 512, at least 512."""
    return max(512, -(-n // 512) * 512)


def segment_for(n):
    """torch's get_allocation_size of a rounded request."""
    size = rounded(n)
    if size <= MiB:
        return 2 * MiB
    if size < 10 * MiB:
        return 20 * MiB
    return -(-size // (2 * MiB)) * (2 * MiB)


def handed_out_of_new_segment(n):
    """The block a request gets from a fresh segment: its rounded size, or the whole segment when the rest is not
    worth a block (torch's should_split: under 512 bytes in the small pool, 1 MiB or less in the large one)."""
    size, segment = rounded(n), segment_for(n)
    rest = segment - size
    return size if (rest >= 512 if size <= MiB else rest > MiB) else segment


def format_size(n):
    """torch's format_size: a unit serves up to and including 1024 of the previous one."""
    if n <= 1024:
        return f"{n} bytes"
    if n <= MiB:
        return f"{n / KiB:.2f} KiB"
    if n <= GiB:
        return f"{n / MiB:.2f} MiB"
    return f"{n / GiB:.2f} GiB"


@pytest.fixture
def sim():
    s = Sim(256 * MiB)
    yield s
    s.close()


def stat(s, key):
    return s.stats()[key]


# ---- sizes and pools ----

@pytest.mark.parametrize("n, size", [(1, 512), (511, 512), (512, 512), (513, 1024), (1000, 1024), (MiB + 1, MiB + 512)])
def test_sizes_round_up_to_512(sim, n, size):
    before = stat(sim, "allocated_bytes.all.current")
    p = sim.alloc(n)
    st_ = sim.stats()
    assert st_["allocated_bytes.all.current"] - before == size
    assert st_["requested_bytes.all.current"] == n
    assert p % 512 == 0
    sim.free(p)
    assert stat(sim, "allocated_bytes.all.current") == before


def test_zero_bytes_give_no_memory(sim):
    assert sim.alloc(0) == 0
    sim.free(0)
    st_ = sim.stats()
    assert st_["allocation.all.allocated"] == 0 and st_["reserved_bytes.all.current"] == 0
    assert sim.raw_calls() == (0, 0)


@pytest.mark.parametrize("n, pool, segment", [
    (1, "small_pool", 2 * MiB),              # kSmallBuffer
    (MiB, "small_pool", 2 * MiB),            # kSmallSize is still small
    (MiB + 1, "large_pool", 20 * MiB),       # kLargeBuffer below kMinLargeAlloc
    (5 * MiB, "large_pool", 20 * MiB),
    (10 * MiB - 512, "large_pool", 20 * MiB),
    (10 * MiB, "large_pool", 10 * MiB),      # from kMinLargeAlloc on: rounded up to kRoundLarge
    (11 * MiB, "large_pool", 12 * MiB),      # the 1 MiB rest is not split off: the block is the whole segment
    (11 * MiB + 1, "large_pool", 12 * MiB),
    (13 * MiB - 1, "large_pool", 14 * MiB),
])
def test_segment_sizes_and_pools(sim, n, pool, segment):
    p = sim.alloc(n)
    st_ = sim.stats()
    other = "large_pool" if pool == "small_pool" else "small_pool"
    assert st_["reserved_bytes.all.current"] == segment == segment_for(n)
    assert st_[f"reserved_bytes.{pool}.current"] == segment and st_[f"reserved_bytes.{other}.current"] == 0
    assert st_[f"segment.{pool}.current"] == 1 and st_[f"segment.{other}.current"] == 0
    assert st_[f"allocated_bytes.{pool}.current"] == handed_out_of_new_segment(n)
    assert st_[f"requested_bytes.{pool}.current"] == n
    assert st_[f"allocation.{pool}.current"] == 1
    assert sim.raw_calls() == (1, 0) and st_["num_device_alloc"] == 1
    sim.free(p)


def test_small_and_large_pool_stats_add_up(sim):
    ptrs = [sim.alloc(n) for n in (100, 2000, 700 * KiB, 3 * MiB, 12 * MiB)]
    st_ = sim.stats()
    for key in ("allocation", "segment", "active", "allocated_bytes", "reserved_bytes", "active_bytes",
                "requested_bytes", "inactive_split", "inactive_split_bytes"):
        for part in ("current", "allocated", "freed"):  # not the peaks: the pools peak at different times
            assert st_[f"{key}.all.{part}"] == st_[f"{key}.small_pool.{part}"] + st_[f"{key}.large_pool.{part}"]
        assert st_[f"{key}.all.peak"] <= st_[f"{key}.small_pool.peak"] + st_[f"{key}.large_pool.peak"]
    assert st_["allocation.small_pool.current"] == 3 and st_["allocation.large_pool.current"] == 2
    assert st_["allocated_bytes.small_pool.current"] == 512 + 2048 + 700 * KiB
    assert st_["allocated_bytes.large_pool.current"] == 3 * MiB + 12 * MiB
    assert st_["reserved_bytes.small_pool.current"] == 2 * MiB
    assert st_["reserved_bytes.large_pool.current"] == 20 * MiB  # 12 MiB fit in the rest of the 3 MiB's segment
    assert ptrs[4] == ptrs[3] + 3 * MiB and st_["inactive_split_bytes.large_pool.current"] == 5 * MiB
    assert st_["requested_bytes.all.current"] == 100 + 2000 + 700 * KiB + 15 * MiB
    for p in ptrs:
        sim.free(p)


def test_stat_names_are_torchs(sim):
    keys = set(sim.stats())
    for key in ("allocation", "segment", "active", "inactive_split", "allocated_bytes", "reserved_bytes",
                "active_bytes", "inactive_split_bytes", "requested_bytes"):
        for pool in ("all", "small_pool", "large_pool"):
            for part in ("current", "peak", "allocated", "freed"):
                keys.remove(f"{key}.{pool}.{part}")
    for key in ("oversize_allocations", "oversize_segments"):
        for part in ("current", "peak", "allocated", "freed"):
            keys.remove(f"{key}.{part}")
    assert keys == {"num_alloc_retries", "num_ooms", "num_sync_all_streams", "num_device_alloc", "num_device_free",
                    "max_split_size"}
    assert sim.stats()["max_split_size"] == -1  # torch reports SIZE_MAX so


# ---- reuse, splitting, merging ----

def test_steady_loop_stops_asking_the_device(sim):
    sizes = [1000, 300 * KiB, 3 * MiB, 15 * MiB, 40]
    for i in range(100):
        ptrs = [sim.alloc(n) for n in sizes]
        for p in reversed(ptrs):
            sim.free(p)
        if i == 0:
            first = sim.raw_calls()
    assert sim.raw_calls() == first and first[1] == 0
    st_ = sim.stats()
    assert st_["num_device_alloc"] == first[0] and st_["allocation.all.allocated"] == 100 * len(sizes)
    assert st_["allocation.all.current"] == 0 and st_["active.all.current"] == 0


def test_a_split_block_and_its_merge_in_the_large_pool(sim):
    x = sim.alloc(8 * MiB)                # a 20 MiB segment: 8 handed out, 12 left
    st_ = sim.stats()
    assert st_["inactive_split.large_pool.current"] == 1 and st_["inactive_split_bytes.all.current"] == 12 * MiB
    y = sim.alloc(8 * MiB)                # the 12 MiB rest splits again: 8 + 4
    assert y == x + 8 * MiB and sim.raw_calls() == (1, 0)
    assert stat(sim, "inactive_split_bytes.all.current") == 4 * MiB
    sim.free(x)                            # a free block of a split segment
    st_ = sim.stats()
    assert st_["inactive_split.all.current"] == 2 and st_["inactive_split_bytes.all.current"] == 12 * MiB
    sim.free(y)                            # merges with both neighbours: the segment is whole again
    st_ = sim.stats()
    assert st_["inactive_split.all.current"] == 0 and st_["inactive_split_bytes.all.current"] == 0
    z = sim.alloc(18 * MiB)               # fits the merged 20 MiB block only
    assert z == x and sim.raw_calls() == (1, 0)
    sim.free(z)


def test_two_halves_merge_into_a_block_for_the_whole_in_the_small_pool(sim):
    a = sim.alloc(MiB)
    b = sim.alloc(MiB)                    # the other half of the 2 MiB segment, no split left over
    assert b == a + MiB and stat(sim, "inactive_split.all.current") == 0
    sim.free(b)
    sim.free(a)
    c = sim.alloc(700 * KiB)              # best fit is the merged block, at the segment's start
    assert c == a and sim.raw_calls() == (1, 0)
    sim.free(c)


def test_small_remainders_are_split_large_ones_only_above_1_mib(sim):
    a = sim.alloc(2 * MiB - 512)          # large pool, 20 MiB segment: a big rest is split off
    assert stat(sim, "inactive_split.large_pool.current") == 1
    sim.free(a)
    b = sim.alloc(19 * MiB + 512)         # the whole 20 MiB block: the rest (512 KiB) is not > 1 MiB, no split
    st_ = sim.stats()
    assert b == a and st_["allocated_bytes.large_pool.current"] == 20 * MiB
    assert st_["requested_bytes.large_pool.current"] == 19 * MiB + 512 and st_["inactive_split.all.current"] == 0
    sim.free(b)
    c = sim.alloc(2 * MiB - 512)          # small pool? no: 2 MiB - 512 > kSmallSize
    d = sim.alloc(MiB - 512)              # small pool: the 2 MiB segment splits down to 512 bytes
    e = sim.alloc(MiB)
    assert e == d + MiB - 512 and stat(sim, "inactive_split_bytes.small_pool.current") == 512
    f = sim.alloc(512)                    # the last 512 bytes, exactly
    assert f == e + MiB and stat(sim, "inactive_split.small_pool.current") == 0
    for p in (c, d, e, f):
        sim.free(p)


def test_best_fit_takes_the_smallest_block_that_fits(sim):
    blocks = [sim.alloc(n) for n in (4 * KiB, 512, 64 * KiB, 512, 16 * KiB, 512)]
    for p in blocks[0::2]:                 # free 4, 64 and 16 KiB, separated by live blocks
        sim.free(p)
    assert sim.alloc(10 * KiB) == blocks[4]
    assert sim.alloc(3 * KiB) == blocks[0]


# ---- streams ----

def test_a_block_freed_on_one_stream_is_not_reused_on_another(sim):
    a = sim.alloc(1000, stream=1)
    sim.free(a)
    b = sim.alloc(1000, stream=2)
    assert b != a and sim.raw_calls() == (2, 0)
    c = sim.alloc(1000, stream=1)
    assert c == a and sim.raw_calls() == (2, 0)
    for p in (b, c):
        sim.free(p)


def test_record_stream_defers_reuse_until_the_stream_completes(sim):
    a = sim.alloc(1000)
    sim.record_stream(a, 5)
    sim.free(a)
    st_ = sim.stats()
    assert st_["allocation.all.current"] == 0 and st_["allocated_bytes.all.current"] == 0
    assert st_["active.all.current"] == 1 and st_["active_bytes.all.current"] == 1024  # awaiting its event
    b = sim.alloc(1000)
    assert b != a
    sim.free(b)
    sim.complete(4)                        # another stream: still waiting
    c = sim.alloc(1000)
    assert c not in (a, None) and stat(sim, "active.all.current") == 2
    sim.free(c)
    sim.complete(5)
    d = sim.alloc(1000)                    # the event completed: a is free again, merged back into its segment
    assert d == a and stat(sim, "active.all.current") == 1 and sim.raw_calls() == (1, 0)
    sim.free(d)
    assert stat(sim, "active.all.current") == 0


def test_record_stream_waits_for_every_stream_used(sim):
    a = sim.alloc(3 * MiB)
    for s in (7, 8, 8, 0):                 # 0 is its own stream, 8 twice: two events
        sim.record_stream(a, s)
    sim.free(a)
    sim.complete(7)
    assert sim.alloc(3 * MiB) != a
    sim.complete(8)
    assert sim.alloc(3 * MiB) == a


def test_record_stream_on_the_own_stream_needs_nothing(sim):
    a = sim.alloc(1000, stream=3)
    sim.record_stream(a, 3)
    sim.free(a)
    assert sim.alloc(1000, stream=3) == a


def test_empty_cache_synchronizes_pending_events(sim):
    a = sim.alloc(5 * MiB)
    sim.record_stream(a, 9)
    sim.free(a)
    before = stat(sim, "num_sync_all_streams")
    sim.empty_cache()
    st_ = sim.stats()
    assert st_["num_sync_all_streams"] == before + 1
    assert st_["reserved_bytes.all.current"] == 0 and st_["active.all.current"] == 0
    assert sim.raw_calls() == (1, 1)


def test_unknown_pointers_raise(sim):
    a = sim.alloc(100)
    sim.free(a)
    with pytest.raises(RuntimeError, match=r"^invalid device pointer: 0x"):
        sim.free(a)
    with pytest.raises(RuntimeError, match="invalid device pointer"):
        sim.record_stream(a + 512, 1)
    sim.record_stream(0, 1)                # NULL: nothing to do, as torch


# ---- out of memory ----

def test_oom_releases_the_cache_and_retries():
    s = Sim(64 * MiB)
    a = s.alloc(30 * MiB)
    s.free(a)                              # 30 MiB cached
    b = s.alloc(40 * MiB)                  # 30 + 40 > 64: the cache goes back, the retry succeeds
    st_ = s.stats()
    assert st_["num_alloc_retries"] == 1 and st_["num_ooms"] == 0 and st_["num_sync_all_streams"] == 1
    assert st_["num_device_free"] == 1 and s.raw_calls() == (2, 1)
    assert st_["reserved_bytes.all.current"] == 40 * MiB
    s.free(b)
    s.close()


def test_oom_raises_torchs_error_with_the_numbers():
    s = Sim(64 * MiB)
    a = s.alloc(30 * MiB)
    b = s.alloc(MiB)                       # small pool: a 2 MiB segment, 1 MiB of it unallocated
    with pytest.raises(P.cuda.OutOfMemoryError) as info:
        s.alloc(40 * MiB)
    err = info.value
    assert isinstance(err, RuntimeError) and isinstance(err, P.OutOfMemoryError)
    assert P.OutOfMemoryError is P.cuda.OutOfMemoryError is P._C.OutOfMemoryError
    assert type(err).__module__ == "torch" and type(err).__name__ == "OutOfMemoryError"
    m = OOM_RE.match(str(err))
    assert m, str(err)
    assert m["tried"] == "40.00 MiB" and m["total"] == "64.00 MiB" and m["free"] == "32.00 MiB"
    assert m["allocated"] == "31.00 MiB" and m["unallocated"] == "1024.00 KiB" and m["allowed"] is None
    assert str(err) == (
        "CUDA out of memory. Tried to allocate 40.00 MiB. GPU 0 has a total capacity of 64.00 MiB of which 32.00 MiB "
        "is free. Of the allocated memory 31.00 MiB is allocated by PyTorch, and 1024.00 KiB is reserved by PyTorch but "
        "unallocated. If reserved but unallocated memory is large try setting "
        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory "
        "Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)")
    st_ = s.stats()
    assert st_["num_ooms"] == 1 and st_["num_alloc_retries"] == 1
    assert st_["allocated_bytes.all.current"] == 31 * MiB  # the failure changed nothing live
    s.free(a)
    c = s.alloc(40 * MiB)                  # the user freed something: the allocation now succeeds
    for p in (b, c):
        s.free(p)
    s.close()


def test_oom_reports_the_segment_it_tried_and_formats_sizes_as_torch():
    s = Sim(64 * MiB)
    a = s.alloc(50 * MiB)
    with pytest.raises(P.OutOfMemoryError) as info:
        s.alloc(5 * MiB)                   # the request needs a 20 MiB segment, which is what torch reports
    m = OOM_RE.match(str(info.value))
    assert m["tried"] == "20.00 MiB" and m["total"] == "64.00 MiB" and m["free"] == "14.00 MiB"
    assert m["allocated"] == "50.00 MiB" and m["unallocated"] == "0 bytes"
    s.free(a)
    s.close()
    s = Sim(80 * GiB)                      # raw_alloc refuses before touching host memory
    with pytest.raises(P.OutOfMemoryError) as info:
        s.alloc(100 * GiB + 1)
    m = OOM_RE.match(str(info.value))
    assert m["tried"] == format_size(segment_for(100 * GiB + 1)) == "100.00 GiB"
    assert m["total"] == "80.00 GiB" and m["free"] == "80.00 GiB" and m["allocated"] == "0 bytes"
    with pytest.raises(P.OutOfMemoryError, match=r"^CUDA out of memory\. Tried to allocate more than 1EB memory\.$"):
        s.alloc(1 << 60)
    assert s.stats()["num_ooms"] == 1      # torch's 1 EB check comes before the allocator
    s.close()


@pytest.mark.parametrize("n", [0, 1, 1023, 1024, 1025, 1536, MiB - 1, MiB, MiB + 1, 1536 * MiB, GiB, GiB + 1,
                               79 * GiB + 100 * MiB])
def test_size_formatting_matches_torchs_format_size(n):
    s = Sim(max(n, 1))
    s.set_memory_fraction(1.0)             # the cap shows in the message
    with pytest.raises(P.OutOfMemoryError) as info:
        s.alloc(n + 1 if n >= 1024 else 2 * MiB + 1)
    m = OOM_RE.match(str(info.value))
    assert m["total"] == format_size(max(n, 1)) and m["allowed"] == format_size(max(n, 1))
    s.close()


def test_memory_fraction_caps_reserved_bytes():
    s = Sim(100 * MiB)
    s.set_memory_fraction(0.5)
    a = s.alloc(30 * MiB)
    with pytest.raises(P.cuda.OutOfMemoryError) as info:
        s.alloc(30 * MiB)                  # the device has room, the cap (50 MiB) has not
    assert str(info.value).startswith(
        "CUDA out of memory. Tried to allocate 30.00 MiB. GPU 0 has a total capacity of 100.00 MiB of which "
        "70.00 MiB is free. 50.00 MiB allowed; Of the allocated memory 30.00 MiB is allocated by PyTorch, and "
        "0 bytes is reserved by PyTorch but unallocated. If reserved")
    assert s.raw_calls() == (1, 0)         # the device was not even asked
    s.free(a)
    b = s.alloc(40 * MiB)                  # over the cap with the cached 30 MiB: released, then retried
    st_ = s.stats()
    assert st_["num_alloc_retries"] == 2 and st_["reserved_bytes.all.current"] == 40 * MiB
    s.set_memory_fraction(1.0)
    c = s.alloc(50 * MiB)
    for p in (b, c):
        s.free(p)
    for bad in (-0.1, 1.5, float("nan")):
        with pytest.raises(ValueError, match="Invalid fraction value"):
            s.set_memory_fraction(bad)
    s.close()


def test_max_split_size_keeps_oversize_blocks_whole():
    s = Sim(200 * MiB)
    with pytest.raises(ValueError, match="more than 20 MiB"):
        s.set_max_split_size(20 * MiB)
    s.set_max_split_size(40 * MiB)
    assert s.stats()["max_split_size"] == 40 * MiB
    a = s.alloc(50 * MiB)
    st_ = s.stats()
    assert st_["oversize_allocations.current"] == 1 and st_["oversize_segments.current"] == 1
    s.free(a)
    b = s.alloc(20 * MiB)                  # a smaller request does not get the oversize block
    assert b != a and s.raw_calls() == (2, 0)
    c = s.alloc(45 * MiB)                  # within 20 MiB of it: it does, whole
    assert c == a and s.stats()["allocated_bytes.all.current"] == 70 * MiB
    for p in (b, c):
        s.free(p)
    st_ = s.stats()
    assert st_["oversize_allocations.current"] == 0 and st_["oversize_allocations.allocated"] == 2
    s.close()


def test_oom_first_releases_one_oversize_block_that_fits():
    s = Sim(100 * MiB)
    s.set_max_split_size(30 * MiB)
    a = s.alloc(90 * MiB)
    s.free(a)
    b = s.alloc(50 * MiB)                  # 90 >= 50 + 20: not reused; the device is full: the 90 MiB block goes
    st_ = s.stats()
    assert st_["num_alloc_retries"] == 0 and st_["num_device_free"] == 1 and st_["num_sync_all_streams"] == 0
    assert st_["oversize_segments.current"] == 1 and st_["reserved_bytes.all.current"] == 50 * MiB
    s.free(b)
    s.close()


# ---- empty_cache and statistics ----

def test_empty_cache_gives_everything_back_when_nothing_is_live(sim):
    ptrs = [sim.alloc(n) for n in (1, 2000, 3 * MiB, 12 * MiB, 50 * MiB)]
    live = sim.alloc(100)                  # keeps its small segment
    for p in ptrs:
        sim.free(p)
    sim.empty_cache()
    st_ = sim.stats()
    assert st_["reserved_bytes.all.current"] == 2 * MiB and st_["segment.all.current"] == 1
    sim.free(live)
    sim.empty_cache()
    st_ = sim.stats()
    assert st_["reserved_bytes.all.current"] == 0 and st_["segment.all.current"] == 0
    allocs, frees = sim.raw_calls()
    assert allocs == frees == st_["num_device_free"] == st_["num_device_alloc"]


def test_peaks_and_their_reset(sim):
    a = sim.alloc(5 * MiB)
    b = sim.alloc(5 * MiB)
    sim.free(a)
    sim.free(b)
    st_ = sim.stats()
    assert st_["allocated_bytes.all.peak"] == 10 * MiB and st_["allocated_bytes.all.current"] == 0
    assert st_["allocation.all.peak"] == 2 and st_["reserved_bytes.all.peak"] == 20 * MiB
    sim.reset_peak()
    st_ = sim.stats()
    assert st_["allocated_bytes.all.peak"] == 0 and st_["reserved_bytes.all.peak"] == 20 * MiB
    c = sim.alloc(MiB)
    assert stat(sim, "allocated_bytes.all.peak") == MiB
    sim.free(c)
    sim.reset_accumulated()
    st_ = sim.stats()
    assert st_["allocated_bytes.all.allocated"] == st_["allocated_bytes.all.freed"] == 0
    assert st_["num_device_alloc"] == 0 and st_["reserved_bytes.all.current"] == 20 * MiB + 2 * MiB


def test_the_simulator_catches_a_live_block_written_over(sim):
    a = sim.alloc(4096)
    ctypes.memset(a + 100, 0, 1)           # what an overlapping block would do
    with pytest.raises(AssertionError, match="byte 100 of the 4096-byte block"):
        sim.free(a)


def test_closed_simulator_refuses():
    s = Sim(MiB)
    s.close()
    s.close()
    with pytest.raises(RuntimeError, match="closed"):
        s.alloc(1)


# ---- property test ----

ops = st.one_of(
    st.tuples(st.just("alloc"), st.one_of(st.integers(0, 4096), st.integers(4097, 3 * MiB), st.integers(3 * MiB, 40 * MiB)),
              st.integers(0, 2)),
    st.tuples(st.just("free"), st.integers(0, 1 << 16)),
    st.tuples(st.just("record"), st.integers(0, 1 << 16), st.integers(0, 3)),
    st.tuples(st.just("complete"), st.integers(0, 3)),
    st.tuples(st.just("empty_cache")),
)


def check_invariants(s, live):
    st_ = s.stats()
    spans = sorted((p, size) for p, (_, _, size) in live.items())
    for (p, size), (q, _) in zip(spans, spans[1:]):
        assert p + size <= q, "two live blocks overlap"
    assert all(p % 512 == 0 for p in live)
    assert st_["allocated_bytes.all.current"] == sum(size for _, size in spans)
    assert st_["allocated_bytes.small_pool.current"] == sum(size for _, size in spans if size <= MiB)
    assert st_["allocation.all.current"] == len(live)
    assert st_["requested_bytes.all.current"] >= sum(n for n, _, _ in live.values())
    assert st_["reserved_bytes.all.current"] >= st_["active_bytes.all.current"] >= st_["allocated_bytes.all.current"]
    assert st_["reserved_bytes.all.current"] - st_["active_bytes.all.current"] >= st_["inactive_split_bytes.all.current"]
    assert st_["active.all.current"] >= st_["allocation.all.current"]
    allocs, frees = s.raw_calls()
    assert (st_["num_device_alloc"], st_["num_device_free"]) == (allocs, frees)
    assert st_["segment.all.current"] == allocs - frees
    for key, value in st_.items():
        if key.endswith(".current"):
            assert 0 <= value <= st_[key[:-len("current")] + "peak"], key
    return st_


@settings(max_examples=150, deadline=None, database=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.lists(ops, max_size=60))
def test_random_sequences_keep_the_invariants(program):
    s = Sim(160 * MiB)
    live = {}                              # address -> (nbytes, stream, size of its block)
    try:
        for op in program:
            if op[0] == "alloc":
                _, n, stream = op
                before = s.stats()["allocated_bytes.all.current"]
                try:
                    p = s.alloc(n, stream)
                except P.OutOfMemoryError as e:
                    assert OOM_RE.match(str(e)), str(e)
                    continue
                if n == 0:
                    assert p == 0
                    continue
                assert p not in live
                size = s.stats()["allocated_bytes.all.current"] - before
                # torch's rounding; a large-pool block keeps a rest of 1 MiB or less unsplit
                assert size == rounded(n) if rounded(n) <= MiB else rounded(n) <= size <= rounded(n) + MiB
                live[p] = (n, stream, size)
            elif op[0] in ("free", "record") and live:
                p = sorted(live)[op[1] % len(live)]
                if op[0] == "free":
                    s.free(p)              # checks the block's pattern
                    del live[p]
                else:
                    s.record_stream(p, op[2])
            elif op[0] == "complete":
                s.complete(op[1])
            elif op[0] == "empty_cache":
                s.empty_cache()
                st_ = s.stats()
                assert st_["active.all.current"] == len(live)  # every pending event settled
                if not live:
                    assert st_["reserved_bytes.all.current"] == 0
            check_invariants(s, live)
        for p in list(live):
            s.free(p)
            del live[p]
        s.empty_cache()
        st_ = check_invariants(s, live)
        assert st_["reserved_bytes.all.current"] == 0 and st_["active.all.current"] == 0
        assert st_["inactive_split.all.current"] == 0 and st_["segment.all.current"] == 0
    finally:
        s.close()


def test_threads_without_the_gil_share_the_allocator():
    s = Sim(2 * GiB)                       # 4 threads * 8 blocks * 20 MiB at most live: no call can fail
    s.stress(4, 3000)
    st_ = s.stats()
    assert st_["allocation.all.current"] == 0 and st_["allocation.all.allocated"] > 4000
    s.empty_cache()
    st_ = s.stats()
    assert st_["reserved_bytes.all.current"] == 0 and st_["active.all.current"] == 0
    assert st_["inactive_split.all.current"] == 0
    s.close()
