// relu_avx512.c — ReLU and ReGLU for AVX-512 F/BW/DQ/VL:
// src/cpu/act/relu.inc compiled over the vocabulary of src/cpu/simd/simd_avx512.h.
#include "cpu/simd/simd_avx512.h"

#include "cpu/act/relu.inc"
