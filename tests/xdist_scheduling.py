"""How pytest-xdist shares the suite between its workers (conftest.py's pytest_xdist_make_scheduler, under the
default test command's `--dist loadgroup`).

A work unit is a test module, or an xdist_group (which may span modules: tests/distributed), never a single test:
- xdist's own loadgroup makes every ungrouped test its own unit, and its bookkeeping walks every unit a worker was
  ever given on each test report (`_pending_of` from `_reschedule`, `tests_finished`, `has_pending`), so the
  controller's time grows with the square of the number of tests: with ~34,000 tests it took as much CPU as a worker,
  on a machine with two cores;
- a module in one worker builds its module-scoped fixtures once, not once per worker.
The same bookkeeping here is a count per worker. Units go out longest first (the longest-processing-time rule), so
that no long unit starts last and leaves one worker idle: a unit's expected seconds are UNIT_SECONDS' figure where it
has one, plus PER_TEST seconds for each of its tests.
"""
from xdist.scheduler import LoadScopeScheduling

# Seconds the tests of a unit took beyond PER_TEST each, summed from `--durations=0` on the 2-core CI machine: the
# units whose time is in child processes, compilers and training runs rather than in their number of tests. Only
# the order of units depends on it: a stale figure costs balance, never a test.
UNIT_SECONDS = {
    "distributed": 119, "tests/data/test_data_workers.py": 90, "tests/test_cuda_simulated.py": 89, "cuda_host": 60,
    "tests/test_compile.py": 59, "tests/test_autograd_ops.py": 46, "tests/test_fuzz.py": 37,
    "tests/examples/test_train_gpt.py": 27, "tests/dropin/test_scripts.py": 26, "tests/test_meta.py": 25,
    "tests/libraries/test_transformers.py": 24, "lightning_accelerate": 22, "tests/amp/test_lowp_gemm.py": 15,
    "tests/dropin/test_as_torch.py": 14, "cpp_extension": 14, "tests/examples/test_train_cnn.py": 13,
    "tests/test_reductions.py": 10, "tests/multiprocessing/test_mp_spawn.py": 9,
    "tests/multiprocessing/test_mp_file_system.py": 9, "tests/onnx/test_onnx_export.py": 8,
}
PER_TEST = 0.003


class ModuleOrGroupScheduling(LoadScopeScheduling):
    def __init__(self, config, log=None):
        super().__init__(config, log)
        self._pending = {}  # worker -> tests sent to it and not reported yet
        self._index = {}  # worker -> {nodeid: its index in the worker's collection}

    def _split_scope(self, nodeid):
        at = nodeid.rfind("@")
        if at > nodeid.rfind("]"):  # loadgroup's suffix, not an '@' inside a parameter id
            return nodeid[at + 1:]
        return nodeid.split("::", 1)[0]

    def add_node_collection(self, node, collection):
        super().add_node_collection(node, collection)
        self._index[node] = {nodeid: i for i, nodeid in enumerate(collection)}

    def _order_workqueue(self):
        units = list(self.workqueue.items())
        units.sort(key=lambda unit: -(UNIT_SECONDS.get(unit[0], 0) + PER_TEST * len(unit[1])))
        self.workqueue.clear()
        self.workqueue.update(units)

    def _assign_work_unit(self, node):
        if not getattr(self, "_ordered", False):  # the first assignment: the queue is complete
            self._ordered = True
            self._order_workqueue()
        scope, unit = self.workqueue.popitem(last=False)
        self.assigned_work.setdefault(node, {})[scope] = unit
        index = self._index[node]
        todo = [index[nodeid] for nodeid, done in unit.items() if not done]
        self._pending[node] = self._pending.get(node, 0) + len(todo)
        node.send_runtest_some(todo)

    def mark_test_complete(self, node, item_index, duration=0):
        nodeid = self.registered_collections[node][item_index]
        self.assigned_work[node][self._split_scope(nodeid)][nodeid] = True
        self._pending[node] -= 1
        self._reschedule(node)

    def _reschedule(self, node):
        if node.shutting_down:
            return
        if not self.workqueue:
            node.shutdown()
            return
        if self._pending.get(node, 0) > 2:  # xdist's heuristic: top a worker up when it is nearly out of work
            return
        self._assign_work_unit(node)

    @property
    def tests_finished(self):
        if not self.collection_is_completed or self.workqueue:
            return False
        return all(self._pending.get(node, 0) < 2 for node in self.assigned_work)

    @property
    def has_pending(self):
        return bool(self.workqueue) or any(self._pending.get(node, 0) > 0 for node in self.assigned_work)

    def remove_node(self, node):
        # a worker that died: xdist's own accounting finds the crashed test and requeues the rest of its units
        self._pending.pop(node, None)
        self._index.pop(node, None)
        return super().remove_node(node)
