#!/bin/sh
# fuzz/run.sh [SECONDS] — `make fuzz`: builds the libFuzzer harnesses of the io readers with clang
# (-fsanitize=fuzzer,address,undefined) into fuzz/out/ and runs each for SECONDS (default 20, so a
# minute for the three), starting from the seed corpus fuzz/corpus/<kind>. New inputs go to
# fuzz/out/corpus-<kind> (ignored by git); a crash leaves crash-* files in fuzz/out and stops.
# Only the io layer and what it links (core, the scalar kernels) are built: no OpenMP, no BLAS.
set -e
cd "$(dirname "$0")/.."
secs=${1:-20}
out=fuzz/out
mkdir -p "$out"
cc=${FUZZ_CC:-clang}
srcs="src/core/*.c src/cpu/*.c src/cpu/scalar/*.c src/io/*.c"
cflags="-g -O1 -std=gnu11 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
        -fno-omit-frame-pointer -Iinclude -Isrc $(pkg-config --cflags libcjson)"
libs="$(pkg-config --libs libcjson) -lm"
for kind in safetensors gguf config; do
    echo "fuzz: building fuzz_$kind"
    # shellcheck disable=SC2086
    $cc $cflags fuzz/fuzz_$kind.c $srcs $libs -o "$out/fuzz_$kind"
done
for kind in safetensors gguf config; do
    echo "fuzz: running fuzz_$kind for ${secs}s"
    mkdir -p "$out/corpus-$kind"
    (cd "$out" && ./fuzz_$kind -max_total_time="$secs" -max_len=65536 -timeout=10 \
        -rss_limit_mb=2048 -print_final_stats=1 "corpus-$kind" "../corpus/$kind")
done
echo "fuzz: no crash in $((3 * secs)) s"
