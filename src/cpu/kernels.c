// kernels.c — fills a context's kernel table: every scalar entry first, then the overrides of
// the chosen ISA (AVX-512 also takes AVX2 entries where it has none of its own).
#include "cpu/kernels.h"

static void ffn__set(struct ffn_cpu_kernels *k, enum ffn_kop op, enum ffn_act act, enum ffn_isa isa,
                     void (*fn)(void)) {
    switch (op) {
    case FFN_KOP_ACT_FWD: k->act_fwd[act] = (ffn_act_fwd_fn)fn; break;
    case FFN_KOP_ACT_BWD: k->act_bwd[act] = (ffn_act_bwd_fn)fn; break;
    case FFN_KOP_GLU_FWD: k->glu_fwd[act] = (ffn_glu_fwd_fn)fn; break;
    case FFN_KOP_GLU_BWD: k->glu_bwd[act] = (ffn_glu_bwd_fn)fn; break;
    default: return;
    }
    k->isa[op][act] = isa;
}

void ffn_cpu_kernels_init(struct ffn_cpu_kernels *k, enum ffn_isa isa) {
    *k = (struct ffn_cpu_kernels){0};
    // Lower ISAs first so that a higher one overrides: scalar, then AVX2, then AVX-512.
    for (int level = FFN_ISA_SCALAR; level <= (int)isa; level++) {
#define FFN_KERNEL(kisa, op, act, fn) \
    if (FFN_ISA_##kisa == level)      \
        ffn__set(k, FFN_KOP_##op, FFN_ACT_##act, FFN_ISA_##kisa, (void (*)(void))fn);
#include "cpu/kernels.inc"
#undef FFN_KERNEL
    }
}
