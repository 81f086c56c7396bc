// ew_quick_gelu.cu — the CUDA kernels of quick-GeLU and quick-GeGLU: forward, backward, the gated
// combine and its backward, every dtype pair (ew_kernel.cuh; the math is act_math.h's).
#include "cuda/ew_kernel.cuh"

FFN_CUDA_EW_GETTER(quick_gelu, FFN_ACT_QUICK_GELU)
