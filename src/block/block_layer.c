// block_layer.c — a block from one FFN of a model (ffn_block_create_from_layer): every weight
// and bias a view of the model's mapped file where the block reads its dtype in place (F32,
// BF16, F16, aligned), else an f32 copy the block owns (quantised GGUF types, F64, misaligned
// data), freed with the block (struct ffn_block_hdr's owned list). ffn_block_layer_read is the
// reading alone, also for the tool's variations of a layer (tools/model.c).
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "block/block_impl.h"

_Static_assert(FFN_BLOCK_LAYER_OWNED == sizeof((struct ffn_block_hdr *)0)->owned / sizeof(void *),
               "the header holds every copy");

// The view of file tensor t as a block weight (absent: t->name NULL, an empty weight); with
// `declare`, rows and cols declared from the stored shape so that the block checks them against
// the spec.
static enum ffn_status ffn__weight(ffn_ctx_t ctx, const char *fn, const struct ffn_file_tensor *t,
                                   enum ffn_weight_orient orient, bool declare, void **owned,
                                   int *n_owned, struct ffn_weight *w) {
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
        if ((uint64_t)n > SIZE_MAX / sizeof(float) || *n_owned >= FFN_BLOCK_LAYER_OWNED)
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
        owned[(*n_owned)++] = buf;
        data = buf;
        dt = FFN_DTYPE_F32;
    }
    w->data = data;
    w->dtype = dt;
    w->orient = orient;
    if (declare) {
        w->rows = t->n_dims == 2 ? t->shape[0] : 1;
        w->cols = t->n_dims == 2 ? t->shape[1] : t->shape[0];
    }
    return FFN_STATUS_OK;
}

void ffn_block_spec_biases(struct ffn_block_spec *spec, const struct ffn_block_weights *w) {
    if (spec->gated && spec->gate_up_layout != FFN_GATE_UP_SEPARATE) {
        spec->bias_gate = spec->bias_up = w->b_gate_up.data != NULL;
    } else {
        spec->bias_gate = w->b_gate.data != NULL;
        spec->bias_up = w->b_up.data != NULL;
    }
    spec->bias_down = w->b_down.data != NULL;
}

enum ffn_status ffn_block_layer_read(ffn_ctx_t ctx, const char *fn, const struct ffn_model_layer *l,
                                     unsigned flip, struct ffn_block_spec *spec,
                                     struct ffn_block_weights *w,
                                     void *owned[FFN_BLOCK_LAYER_OWNED], int *n_owned) {
    *spec = (struct ffn_block_spec)FFN_BLOCK_SPEC_INIT;
    *w = (struct ffn_block_weights)FFN_BLOCK_WEIGHTS_INIT;
    *n_owned = 0;
    spec->d_model = l->d_model;
    spec->d_ff = l->d_ff;
    spec->act = l->act;
    spec->gated = l->gated;
    spec->gate_up_layout = l->layout;
    const struct {
        const struct ffn_file_tensor *t;
        struct ffn_weight *w;
        unsigned bit;  // 0: a bias
    } map[] = {
        {&l->gate, &w->gate, 1u << FFN_BLK_GATE},
        {&l->up, &w->up, 1u << FFN_BLK_UP},
        {&l->gate_up, &w->gate_up, 1u << FFN_BLK_GATE_UP},
        {&l->down, &w->down, 1u << FFN_BLK_DOWN},
        {&l->b_gate, &w->b_gate, 0},
        {&l->b_up, &w->b_up, 0},
        {&l->b_gate_up, &w->b_gate_up, 0},
        {&l->b_down, &w->b_down, 0},
    };
    enum ffn_status s = FFN_STATUS_OK;
    for (size_t i = 0; i < sizeof map / sizeof map[0] && !s; i++) {
        const bool flipped = (flip & map[i].bit) != 0;
        enum ffn_weight_orient o = l->orient;
        if (flipped) o = o == FFN_WEIGHT_OUT_IN ? FFN_WEIGHT_IN_OUT : FFN_WEIGHT_OUT_IN;
        s = ffn__weight(ctx, fn, map[i].t, o, !flipped, owned, n_owned, map[i].w);
    }
    if (!s) ffn_block_spec_biases(spec, w);
    return s;
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
    struct ffn_block_spec spec;
    struct ffn_block_weights w;
    void *owned[FFN_BLOCK_LAYER_OWNED];
    int n_owned = 0;
    enum ffn_status s = ffn_block_layer_read(ctx, fn, layer, 0, &spec, &w, owned, &n_owned);
    if (!s) s = ffn_block_create(ctx, &spec, &w, opts, block_out);
    if (s) {
        for (int i = 0; i < n_owned; i++) free(owned[i]);
        return s;
    }
    struct ffn_block_hdr *h = (struct ffn_block_hdr *)(void *)*block_out;
    memcpy(h->owned, owned, (size_t)n_owned * sizeof owned[0]);
    h->n_owned = n_owned;
    return FFN_STATUS_OK;
}
