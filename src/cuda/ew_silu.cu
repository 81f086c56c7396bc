// ew_silu.cu — the CUDA kernels of SiLU and SwiGLU: forward, backward, the gated
// combine and its backward, every dtype pair (ew_kernel.cuh; the math is act_math.h's).
#include "cuda/ew_kernel.cuh"

FFN_CUDA_EW_GETTER(silu, FFN_ACT_SILU)
