"""torch.profiler: records where the time (and CPU memory) of a program goes, operator by
operator. `with profile(activities=[ProfilerActivity.CPU]) as prof: ...`, then
`prof.key_averages().table(sort_by="cpu_time_total")` or `prof.export_chrome_trace(path)`."""
from ..autograd.profiler import record_function  # noqa: F401
from ..autograd.profiler_util import DeviceType  # noqa: F401
from .profiler import (_KinetoProfile, ProfilerAction, ProfilerActivity, profile, schedule,  # noqa: F401
                       supported_activities, tensorboard_trace_handler, kineto_available, ExecutionTraceObserver)

__all__ = ["profile", "schedule", "supported_activities", "tensorboard_trace_handler", "ProfilerAction",
           "ProfilerActivity", "kineto_available", "DeviceType", "record_function", "ExecutionTraceObserver"]
