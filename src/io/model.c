// model.c — a checkpoint's FFN layers, whatever the format: a Hugging Face directory
// (config.json + safetensors, by the architecture table) or a GGUF file (llama.cpp names
// blk.{L}.ffn_gate / ffn_up / ffn_down, sizes in <arch>.embedding_length / feed_forward_length).
// Every FFN tensor of every layer is looked up and its shape checked at open, so a missing or
// mis-shaped tensor is reported before anything runs.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/io_impl.h"

static const char ffn__fn_model[] = "ffn_model_open";
#define FFN_IO_NAME_MAX 512    // longest tensor name a pattern may expand to
#define FFN_IO_LIST_TENSORS 6  // FFN-looking tensors listed in an error
// FFNs (layers × experts) one checkpoint may describe: far above any real model (2^7 layers ×
// 2^8 experts today), far below what a forged count could make us allocate (≈ 1 KiB each).
#define FFN_IO_MAX_FFNS (INT64_C(1) << 20)

// Generic names the loader also accepts (what `ffn convert` writes when it fuses or splits).
#define FFN_IO_GENERIC_GATE_UP "gate_up_proj.weight"
#define FFN_IO_GENERIC_B_GATE_UP "gate_up_proj.bias"
#define FFN_IO_GENERIC_GATE "gate_proj.weight"
#define FFN_IO_GENERIC_UP "up_proj.weight"

struct ffn_model {
    const char *path;  // as given to ffn_model_open (valid during the open only)
    ffn_safetensors_t st;
    ffn_gguf_t gguf;
    char *config_json;
    const struct ffn_io_arch *arch;
    struct ffn_model_desc desc;
    struct ffn_model_layer *layers;  // n_layers × max(1, n_experts)
    int64_t n_ffn;
};

// --- tensor lookup over either format -------------------------------------------------------

static bool ffn__find(const struct ffn_model *m, const char *name, struct ffn_file_tensor *t) {
    if (m->st) return ffn_safetensors_find(NULL, m->st, name, t) == FFN_STATUS_OK;
    return ffn_gguf_find(NULL, m->gguf, name, t) == FFN_STATUS_OK;
}

static int64_t ffn__count(const struct ffn_model *m) {
    return m->st ? ffn_safetensors_count(m->st) : ffn_gguf_count(m->gguf);
}

static void ffn__get(const struct ffn_model *m, int64_t i, struct ffn_file_tensor *t) {
    if (m->st)
        ffn_safetensors_get(NULL, m->st, i, t);
    else
        ffn_gguf_get(NULL, m->gguf, i, t);
}

static void ffn__shape_str(char *buf, size_t cap, const struct ffn_file_tensor *t) {
    size_t k = (size_t)snprintf(buf, cap, "[");
    for (int i = 0; i < t->n_dims && k < cap; i++)
        k += (size_t)snprintf(buf + k, cap - k, "%s%" PRId64, i ? ", " : "", t->shape[i]);
    if (k < cap) snprintf(buf + k, cap - k, "]");
}

// "; FFN-looking tensors in the checkpoint: a [..], b [..]" (up to FFN_IO_LIST_TENSORS).
static void ffn__ffn_looking(const struct ffn_model *m, char *buf, size_t cap) {
    static const char *const hints[] = {"mlp", "ffn",   "feed_forward",  "DenseReluDense",
                                        "fc1", "fc_in", "dense_h_to_4h", "experts",
                                        "c_fc"};
    size_t k = (size_t)snprintf(buf, cap, "; FFN-looking tensors found:");
    int listed = 0;
    const int64_t n = m->st || m->gguf ? ffn__count(m) : 0;
    for (int64_t i = 0; i < n && listed < FFN_IO_LIST_TENSORS && k < cap; i++) {
        struct ffn_file_tensor t;
        ffn__get(m, i, &t);
        bool hit = false;
        for (size_t h = 0; h < FFN_ARRAY_LEN(hints) && !hit; h++) hit = strstr(t.name, hints[h]);
        if (!hit) continue;
        char sh[96];
        ffn__shape_str(sh, sizeof sh, &t);
        k += (size_t)snprintf(buf + k, cap - k, "%s %.120s %s", listed ? "," : "", t.name, sh);
        listed++;
    }
    if (!listed && k < cap) snprintf(buf + k, cap - k, " none");
}

// --- shape checks ----------------------------------------------------------------------------

// Checks that t is [rows, cols] (cols < 0: 1-D [rows]). `dims` describes the expectation in
// words ("[m, d] = [out, in]").
static enum ffn_status ffn__expect(ffn_ctx_t ctx, const char *where,
                                   const struct ffn_file_tensor *t, int64_t rows, int64_t cols,
                                   const char *dims) {
    const bool ok = cols < 0 ? (t->n_dims == 1 && t->shape[0] == rows)
                             : (t->n_dims == 2 && t->shape[0] == rows && t->shape[1] == cols);
    if (ok) return FFN_STATUS_OK;
    char got[96], want[64];
    ffn__shape_str(got, sizeof got, t);
    if (cols < 0)
        snprintf(want, sizeof want, "[%" PRId64 "]", rows);
    else
        snprintf(want, sizeof want, "[%" PRId64 ", %" PRId64 "]", rows, cols);
    const bool transposed =
        cols >= 0 && t->n_dims == 2 && t->shape[0] == cols && t->shape[1] == rows;
    return ffn_error(ctx, FFN_STATUS_BAD_FORMAT, "%s: %s: %s has shape %s; expected %s (%s)%s",
                     ffn__fn_model, where, t->name, got, want, dims,
                     transposed ? ": stored transposed?" : "");
}

// Element types an FFN weight may have: the floating-point types, and the GGUF quantisations
// that ffn dequantises (Q8_0, Q4_0: file_dtype.c). Integers and bools are not weights; an int8
// or fp8 tensor in a safetensors checkpoint is one half of a quantisation whose scale lives in
// another tensor, which ffn does not apply: read as plain numbers it would give garbage.
static bool ffn__weight_dtype_ok(enum ffn_file_dtype dt) {
    switch (dt) {
    case FFN_FILE_DTYPE_F32:
    case FFN_FILE_DTYPE_BF16:
    case FFN_FILE_DTYPE_F16:
    case FFN_FILE_DTYPE_F64:
    case FFN_FILE_DTYPE_Q8_0:
    case FFN_FILE_DTYPE_Q4_0: return true;
    default: return false;
    }
}

// A quantisation scale stored beside weight `name` ("x.weight" -> "x.weight_scale", ...), if
// the checkpoint has one: named in the message, so the user sees why the dtype is refused.
static const char *ffn__scale_beside(const struct ffn_model *m, const char *name, char *buf,
                                     size_t cap) {
    static const char *const suffixes[] = {"_scale", "_scale_inv", "_scales", ".scale", ".SCB"};
    const size_t n = strlen(name);
    for (size_t i = 0; i < FFN_ARRAY_LEN(suffixes); i++) {
        struct ffn_file_tensor t;
        const char *sfx = suffixes[i];
        if (sfx[0] == '.' && n > 7 && !strcmp(name + n - 7, ".weight"))
            snprintf(buf, cap, "%.*s%s", (int)(n - 7), name, sfx);  // x.weight -> x.scale
        else
            snprintf(buf, cap, "%s%s", name, sfx);
        if (ffn__find(m, buf, &t)) return buf;
    }
    return NULL;
}

static enum ffn_status ffn__check_dtype(ffn_ctx_t ctx, const struct ffn_model *m, const char *where,
                                        const struct ffn_file_tensor *t) {
    if (!t->name || ffn__weight_dtype_ok(t->dtype)) return FFN_STATUS_OK;
    char buf[FFN_IO_NAME_MAX + 16], hint[FFN_IO_NAME_MAX + 128] = "";
    const char *scale = ffn__scale_beside(m, t->name, buf, sizeof buf);
    const enum ffn_file_dtype dt = t->dtype;
    if (scale)
        snprintf(hint, sizeof hint,
                 "; the tensor %s beside it makes this a quantised checkpoint, "
                 "which ffn does not dequantise",
                 scale);
    else if (dt == FFN_FILE_DTYPE_I8 || dt == FFN_FILE_DTYPE_U8 || dt == FFN_FILE_DTYPE_F8_E4M3 ||
             dt == FFN_FILE_DTYPE_F8_E5M2 || dt == FFN_FILE_DTYPE_F8_E8M0)
        snprintf(hint, sizeof hint, "; a quantised checkpoint (its scales elsewhere)?");
    return ffn_error(ctx, FFN_STATUS_UNSUPPORTED,
                     "%s: %s: %s has dtype %s, which is not an FFN weight ffn can use (F32, BF16, "
                     "F16, F64; GGUF Q8_0 and Q4_0 are dequantised)%s",
                     ffn__fn_model, where, t->name, ffn_file_dtype_name(dt), hint);
}

// Shapes of one layer's tensors, by orientation. dims: "[m, d]" etc.
static enum ffn_status ffn__check_layer(ffn_ctx_t ctx, const struct ffn_model *mdl,
                                        const char *where, const struct ffn_model_layer *l) {
    const struct ffn_file_tensor *all[] = {&l->gate,   &l->up,   &l->gate_up,   &l->down,
                                           &l->b_gate, &l->b_up, &l->b_gate_up, &l->b_down};
    for (size_t i = 0; i < FFN_ARRAY_LEN(all); i++) {
        const enum ffn_status st = ffn__check_dtype(ctx, mdl, where, all[i]);
        if (st) return st;
    }
    const int64_t d = l->d_model, m = l->d_ff;
    const bool oi = l->orient == FFN_WEIGHT_OUT_IN;
    const char *wd = oi ? "[m, d] = [out, in]" : "[d, m] = [in, out]";
    const char *dd = oi ? "[d, m] = [out, in]" : "[m, d] = [in, out]";
    const char *fd = oi ? "[2m, d] = [out, in], gate | up" : "[d, 2m] = [in, out], gate | up";
    enum ffn_status s = FFN_STATUS_OK;
    if (l->gate.name) s = ffn__expect(ctx, where, &l->gate, oi ? m : d, oi ? d : m, wd);
    if (!s && l->up.name) s = ffn__expect(ctx, where, &l->up, oi ? m : d, oi ? d : m, wd);
    if (!s && l->gate_up.name) {
        if (oi && l->gate_up.n_dims == 2 && (l->gate_up.shape[0] % 2))
            return ffn_error(ctx, FFN_STATUS_BAD_FORMAT,
                             "%s: %s: %s has %" PRId64 " rows; a fused gate/up needs an even count",
                             ffn__fn_model, where, l->gate_up.name, l->gate_up.shape[0]);
        s = ffn__expect(ctx, where, &l->gate_up, oi ? 2 * m : d, oi ? d : 2 * m, fd);
    }
    if (!s) s = ffn__expect(ctx, where, &l->down, oi ? d : m, oi ? m : d, dd);
    if (!s && l->b_gate.name) s = ffn__expect(ctx, where, &l->b_gate, m, -1, "[m]");
    if (!s && l->b_up.name) s = ffn__expect(ctx, where, &l->b_up, m, -1, "[m]");
    if (!s && l->b_gate_up.name) s = ffn__expect(ctx, where, &l->b_gate_up, 2 * m, -1, "[2m]");
    if (!s && l->b_down.name) s = ffn__expect(ctx, where, &l->b_down, d, -1, "[d]");
    return s;
}

static enum ffn_status ffn__missing(ffn_ctx_t ctx, const struct ffn_model *m, const char *where,
                                    const char *name) {
    char list[600];
    ffn__ffn_looking(m, list, sizeof list);
    return ffn_error(ctx, FFN_STATUS_NOT_FOUND, "%s: %s: %s: missing tensor '%s' (%s FFN)%s",
                     ffn__fn_model, m->path, where, name, m->desc.arch, list);
}

// Looks `pattern` up under `prefix` for (layer, expert); *t zeroed when absent.
static bool ffn__lookup(const struct ffn_model *m, const char *prefix, const char *pattern,
                        int64_t layer, int64_t expert, char *name, struct ffn_file_tensor *t) {
    memset(t, 0, sizeof *t);
    if (!pattern || !ffn_io_name_expand(name, FFN_IO_NAME_MAX, prefix, pattern, layer, expert))
        return false;
    return ffn__find(m, name, t);
}

// --- Hugging Face directory ----------------------------------------------------------------

// One layer (or expert) of an HF checkpoint under `prefix`.
static enum ffn_status ffn__hf_layer(ffn_ctx_t ctx, struct ffn_model *m, const char *prefix,
                                     int64_t layer, int64_t file_layer, int64_t expert,
                                     struct ffn_model_layer *l) {
    const struct ffn_io_arch *a = m->arch;
    char name[FFN_IO_NAME_MAX], where[64];
    memset(l, 0, sizeof *l);
    l->layer = layer;
    l->expert = m->desc.n_experts ? expert : -1;
    l->d_model = m->desc.d_model;
    l->d_ff = m->desc.d_ff;
    l->act = m->desc.act;
    l->gated = m->desc.gated;
    l->orient = a->conv1d ? FFN_WEIGHT_IN_OUT : FFN_WEIGHT_OUT_IN;
    if (!ffn_io_name_expand(l->prefix, sizeof l->prefix, prefix, "", file_layer, expert))
        return ffn_error(ctx, FFN_STATUS_BAD_FORMAT, "%s: layer prefix too long", ffn__fn_model);
    snprintf(where, sizeof where, "layer %" PRId64, layer);
    if (expert >= 0 && m->desc.n_experts)
        snprintf(where + strlen(where), sizeof where - strlen(where), " expert %" PRId64, expert);
    if (!ffn__lookup(m, prefix, a->down, file_layer, expert, name, &l->down))
        return ffn__missing(ctx, m, where, name);
    ffn__lookup(m, prefix, a->b_down, file_layer, expert, name, &l->b_down);
    const char *up = (a->act_rule == FFN_IO_ACT_T5 && !l->gated) ? a->plain_up : a->up;
    const char *b_up = (a->act_rule == FFN_IO_ACT_T5 && !l->gated) ? a->b_plain_up : a->b_up;
    if (!l->gated) {
        if (!ffn__lookup(m, prefix, up, file_layer, expert, name, &l->up))
            return ffn__missing(ctx, m, where, name);
        ffn__lookup(m, prefix, b_up, file_layer, expert, name, &l->b_up);
        l->layout = FFN_GATE_UP_SEPARATE;
        return FFN_STATUS_OK;
    }
    char alt[FFN_IO_NAME_MAX];
    if (a->fused) {
        if (ffn__lookup(m, prefix, a->up, file_layer, expert, name, &l->gate_up)) {
            l->layout = FFN_GATE_UP_FUSED;
            ffn__lookup(m, prefix, FFN_IO_GENERIC_B_GATE_UP, file_layer, expert, alt,
                        &l->b_gate_up);
            return FFN_STATUS_OK;
        }
        // A split copy (ffn convert --split-gate-up): gate_proj + up_proj.
        if (ffn__lookup(m, prefix, FFN_IO_GENERIC_GATE, file_layer, expert, alt, &l->gate) &&
            ffn__lookup(m, prefix, FFN_IO_GENERIC_UP, file_layer, expert, alt, &l->up)) {
            l->layout = FFN_GATE_UP_SEPARATE;
            return FFN_STATUS_OK;
        }
        return ffn__missing(ctx, m, where, name);
    }
    const bool have_gate = ffn__lookup(m, prefix, a->gate, file_layer, expert, name, &l->gate);
    const bool have_up = ffn__lookup(m, prefix, a->up, file_layer, expert, alt, &l->up);
    if (have_gate && have_up) {
        l->layout = FFN_GATE_UP_SEPARATE;
        ffn__lookup(m, prefix, a->b_gate, file_layer, expert, name, &l->b_gate);
        ffn__lookup(m, prefix, a->b_up, file_layer, expert, name, &l->b_up);
        return FFN_STATUS_OK;
    }
    // A fused copy (ffn convert --fuse-gate-up): gate_up_proj [gate | up].
    if (!have_gate && !have_up &&
        ffn__lookup(m, prefix, FFN_IO_GENERIC_GATE_UP, file_layer, expert, alt, &l->gate_up)) {
        l->layout = FFN_GATE_UP_FUSED;
        ffn__lookup(m, prefix, FFN_IO_GENERIC_B_GATE_UP, file_layer, expert, alt, &l->b_gate_up);
        return FFN_STATUS_OK;
    }
    return ffn__missing(ctx, m, where, have_gate ? alt : name);
}

static int64_t ffn__numel_or0(const struct ffn_file_tensor *t) {
    const int64_t n = t->name ? ffn_file_tensor_numel(t) : 0;
    return n > 0 ? n : 0;
}

// Totals over the checkpoint and over the FFN tensors, and a note on converted layouts.
static void ffn__finish_desc(struct ffn_model *m) {
    const int64_t n = ffn__count(m);
    for (int64_t i = 0; i < n; i++) {
        struct ffn_file_tensor t;
        ffn__get(m, i, &t);
        m->desc.n_params += ffn__numel_or0(&t);
    }
    for (int64_t i = 0; i < m->n_ffn; i++) {
        const struct ffn_model_layer *l = &m->layers[i];
        const struct ffn_file_tensor *ts[] = {&l->gate,   &l->up,   &l->gate_up,   &l->down,
                                              &l->b_gate, &l->b_up, &l->b_gate_up, &l->b_down};
        for (size_t k = 0; k < FFN_ARRAY_LEN(ts); k++)
            m->desc.n_params_ffn += ffn__numel_or0(ts[k]);
    }
}

static void ffn__note(struct ffn_model *m, const char *text) {
    const size_t k = strlen(m->desc.note);
    snprintf(m->desc.note + k, sizeof m->desc.note - k, "%s%s", k ? "; " : "", text);
}

// The table of FFN descriptions, n_layers × max(1, n_experts) entries. The counts come from the
// file (config.json, GGUF metadata), so before anything is allocated they are checked against
// what the file holds: every FFN needs two tensors of its own (up and down), except the experts
// of a GGUF layer, which share [experts, rows, cols] tensors (`shared_experts`, whose count the
// caller has checked against those tensors' first dimension). The test is loose (one tensor
// per FFN) so that a count slightly off still gets the precise "missing tensor" message, while
// a forged count cannot size the table beyond the tensors the file really holds.
static enum ffn_status ffn__alloc_layers(ffn_ctx_t ctx, struct ffn_model *m, const char *path,
                                         int64_t n_layers, bool shared_experts) {
    const int64_t per = m->desc.n_experts ? m->desc.n_experts : 1;
    const int64_t n_ffn = n_layers * per;  // ≤ 2^16 · 2^14: both bounded by their readers
    const int64_t own = shared_experts ? n_layers : n_ffn, n_tensors = ffn__count(m);
    if (own > n_tensors)
        return ffn_error(ctx, FFN_STATUS_BAD_FORMAT,
                         "%s: %s: %" PRId64 " layers%s%s need at least %" PRId64
                         " FFN tensors, but the checkpoint holds %" PRId64 " tensors in all",
                         ffn__fn_model, path, n_layers, per > 1 ? " of experts" : "",
                         per > 1 && !shared_experts ? " (each expert its own)" : "", 2 * own,
                         n_tensors);
    if (n_ffn > FFN_IO_MAX_FFNS)
        return ffn_error(ctx, FFN_STATUS_BAD_FORMAT,
                         "%s: %s: %" PRId64 " layers x %" PRId64 " experts = %" PRId64
                         " FFNs; at most %" PRId64 " are accepted",
                         ffn__fn_model, path, n_layers, per, n_ffn, FFN_IO_MAX_FFNS);
    m->layers = calloc((size_t)n_ffn, sizeof *m->layers);
    if (!m->layers)
        return ffn_error(ctx, FFN_STATUS_OUT_OF_MEMORY,
                         "%s: %s: out of memory for the descriptions of %" PRId64 " FFNs (%" PRId64
                         " layers x %" PRId64 " experts, %zu bytes each)",
                         ffn__fn_model, path, n_ffn, n_layers, per, sizeof *m->layers);
    m->n_ffn = n_ffn;
    m->desc.n_layers = n_layers;
    return FFN_STATUS_OK;
}

static enum ffn_status ffn__open_hf(ffn_ctx_t ctx, struct ffn_model *m, const char *dir,
                                    const char *st_path) {
    const char *fn = ffn__fn_model;
    char *cpath = ffn_io_path_join(dir, "config.json");
    if (!cpath) return ffn_error(ctx, FFN_STATUS_OUT_OF_MEMORY, "%s: out of memory", fn);
    size_t len;
    enum ffn_status s =
        ffn_io_read_file(ctx, fn, cpath, FFN_IO_CONFIG_MAX_BYTES, &m->config_json, &len);
    cJSON *root = NULL;
    if (!s) s = ffn_io_json_parse(ctx, fn, cpath, m->config_json, len, &root);
    if (!s) s = ffn_safetensors_open(ctx, st_path, &m->st);
    struct ffn_hf_config cfg;
    if (!s) {
        s = ffn_io_hf_config_read(ctx, fn, cpath, root, &cfg, &m->arch);
        if (s == FFN_STATUS_UNSUPPORTED) {  // unknown architecture or activation
            char msg[1024], list[600];
            snprintf(msg, sizeof msg, "%s", ffn_ctx_last_error(ctx));
            ffn__ffn_looking(m, list, sizeof list);
            ffn_error(ctx, s, "%.500s%s", msg, list);
        }
    }
    cJSON_Delete(root);
    if (s) {
        free(cpath);
        return s;
    }
    const struct ffn_io_arch *a = m->arch;
    struct ffn_model_desc *d = &m->desc;
    snprintf(d->arch, sizeof d->arch, "%s", cfg.model_type);
    snprintf(d->format, sizeof d->format, "safetensors");
    snprintf(d->act_source, sizeof d->act_source, "%s", cfg.act_source);
    d->d_model = cfg.d_model;
    d->d_ff = cfg.d_ff;
    d->n_experts = cfg.n_experts;
    d->act = cfg.act;
    d->gated = cfg.gated;
    d->hf_in_out = cfg.in_out;
    if (cfg.note[0]) ffn__note(m, cfg.note);

    // The layer prefix under which this checkpoint keeps its FFNs.
    char name[FFN_IO_NAME_MAX];
    struct ffn_file_tensor t;
    const char *prefix = NULL;
    for (int i = 0; i < FFN_IO_ARCH_MAX_PREFIXES && a->prefixes[i] && !prefix; i++)
        if (ffn__lookup(m, a->prefixes[i], a->down, 0, 0, name, &t)) prefix = a->prefixes[i];
    if (!prefix) {
        ffn_io_name_expand(name, sizeof name, a->prefixes[0], a->down, 0, 0);
        s = ffn__missing(ctx, m, "layer 0", name);
        free(cpath);
        return s;
    }
    int64_t n_dec = 0;
    if (a->dec_prefix && cfg.n_decoder_layers > 0 &&
        ffn__lookup(m, a->dec_prefix, a->down, 0, 0, name, &t))
        n_dec = cfg.n_decoder_layers;
    s = ffn__alloc_layers(ctx, m, m->path, cfg.n_layers + n_dec, false);
    const int64_t per = d->n_experts ? d->n_experts : 1;
    for (int64_t L = 0; L < d->n_layers && !s; L++) {
        const bool dec = L >= cfg.n_layers;
        for (int64_t e = 0; e < per && !s; e++) {
            struct ffn_model_layer *l = &m->layers[L * per + e];
            s = ffn__hf_layer(ctx, m, dec ? a->dec_prefix : prefix, L, dec ? L - cfg.n_layers : L,
                              d->n_experts ? e : -1, l);
            char where[600];
            snprintf(where, sizeof where, "%.500s: layer %" PRId64, m->path, L);
            if (!s) s = ffn__check_layer(ctx, m, where, l);
        }
    }
    free(cpath);
    if (s) return s;
    const struct ffn_model_layer *l0 = &m->layers[0];
    if (d->gated && a->fused && l0->layout == FFN_GATE_UP_SEPARATE)
        ffn__note(m, "gate and up stored as two tensors (a split copy of a fused checkpoint)");
    if (d->gated && !a->fused && l0->layout == FFN_GATE_UP_FUSED)
        ffn__note(m, "gate and up stored fused as gate_up_proj [gate | up] (a converted copy)");
    if (n_dec) {
        char text[160];
        snprintf(text, sizeof text,
                 "layers 0-%" PRId64 " are the encoder's FFNs, %" PRId64 "-%" PRId64
                 " the decoder's",
                 cfg.n_layers - 1, cfg.n_layers, cfg.n_layers + n_dec - 1);
        ffn__note(m, text);
    }
    return FFN_STATUS_OK;
}

// --- GGUF ------------------------------------------------------------------------------------

// <arch>.<key> as an integer; *found false when absent. Arrays: element `index` (per-layer
// values), index < 0 refuses arrays.
static enum ffn_status ffn__gguf_int(ffn_ctx_t ctx, struct ffn_model *m, const char *arch,
                                     const char *key, int64_t index, int64_t max, bool *found,
                                     int64_t *out) {
    char full[160];
    snprintf(full, sizeof full, "%s.%s", arch, key);
    struct ffn_gguf_value v;
    *found = ffn_gguf_kv_find(NULL, m->gguf, full, &v) == FFN_STATUS_OK;
    if (!*found) return FFN_STATUS_OK;
    struct ffn_gguf_value e = v;
    if (v.type == FFN_GGUF_TYPE_ARRAY) {
        if (index < 0 || index >= v.n || ffn_gguf_value_element(NULL, &v, index, &e))
            return ffn_error(ctx, FFN_STATUS_BAD_FORMAT,
                             "%s: %s: %s is an array without an entry for layer %" PRId64,
                             ffn__fn_model, ffn_gguf_path(m->gguf), full, index);
    }
    if (ffn_gguf_value_int(NULL, &e, out) || *out < 1 || *out > max)
        return ffn_error(ctx, FFN_STATUS_BAD_FORMAT,
                         "%s: %s: %s is not an integer in [1, %" PRId64 "]", ffn__fn_model,
                         ffn_gguf_path(m->gguf), full, max);
    return FFN_STATUS_OK;
}

// Expert e's [rows, cols] slice of a [E, rows, cols] tensor (blk.L.ffn_*_exps).
static bool ffn__expert_slice(struct ffn_file_tensor *t, int64_t n_experts, int64_t e) {
    if (t->n_dims != 3 || t->shape[0] != n_experts || t->nbytes % (size_t)n_experts) return false;
    const size_t per = t->nbytes / (size_t)n_experts;
    t->data = (const uint8_t *)t->data + per * (size_t)e;
    t->nbytes = per;
    t->n_dims = 2;
    t->shape[0] = t->shape[1];
    t->shape[1] = t->shape[2];
    return true;
}

static enum ffn_status ffn__open_gguf(ffn_ctx_t ctx, struct ffn_model *m, const char *path) {
    const char *fn = ffn__fn_model;
    enum ffn_status s = ffn_gguf_open(ctx, path, &m->gguf);
    if (s) return s;
    struct ffn_gguf_value v;
    const char *an;
    size_t alen;
    if (ffn_gguf_kv_find(NULL, m->gguf, "general.architecture", &v) ||
        ffn_gguf_value_string(NULL, &v, &an, &alen) || alen == 0 || alen >= 32)
        return ffn_error(ctx, FFN_STATUS_BAD_FORMAT, "%s: %s: no general.architecture string", fn,
                         path);
    struct ffn_model_desc *d = &m->desc;
    memcpy(d->arch, an, alen);
    d->arch[alen] = '\0';
    if (strlen(d->arch) != alen)
        return ffn_error(ctx, FFN_STATUS_BAD_FORMAT, "%s: %s: general.architecture holds a NUL", fn,
                         path);
    snprintf(d->format, sizeof d->format, "gguf");
    m->arch = ffn_io_arch_find_gguf(d->arch);
    if (!m->arch) {
        char list[600];
        ffn__ffn_looking(m, list, sizeof list);
        return ffn_error(ctx, FFN_STATUS_UNSUPPORTED,
                         "%s: %s: unknown architecture general.architecture = \"%s\"%s", fn, path,
                         d->arch, list);
    }
    const struct ffn_io_arch *a = m->arch;
    bool found;
    int64_t n_layers;
    s = ffn__gguf_int(ctx, m, d->arch, "block_count", -1, INT64_C(1) << 16, &found, &n_layers);
    if (!s && !found)
        s = ffn_error(ctx, FFN_STATUS_BAD_FORMAT, "%s: %s: no %s.block_count", fn, path, d->arch);
    if (!s)
        s = ffn__gguf_int(ctx, m, d->arch, "embedding_length", -1, INT64_C(1) << 31, &found,
                          &d->d_model);
    if (!s && !found)
        s = ffn_error(ctx, FFN_STATUS_BAD_FORMAT, "%s: %s: no %s.embedding_length (hidden size)",
                      fn, path, d->arch);
    if (!s)
        s = ffn__gguf_int(ctx, m, d->arch, "expert_count", -1, INT64_C(1) << 14, &found,
                          &d->n_experts);
    if (!s && !found) d->n_experts = 0;
    if (s) return s;
    if (!ffn_io_act_from_hf(a->gguf_act, &d->act))
        return ffn_error(ctx, FFN_STATUS_INTERNAL, "%s: no activation for %s", fn, d->arch);
    snprintf(d->act_source, sizeof d->act_source, "llama.cpp's %s graph (%s)", d->arch,
             a->gguf_act);
    d->gated = a->gated;
    d->hf_in_out = a->conv1d;
    if (d->n_experts) {
        // The expert count sizes the table: it must be the experts' tensors' first dimension.
        char name[FFN_IO_NAME_MAX];
        struct ffn_file_tensor t;
        snprintf(name, sizeof name, "blk.0.ffn_down_exps.weight");
        if (!ffn__find(m, name, &t)) return ffn__missing(ctx, m, "layer 0", name);
        if (t.n_dims != 3 || t.shape[0] != d->n_experts) {
            char sh[96];
            ffn__shape_str(sh, sizeof sh, &t);
            return ffn_error(ctx, FFN_STATUS_BAD_FORMAT,
                             "%s: %s: %s.expert_count is %" PRId64 ", but %s is %s, not [%" PRId64
                             " experts, rows, cols]",
                             fn, path, d->arch, d->n_experts, name, sh, d->n_experts);
        }
    }
    s = ffn__alloc_layers(ctx, m, path, n_layers, true);
    const int64_t per = d->n_experts ? d->n_experts : 1;
    const bool moe = d->n_experts > 0;
    for (int64_t L = 0; L < n_layers && !s; L++) {
        int64_t d_ff;
        s = ffn__gguf_int(ctx, m, d->arch, "feed_forward_length", L, INT64_C(1) << 31, &found,
                          &d_ff);
        if (!s && !found)
            s = ffn_error(ctx, FFN_STATUS_BAD_FORMAT,
                          "%s: %s: no %s.feed_forward_length (intermediate size)", fn, path,
                          d->arch);
        if (s) break;
        if (L == 0) d->d_ff = d_ff;
        for (int64_t e = 0; e < per && !s; e++) {
            struct ffn_model_layer *l = &m->layers[L * per + e];
            char name[FFN_IO_NAME_MAX], where[64];
            snprintf(where, sizeof where, "layer %" PRId64, L);
            l->layer = L;
            l->expert = moe ? e : -1;
            l->d_model = d->d_model;
            l->d_ff = d_ff;
            l->act = d->act;
            l->gated = d->gated;
            l->orient = FFN_WEIGHT_OUT_IN;  // GGUF {in, out} = [out, in] slowest-first
            l->layout = FFN_GATE_UP_SEPARATE;
            snprintf(l->prefix, sizeof l->prefix, "blk.%" PRId64 ".", L);
            const char *sfx = moe ? "_exps" : "";
            struct ffn_file_tensor *slots[3] = {&l->gate, &l->up, &l->down};
            const char *roles[3] = {"gate", "up", "down"};
            for (int k = 0; k < 3; k++) {
                snprintf(name, sizeof name, "blk.%" PRId64 ".ffn_%s%s.weight", L, roles[k], sfx);
                memset(slots[k], 0, sizeof *slots[k]);
                const bool have = ffn__find(m, name, slots[k]);
                if (have && moe && !ffn__expert_slice(slots[k], d->n_experts, e)) {
                    s = ffn_error(ctx, FFN_STATUS_BAD_FORMAT,
                                  "%s: %s: %s is not [%" PRId64 " experts, rows, cols]", fn, path,
                                  name, d->n_experts);
                    break;
                }
                if (!have && k > 0) {  // a missing gate is decided below (plain or fused)
                    s = ffn__missing(ctx, m, where, name);
                    break;
                }
            }
            if (s) break;
            if (!d->gated && l->gate.name) {
                s = ffn_error(ctx, FFN_STATUS_BAD_FORMAT,
                              "%s: %s: %s has a gate tensor but %s's FFN is not gated", fn, path,
                              l->gate.name, d->arch);
                break;
            }
            if (d->gated && !l->gate.name) {
                // Phi-3: gate and up fused in ffn_up, gate half first ([2m, d]).
                const int64_t rows = l->up.n_dims == 2 ? l->up.shape[0] : -1;
                if (rows == 2 * d_ff) {
                    l->gate_up = l->up;
                    memset(&l->up, 0, sizeof l->up);
                    l->layout = FFN_GATE_UP_FUSED;
                } else if (rows == d_ff && !a->fused) {  // an up of its own: the gate is missing
                    snprintf(name, sizeof name, "blk.%" PRId64 ".ffn_gate%s.weight", L, sfx);
                    s = ffn__missing(ctx, m, where, name);
                    break;
                } else {
                    char sh[96];
                    ffn__shape_str(sh, sizeof sh, &l->up);
                    s = ffn_error(ctx, FFN_STATUS_BAD_FORMAT,
                                  "%s: %s: %s: there is no ffn_gate, so %s %s must hold gate and "
                                  "up fused: [2 x %s.feed_forward_length = %" PRId64 ", d]%s",
                                  fn, path, where, l->up.name, sh, d->arch, 2 * d_ff,
                                  rows > 0 && rows % 2 ? "; an odd row count cannot be split "
                                                         "into gate and up halves"
                                                       : "");
                    break;
                }
            }
            if (!moe) {  // biases (GPT-2, Falcon, GPT-NeoX, StarCoder2 ...)
                struct ffn_file_tensor *bs[3] = {&l->b_gate, &l->b_up, &l->b_down};
                for (int k = 0; k < 3; k++) {
                    snprintf(name, sizeof name, "blk.%" PRId64 ".ffn_%s.bias", L, roles[k]);
                    if (!ffn__find(m, name, bs[k])) memset(bs[k], 0, sizeof *bs[k]);
                }
                if (l->layout == FFN_GATE_UP_FUSED && l->b_up.name) {
                    l->b_gate_up = l->b_up;
                    memset(&l->b_up, 0, sizeof l->b_up);
                }
            }
            char w2[600];
            snprintf(w2, sizeof w2, "%.500s: layer %" PRId64, path, L);
            s = ffn__check_layer(ctx, m, w2, l);
        }
    }
    return s;
}

// --- public ------------------------------------------------------------------------------------

enum ffn_status ffn_model_open(ffn_ctx_t ctx, const char *path, ffn_model_t *model_out) {
    const char *fn = ffn__fn_model;
    ffn_error_clear(ctx);
    if (!path || !model_out) return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: NULL argument", fn);
    *model_out = NULL;
    struct ffn_model *m = calloc(1, sizeof *m);
    if (!m) return ffn_error(ctx, FFN_STATUS_OUT_OF_MEMORY, "%s: out of memory", fn);
    m->path = path;
    enum ffn_status s;
    enum ffn_io_kind kind = FFN_IO_KIND_UNKNOWN;
    if (ffn_io_is_dir(path)) {
        s = ffn__open_hf(ctx, m, path, path);
    } else if (!ffn_io_exists(path)) {
        s = ffn_error(ctx, FFN_STATUS_NOT_FOUND, "%s: %s: no such file or directory", fn, path);
    } else if ((s = ffn_io_file_kind(ctx, fn, path, &kind)) != FFN_STATUS_OK) {
        // a FIFO, a device, unreadable ...: the message is set
    } else if (kind == FFN_IO_KIND_GGUF) {
        s = ffn__open_gguf(ctx, m, path);
    } else if (kind == FFN_IO_KIND_UNKNOWN) {
        s = ffn_error(ctx, FFN_STATUS_BAD_FORMAT,
                      "%s: %s: is neither a checkpoint directory, a safetensors file (an 8-byte "
                      "header length, then '{'), a GGUF file (\"GGUF\") nor a shard index (JSON)",
                      fn, path);
    } else {
        // A .safetensors file or a shard index (JSON: the safetensors reader says when it is
        // not one): config.json is expected beside it.
        char *dir = ffn_io_path_dir(path);
        s = dir ? ffn__open_hf(ctx, m, dir, path)
                : ffn_error(ctx, FFN_STATUS_OUT_OF_MEMORY, "%s: out of memory", fn);
        free(dir);
    }
    if (s) {
        ffn_model_close(m);
        return s;
    }
    ffn__finish_desc(m);
    m->path = NULL;
    *model_out = m;
    return FFN_STATUS_OK;
}

void ffn_model_close(ffn_model_t m) {
    if (!m) return;
    ffn_safetensors_close(m->st);
    ffn_gguf_close(m->gguf);
    free(m->config_json);
    free(m->layers);
    free(m);
}

const struct ffn_model_desc *ffn_model_desc(ffn_model_t m) { return m ? &m->desc : NULL; }

enum ffn_status ffn_model_layer(ffn_ctx_t ctx, ffn_model_t m, int64_t layer, int64_t expert,
                                struct ffn_model_layer *out) {
    static const char fn[] = "ffn_model_layer";
    ffn_error_clear(ctx);
    if (!m || !out) return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: NULL argument", fn);
    if (layer < 0 || layer >= m->desc.n_layers)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: layer %" PRId64 " is outside [0, %" PRId64 ")", fn, layer,
                         m->desc.n_layers);
    const int64_t per = m->desc.n_experts ? m->desc.n_experts : 1;
    if (m->desc.n_experts ? (expert < 0 || expert >= per) : (expert != 0 && expert != -1))
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: expert %" PRId64 " is outside [0, %" PRId64 ")", fn, expert, per);
    *out = m->layers[layer * per + (m->desc.n_experts ? expert : 0)];
    return FFN_STATUS_OK;
}

ffn_safetensors_t ffn_model_safetensors(ffn_model_t m) { return m ? m->st : NULL; }
ffn_gguf_t ffn_model_gguf(ffn_model_t m) { return m ? m->gguf : NULL; }
const char *ffn_model_config_json(ffn_model_t m) { return m ? m->config_json : NULL; }
