#!/bin/sh
# bench/ab.sh [REV] [-- ab_kernels arguments] — the SIMD kernels of git revision REV (default
# HEAD) against the working tree's, in one process (bench/ab_kernels.c): first the bitwise check,
# then the timing, by default `33554432 15` (32M f32, 15 alternating reps, every kernel).
#   bench/ab.sh                          HEAD against the working tree, all kernels, 32M
#   bench/ab.sh HEAD~3 -- 4096 3000 GLU  in-cache cycles per 16 elements of the gated kernels
#   bench/ab.sh HEAD -- 33554432 9 bf16  32M bf16 in and out, every kernel (f16: the word f16)
#   AB_ISA=avx2 bench/ab.sh REV          the AVX2 kernels (default avx512)
# Both trees compile with the library's flags for the ISA's files (CMakeLists.txt), plus
# $AB_CFLAGS (e.g. -D of an experiment's knob), the working tree's also with $AB_NEW_CFLAGS (a
# compiler option tried on the new side only, e.g. -mtune=znver3); AB_NOCHECK=1 skips the check;
# AB_KEEP=FILE keeps the program (run it again as FILE check, FILE N REPS [FILTER...]).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
rev=HEAD
if [ $# -gt 0 ] && [ "$1" != "--" ]; then rev=$1; shift; fi
[ $# -gt 0 ] && [ "$1" = "--" ] && shift
[ $# -gt 0 ] || set -- 33554432 15
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
isa=${AB_ISA:-avx512}
case $isa in
avx512) isaflags="-mavx512f -mavx512bw -mavx512dq -mavx512vl -mavx512bf16 -mavx2 -mfma -mf16c" ;;
avx2) isaflags="-mavx2 -mfma -mf16c" ;;
*) echo "ab.sh: AB_ISA is avx512 or avx2" >&2; exit 2 ;;
esac
mkdir -p "$work/old" "$work/o"
# The old kernels with the headers of their own revision (its whole src/cpu and src/core); the
# harness hands both trees one struct ffn_kcfg, so its definition must be the same in the two.
git -C "$root" archive "$rev" src/cpu src/core | tar -x -C "$work/old" --strip-components=1
# (src/cpu/kernels.h; src/core/core_impl.h in revisions before the CPU layer held it).
kcfg() {
    cat "$1/core/core_impl.h" "$1/cpu/kernels.h" 2>/dev/null | sed -n '/^struct ffn_kcfg {/,/^};/p'
}
if [ "$(kcfg "$work/old")" != "$(kcfg "$root/src")" ]; then
    echo "ab.sh: struct ffn_kcfg differs between $rev and the working tree" >&2
    exit 2
fi
flags="-O3 -fPIC -fno-fast-math -std=gnu11 $isaflags -ffp-contract=off -I$root/include \
${AB_CFLAGS:-}"
# The activation kernels only: gemv_*.c (the skinny GEMM's, which call into the cpu layer) and
# transpose_*.c (the AVX-512 transposes call the AVX2 ones) are not in the kernel list.
for c in "$work"/old/cpu/x86_$isa/*.c; do
    b=$(basename "$c" .c)
    case $b in gemv_* | transpose_*) continue ;; esac
    cc $flags -I"$work/old" -I"$root/src" -c "$c" -o "$work/o/old_$b.o"
    # old_ before the symbols it defines (the kernels), not before those it uses (memcpy)
    nm --defined-only -g "$work/o/old_$b.o" | awk '{print $3 " old_" $3}' >"$work/syms"
    objcopy --redefine-syms="$work/syms" "$work/o/old_$b.o"
done
for c in "$root"/src/cpu/x86_$isa/*.c; do
    case $(basename "$c") in gemv_* | transpose_*) continue ;; esac
    cc $flags ${AB_NEW_CFLAGS:-} -I"$root/src" -c "$c" -o "$work/o/new_$(basename "$c" .c).o"
done
cc -O2 -std=gnu11 -Wall -Wextra $isaflags -I"$root/src" -I"$root/include" \
    -DAB_KERNELS_INC="\"cpu/x86_$isa/kernels_$isa.inc\"" "$root/bench/ab_kernels.c" "$work"/o/*.o \
    -o "$work/ab_kernels" -lm
[ -z "${AB_KEEP:-}" ] || cp "$work/ab_kernels" "$AB_KEEP"
echo "# $isa: $rev (old) against the working tree (new)"
[ -n "${AB_NOCHECK:-}" ] || "$work/ab_kernels" check
"$work/ab_kernels" "$@"
