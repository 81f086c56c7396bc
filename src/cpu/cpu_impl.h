// cpu_impl.h — internals of the CPU layer: kernel prototypes generated from kernels.inc, and the
// element load/store helpers shared by the scalar reference. Never installed.
#ifndef FFN_CPU_IMPL_H
#define FFN_CPU_IMPL_H

#include "core/core_impl.h"

#define FFN_KPROTO_ACT_FWD(fn) \
    void fn(const struct ffn_kcfg *cfg, int64_t n, void *y, const void *x)
#define FFN_KPROTO_ACT_BWD(fn) \
    void fn(const struct ffn_kcfg *cfg, int64_t n, void *dx, const void *x, const void *dy)
#define FFN_KPROTO_GLU_FWD(fn) \
    void fn(const struct ffn_kcfg *cfg, int64_t n, void *h, const void *gate, const void *up)
#define FFN_KPROTO_GLU_BWD(fn)                                                               \
    void fn(const struct ffn_kcfg *cfg, int64_t n, void *dgate, void *dup, const void *gate, \
            const void *up, const void *dh)

#define FFN_KERNEL(isa, op, act, fn) FFN_KPROTO_##op(fn);
#include "cpu/kernels.inc"
#undef FFN_KERNEL

// The reference definitions in double, ffn_ref_act / ffn_ref_dact, are public (ffn.h).

// --- element access by dtype (scalar paths) -----------------------------------------------------
static inline float ffn_load_f32(const void *p, enum ffn_dtype dt, int64_t i) {
    switch (dt) {
    case FFN_DTYPE_BF16: return ffn_bf16_to_f32(((const uint16_t *)p)[i]);
    case FFN_DTYPE_F16: return ffn_f16_to_f32(((const uint16_t *)p)[i]);
    default: return ((const float *)p)[i];
    }
}

static inline void ffn_store_f32(void *p, enum ffn_dtype dt, int64_t i, float v) {
    switch (dt) {
    case FFN_DTYPE_BF16: ((uint16_t *)p)[i] = ffn_f32_to_bf16(v); break;
    case FFN_DTYPE_F16: ((uint16_t *)p)[i] = ffn_f32_to_f16(v); break;
    default: ((float *)p)[i] = v; break;
    }
}

// Rounds an f32 value to the storage type `dt` and back (identity for f32).
static inline float ffn_round_to(enum ffn_dtype dt, float v) {
    switch (dt) {
    case FFN_DTYPE_BF16: return ffn_bf16_to_f32(ffn_f32_to_bf16(v));
    case FFN_DTYPE_F16: return ffn_f16_to_f32(ffn_f32_to_f16(v));
    default: return v;
    }
}

#endif  // FFN_CPU_IMPL_H
