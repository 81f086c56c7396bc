// identity_avx512.c — identity and the Bilinear GLU for AVX-512 F/BW/DQ/VL:
// src/cpu/act/identity.inc compiled over the vocabulary of src/cpu/simd/simd_avx512.h.
#include "cpu/simd/simd_avx512.h"

#include "cpu/act/identity.inc"
