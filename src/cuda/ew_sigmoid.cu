// ew_sigmoid.cu — the CUDA kernels of σ and the original GLU: forward, backward, the gated
// combine and its backward, every dtype pair (ew_kernel.cuh; the math is act_math.h's).
#include "cuda/ew_kernel.cuh"

FFN_CUDA_EW_GETTER(sigmoid, FFN_ACT_SIGMOID)
