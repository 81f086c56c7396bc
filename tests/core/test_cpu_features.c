// test_cpu_features.c — ffn's x86 feature detection (src/core/cpu_features.c: CPUID bits and the
// OS's XSAVE state) against an independent witness, the kernel's own flags in /proc/cpuinfo,
// which Linux clears for a feature whose register state it does not enable: AVX2 (with AVX, FMA
// and F16C, as ffn's AVX2 kernels need), AVX-512 (F, DQ, BW, VL), AVX512_BF16, and AMX (AMX-BF16
// with AMX-TILE), on which the skinny GEMM's row limits depend. Skipped where /proc/cpuinfo has
// no flags line (not Linux, not x86).
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "core/core_impl.h"

// Whether the space-separated flags line has `name` as a whole word.
static bool has(const char *flags, const char *name) {
    const size_t n = strlen(name);
    for (const char *p = flags; (p = strstr(p, name)) != NULL; p += n)
        if ((p == flags || p[-1] == ' ' || p[-1] == '\t') &&
            (p[n] == ' ' || p[n] == '\n' || p[n] == '\0'))
            return true;
    return false;
}

int main(void) {
    ffn_check_begin("cpu_features");
#if defined(__x86_64__) || defined(__i386__)
    static char line[1 << 16];
    FILE *f = fopen("/proc/cpuinfo", "r");
    bool found = false;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "flags", 5)) {
            found = true;
            break;
        }
    if (f) fclose(f);
    if (!found) return ffn_check_skip("no flags line in /proc/cpuinfo");
    const char *fl = strchr(line, ':');
    fl = fl ? fl + 1 : line;
    struct ffn_cpu_features ft;
    ffn_cpu_features_detect(&ft);
    const bool avx2 = has(fl, "avx") && has(fl, "avx2") && has(fl, "fma") && has(fl, "f16c");
    const bool avx512 = avx2 && has(fl, "avx512f") && has(fl, "avx512dq") && has(fl, "avx512bw") &&
                        has(fl, "avx512vl");
    CHECK_EQ(ft.avx2, avx2);
    CHECK_EQ(ft.avx512, avx512);
    CHECK_EQ(ft.avx512_bf16, avx512 && has(fl, "avx512_bf16"));
    CHECK_EQ(ft.amx_bf16, avx512 && has(fl, "amx_bf16") && has(fl, "amx_tile"));
    printf("cpu_features: avx2 %d avx512 %d avx512_bf16 %d amx_bf16 %d\n", ft.avx2, ft.avx512,
           ft.avx512_bf16, ft.amx_bf16);
    CHECK(!has("xavx2 avx2x", "avx2") && has("a avx2 b", "avx2") && has("avx2\n", "avx2"),
          "the word match");
#else
    return ffn_check_skip("not x86");
#endif
    return ffn_check_summary();
}
