// relu_avx2.c — ReLU and ReGLU for AVX2 + FMA + F16C:
// src/cpu/act/relu.inc compiled over the vocabulary of src/cpu/simd/simd_avx2.h.
#include "cpu/simd/simd_avx2.h"

#include "cpu/act/relu.inc"
