// ew_gelu_erf.cu — the CUDA kernels of erf-GeLU and GeGLU (erf): forward, backward, the gated
// combine and its backward, every dtype pair (ew_kernel.cuh; the math is act_math.h's).
#include "cuda/ew_kernel.cuh"

FFN_CUDA_EW_GETTER(gelu_erf, FFN_ACT_GELU_ERF)
