#!/usr/bin/env bash
# The one-shot GPU check (issue 10): on a freshly started GPU machine, build pyctorch from this tree and run the CUDA
# tests and the CUDA benchmarks, writing logs and JSON into the folder given as the argument. About 8 minutes.
#   benchmarks/gpu_check.sh OUT [memcheck]
# The lent machine has Python 3.12 with torch (a CUDA build), pytest, numpy, setuptools and nvcc, but no OpenBLAS and no
# package registry: the build goes without OpenBLAS and Gloo. "memcheck" also runs tests/cuda under
# compute-sanitizer --tool memcheck. Every step runs even when one before it failed; the exit status is the first
# failure's.
set -u
OUT=${1:?usage: benchmarks/gpu_check.sh OUT_DIR [memcheck]}
mkdir -p "$OUT"
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1 PYCTORCH_TEST_CUDA=1
status=0
step() {  # step NAME TIMEOUT_S COMMAND...: runs COMMAND into $OUT/NAME.log, noting its status
    local name=$1 limit=$2; shift 2
    local t0=$SECONDS
    timeout "$limit" "$@" > "$OUT/$name.log" 2>&1
    local rc=$?
    echo "$name: exit $rc in $((SECONDS - t0)) s" | tee -a "$OUT/summary.txt"
    tail -3 "$OUT/$name.log" | sed 's/^/    /' | tee -a "$OUT/summary.txt"
    [ $rc -ne 0 ] && [ $status -eq 0 ] && status=$rc
    return $rc
}
{ nvidia-smi; python3 -c "import torch, sys; print(sys.version); print('torch', torch.__version__, torch.version.cuda)"; } \
    > "$OUT/machine.txt" 2>&1
step build 420 env PYCTORCH_NO_OPENBLAS=1 PYCTORCH_NO_GLOO=1 PYCTORCH_BUILD_JOBS="$(nproc)" \
    PYCTORCH_CUDA_ARCH_LIST=native python3 setup.py -q build_ext --inplace || { echo "build failed: nothing else runs"; exit 1; }
step tests_cuda 180 python3 -m pytest tests/cuda tests/test_cuda_backend.py -q -p no:cacheprovider
step test_ops_cuda 240 env PYCTORCH_TEST_DEVICE=cuda python3 -m pytest tests/test_ops.py -q -p no:cacheprovider -x \
    --maxfail=20
step bench_cuda 240 python3 benchmarks/bench_cuda.py --device cuda --quick --json "$OUT/bench_cuda.json"
if [ "${2:-}" = memcheck ]; then
    step memcheck 240 compute-sanitizer --tool memcheck --error-exitcode 9 python3 -m pytest tests/cuda -q -x \
        -p no:cacheprovider
fi
exit $status
