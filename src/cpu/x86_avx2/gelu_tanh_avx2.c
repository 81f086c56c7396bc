// gelu_tanh_avx2.c — tanh-GeLU and GeGLU (tanh) for AVX2 + FMA + F16C:
// src/cpu/act/gelu_tanh.inc compiled over the vocabulary of src/cpu/simd/simd_avx2.h.
// The gated forward streams one sub-range with its pre stage in place, in a function apart from
// its loop in cache (docs/performance.md).
#define FFN_V_STREAM_WAYS 0x100  // 4 bits per enum ffn_kop: GLU_FWD (2) one sub-range
#define FFN_V_STREAM_AHEAD 0xb   // bits 1 << enum ffn_kop: all but GLU_FWD (2)
#define FFN_V_APART 0x4          // GLU_FWD (2)
#include "cpu/simd/simd_avx2.h"

#include "cpu/act/gelu_tanh.inc"
