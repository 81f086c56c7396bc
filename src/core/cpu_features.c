// cpu_features.c — x86-64 feature detection: CPUID bits *and* the OS's XSAVE state (XCR0), since
// a CPU with AVX-512 under an OS that does not save ZMM registers must not run AVX-512 code.
#include "core_impl.h"

#if defined(__x86_64__) || defined(__i386__)
#    include <cpuid.h>

static uint64_t ffn__xgetbv0(void) {
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((uint64_t)hi << 32) | lo;
}

void ffn_cpu_features_detect(struct ffn_cpu_features *f) {
    *f = (struct ffn_cpu_features){0};
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return;
    const bool osxsave = c & (1u << 27), avx = c & (1u << 28), fma = c & (1u << 12),
               f16c = c & (1u << 29);
    const int base = (int)(a >> 8 & 0xf);
    f->family = base == 0xf ? base + (int)(a >> 20 & 0xff) : base;
    unsigned v[4];
    __cpuid(0, v[0], v[1], v[2], v[3]);
    f->amd = v[1] == 0x68747541u && v[3] == 0x69746e65u && v[2] == 0x444d4163u;  // "AuthenticAMD"
    if (!osxsave || !avx) return;
    const uint64_t xcr0 = ffn__xgetbv0();
    const bool os_ymm = (xcr0 & 0x6) == 0x6;              // SSE + AVX state
    const bool os_zmm = os_ymm && (xcr0 & 0xe0) == 0xe0;  // opmask + ZMM_Hi256 + Hi16_ZMM
    if (__get_cpuid_max(0, NULL) < 7) return;
    __cpuid_count(7, 0, a, b, c, d);
    const bool avx2 = b & (1u << 5), avx512f = b & (1u << 16), avx512dq = b & (1u << 17),
               avx512bw = b & (1u << 30), avx512vl = b & (1u << 31);
    f->avx2 = os_ymm && avx2 && fma && f16c;
    f->avx512 = f->avx2 && os_zmm && avx512f && avx512dq && avx512bw && avx512vl;
    // AMX: the CPU's AMX-BF16 (leaf 7 EDX bit 22) and AMX-TILE (bit 24), and XCR0's XTILECFG and
    // XTILEDATA (bits 17, 18). Linux also wants a process to ask for the tile state
    // (arch_prctl); oneDNN does that itself, ffn only weighs what oneDNN will run.
    f->amx_bf16 = f->avx512 && (d & (1u << 22)) && (d & (1u << 24)) && (xcr0 & 0x60000) == 0x60000;
    __cpuid_count(7, 1, a, b, c, d);
    f->avx512_bf16 = f->avx512 && (a & (1u << 5));
}
#else
void ffn_cpu_features_detect(struct ffn_cpu_features *f) { *f = (struct ffn_cpu_features){0}; }
#endif

bool ffn_isa_supported(enum ffn_isa isa) {
    struct ffn_cpu_features f;
    ffn_cpu_features_detect(&f);
    switch (isa) {
    case FFN_ISA_AUTO:
    case FFN_ISA_SCALAR: return true;
#ifdef FFN_HAVE_X86_KERNELS
    case FFN_ISA_AVX2: return f.avx2;
    case FFN_ISA_AVX512: return f.avx512;
#endif
    default: return false;
    }
}
