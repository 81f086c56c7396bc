// gelu_erf_avx2.c — erf-GeLU and GeGLU (erf) for AVX2 + FMA + F16C:
// src/cpu/act/gelu_erf.inc compiled over the vocabulary of src/cpu/simd/simd_avx2.h.
// Streamed, the forward runs its pre stage in place (f32: 0.98 -> 1.06x) and the backward stores
// non-temporally whatever its output type (f16: 0.96 -> 1.02x, bf16: 1.45 -> 1.61x; same-process
// A/B at 32M against the separate AVX2 kernels, AMD EPYC Zen 5; docs/performance.md).
#define FFN_V_STREAM_AHEAD 0xe  // bits 1 << enum ffn_kop: all but ACT_FWD (0)
#define FFN_V_STREAM_NT 0x2     // ACT_BWD (1)
#include "cpu/simd/simd_avx2.h"

#include "cpu/act/gelu_erf.inc"
