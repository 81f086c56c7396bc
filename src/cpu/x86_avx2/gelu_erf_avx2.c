// gelu_erf_avx2.c — erf-GeLU and GeGLU (erf) for AVX2 + FMA + F16C:
// src/cpu/act/gelu_erf.inc compiled over the vocabulary of src/cpu/simd/simd_avx2.h.
#include "cpu/simd/simd_avx2.h"

#include "cpu/act/gelu_erf.inc"
