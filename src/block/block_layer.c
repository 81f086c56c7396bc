// block_layer.c — a block from one FFN of a model (ffn_block_create_from_layer): every weight
// and bias a view of the model's mapped file where the block reads its dtype in place (F32,
// BF16, F16, aligned), else an f32 copy the block owns (quantised GGUF types, F64, misaligned
// data), freed with the block (struct ffn_block_hdr's owned list).
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "block/block_impl.h"

// Host copies a block may own: one per weight and bias of a layer.
#define FFN__OWNED_MAX 8

_Static_assert(FFN__OWNED_MAX == sizeof((struct ffn_block_hdr *)0)->owned / sizeof(void *),
               "the header holds every copy");

struct ffn__owned {
    void *p[FFN__OWNED_MAX];
    int n;
};

// The view of file tensor t as a block weight (absent: t->name NULL, an empty weight), rows and
// cols declared from the stored shape so that the block checks them against the spec.
static enum ffn_status ffn__weight(ffn_ctx_t ctx, const char *fn, const struct ffn_file_tensor *t,
                                   enum ffn_weight_orient orient, struct ffn__owned *own,
                                   struct ffn_weight *w) {
    memset(w, 0, sizeof *w);
    if (!t->name) return FFN_STATUS_OK;
    if (t->n_dims < 1 || t->n_dims > 2)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: tensor %s has %d dimensions; a weight "
                         "has 2, a bias 1",
                         fn, t->name, t->n_dims);
    enum ffn_dtype dt = FFN_DTYPE_F32;
    const void *data = t->data;
    const bool direct = ffn_file_dtype_to_dtype(t->dtype, &dt) == FFN_STATUS_OK && data &&
                        (uintptr_t)data % ffn_dtype_size(dt) == 0;
    if (!direct) {
        const int64_t n = ffn_file_tensor_numel(t);
        if (n <= 0)
            return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: tensor %s has an invalid shape", fn,
                             t->name);
        if ((uint64_t)n > SIZE_MAX / sizeof(float) || own->n >= FFN__OWNED_MAX)
            return ffn_error(ctx, FFN_STATUS_OUT_OF_MEMORY, "%s: no f32 copy of %s", fn, t->name);
        float *buf = malloc((size_t)n * sizeof *buf);
        if (!buf)
            return ffn_error(ctx, FFN_STATUS_OUT_OF_MEMORY,
                             "%s: out of memory for an f32 copy "
                             "of %s (%lld values)",
                             fn, t->name, (long long)n);
        const enum ffn_status s = ffn_file_tensor_to_f32(ctx, buf, n, t);
        if (s) {
            free(buf);
            return s;
        }
        own->p[own->n++] = buf;
        data = buf;
        dt = FFN_DTYPE_F32;
    }
    w->data = data;
    w->dtype = dt;
    w->orient = orient;
    w->rows = t->n_dims == 2 ? t->shape[0] : 1;
    w->cols = t->n_dims == 2 ? t->shape[1] : t->shape[0];
    return FFN_STATUS_OK;
}

enum ffn_status ffn_block_create_from_layer(ffn_ctx_t ctx, const struct ffn_model_layer *layer,
                                            const struct ffn_block_opts *opts,
                                            ffn_block_t *block_out) {
    static const char fn[] = "ffn_block_create_from_layer";
    if (!ctx) return FFN_STATUS_INVALID_ARG;
    ffn_error_clear(ctx);
    if (block_out) *block_out = NULL;
    if (!layer || !block_out)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: layer and block_out must not be NULL",
                         fn);
    const struct ffn_model_layer *l = layer;
    struct ffn_block_spec spec = FFN_BLOCK_SPEC_INIT;
    struct ffn_block_weights w = FFN_BLOCK_WEIGHTS_INIT;
    spec.d_model = l->d_model;
    spec.d_ff = l->d_ff;
    spec.act = l->act;
    spec.gated = l->gated;
    spec.gate_up_layout = l->layout;
    const struct {
        const struct ffn_file_tensor *t;
        struct ffn_weight *w;
    } map[] = {
        {&l->gate, &w.gate},           {&l->up, &w.up},         {&l->gate_up, &w.gate_up},
        {&l->down, &w.down},           {&l->b_gate, &w.b_gate}, {&l->b_up, &w.b_up},
        {&l->b_gate_up, &w.b_gate_up}, {&l->b_down, &w.b_down},
    };
    struct ffn__owned own = {{NULL}, 0};
    enum ffn_status s = FFN_STATUS_OK;
    for (size_t i = 0; i < sizeof map / sizeof map[0] && !s; i++)
        s = ffn__weight(ctx, fn, map[i].t, l->orient, &own, map[i].w);
    if (!s) {
        if (spec.gated && spec.gate_up_layout != FFN_GATE_UP_SEPARATE) {
            spec.bias_gate = spec.bias_up = w.b_gate_up.data != NULL;
        } else {
            spec.bias_gate = w.b_gate.data != NULL;
            spec.bias_up = w.b_up.data != NULL;
        }
        spec.bias_down = w.b_down.data != NULL;
        s = ffn_block_create(ctx, &spec, &w, opts, block_out);
    }
    if (s) {
        for (int i = 0; i < own.n; i++) free(own.p[i]);
        return s;
    }
    struct ffn_block_hdr *h = (struct ffn_block_hdr *)(void *)*block_out;
    memcpy(h->owned, own.p, sizeof own.p);
    h->n_owned = own.n;
    return FFN_STATUS_OK;
}
