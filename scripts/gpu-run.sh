#!/usr/bin/env bash
# run.sh — the CUDA backend's check on a GPU machine, from the bundle of scripts/gpu-bundle.sh
# (this file is scripts/gpu-run.sh, copied there): the GPU tests, the exhaustive ulp sweeps
# (all 2^32 f32 inputs of every op, both directions; bf16/f16 all 65,536), ffn's benchmark
# against a same-run device copy, PyTorch eager and torch.compile on the same ops, then a summary
# table (summary.py) as the last thing printed.
#   OUT=<folder> ./run.sh        logs in $OUT (default ./out):
#     run.log (machine, step times), tests.log, ulp.jsonl, bench-ffn.jsonl (their stderr:
#     tools.log), bench-torch.jsonl + torch.log, torch-ulp.txt/.jsonl (PyTorch's f32 forwards
#     over every f32 input), summary.txt; with the design steps also lab.txt
#     (bin/cuda_lab: copy variants, the special-function unit's ulps, exp variants, the flat
#     kernel beside a minimal one) and
#     sass.txt.xz (the kernels' machine code). When more than 8 files result, all but
#     summary.txt are packed into logs.tar.xz.
# Every step has a time limit, and all of them share a deadline (TOTAL seconds, default 500):
# a step gets what is left, a step that fails or times out does not stop the others, and steps
# that find no time left are recorded as skipped.
# STEPS picks what runs: space- or comma-separated group names or step names (shell patterns
# allowed). Groups: tests (the CUDA kernel tests), python (the package on CUDA tensors), tp (NCCL),
# ulp (exhaustive sweeps), bench, torch, blocks (block tests, block benchmarks, PyTorch blocks),
# and the design groups var (block sizes, the lookup table's partition, the copy with random
# data), flat (the flat kernel's forms: tests under each, every op against the copy;
# flat-summary.txt), lab, sass. Default: all but the design groups. The block steps'
# files are block-tests.log, bench-block.jsonl (stderr: block-tools.log), bench-block-torch.jsonl
# (block-torch.log) and block-summary.txt (its table printed last).
set -u
cd "$(dirname "$0")"
here=$PWD
OUT=${OUT:-$here/out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# The large files travel in one solid archive (see gpu-bundle.sh).
if [ -e "$here/payload.tar.xz" ]; then
    tar -xJf "$here/payload.tar.xz" -C "$here" && rm -f "$here/payload.tar.xz"
fi
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-$(nproc)}
TOTAL=${TOTAL:-500}
STEPS=${STEPS:-tests python tp ulp bench torch blocks}
# The fused gate/up measurements (bench act --fused M): elements:M, 512 x 3072 and 8192 x 14336.
fused_nm="1572864:3072 117440512:14336"
group=
# selected NAME: NAME or its group ($group, set before each group's steps) is in STEPS.
selected() {
    local p
    for p in ${STEPS//,/ }; do
        # shellcheck disable=SC2053  # a pattern on purpose
        [[ $1 == $p || $group == "$p" ]] && return 0
    done
    return 1
}
want() { group=$1; }  # the steps that follow belong to group $1
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
    selected "$name" || return 0
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
if want tests; then
    step cuda_math 150 tests.log tests.log "$here/bin/test_cuda_math"
    step cuda_api 60 tests.log tests.log "$here/bin/test_cuda" --only-api
    step cuda_kernels 240 tests.log tests.log "$here/bin/test_cuda" --only-kernels
    step cuda_layouts 180 tests.log tests.log "$here/bin/test_cuda" --only-layouts
    step cuda_fault 60 tests.log tests.log "$here/bin/test_cuda_fault"
    step cuda_big 120 tests.log tests.log "$here/bin/test_cuda" --big
fi

# --- the Python package on CUDA tensors (tests/python/test_cuda.py), against lib/libffn.so ------
if want python; then
    step python_cuda 240 tests.log tests.log env FFN_LIBRARY="$here/lib/libffn.so" \
        FFN_TEST_REQUIRE_CUDA=1 PYTHONDONTWRITEBYTECODE=1 python3 "$here/tests/python/test_cuda.py"
    # ffn.glu from Python on CUDA tensors: per-call cost, GB/s against torch's eager ops.
    step python_bench_cuda 120 py-bench.md torch.log env FFN_LIBRARY="$here/lib/libffn.so" \
        PYTHONDONTWRITEBYTECODE=1 python3 "$here/bench/py_bench.py" --only cuda \
        --json "$OUT/py-bench.jsonl"
fi

# --- tensor parallelism over NCCL: one rank per GPU (tests/tp/test_tp_nccl; NVLS off, as the
# multi-GPU machines require); with two GPUs or more, also two ranks (two processes)
if want tp && [ -x "$here/bin/test_tp_nccl" ]; then
    step tp_nccl 120 tests.log tests.log env NCCL_NVLS_ENABLE=0 "$here/bin/test_tp_nccl"
    if [ "$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')" -ge 2 ]; then
        step tp_nccl_np2 180 tests.log tests.log env NCCL_NVLS_ENABLE=0 \
            "$here/bin/test_tp_nccl" --ranks 2
    fi
fi

# --- accuracy: every f32 input (2^32), every bf16/f16 input, both directions, both tiers -------
if want ulp; then
    step ulp_all 240 ulp.jsonl tools.log "$here/bin/ffn" ulp --backend cuda --all --json
    step ulp_all_accurate 120 ulp.jsonl tools.log "$here/bin/ffn" ulp --backend cuda --all \
        --accurate --op gelu_tanh --op gelu_erf --op geglu_tanh --op geglu_erf --dir fwd --json
fi

# --- benchmarks -----------------------------------------------------------------------------------
if want bench; then
    step bench_ffn 200 bench-ffn.jsonl tools.log "$here/bin/ffn" bench act --backend cuda --json
    step bench_ffn_accurate 60 bench-ffn.jsonl tools.log "$here/bin/ffn" bench act --backend \
        cuda --json --accurate --op gelu_tanh --op gelu_erf --op geglu_tanh --op geglu_erf \
        --dir fwd --n 1572864,117440512
    # With the data in L2 (as a GEMM leaves it): the small size, every op.
    step bench_ffn_warm 60 bench-ffn.jsonl tools.log "$here/bin/ffn" bench act --backend cuda \
        --json --warm --n 1572864
    # Gate and up as the halves of a fused gate_up output (views of rows): 512 x 3072, 8192 x 14336.
    for nm in $fused_nm; do
        step "bench_ffn_fused_${nm#*:}" 60 bench-ffn.jsonl tools.log "$here/bin/ffn" bench act \
            --backend cuda --json --glu --fused "${nm#*:}" --n "${nm%:*}"
    done
fi
if want torch; then
    step torch_eager 200 torch.log torch.log python3 "$here/bench/torch_cuda.py" --no-compile \
        --json-out "$OUT/bench-torch.jsonl"
    step torch_compile 240 torch.log torch.log python3 "$here/bench/torch_cuda.py" --no-eager \
        --op silu --op gelu_tanh --op gelu_erf --op swiglu --op geglu_tanh --op geglu_erf \
        --dtype f32 --dtype bf16 --n 1572864,117440512 --json-out "$OUT/bench-torch.jsonl"
    for nm in $fused_nm; do
        step "torch_fused_${nm#*:}" 120 torch.log torch.log python3 "$here/bench/torch_cuda.py" \
            --fused "${nm#*:}" --n "${nm%:*}" --op swiglu --op geglu_tanh --op geglu_erf \
            --op reglu --json-out "$OUT/bench-torch.jsonl"
    done
    # ffn through its Python package in PyTorch's process, rep for rep beside PyTorch eager in
    # the same timer (the small sizes, where two processes' runs differ by more than the rows).
    if [ -f "$here/lib/libffn.so" ]; then
        step torch_inproc 240 torch.log torch.log env FFN_LIBRARY="$here/lib/libffn.so" \
            PYTHONDONTWRITEBYTECODE=1 python3 "$here/bench/torch_cuda.py" --no-compile \
            --with-ffn --n 1572864,16777216 --json-out "$OUT/bench-torch-inproc.jsonl"
    fi
    # The accuracy of PyTorch's f32 forwards and backwards over every f32 input (docs/cuda.md,
    # "Results").
    step torch_ulp 120 torch-ulp.txt torch.log python3 "$here/bench/torch_ulp.py" \
        --json-out "$OUT/torch-ulp.jsonl"
fi

# --- variants of the flat kernel's block size, the lookup table's partition (accurate tier), and a
# device copy with random data against the kernels (design) ----------------------------------------
if want var; then
    for b in 128 512; do
        step bench_b$b 30 bench-b$b.jsonl tools.log env FFN_CUDA_BLOCK=$b "$here/bin/ffn" bench \
            act --backend cuda --json --op silu --op gelu_tanh --op relu --op swiglu \
            --dtype f32 --dtype bf16 --n 1572864,117440512
    done
    for m in 0 1; do
        step bench_lut$m 30 bench-lut$m.jsonl tools.log env FFN_CUDA_LUT=1 FFN_CUDA_LUT_MODE=$m \
            "$here/bin/ffn" bench act --backend cuda --json --unary --dir fwd --dtype bf16 \
            --accurate --n 1572864,16777216,117440512
    done
    step bench_copy_random 60 bench-copy.jsonl tools.log env FFN_BENCH_COPY_SRC=random \
        "$here/bin/ffn" bench act --backend cuda --json --dir fwd --op identity --op relu \
        --op silu --op gelu_tanh --op swiglu --op bilinear --dtype f32 --dtype bf16 \
        --n 16777216,117440512
fi

# --- the flat kernel's forms (ew_kernel.cuh; FFN_CUDA_FLAT_FORM=U,W: U chunks a thread and step,
# W = 0 one pass, W > 0 W waves of resident blocks looping): the kernel tests under two forms and
# the layout tests under four (looping grids capped at 3 blocks, so that every thread takes many
# steps and the last one partly), then every op, direction and dtype through the direct kernel
# (tables off) under each form, and once as the defaults run it (design) -----------------------
flat_forms="1,0 2,0 4,0 1,1 2,1 4,1 2,4 4,4"
flat_n=1572864,4194304,16777216,117440512
if want flat; then
    # (test_cuda --only-kernels compares every form's bits with one pass's itself.)
    for f in 4,0 1,1 2,1 4,1; do
        case $f in 2,1 | 4,1)
            step flat_kernels_${f/,/_} 90 tests.log tests.log env FFN_CUDA_FLAT_FORM=$f \
                FFN_CUDA_FLAT_BLOCKS=3 "$here/bin/test_cuda" --only-kernels ;;
        esac
        step flat_layouts_${f/,/_} 60 tests.log tests.log env FFN_CUDA_FLAT_FORM=$f \
            FFN_CUDA_FLAT_BLOCKS=3 "$here/bin/test_cuda" --only-layouts
    done
    step flat_big 60 tests.log tests.log "$here/bin/test_cuda" --big
    for f in $flat_forms; do
        step flat_bench_${f/,/_} 40 bench-flat-${f/,/_}.jsonl tools.log env FFN_CUDA_FLAT_FORM=$f \
            FFN_CUDA_LUT=0 "$here/bin/ffn" bench act --backend cuda --json --n $flat_n
    done
    step flat_bench_default 40 bench-flat-default.jsonl tools.log "$here/bin/ffn" bench act \
        --backend cuda --json --n $flat_n
    # The halves of a fused gate_up output through the generic kernel ($FFN_CUDA_FLAT=0) and
    # through the flat kernel over views of rows (the default).
    for nm in $fused_nm; do
        for fl in 0 1; do
            step "flat_fused${fl}_${nm#*:}" 40 bench-fused-flat$fl.jsonl tools.log env \
                FFN_CUDA_FLAT=$fl "$here/bin/ffn" bench act --backend cuda --json --glu \
                --fused "${nm#*:}" --n "${nm%:*}"
        done
    done
fi

# --- design measurements (bench/cuda_lab.cu) and the kernels' machine code ---------------------
if want lab && [ -x "$here/bin/cuda_lab" ]; then
    step lab 120 lab.txt lab.txt "$here/bin/cuda_lab" all
    # The accurate tier's 16-bit forwards through their lookup tables at every size (the default
    # uses them from 2^23 elements on): where the table pays.
    step bench_lut 60 bench-lut.jsonl tools.log env FFN_CUDA_LUT=1 "$here/bin/ffn" bench act \
        --backend cuda --json --unary --dir fwd --dtype bf16 --accurate \
        --n 1572864,16777216,117440512
fi
if want sass; then
    if command -v cuobjdump >/dev/null || [ -x /usr/local/cuda/bin/cuobjdump ]; then
        cuobj=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
        step sass 60 sass.txt sass.txt "$cuobj" -sass "$here/bin/ffn"
        [ -e "$OUT/sass.txt" ] && xz -T0 -f "$OUT/sass.txt"
    fi
fi

want blocks
# --- FFN blocks (cuBLASLt + ffn's kernels): tests, cuBLASLt's GeLU epilogues, ffn vs PyTorch ------
tb="$here/bin/test_cuda_block"
step block_misuse 30 block-tests.log block-tests.log "$tb" --misuse
step block_hf 60 block-tests.log block-tests.log "$tb" --hf "$here/data/hf/llama" --hf \
    "$here/data/hf/gemma" --hf "$here/data/hf/phi3" --hf "$here/data/hf/gpt2" --hf \
    "$here/data/hf/t5gated"
step block_epilogue 60 block-tests.log block-tests.log "$tb" --epilogue --stride 1
step block_grid 150 block-tests.log block-tests.log "$tb" --grid
step block_grid_gelu_epilogue 60 block-tests.log block-tests.log env FFN_CUDA_GELU_EPILOGUE=1 \
    "$tb" --grid --only-act gelu_tanh
step block_grid_fallback_gemm 90 block-tests.log block-tests.log env FFN_CUDA_BLOCK_GEMM=naive \
    "$tb" --grid --only-act silu
# The fused gated GEMM (src/cuda/glu_gemm.cu): the kernel alone (the forward, the backward's dh
# with dg, du, the two-product dx), then every eligible block call of the grid and of the gated
# fixtures through it (from one token on).
step block_glu_gemm 60 block-tests.log block-tests.log "$tb" --glu-gemm
step block_grid_glu 150 block-tests.log block-tests.log env FFN_CUDA_GLU_GEMM=1 "$tb" --grid
step block_hf_glu 60 block-tests.log block-tests.log env FFN_CUDA_GLU_GEMM=1 "$tb" --hf \
    "$here/data/hf/llama" --hf "$here/data/hf/phi3" --hf "$here/data/hf/gemma"
step block_bench 150 bench-block.jsonl block-tools.log "$here/bin/ffn" bench block --backend \
    cuda --json --stages --gemms
# The GEMM choice: the heuristic's first only (no timed pick), and the fastest of 32 candidates.
step block_bench_algos8 60 bench-block-algos8.jsonl block-tools.log env FFN_CUDA_GEMM_ALGOS=8 \
    "$here/bin/ffn" bench block --backend cuda --json --stages --gemms --tokens 8192
step block_bench_algos32 60 bench-block-algos32.jsonl block-tools.log env FFN_CUDA_GEMM_ALGOS=32 \
    "$here/bin/ffn" bench block --backend cuda --json --gemms --tokens 8192
# The gated blocks without the fused gated GEMM (cuBLASLt and ffn's combine), and the fused GEMM
# beside cuBLASLt's alone (bench/cuda_fused_gemm.cu) at 8192 and 2048 tokens.
step block_bench_unfused 60 bench-block-unfused.jsonl block-tools.log env FFN_CUDA_GLU_GEMM=0 \
    "$here/bin/ffn" bench block --backend cuda --json --stages --gemms --tokens 8192
step block_bench_glu_tokens 120 bench-block-glu.jsonl block-tools.log sh -c "for t in 512 1024 \
    2048 4096; do for v in 0 1; do FFN_CUDA_GLU_PARTS=5 FFN_CUDA_GLU_GEMM=\$v '$here/bin/ffn' \
    bench block --backend cuda --json --shape llama3-8b --tokens \$t; done; done"
# Its forms one by one ($FFN_CUDA_GLU_PARTS: 1 the forward, 2 the backward's dh, 4 its dx; 7 all).
step block_bench_glu_parts 120 bench-block-glu-parts.jsonl block-tools.log sh -c "for v in 1 3 5 \
    7; do FFN_CUDA_GLU_PARTS=\$v '$here/bin/ffn' bench block --backend cuda --json --tokens 8192 \
    | sed \"s/^{/{\\\"glu_parts\\\": \$v, /\"; done"
step glu_lab 60 glu-lab.log glu-lab.log sh -c "'$here/bin/cuda_fused_gemm' 8192 14336 4096 && \
    '$here/bin/cuda_fused_gemm' 2048 14336 4096"
# LLaMA's SwiGLU forward with bf16_parity.
step block_bench_parity 40 bench-block-parity.jsonl block-tools.log "$here/bin/ffn" bench block \
    --backend cuda --json --stages --parity --shape llama3-8b
# dx of LLaMA's two planes accumulated in bf16 (rounded twice) instead of staged in f32.
step block_bench_dx2 40 bench-block-dx2.jsonl block-tools.log env FFN_CUDA_BLOCK_DX_ROUND=2 \
    "$here/bin/ffn" bench block --backend cuda --json --stages --shape llama3-8b --tokens 8192
step block_torch_gemms 90 block-torch.log block-torch.log python3 \
    "$here/bench/torch_cuda_block.py" --gemms --tokens 512,8192 --json-out \
    "$OUT/bench-block-torch-gemms.jsonl"
step block_bench_epilogue 40 bench-block.jsonl block-tools.log env FFN_CUDA_GELU_EPILOGUE=1 \
    "$here/bin/ffn" bench block --backend cuda --json --shape gpt2-small
step block_torch_eager 120 block-torch.log block-torch.log python3 \
    "$here/bench/torch_cuda_block.py" --no-compile --json-out "$OUT/bench-block-torch.jsonl"
step block_bench_f32 90 bench-block.jsonl block-tools.log "$here/bin/ffn" bench block --backend \
    cuda --json --dtype f32 --tokens 512
step block_bench_tf32 60 bench-block.jsonl block-tools.log "$here/bin/ffn" bench block --backend \
    cuda --json --dtype f32 --math tf32 --tokens 8192
step block_torch_compile 200 block-torch.log block-torch.log python3 \
    "$here/bench/torch_cuda_block.py" --no-eager --json-out "$OUT/bench-block-torch.jsonl"

# --- the summary, printed last ------------------------------------------------------------------
python3 "$here/summary.py" "$OUT"
if [ -s "$OUT/bench-block.jsonl" ] || [ -s "$OUT/block-tests.log" ]; then
    {
        echo "== FFN blocks: steps"
        grep -P '^step\tblock_' "$OUT/run.log"
        echo "== block tests: failures (first 20) and summaries"
        grep -E 'FAIL' "$OUT/block-tests.log" | head -20
        grep -E '^(test_cuda_block|grid|  dtypes|  d=|epilogue|cuBLASLt GeLU|  (what|GELU|DGELU) |  +worst overall)' \
            "$OUT/block-tests.log"
        echo "== ffn vs GEMMs alone vs PyTorch"
        python3 "$here/bench/torch_cuda_block.py" --table-only --ffn-json "$OUT/bench-block.jsonl" \
            --torch-json "$OUT/bench-block-torch.jsonl" 2>&1
        echo "== GEMMs one by one: ffn (the heuristic's first, or FFN_CUDA_GEMM_ALGOS candidates timed) vs PyTorch"
        python3 "$here/bench/torch_cuda_block.py" --gemm-table --ffn-json "$OUT/bench-block.jsonl" \
            --torch-json "$OUT/bench-block-torch-gemms.jsonl" 2>&1
        for v in algos8 algos32 parity dx2 unfused glu; do
            [ -s "$OUT/bench-block-$v.jsonl" ] || continue
            echo "== GEMMs one by one and stages, variant $v"
            python3 "$here/bench/torch_cuda_block.py" --gemm-table --ffn-json \
                "$OUT/bench-block-$v.jsonl" --torch-json "$OUT/bench-block-torch-gemms.jsonl" 2>&1
            echo "== ffn rows, variant $v (algos8/32: FFN_CUDA_GEMM_ALGOS; parity: bf16_parity; dx2: FFN_CUDA_BLOCK_DX_ROUND=2; unfused: FFN_CUDA_GLU_GEMM=0; glu: llama3-8b, 0 and 1 alternated)"
            python3 -c 'import json,sys
for l in open(sys.argv[1]):
    r = json.loads(l) if l.startswith("{") else {}
    if "shape" in r and "bench" not in r:
        print(r["shape"], r["tokens"], r["math"], r["pass"], "%.3f ms gemms %.3f ms" % (
              r["seconds"] * 1e3, r["gemm_seconds"] * 1e3), "ratio %.3f floor %.3f" % (
              r["ratio_to_gemm"], r["floor_ratio"]), r["impl"])' "$OUT/bench-block-$v.jsonl" 2>&1
        done
        echo "== ffn rows (the first GEMM's implementation)"
        python3 -c 'import json,sys
for l in open(sys.argv[1]):
    r = json.loads(l) if l.startswith("{") else {}
    if "shape" in r and "bench" not in r:
        print(r["shape"], r["tokens"], r["math"], r["pass"], "%.3f ms" % (r["seconds"] * 1e3),
              "ratio %.3f floor %.3f host %.0f us" % (r["ratio_to_gemm"], r["floor_ratio"],
              r["host_us"]), r["impl"])' "$OUT/bench-block.jsonl" 2>&1
    } >"$OUT/block-summary.txt"
    cat "$OUT/block-summary.txt"
fi
# The var group's copy with random data, one line a row: GB/s and the ratio to the same-run copy.
if [ -s "$OUT/bench-copy.jsonl" ]; then
    python3 - "$OUT" <<'PY' | tee "$OUT/copy-summary.txt"
import json, os, sys
def rows(name):
    p = os.path.join(sys.argv[1], name)
    if not os.path.exists(p):
        return []
    return [json.loads(l) for l in open(p) if l.startswith("{") and '"op"' in l]
print("== the copy with random data (FFN_BENCH_COPY_SRC=random): GB/s, copy GB/s, ratio")
for r in rows("bench-copy.jsonl"):
    print("%-12s %-3s %-5s %10d | %7.1f %7.1f %.3f" % (r["op"], r["dir"], r["dtype"], r["n"],
          r["gbps"], r["copy_gbps"], r["ratio"]))
PY
fi
# The flat group: tests under each form, every row's ratio to the copy under each form, the best
# form per class of the rule (cuda_backend.c ffn__flat_rule) as a table to paste.
if ls "$OUT"/bench-flat-*.jsonl >/dev/null 2>&1 || grep -qP '^step\tflat_' "$OUT/run.log"; then
    python3 - "$OUT" "$flat_forms" <<'PY' | tee "$OUT/flat-summary.txt"
import json, math, os, re, sys
out, forms = sys.argv[1], sys.argv[2].split()
print("== flat group: steps (FFN_CUDA_FLAT_FORM=U,W; tests: looping grids of 3 blocks)")
for l in open(os.path.join(out, "run.log")):
    if l.startswith("step\tflat_"):
        f = l.split("\t")
        print("%-24s %-7s rc %s %4s s" % (f[1], f[2], f[3], f[4].strip()))
tl = os.path.join(out, "tests.log")
if os.path.exists(tl):
    for l in open(tl):
        if "FAIL" in l or re.match(r"^(kernels|layouts|big|flat forms)", l):
            print("  " + l.rstrip()[:140])
def rows(name):
    p = os.path.join(out, name)
    if not os.path.exists(p):
        return {}
    d, ratios = {}, {}
    for l in open(p):  # a row measured more than once (files of several runs joined): the mean
        if l.startswith("{") and '"op"' in l:
            r = json.loads(l)
            k = (r["op"], r["dir"], r["dtype"], r["n"])
            ratios.setdefault(k, []).append(r["ratio"])
            d[k] = dict(r, ratio=sum(ratios[k]) / len(ratios[k]))
    return d
B = {f: rows("bench-flat-%s.jsonl" % f.replace(",", "_")) for f in forms}
D = rows("bench-flat-default.jsonl")
forms = [f for f in forms if B[f]]
if not forms:
    sys.exit(0)
keys = sorted(set().union(*[set(B[f]) for f in forms]))
print("== ratio to the same-run copy, direct kernel (FFN_CUDA_LUT=0) under each")
print("   form U,W; default = the defaults (tables on, the rule's form); * = best form")
print("%-12s %-3s %-4s %9s |" % ("op", "dir", "dt", "n") + "".join(" %5s" % f for f in forms) +
      " | best  default")
for k in keys:
    v = [B[f][k]["ratio"] if k in B[f] else float("nan") for f in forms]
    b = max(range(len(forms)), key=lambda i: v[i] if v[i] == v[i] else -1)
    d = D.get(k)
    print("%-12s %-3s %-4s %9d |" % k + "".join(" %5.3f" % x for x in v) + " | %-5s %s" % (
          forms[b], "%.3f" % d["ratio"] if d else "-"))
print("== host_us (median over rows) per form; default run")
for f in forms:
    h = sorted(r["host_us"] for r in B[f].values())
    print("  %-5s %.2f us (max %.2f)" % (f, h[len(h) // 2], h[-1]))
if D:
    h = sorted(r["host_us"] for r in D.values())
    print("  deflt %.2f us (max %.2f)" % (h[len(h) // 2], h[-1]))
# The rule's classes: op x 16-bit x the activation's math (none: ReLU, identity; light: the
# sigma family; heavy: tanh-GeLU; erf: erf-GeLU). The identity forward of one dtype is a
# cudaMemcpy, not the kernel. Geometric mean of the ratios at n >= 16M, then at the smallest n.
acts = {"relu": 0, "identity": 0, "silu": 1, "sigmoid": 1, "quick_gelu": 1, "gelu_tanh": 2,
        "gelu_erf": 3}
mnames = ("none", "light", "heavy", "erf")
kop = {(False, "fwd"): "FFN_KOP_ACT_FWD", (False, "bwd"): "FFN_KOP_ACT_BWD",
       (True, "fwd"): "FFN_KOP_GLU_FWD", (True, "bwd"): "FFN_KOP_GLU_BWD"}
def cls(r):  # tanh-GeLU's 16-bit tier is light (cuda_backend.c ffn__flat_form_of)
    if r["act"] not in acts or (r["op"] == "identity" and r["dir"] == "fwd"):
        return None
    m = 1 if r["act"] == "gelu_tanh" and r["dtype"] != "f32" else acts[r["act"]]
    return (kop[(bool(r["glu"]), r["dir"])], r["dtype"] != "f32", m)
def gm(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")
nmin = min(k[3] for k in keys)
sizes = sorted(set(k[3] for k in keys))
classes = sorted(set(filter(None, (cls(r) for r in B[forms[0]].values()))))
def sel_rows(f, c, sel):
    return [r["ratio"] for k, r in B[f].items() if cls(r) == c and sel(k[3])]
def gms(sel):  # per class, the geometric mean of each form's ratios at the sizes sel picks
    return {c: [gm(sel_rows(f, c, sel)) for f in forms] for c in classes}
def pick(c, g, sel):  # of the forms within 1% of the best mean, the one whose worst row is best
    top = max(x for x in g if x == x)
    near = [i for i in range(len(forms)) if g[i] == g[i] and g[i] >= 0.99 * top]
    return max(near, key=lambda i: min(sel_rows(forms[i], c, sel)))
rules = {}
# Three rules (cuda_backend.c: small below FFN_CUDA_FLAT_MEDIUM elements, medium below
# FFN_CUDA_FLAT_LARGE, large from there), each chosen at its own sizes.
SIZES = (("large", lambda n: n >= 67108864, "n >= 64M"),
         ("medium", lambda n: 16777216 <= n < 67108864, "16M <= n < 64M"),
         ("small", lambda n: n == nmin, "n = %d" % nmin))
for name, sel, what in SIZES:
    print("== geometric mean of the ratios per class of the rule, %s (the %s rule)" % (what, name))
    print("%-16s %-5s %-5s |" % ("op", "dt", "act") + "".join(" %5s" % f for f in forms) +
          " | best")
    G = gms(sel)
    rules[name] = {c: forms[pick(c, G[c], sel)] for c in classes}
    for c in classes:
        print("%-16s %-5s %-5s |" % (c[0], "16bit" if c[1] else "f32",
              mnames[c[2]]) + "".join(" %5.3f" % x for x in G[c]) +
              " | %s" % rules[name][c])
# Between the two sizes: each rule's geometric mean over the classes at every size, so that the
# size where the small rule stops paying can be read off.
print("== each rule at each size (geometric mean over the classes of the rule's form)")
for n in sizes:
    G = gms(lambda m, n=n: m == n)
    line = "  n %9d:" % n
    for name in ("small", "medium", "large"):
        v = [G[c][forms.index(rules[name][c])] for c in classes]
        line += "  %s %.3f" % (name, gm([x for x in v if x == x]))
    print(line)
print("== the rules: per class, of the forms within 1% of the best mean, the one whose worst row")
print("   is best")
print("   (src/cuda/cuda_backend.c ffn__flat_rule, [small, medium, large]):")
for name in ("small", "medium", "large"):
    print("  [%s]" % name)
    for op in ("FFN_KOP_ACT_FWD", "FFN_KOP_ACT_BWD", "FFN_KOP_GLU_FWD", "FFN_KOP_GLU_BWD"):
        f = lambda h: ", ".join("{%s}" % rules[name].get((op, h, m), "1,0").replace(",", ", ")
                                for m in range(4))
        print("    [%s] = {{%s}, {%s}}," % (op, f(False), f(True)))
PY
fi
# The device tool returns at most 8 files: pack the rest.
if [ "$(find "$OUT" -maxdepth 1 -type f | wc -l)" -gt 8 ]; then
    (cd "$OUT" && find . -maxdepth 1 -type f ! -name '*summary.txt' ! -name logs.tar.xz \
        -printf '%P\n' | tar -cJf logs.tar.xz -T - && find . -maxdepth 1 -type f \
        ! -name '*summary.txt' ! -name logs.tar.xz -delete)
fi
