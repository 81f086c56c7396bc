// identity_avx2.c — identity and the Bilinear GLU for AVX2 + FMA + F16C:
// src/cpu/act/identity.inc compiled over the vocabulary of src/cpu/simd/simd_avx2.h.
#include "cpu/simd/simd_avx2.h"

#include "cpu/act/identity.inc"
