// ew_gelu_tanh.cu — the CUDA kernels of tanh-GeLU and GeGLU (tanh): forward, backward, the gated
// combine and its backward, every dtype pair (ew_kernel.cuh; the math is act_math.h's).
#include "cuda/ew_kernel.cuh"

FFN_CUDA_EW_GETTER(gelu_tanh, FFN_ACT_GELU_TANH)
