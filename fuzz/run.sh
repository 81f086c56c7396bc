#!/bin/sh
# fuzz/run.sh [SECONDS] [KIND...] — `make fuzz`: builds the libFuzzer harnesses with clang
# (-fsanitize=fuzzer,address,undefined) into fuzz/out/ and runs each for SECONDS (default 20),
# starting from the seed corpus fuzz/corpus/<kind>. KINDs (default all): safetensors gguf config
# model args. New inputs go to fuzz/out/corpus-<kind> (ignored by git); a crash leaves crash-*
# files in fuzz/out and stops. Only the io layer and what it links (core, the scalar kernels)
# are built, plus tools/args.c for `args`: no OpenMP, no BLAS. One fuzzing job at a time.
set -e
cd "$(dirname "$0")/.."
secs=${1:-20}
[ $# -gt 0 ] && shift
kinds=${*:-safetensors gguf config model args}
out=fuzz/out
mkdir -p "$out"
cc=${FUZZ_CC:-clang}
# the library without its ISA kernels and GPU backends: core, the scalar CPU kernels, the block
# (its GEMMs report unsupported without oneDNN), the readers
srcs="src/core/*.c src/cpu/*.c src/cpu/scalar/*.c src/block/*.c src/io/*.c"
cflags="-g -O1 -std=gnu11 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
        -fno-omit-frame-pointer -Iinclude -Isrc $(pkg-config --cflags libcjson)"
libs="$(pkg-config --libs libcjson) -lm"
for kind in $kinds; do
    extra=""
    [ "$kind" = args ] && extra="tools/args.c"
    echo "fuzz: building fuzz_$kind"
    # shellcheck disable=SC2086
    $cc $cflags fuzz/fuzz_$kind.c $extra $srcs $libs -o "$out/fuzz_$kind"
done
n=0
for kind in $kinds; do
    echo "fuzz: running fuzz_$kind for ${secs}s"
    mkdir -p "$out/corpus-$kind"
    (cd "$out" && ./fuzz_$kind -max_total_time="$secs" -max_len=65536 -timeout=10 \
        -rss_limit_mb=2048 -print_final_stats=1 "corpus-$kind" "../corpus/$kind")
    n=$((n + 1))
done
echo "fuzz: no crash in $((n * secs)) s"
