// gelu_tanh_avx2.c — tanh-GeLU and GeGLU (tanh) for AVX2 + FMA + F16C:
// src/cpu/act/gelu_tanh.inc compiled over the vocabulary of src/cpu/simd/simd_avx2.h.
#include "cpu/simd/simd_avx2.h"

#include "cpu/act/gelu_tanh.inc"
