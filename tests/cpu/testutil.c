// testutil.c — helpers shared by the CPU, core and CUDA tests (see testutil.h).
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ffn_test_contexts(struct ffn_test_ctx *out, bool with_high) {
    static const enum ffn_isa isas[] = {FFN_ISA_SCALAR, FFN_ISA_AVX2, FFN_ISA_AVX512};
    int n = 0;
    for (int h = 0; h <= (with_high ? 1 : 0); h++) {
        for (size_t i = 0; i < sizeof isas / sizeof isas[0]; i++) {
            if (!ffn_isa_supported(isas[i])) continue;
            struct ffn_ctx_opts o = FFN_CTX_OPTS_INIT;
            o.force_isa = isas[i];
            o.n_threads = 1;
            o.accuracy = h ? FFN_ACCURACY_HIGH : FFN_ACCURACY_DEFAULT;
            struct ffn_test_ctx *c = &out[n];
            if (ffn_ctx_create(&o, &c->ctx) != FFN_STATUS_OK) {
                printf("cannot create a context for %s\n", ffn_isa_name(isas[i]));
                exit(1);
            }
            c->isa = isas[i];
            c->accurate = h;
            snprintf(c->label, sizeof c->label, "%s%s", ffn_isa_name(isas[i]), h ? "+high" : "");
            n++;
        }
    }
    return n;
}

void ffn_test_contexts_free(struct ffn_test_ctx *c, int n) {
    for (int i = 0; i < n; i++) ffn_ctx_destroy(c[i].ctx);
}

const char *ffn_test_kernel_label(const struct ffn_test_ctx *c, enum ffn_kop op, enum ffn_act act,
                                  char *buf, size_t size) {
    const enum ffn_isa k = ffn_cpu_kernel_table(c->ctx)->isa[op][act];
    if (k == c->isa)
        snprintf(buf, size, "%s", c->label);
    else
        snprintf(buf, size, "%s (%s kernel)", c->label, ffn_isa_name(k));
    return buf;
}

uint64_t ffn_test_rand(uint64_t *state) {
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

double ffn_test_uniform(uint64_t *state, double lo, double hi) {
    return lo + (hi - lo) * ((double)(ffn_test_rand(state) >> 11) * 0x1p-53);
}

float ffn_test_logrand(uint64_t *state, double lo_exp, double hi_exp) {
    const double m = exp2(ffn_test_uniform(state, lo_exp, hi_exp));
    return (float)(ffn_test_rand(state) & 1 ? -m : m);
}

void *ffn_test_alloc(size_t bytes) {
    void *p = aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (!p) {
        printf("out of memory (%zu bytes)\n", bytes);
        exit(1);
    }
    memset(p, 0, (bytes + 63) / 64 * 64);
    return p;
}

float ffn_test_get(const void *p, enum ffn_dtype dt, int64_t i) { return ffn_load_f32(p, dt, i); }

void ffn_test_set(void *p, enum ffn_dtype dt, int64_t i, float v) { ffn_store_f32(p, dt, i, v); }

bool ffn_test_same(float a, float b) {
    if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
    uint32_t ua, ub;
    memcpy(&ua, &a, 4);
    memcpy(&ub, &b, 4);
    return ua == ub;
}

bool ffn_test_same_elem(const void *a, const void *b, enum ffn_dtype dt, int64_t i) {
    return ffn_test_same(ffn_test_get(a, dt, i), ffn_test_get(b, dt, i));
}
