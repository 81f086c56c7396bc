// ew_identity.cu — the CUDA kernels of identity (dtype conversion) and the Bilinear GLU: forward,
// backward, the gated combine and its backward, every dtype pair (ew_kernel.cuh; the math is
// act_math.h's).
#include "cuda/ew_kernel.cuh"

FFN_CUDA_EW_GETTER(identity, FFN_ACT_IDENTITY)
