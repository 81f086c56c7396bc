// ew_relu.cu — the CUDA kernels of ReLU and ReGLU: forward, backward, the gated
// combine and its backward, every dtype pair (ew_kernel.cuh; the math is act_math.h's).
#include "cuda/ew_kernel.cuh"

FFN_CUDA_EW_GETTER(relu, FFN_ACT_RELU)
