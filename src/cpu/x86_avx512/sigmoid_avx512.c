// sigmoid_avx512.c — σ and the GLU for AVX-512 F/BW/DQ/VL:
// src/cpu/act/sigmoid.inc compiled over the vocabulary of src/cpu/simd/simd_avx512.h.
#include "cpu/simd/simd_avx512.h"

#include "cpu/act/sigmoid.inc"
