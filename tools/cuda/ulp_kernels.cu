// ulp_kernels.cu — the GPU side of `ffn ulp --backend cuda`: input generation for a sweep chunk,
// and the ulp metric of the library's outputs against the double-precision reference evaluated
// on the device (the scalar reference's own formulas, cpu/scalar/act_ref.h; the metric of
// tools/ulp_metric.h), reduced per block. The host (ulp_cuda.c) merges the blocks and confirms
// the largest error of each row with MPFR.
#include <stdint.h>

#include "cuda/act_math.h"  // dtype conversions on the device
#include "tools_cuda.h"
#include "ulp_metric.h"

#define FFN_ULPCU_THREADS 256

static __device__ __forceinline__ float ffn__load(const void *p, int dt, int64_t i) {
    if (dt == FFN_DTYPE_F32) return ((const float *)p)[i];
    const uint16_t h = ((const uint16_t *)p)[i];
    return dt == FFN_DTYPE_BF16 ? ffn_cm_from_bf16(h) : ffn_cm_from_f16(h);
}

static __device__ __forceinline__ void ffn__store(void *p, int dt, int64_t i, float v) {
    if (dt == FFN_DTYPE_F32)
        ((float *)p)[i] = v;
    else
        ((uint16_t *)p)[i] = dt == FFN_DTYPE_BF16 ? ffn_cm_to_bf16(v) : ffn_cm_to_f16(v);
}

__global__ void ffn__gen(int op, int dt, const float *list, uint64_t i0, int64_t n, void *x,
                         void *m1, void *m2) {
    const float ups[4] = {1.0f, -0.75f, 2.5f, 0.0078125f}, dhs[3] = {1.0f, -1.25f, 0.375f};
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        const uint64_t g = i0 + (uint64_t)i;
        if (list) {
            ffn__store(x, dt, i, list[g]);
        } else if (dt == FFN_DTYPE_F32) {
            ((uint32_t *)x)[i] = (uint32_t)g;
        } else {
            ((uint16_t *)x)[i] = (uint16_t)g;
        }
        const bool unary = op == FFN_UM_ACT_FWD || op == FFN_UM_ACT_BWD;
        ffn__store(m1, dt, i, unary ? 1.0f : ups[g % 4]);
        ffn__store(m2, dt, i, op == FFN_UM_GLU_BWD ? dhs[g % 3] : 1.0f);
    }
}

// The reference value of output o in double, as `ffn ulp` (and the scalar kernels) compute it.
static __device__ double ffn__ref(int op, int o, enum ffn_act act, float x, float m1, float m2) {
    switch (op) {
    case FFN_UM_ACT_FWD: return ffn_ref_act_eval(act, x);
    case FFN_UM_ACT_BWD: return (double)m1 * ffn_ref_dact_eval(act, x);
    case FFN_UM_GLU_FWD: return ffn_ref_act_eval(act, x) * (double)m1;
    default:
        return o == 0 ? (double)m2 * (double)m1 * ffn_ref_dact_eval(act, x)
                      : (double)m2 * ffn_ref_act_eval(act, x);
    }
}

__global__ void __launch_bounds__(FFN_ULPCU_THREADS)
    ffn__metric(int op, int act_i, int dt, bool accurate, const void *x, const void *m1,
                const void *m2, const void *out0, const void *out1, int64_t n, uint64_t i0,
                struct ffn_ulpcu_stat *stats) {
    const enum ffn_act act = (enum ffn_act)act_i;
    const enum ffn_dtype dtype = (enum ffn_dtype)dt;
    const int n_out = out1 ? 2 : 1;
    const double bound = ffn_um_bound(op, act, accurate);
    __shared__ struct ffn_ulpcu_stat sh[2][FFN_ULPCU_THREADS];
    struct ffn_ulpcu_stat loc[2];
    for (int o = 0; o < 2; o++) {
        loc[o].max = 0, loc[o].sum = 0;
        loc[o].n = loc[o].n_cr = loc[o].n_over = 0;
        loc[o].i_max = -1;
        loc[o].x = loc[o].m1 = loc[o].m2 = loc[o].got = 0;
    }
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        const float xv = ffn__load(x, dt, i), a = ffn__load(m1, dt, i), b = ffn__load(m2, dt, i);
        for (int o = 0; o < n_out; o++) {
            const float got = ffn__load(o ? out1 : out0, dt, i);
            const double exact = ffn__ref(op, o, act, xv, a, b);
            const float a1 = op == FFN_UM_GLU_BWD && o == 1 ? b : a;
            const float a2 = op == FFN_UM_GLU_BWD && o == 0 ? b : 1.0f;
            const double err = ffn_um_ulp_error(op, o, act, dtype, got, exact, xv, a1, a2);
            struct ffn_ulpcu_stat *s = &loc[o];
            if (err > s->max || s->i_max < 0) {
                s->max = err;
                s->i_max = (int64_t)(i0 + (uint64_t)i);
                s->x = xv, s->m1 = a, s->m2 = b, s->got = got;
            }
            s->n++;
            s->sum += err < FFN_ULP_HUGE ? err : 0;
            const double cr = ffn_um_round(exact, dtype);
            s->n_cr += (isnan(cr) && isnan(got)) || (double)got == cr;
            s->n_over += err > bound;
        }
    }
    for (int o = 0; o < n_out; o++) sh[o][threadIdx.x] = loc[o];
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int o = 0; o < n_out; o++) {
            struct ffn_ulpcu_stat t = sh[o][0];
            for (int k = 1; k < (int)blockDim.x; k++) {
                const struct ffn_ulpcu_stat *u = &sh[o][k];
                if (u->i_max >= 0 && (u->max > t.max || t.i_max < 0)) {
                    t.max = u->max, t.i_max = u->i_max;
                    t.x = u->x, t.m1 = u->m1, t.m2 = u->m2, t.got = u->got;
                }
                t.sum += u->sum;
                t.n += u->n, t.n_cr += u->n_cr, t.n_over += u->n_over;
            }
            stats[o * gridDim.x + blockIdx.x] = t;
        }
    }
}

extern "C" int ffn_ulpcu_gen(void *stream, int op, int dt, const float *list, uint64_t i0,
                             int64_t n, void *x, void *m1, void *m2) {
    int64_t blocks = (n + 255) / 256;
    if (blocks > 4096) blocks = 4096;
    if (blocks < 1) blocks = 1;
    ffn__gen<<<(unsigned)blocks, 256, 0, (cudaStream_t)stream>>>(op, dt, list, i0, n, x, m1, m2);
    return (int)cudaGetLastError();
}

extern "C" int ffn_ulpcu_metric(void *stream, int op, int act, int dt, bool accurate, const void *x,
                                const void *m1, const void *m2, const void *out0, const void *out1,
                                int64_t n, uint64_t i0, struct ffn_ulpcu_stat *stats,
                                int n_blocks) {
    ffn__metric<<<(unsigned)n_blocks, FFN_ULPCU_THREADS, 0, (cudaStream_t)stream>>>(
        op, act, dt, accurate, x, m1, m2, out0, out1, n, i0, stats);
    return (int)cudaGetLastError();
}
