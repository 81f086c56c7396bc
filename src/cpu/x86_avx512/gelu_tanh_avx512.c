// gelu_tanh_avx512.c — tanh-GeLU and GeGLU (tanh) for AVX-512 F/BW/DQ/VL:
// src/cpu/act/gelu_tanh.inc compiled over the vocabulary of src/cpu/simd/simd_avx512.h.
#include "cpu/simd/simd_avx512.h"

#include "cpu/act/gelu_tanh.inc"
