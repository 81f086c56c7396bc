#!/usr/bin/env bash
# run.sh — the CUDA backend's check on a GPU machine, from the bundle of scripts/gpu-bundle.sh
# (this file is scripts/gpu-run.sh, copied there): the GPU tests, the exhaustive ulp sweeps
# (all 2^32 f32 inputs of every op, both directions; bf16/f16 all 65,536), ffn's benchmark
# against a same-run device copy, PyTorch eager and torch.compile on the same ops, then a summary
# table (summary.py) as the last thing printed.
#   OUT=<folder> ./run.sh        logs in $OUT (default ./out), 8 files:
#     run.log (machine, step times), tests.log, ulp.jsonl, bench-ffn.jsonl (their stderr:
#     tools.log), bench-torch.jsonl + torch.log, summary.txt
# Every step has a time limit, and all of them share a deadline (TOTAL seconds, default 500):
# a step gets what is left, a step that fails or times out does not stop the others, and steps
# that find no time left are recorded as skipped.
# STEPS=<names or globs, comma-separated> runs only those steps (e.g. STEPS='python_*').
set -u
cd "$(dirname "$0")"
here=$PWD
OUT=${OUT:-$here/out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
for f in "$here"/lib/*.xz; do [ -e "$f" ] && xz -d -f "$f"; done  # gpu-bundle.sh compressed them
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-$(nproc)}
TOTAL=${TOTAL:-500}
t_start=$(date +%s)
: >"$OUT/run.log"

_selected() {
    local pat
    for pat in ${STEPS//,/ }; do
        # shellcheck disable=SC2053  # a glob on purpose
        [[ $1 == $pat ]] && return 0
    done
    return 1
}

# step NAME LIMIT OUTFILE ERRFILE CMD...: runs CMD within LIMIT seconds and the run's deadline,
# stdout appended to $OUT/OUTFILE, stderr to $OUT/ERRFILE (the same file for logs); records
# "step NAME STATUS RC SECONDS" in run.log.
step() {
    local name=$1 limit=$2 outf=$3 errf=$4
    shift 4
    if [ -n "${STEPS:-}" ] && ! _selected "$name"; then
        echo "== $name: not selected (STEPS=$STEPS)"
        return
    fi
    local left=$((TOTAL - ($(date +%s) - t_start) - 15))
    if [ "$left" -lt 10 ]; then
        printf 'step\t%s\tskipped\t-\t0\n' "$name" >>"$OUT/run.log"
        echo "== $name: skipped (no time left)"
        return
    fi
    [ "$limit" -gt "$left" ] && limit=$left
    echo "== $name (limit ${limit}s)"
    printf '\n===== %s: %s\n' "$name" "$*" >>"$OUT/$errf"
    local t0 rc status
    t0=$(date +%s)
    timeout -k 5 "$limit" "$@" >>"$OUT/$outf" 2>>"$OUT/$errf"
    rc=$?
    case $rc in
    0) status=pass ;;
    77) status=skip ;;
    124 | 137) status=timeout ;;
    *) status=fail ;;
    esac
    printf 'step\t%s\t%s\t%s\t%s\n' "$name" "$status" "$rc" "$(($(date +%s) - t0))" >>"$OUT/run.log"
    echo "   $status (rc $rc, $(($(date +%s) - t0)) s)"
}

{
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "host: $(hostname) $(nproc) cores"
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,power.limit \
        --format=csv,noheader 2>&1 | sed 's/^/gpu: /'
    python3 -c 'import torch; print("torch:", torch.__version__, "cuda", torch.version.cuda)' 2>&1
    echo "ffn: $("$here/bin/ffn" --help 2>&1 | tail -1)"
} >>"$OUT/run.log"
cat "$OUT/run.log"

# --- tests ----------------------------------------------------------------------------------------
step cuda_math 150 tests.log tests.log "$here/bin/test_cuda_math"
step cuda_api 60 tests.log tests.log "$here/bin/test_cuda" --only-api
step cuda_kernels 240 tests.log tests.log "$here/bin/test_cuda" --only-kernels
step cuda_layouts 180 tests.log tests.log "$here/bin/test_cuda" --only-layouts
step cuda_fault 60 tests.log tests.log "$here/bin/test_cuda_fault"
step cuda_big 120 tests.log tests.log "$here/bin/test_cuda" --big
# The Python package on CUDA tensors (tests/python/test_cuda.py), against lib/libffn.so.
step python_cuda 240 tests.log tests.log env FFN_LIBRARY="$here/lib/libffn.so" \
    FFN_TEST_REQUIRE_CUDA=1 PYTHONDONTWRITEBYTECODE=1 python3 "$here/tests/python/test_cuda.py"

# --- accuracy: every f32 input (2^32), every bf16/f16 input, both directions, both tiers -------
step ulp_all 240 ulp.jsonl tools.log "$here/bin/ffn" ulp --backend cuda --all --json
step ulp_all_accurate 120 ulp.jsonl tools.log "$here/bin/ffn" ulp --backend cuda --all \
    --accurate --op gelu_tanh --op gelu_erf --op geglu_tanh --op geglu_erf --dir fwd --json

# --- benchmarks -----------------------------------------------------------------------------------
step bench_ffn 200 bench-ffn.jsonl tools.log "$here/bin/ffn" bench act --backend cuda --json
step bench_ffn_accurate 60 bench-ffn.jsonl tools.log "$here/bin/ffn" bench act --backend \
    cuda --json --accurate --op gelu_tanh --op gelu_erf --op geglu_tanh --op geglu_erf --dir fwd \
    --n 1572864,117440512
step torch_eager 200 torch.log torch.log python3 "$here/bench/torch_cuda.py" --no-compile \
    --json-out "$OUT/bench-torch.jsonl"
step torch_compile 240 torch.log torch.log python3 "$here/bench/torch_cuda.py" --no-eager \
    --op silu --op gelu_tanh --op gelu_erf --op swiglu --op geglu_tanh --op geglu_erf \
    --dtype f32 --dtype bf16 --n 1572864,117440512 --json-out "$OUT/bench-torch.jsonl"
# ffn.glu from Python on CUDA tensors: per-call cost, GB/s against torch's eager ops.
step python_bench_cuda 120 py-bench.md torch.log env FFN_LIBRARY="$here/lib/libffn.so" \
    PYTHONDONTWRITEBYTECODE=1 python3 "$here/bench/py_bench.py" --only cuda \
    --json "$OUT/py-bench.jsonl"

# --- the summary, printed last ------------------------------------------------------------------
python3 "$here/summary.py" "$OUT"
