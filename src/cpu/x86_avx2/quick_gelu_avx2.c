// quick_gelu_avx2.c — quick-GeLU and quick-GeGLU for AVX2 + FMA + F16C:
// src/cpu/act/quick_gelu.inc compiled over the vocabulary of src/cpu/simd/simd_avx2.h.
#include "cpu/simd/simd_avx2.h"

#include "cpu/act/quick_gelu.inc"
