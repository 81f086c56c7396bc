// gemv_avx512_l2.c — the skinny GEMM kernels of gemv_avx512.c compiled a second time with the
// next weight rows prefetched into L2 only (the T1 hint) instead of L1 and L2 (T0), as
// ffn_gemv_ba_l2__avx512 and ffn_gemv_ab_l2__avx512: the same code and sums, another prefetch
// instruction. dispatch.c picks one of the two per CPU.
#define FFN_GEMV_L2 1
#include "gemv_avx512.c"
