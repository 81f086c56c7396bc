// silu_avx512.c — SiLU and SwiGLU for AVX-512 F/BW/DQ/VL:
// src/cpu/act/silu.inc compiled over the vocabulary of src/cpu/simd/simd_avx512.h.
#include "cpu/simd/simd_avx512.h"

#include "cpu/act/silu.inc"
