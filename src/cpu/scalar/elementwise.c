// elementwise.c — the scalar reference kernels: one clear loop per op family, each element
// computed in double from the reference definitions (act_ref.c) and rounded once to f32, then
// (for bf16/f16 outputs) from f32 to the storage type, as the numerical contract states.
// They are the oracle for the SIMD kernels and the fallback on CPUs without them.
#include "cpu/cpu_impl.h"

// --- generic loops -------------------------------------------------------------------------------

// y[i] = act(x[i])
static void ffn__act_fwd(enum ffn_act act, const struct ffn_kcfg *cfg, int64_t n, void *y,
                         const void *x) {
    for (int64_t i = 0; i < n; i++) {
        const double xi = ffn_load_f32(x, cfg->in, i);
        ffn_store_f32(y, cfg->out, i, (float)ffn_ref_act(act, xi));
    }
}

// dx[i] = dy[i] * act'(x[i])
static void ffn__act_bwd(enum ffn_act act, const struct ffn_kcfg *cfg, int64_t n, void *dx,
                         const void *x, const void *dy) {
    for (int64_t i = 0; i < n; i++) {
        const double xi = ffn_load_f32(x, cfg->in, i), dyi = ffn_load_f32(dy, cfg->in, i);
        ffn_store_f32(dx, cfg->out, i, (float)(dyi * ffn_ref_dact(act, xi)));
    }
}

// h[i] = act(gate[i]) * up[i]. Parity mode rounds act(gate) to the output type first, then
// rounds the product of the two storage-type values, as a framework's two eager ops would.
static void ffn__glu_fwd(enum ffn_act act, const struct ffn_kcfg *cfg, int64_t n, void *h,
                         const void *gate, const void *up) {
    for (int64_t i = 0; i < n; i++) {
        const double g = ffn_load_f32(gate, cfg->in, i), u = ffn_load_f32(up, cfg->in, i);
        const double a = ffn_ref_act(act, g);
        float hi;
        if (cfg->parity) {
            const double ar = ffn_round_to(cfg->out, (float)a);
            hi = (float)(ar * (double)ffn_round_to(cfg->out, (float)u));
        } else {
            hi = (float)(a * u);
        }
        ffn_store_f32(h, cfg->out, i, hi);
    }
}

// dgate[i] = dh[i] * up[i] * act'(gate[i]);  dup[i] = dh[i] * act(gate[i]).
// All inputs are read before either output is written: dgate may alias gate, dup may alias up.
static void ffn__glu_bwd(enum ffn_act act, const struct ffn_kcfg *cfg, int64_t n, void *dgate,
                         void *dup, const void *gate, const void *up, const void *dh) {
    for (int64_t i = 0; i < n; i++) {
        const double g = ffn_load_f32(gate, cfg->in, i), u = ffn_load_f32(up, cfg->in, i),
                     d = ffn_load_f32(dh, cfg->in, i);
        const float dg = (float)(d * u * ffn_ref_dact(act, g));
        const float du = (float)(d * ffn_ref_act(act, g));
        ffn_store_f32(dgate, cfg->out, i, dg);
        ffn_store_f32(dup, cfg->out, i, du);
    }
}

// --- the kernels of kernels.inc ------------------------------------------------------------------

FFN_KPROTO_ACT_FWD(ffn_gelu_tanh_fwd__scalar) { ffn__act_fwd(FFN_ACT_GELU_TANH, cfg, n, y, x); }
FFN_KPROTO_ACT_BWD(ffn_gelu_tanh_bwd__scalar) {
    ffn__act_bwd(FFN_ACT_GELU_TANH, cfg, n, dx, x, dy);
}
FFN_KPROTO_GLU_FWD(ffn_geglu_tanh_fwd__scalar) {
    ffn__glu_fwd(FFN_ACT_GELU_TANH, cfg, n, h, gate, up);
}
FFN_KPROTO_GLU_BWD(ffn_geglu_tanh_bwd__scalar) {
    ffn__glu_bwd(FFN_ACT_GELU_TANH, cfg, n, dgate, dup, gate, up, dh);
}

FFN_KPROTO_ACT_FWD(ffn_gelu_erf_fwd__scalar) { ffn__act_fwd(FFN_ACT_GELU_ERF, cfg, n, y, x); }
FFN_KPROTO_ACT_BWD(ffn_gelu_erf_bwd__scalar) { ffn__act_bwd(FFN_ACT_GELU_ERF, cfg, n, dx, x, dy); }
FFN_KPROTO_GLU_FWD(ffn_geglu_erf_fwd__scalar) {
    ffn__glu_fwd(FFN_ACT_GELU_ERF, cfg, n, h, gate, up);
}
FFN_KPROTO_GLU_BWD(ffn_geglu_erf_bwd__scalar) {
    ffn__glu_bwd(FFN_ACT_GELU_ERF, cfg, n, dgate, dup, gate, up, dh);
}

FFN_KPROTO_ACT_FWD(ffn_silu_fwd__scalar) { ffn__act_fwd(FFN_ACT_SILU, cfg, n, y, x); }
FFN_KPROTO_ACT_BWD(ffn_silu_bwd__scalar) { ffn__act_bwd(FFN_ACT_SILU, cfg, n, dx, x, dy); }
FFN_KPROTO_GLU_FWD(ffn_swiglu_fwd__scalar) { ffn__glu_fwd(FFN_ACT_SILU, cfg, n, h, gate, up); }
FFN_KPROTO_GLU_BWD(ffn_swiglu_bwd__scalar) {
    ffn__glu_bwd(FFN_ACT_SILU, cfg, n, dgate, dup, gate, up, dh);
}

FFN_KPROTO_ACT_FWD(ffn_relu_fwd__scalar) { ffn__act_fwd(FFN_ACT_RELU, cfg, n, y, x); }
FFN_KPROTO_ACT_BWD(ffn_relu_bwd__scalar) { ffn__act_bwd(FFN_ACT_RELU, cfg, n, dx, x, dy); }
FFN_KPROTO_GLU_FWD(ffn_reglu_fwd__scalar) { ffn__glu_fwd(FFN_ACT_RELU, cfg, n, h, gate, up); }
FFN_KPROTO_GLU_BWD(ffn_reglu_bwd__scalar) {
    ffn__glu_bwd(FFN_ACT_RELU, cfg, n, dgate, dup, gate, up, dh);
}

FFN_KPROTO_ACT_FWD(ffn_sigmoid_fwd__scalar) { ffn__act_fwd(FFN_ACT_SIGMOID, cfg, n, y, x); }
FFN_KPROTO_ACT_BWD(ffn_sigmoid_bwd__scalar) { ffn__act_bwd(FFN_ACT_SIGMOID, cfg, n, dx, x, dy); }
FFN_KPROTO_GLU_FWD(ffn_glu_fwd__scalar) { ffn__glu_fwd(FFN_ACT_SIGMOID, cfg, n, h, gate, up); }
FFN_KPROTO_GLU_BWD(ffn_glu_bwd__scalar) {
    ffn__glu_bwd(FFN_ACT_SIGMOID, cfg, n, dgate, dup, gate, up, dh);
}

FFN_KPROTO_ACT_FWD(ffn_identity_fwd__scalar) { ffn__act_fwd(FFN_ACT_IDENTITY, cfg, n, y, x); }
FFN_KPROTO_ACT_BWD(ffn_identity_bwd__scalar) { ffn__act_bwd(FFN_ACT_IDENTITY, cfg, n, dx, x, dy); }
FFN_KPROTO_GLU_FWD(ffn_bilinear_fwd__scalar) {
    ffn__glu_fwd(FFN_ACT_IDENTITY, cfg, n, h, gate, up);
}
FFN_KPROTO_GLU_BWD(ffn_bilinear_bwd__scalar) {
    ffn__glu_bwd(FFN_ACT_IDENTITY, cfg, n, dgate, dup, gate, up, dh);
}

FFN_KPROTO_ACT_FWD(ffn_quick_gelu_fwd__scalar) { ffn__act_fwd(FFN_ACT_QUICK_GELU, cfg, n, y, x); }
FFN_KPROTO_ACT_BWD(ffn_quick_gelu_bwd__scalar) {
    ffn__act_bwd(FFN_ACT_QUICK_GELU, cfg, n, dx, x, dy);
}
FFN_KPROTO_GLU_FWD(ffn_quick_geglu_fwd__scalar) {
    ffn__glu_fwd(FFN_ACT_QUICK_GELU, cfg, n, h, gate, up);
}
FFN_KPROTO_GLU_BWD(ffn_quick_geglu_bwd__scalar) {
    ffn__glu_bwd(FFN_ACT_QUICK_GELU, cfg, n, dgate, dup, gate, up, dh);
}
