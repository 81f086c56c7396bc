// gelu_erf_avx512.c — erf-GeLU and GeGLU (erf) for AVX-512 F/BW/DQ/VL:
// src/cpu/act/gelu_erf.inc compiled over the vocabulary of src/cpu/simd/simd_avx512.h.
#include "cpu/simd/simd_avx512.h"

#include "cpu/act/gelu_erf.inc"
