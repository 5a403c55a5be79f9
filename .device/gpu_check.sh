#!/usr/bin/env bash
# The GPU check of issue 22: the CUDA tests on a real GPU, then the GPU benchmark rows.
#
#   bash .device/gpu_check.sh prepare   # here, once, with the network: the numpy wheel
#   bash .device/gpu_check.sh           # on the GPU machine (the device tool's `run`,
#                                       # with carry [".whl"]), in under 10 minutes
#
# Why the wheel: the GPU image's numpy (2.5) is newer than its numba supports, and numpy
# 2.5 no longer has np.row_stack; a numpy 2.4 wheel is installed into /tmp/site and a
# sitecustomize.py there restores np.row_stack = np.vstack before anything imports
# kernelgraph (or numba). Logs and the benchmark JSON go to $OUT (the device tool's
# folder that comes back), else /tmp/kg-gpu-check. See docs/gpu.md.
set -u
cd "$(dirname "$0")/.." || exit 1
NUMPY_VERSION=2.4.6

if [ "${1:-}" = "prepare" ]; then
    grep -qx '/.whl/' .git/info/exclude 2>/dev/null || echo '/.whl/' >> .git/info/exclude
    py=python3
    [ -x .venv/bin/python ] && py=.venv/bin/python
    exec "$py" -m pip download --no-deps --only-binary=:all: --python-version 3.12 \
        --implementation cp --platform manylinux_2_28_x86_64 \
        --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
        --platform manylinux2014_x86_64 -d .whl "numpy==$NUMPY_VERSION"
fi

out=${OUT:-/tmp/kg-gpu-check}
mkdir -p "$out" /tmp/site
start=$(date +%s)
say() { echo "[gpu_check +$(( $(date +%s) - start ))s] $*" | tee -a "$out/summary.txt"; }

if ls .whl/numpy-*.whl >/dev/null 2>&1; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site .whl/numpy-*.whl || { say "installing the numpy wheel failed"; exit 1; }
else
    say "no .whl/numpy-*.whl (run 'bash .device/gpu_check.sh prepare' here, carry .whl)"
fi
cat > /tmp/site/sitecustomize.py <<'PY'
import numpy as _np

if not hasattr(_np, "row_stack"):  # removed in numpy 2.5; older code still calls it
    _np.row_stack = _np.vstack
PY
export PYTHONPATH="/tmp/site:$PWD${PYTHONPATH:+:$PYTHONPATH}"
export NUMBA_CACHE_DIR=/tmp/numba-cache PYTHONUNBUFFERED=1
unset NUMBA_ENABLE_CUDASIM  # the real GPU runs the CUDA code

nvidia-smi -L 2>&1 | tee -a "$out/summary.txt"
python3 - <<'PY' 2>&1 | tee -a "$out/summary.txt"
import numpy, numba
from numba import cuda
import kernelgraph as kg
from kernelgraph.kernels.cuda import launcher
import kernelgraph.kernels.cuda.core as core
try:
    import numba_cuda
    nc = numba_cuda.__version__
except ImportError:
    nc = "not installed"
print("numpy", numpy.__version__, "| numba", numba.__version__, "| numba-cuda", nc)
print("cuda available:", cuda.is_available(), "| kg:", kg.cuda.is_available(),
      "| simulator:", core.SIMULATOR)
print("launcher fast path:", launcher.fast_path_status())
PY

# 1. The CUDA tests on the real GPU (addopts cleared: nbval is not installed there), in 8
# processes: compiling the kernels for the GPU is CPU work. -v writes one line per test, so
# a run stopped by the timeout still says what passed and what failed.
say "CUDA tests"
timeout 330 python3 -m pytest -o addopts="" --import-mode=importlib -p no:cacheprovider -v \
    -n 8 -rfE --junitxml="$out/tests.xml" \
    tests/test_cuda_*.py tests/test_device_plan.py tests/test_fusion_cuda.py \
    tests/test_gpu_bench.py tests/test_devices.py > "$out/tests.log" 2>&1
say "tests exit status $? (124: stopped at 330 s): $(grep -c ' PASSED ' "$out/tests.log") passed,"\
" $(grep -c ' FAILED ' "$out/tests.log") failed, $(grep -c ' ERROR ' "$out/tests.log") errors,"\
" $(grep -c ' SKIPPED ' "$out/tests.log") skipped"
grep -E ' (FAILED|ERROR) ' "$out/tests.log" | head -n 30 | tee -a "$out/summary.txt"
tail -n 5 "$out/tests.log" | tee -a "$out/summary.txt"

# 2. The GPU benchmark rows (and rows 9-10: elementwise bandwidth, the 4096 matmul).
say "GPU benchmark rows"
timeout 200 python3 -m kernelgraph.bench --rows gpu,9,10 --quick \
    --frameworks kernelgraph,numpy,torch --json "$out/bench.json" > "$out/bench.log" 2>&1
say "bench exit status $? (124: stopped at 200 s)"
cat "$out/bench.log" | tail -n 40 | tee -a "$out/summary.txt"
# 3. Time permitting, the GPU rows again with the issue-22 paths off (the device plan, the
# bound/fast launches, CUDA graphs): what they bring, on the same GPU in the same session.
left=$(( 560 - ($(date +%s) - start) ))
if [ "$left" -gt 90 ]; then
    say "GPU rows with KG_DEVICE_PLAN=0 KG_CUDA_FAST_LAUNCH=0 KG_CUDA_GRAPHS=0 (${left} s left)"
    KG_DEVICE_PLAN=0 KG_CUDA_FAST_LAUNCH=0 KG_CUDA_GRAPHS=0 timeout "$left" \
        python3 -m kernelgraph.bench --rows gpu --quick --frameworks kernelgraph,torch \
        --json "$out/bench_paths_off.json" > "$out/bench_paths_off.log" 2>&1
    say "bench (paths off) exit status $?"
    grep -A 30 '^GPU rows' "$out/bench_paths_off.log" | tee -a "$out/summary.txt"
fi
say "done"
