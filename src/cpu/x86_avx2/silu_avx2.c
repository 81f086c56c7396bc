// silu_avx2.c — SiLU and SwiGLU for AVX2 + FMA + F16C:
// src/cpu/act/silu.inc compiled over the vocabulary of src/cpu/simd/simd_avx2.h.
#include "cpu/simd/simd_avx2.h"

#include "cpu/act/silu.inc"
