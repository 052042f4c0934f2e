"""Timer: timeit.Timer with warm-up, a fixed thread count, replicates and Measurement results."""
import enum
import textwrap
import timeit

from . import common

__all__ = ["Timer", "timer", "Language"]


def timer():
    """The clock: timeit.default_timer (pyctorch runs on the CPU; nothing to synchronize)."""
    return timeit.default_timer()


class Language(enum.Enum):
    PYTHON = 0
    CPP = 1


def _clean(code):
    code = textwrap.dedent(code)
    return (code[1:] if code.startswith("\n") else code).rstrip()


class Timer:
    """Times a Python statement the way torch.utils.benchmark.Timer does.

    stmt / setup: code strings (setup runs once per measurement call); globals: the namespace
    they run in (`torch` is predefined: pyctorch itself); label, sub_label, description, env:
    tags shown by Measurement and used by Compare for rows and columns; num_threads: the
    pyctorch.set_num_threads value while timing (default 1, like torch).

        timeit(number)               one measurement of `number` runs (after a short warm-up)
        blocked_autorange(...)       as many blocks as fit in min_run_time, block size chosen
                                     so that timer overhead stays below 0.01 %
        adaptive_autorange(...)      blocks until IQR/median < threshold (or max_run_time)
    """

    def __init__(self, stmt="pass", setup="pass", global_setup="", timer=timer, globals=None, label=None,
                 sub_label=None, description=None, env=None, num_threads=1, language=Language.PYTHON):
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        if language in (Language.CPP, "cpp", "c++"):
            raise NotImplementedError("pyctorch does not implement torch.utils.benchmark.Timer("
                                      "language='cpp') yet: only Python statements can be timed")
        if language not in (Language.PYTHON, "py", "python"):
            raise ValueError(f"Invalid language `{language}`.")
        if global_setup:
            raise ValueError(f"global_setup is C++ only, got `{global_setup}`. Most likely this code can "
                             "simply be moved to `setup`.")
        import pyctorch
        namespace = dict(globals or {})
        namespace.setdefault("torch", pyctorch)
        stmt, setup = _clean(stmt), _clean(setup)
        self._timer = timeit.Timer(stmt=stmt, setup=setup, timer=timer, globals=namespace)
        self._task_spec = common.TaskSpec(stmt=stmt, setup=setup, global_setup=global_setup, label=label,
                                          sub_label=sub_label, description=description, env=env,
                                          num_threads=num_threads)

    def _timeit(self, number):
        return max(self._timer.timeit(number), 1e-9)  # never a zero time (medians divide by it)

    def timeit(self, number=1000000):
        """One Measurement of `number` runs of stmt, after a warm-up of number // 100 runs (at least 2)."""
        with common.set_torch_threads(self._task_spec.num_threads):
            self._timeit(max(number // 100, 2))
            return common.Measurement(number_per_run=number, raw_times=[self._timeit(number)],
                                      task_spec=self._task_spec)

    def repeat(self, repeat=-1, number=-1):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback=None):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _block_size(self, min_run_time):
        """Runs per block: grown tenfold until the empty-loop overhead is <= 1e-4 of a block
        lasting at least min_run_time / 1000, or a block alone exceeds min_run_time."""
        with common.set_torch_threads(self._task_spec.num_threads):
            overhead = sorted(self._timeit(0) for _ in range(5))[2]
            number = 1
            while True:
                took = self._timeit(number)
                if (overhead / took <= 1e-4 and took >= min_run_time / 1000) or took > min_run_time:
                    return number
                if number * 10 > 2147483647:
                    return number
                number *= 10

    def _blocks(self, number, enough, min_run_time, max_run_time=None, callback=None):
        times, total = [], 0.0
        with common.set_torch_threads(self._task_spec.num_threads):
            while True:
                t = self._timeit(number)
                times.append(t)
                total += t
                if callback:
                    callback(number, t)
                done = enough(times)
                if max_run_time and total > max_run_time:
                    break
                if total >= min_run_time and done:
                    break
        return times

    def blocked_autorange(self, callback=None, min_run_time=0.2):
        """Blocks of a calibrated size until min_run_time seconds have been measured."""
        number = self._block_size(min_run_time)
        times = self._blocks(number, lambda times: True, min_run_time, callback=callback)
        return common.Measurement(number_per_run=number, raw_times=times, task_spec=self._task_spec)

    def adaptive_autorange(self, threshold=0.1, *, min_run_time=0.01, max_run_time=10.0, callback=None):
        """Blocks until more than 3 of them have IQR/median < threshold and min_run_time has
        passed, or max_run_time has."""
        number = self._block_size(0.05)

        def enough(times):
            return len(times) > 3 and common.Measurement(
                number_per_run=number, raw_times=times, task_spec=self._task_spec).meets_confidence(threshold)

        times = self._blocks(number, enough, min_run_time, max_run_time, callback=callback)
        return common.Measurement(number_per_run=number, raw_times=times, task_spec=self._task_spec)

    def collect_callgrind(self, *args, **kwargs):
        raise NotImplementedError("pyctorch does not implement torch.utils.benchmark.Timer.collect_callgrind yet")
