// sigmoid_avx2.c — σ and the GLU for AVX2 + FMA + F16C:
// src/cpu/act/sigmoid.inc compiled over the vocabulary of src/cpu/simd/simd_avx2.h.
#include "cpu/simd/simd_avx2.h"

#include "cpu/act/sigmoid.inc"
