#!/usr/bin/env bash
# scripts/gpu-bundle.sh OUTDIR — builds the CUDA backend here (build-cuda/: Release, ccache where
# installed, nvcc found; no GPU needed) and collects into OUTDIR what a GPU machine needs to run
# its whole check, with relative paths only:
#   bin/      ffn, test_cuda, test_cuda_fault, test_cuda_math, test_cuda_block (stripped), cuda_lab,
#             cuda_fused_gemm
#             test_tp_nccl when the build has NCCL (the GPU machine's own libnccl.so.2 is used)
#   lib/      the shared libraries the binaries need that a stock Ubuntu 24.04 CUDA image lacks
#             (libcjson, ...: every ldd dependency outside the list below)
#   bench/    torch_cuda.py, torch_cuda_block.py, _torchbench.py, torch_ulp.py
#   data/hf/  the Hugging Face fixtures the block tests read (tests/data/hf, 3.4 MB)
#   lib/libffn.so, python/ffn/, tests/python/{ffntest,test_cuda}.py, bench/py_bench.py
#             the Python package on CUDA tensors and its GPU tests, against this libffn.so
#   run.sh    the run (scripts/gpu-run.sh): tests, exhaustive ulp sweeps, benchmarks, PyTorch;
#             logs under $OUT, a summary table last (scripts/gpu-summary.py, copied as summary.py)
# Then, on the GPU machine: OUT=<a folder> ./run.sh (about 5-7 minutes on an H200).
# BUILD (default build-cuda) and JOBS (default 2) can be set; the bundle's size is checked
# against 48 MiB (the large files in one solid payload.tar.xz). LEAN=1 keeps only what the
# element-wise groups need (ffn, test_cuda, test_cuda_math, cuda_lab: tests' kernel steps, ulp,
# bench, var, flat, lab, sass), each binary carrying the kernels' fatbin.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: scripts/gpu-bundle.sh OUTDIR}
build=${BUILD:-$root/build-cuda}
jobs=${JOBS:-2}

# ccache where it is installed (rebuilds of the kernels' fatbin are long).
launch=()
if command -v ccache >/dev/null; then
    launch=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DFFN_CUDA=ON "${launch[@]}" >/dev/null
if ! grep -qs cuda_kernels "$build/tests/cuda/CTestTestfile.cmake"; then
    echo "gpu-bundle.sh: the build has no CUDA backend (is nvcc installed?)" >&2
    exit 2
fi
cmake --build "$build" -j "$jobs" --target ffn_tool test_cuda test_cuda_fault test_cuda_math \
    test_cuda_block ffn_shared
# The NCCL communicator's test (tests/tp/test_tp_nccl), when the build has NCCL.
if grep -qs tp_nccl "$build/tests/tp/CTestTestfile.cmake"; then
    cmake --build "$build" -j "$jobs" --target test_tp_nccl
fi

rm -rf "$out"
mkdir -p "$out/bin" "$out/lib" "$out/bench"
for b in ffn tests/cuda/test_cuda tests/cuda/test_cuda_fault tests/cuda/test_cuda_math \
    tests/cuda/test_cuda_block; do
    strip -o "$out/bin/$(basename "$b")" "$build/$b"
done
# The design measurements (bench/cuda_lab.cu), built by nvcc for sm_90.
"${CUDACXX:-/usr/local/cuda/bin/nvcc}" -O3 -fmad=false -arch=sm_90 -I"$root/src" -I"$root/include" \
    -o "$out/bin/cuda_lab" "$root/bench/cuda_lab.cu"
# The fused gated GEMM beside cuBLASLt (bench/cuda_fused_gemm.cu): sm_90a code, the driver's
# tensor-map encoder linked directly (libcuda from the build's stubs; the GPU machine's driver).
"${CUDACXX:-/usr/local/cuda/bin/nvcc}" -O3 -std=c++17 -fmad=false \
    -gencode=arch=compute_90a,code=sm_90a -I"$root/src" -I"$root/include" -I"$root/bench" \
    -o "$out/bin/cuda_fused_gemm" "$root/bench/cuda_fused_gemm.cu" -lcublasLt -lcuda
cp "$root/bench/torch_cuda.py" "$root/bench/torch_cuda_block.py" "$root/bench/_torchbench.py" \
    "$root/bench/torch_ulp.py" \
    "$out/bench/"
mkdir -p "$out/data/hf"
for fx in llama gemma phi3 gpt2 t5gated; do
    mkdir -p "$out/data/hf/$fx"
    cp "$root/tests/data/hf/$fx/model.safetensors" "$root/tests/data/hf/$fx/io.safetensors" \
        "$out/data/hf/$fx/"
done
if [ -x "$build/tests/tp/test_tp_nccl" ]; then
    strip -o "$out/bin/test_tp_nccl" "$build/tests/tp/test_tp_nccl"
fi
# The Python package (ctypes over lib/libffn.so) and its GPU tests; run.sh sets FFN_LIBRARY.
strip --strip-unneeded -o "$out/lib/libffn.so" "$(readlink -f "$build/libffn.so")"
mkdir -p "$out/python/ffn" "$out/tests/python"
cp "$root"/python/ffn/*.py "$out/python/ffn/"
cp "$root/tests/python/ffntest.py" "$root/tests/python/test_cuda.py" "$out/tests/python/"
cp "$root/bench/py_bench.py" "$out/bench/"
cp "$root/scripts/gpu-run.sh" "$out/run.sh"
cp "$root/scripts/gpu-summary.py" "$out/summary.py"
chmod +x "$out/run.sh"

# Libraries present on the GPU machine's image (Ubuntu 24.04 + CUDA 13: glibc, gcc's runtimes,
# OpenMP, MPFR/GMP, OpenBLAS with its Fortran runtime, Open MPI, NCCL, the CUDA libraries);
# everything else the binaries load is copied.
present='^(linux-vdso|ld-linux|libc|libm|libdl|librt|libpthread|libgcc_s|libstdc\+\+|libgomp'
present+='|libmpfr|libgmp|libopenblas|libgfortran|libquadmath|libmpi|libopen-[a-z]+|libnccl'
present+='|libcudart|libcublas|libcublasLt|libcuda|libhwloc|libevent[a-z_-]*|libudev|libz)\.'
for b in "$out"/bin/* "$out/lib/libffn.so"; do
    ldd "$b" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}'
done | sort -u | while read -r name path; do
    if ! [[ $name =~ $present ]]; then
        cp -L "$path" "$out/lib/$name"
        echo "gpu-bundle.sh: bundled $name (from $path)"
    fi
done

if [ -n "${LEAN:-}" ]; then
    rm -rf "$out/data" "$out/python" "$out/tests" "$out/lib/libffn.so" "$out/bin/test_cuda_block" \
        "$out/bin/test_cuda_fault" "$out/bin/test_tp_nccl"
fi
# Large libraries and binaries travel compressed, in one solid archive (payload.tar.xz) whose
# dictionary spans them all: each binary and libffn.so carries the same kernels' fatbin (~39 MB
# each, ~7 MB as xz alone), so the archive holds it about once (seven binaries: 9.7 MB against
# 50 MB compressed one by one; oneDNN ~40 MB, ~7 MB). run.sh unpacks it.
large=$(cd "$out" && find lib bin -type f -size +4M | sort)
if [ -n "$large" ]; then
    # shellcheck disable=SC2086  # file names without spaces, one per word
    (cd "$out" && tar -cf - $large | xz -T1 --lzma2=preset=6,dict=192MiB -c >payload.tar.xz &&
        rm -f $large)
fi

size=$(du -sk "$out" | awk '{print $1}')
echo "gpu-bundle.sh: $out: $((size / 1024)) MiB ($(find "$out" -type f | wc -l) files)"
if [ "$size" -gt $((48 * 1024)) ]; then
    echo "gpu-bundle.sh: warning: larger than 48 MiB" >&2
fi
echo "gpu-bundle.sh: on the GPU machine: OUT=<folder> $out/run.sh"
