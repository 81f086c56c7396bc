// quick_gelu_avx512.c — quick-GeLU and quick-GeGLU for AVX-512 F/BW/DQ/VL:
// src/cpu/act/quick_gelu.inc compiled over the vocabulary of src/cpu/simd/simd_avx512.h.
#include "cpu/simd/simd_avx512.h"

#include "cpu/act/quick_gelu.inc"
