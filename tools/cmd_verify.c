// cmd_verify.c — `ffn verify MODEL IO.safetensors [--layer L]`: runs one layer's FFN forward and
// backward on the reference input x and upstream gradient dy, compares y, dx and every
// grad.<param> with the reference (max abs and max rel error per tensor), and, when the forward
// does not match, tries the usual converter mistakes (gate/up swapped, the halves of a fused
// gate_up swapped, a weight transposed, tanh vs erf GeLU) and says which one explains it.
// Error measure: rel = max|got - ref| / max|ref| (normwise, so tiny reference entries do not
// blow it up). Exit 0 when every tensor is within tolerance, 1 when not, 2 on bad input.
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "model.h"
#include "tools.h"
#include "tp.h"

// Default tolerances on rel, by the lowest-precision weight dtype. The reference is float64
// rounded to f32; an f32 run differs by accumulated rounding (~1e-6 at these sizes); bf16 / f16 /
// quantised weights add their own representation error (2^-9, 2^-12, ~1/254 and ~1/16 of a
// block's largest value). bf16 checkpoints are also computed in bf16 (x and h rounded to bf16
// for the GEMMs): the 19 smooth-activation fixtures converted to bf16 err by at most 7e-3
// (tests/block/hf_bf16.sh), a quarter of the tolerance.
#define FFN_TOL_F32 1e-4
#define FFN_TOL_F16 5e-3
#define FFN_TOL_BF16 3e-2
#define FFN_TOL_Q8_0 3e-2
#define FFN_TOL_Q4_0 0.25
// --tol: a finite positive rel error; above 1 every output would pass against any reference
// of its size, so more is refused as a likely typo.
#define FFN_TOL_MAX 1.0

static void ffn__usage(FILE *f) {
    fprintf(f,
            "usage: ffn verify MODEL IO.safetensors [--layer L] [--expert E] [--tol T]\n"
            "                  [--tp P [--shards DIR] ...]\n"
            "\n"
            "Checks one layer's FFN against reference outputs and gradients. IO.safetensors holds\n"
            "x [tokens, d] and y [tokens, d], and optionally dy, dx and grad.<param> (named as in\n"
            "the module: grad.gate_proj.weight, grad.c_fc.bias, ...); __metadata__.layer gives\n"
            "the layer unless --layer does. Prints max abs / rel error per tensor. When the\n"
            "forward does not match, tries the usual converter mistakes (gate and up swapped,\n"
            "the halves of a fused gate_up swapped, a weight transposed, tanh vs erf GeLU) and\n"
            "says which one explains the reference.\n"
            "\n"
            "  --layer L   layer to check (default: __metadata__.layer)\n"
            "  --expert E  expert of a mixture-of-experts layer (default: __metadata__.expert)\n"
            "  --tol T     max rel error accepted, in (0, %g] (default by weight dtype: f32 %g,\n"
            "              f16 %g, bf16 %g, Q8_0 %g, Q4_0 %g)\n" FFN_TOOL_TP_USAGE
            "\n"
            "exit status: 0 all within tolerance, 1 a tensor is not, 2 bad input or usage\n",
            FFN_TOL_MAX, FFN_TOL_F32, FFN_TOL_F16, FFN_TOL_BF16, FFN_TOL_Q8_0, FFN_TOL_Q4_0);
}

// --- canonical gradients ---------------------------------------------------------------------
// Every weight gradient is compared as the logical [out, in] matrix of its role, whatever its
// storage (two tensors or fused, [out, in] or [in, out]).

enum { R_GATE, R_UP, R_DOWN, R_BGATE, R_BUP, R_BDOWN, R_COUNT };

struct ffn__canon {
    float *v[R_COUNT];  // NULL: the role is absent
};

// Copies the logical [out, in] block rows [off, off + out) of a stored matrix whose logical shape
// is [out_total, in] into dst [out, in].
static void ffn__extract(float *dst, const float *src, enum ffn_weight_orient o, int64_t out,
                         int64_t in, int64_t off, int64_t out_total) {
    for (int64_t r = 0; r < out; r++)
        for (int64_t c = 0; c < in; c++)
            dst[r * in + c] =
                o == FFN_WEIGHT_OUT_IN ? src[(r + off) * in + c] : src[c * out_total + r + off];
}

static float *ffn__canon_alloc(int64_t n) { return calloc((size_t)(n > 0 ? n : 1), sizeof(float)); }

static void ffn__canon_free(struct ffn__canon *c) {
    for (int r = 0; r < R_COUNT; r++) free(c->v[r]);
    memset(c, 0, sizeof *c);
}

// Module-relative names of the FFN's parameters across architectures, by role.
static const char *const ffn__gate_names[] = {"gate_proj", "w1", "wi_0", NULL};
static const char *const ffn__up_names[] = {"up_proj",       "w3", "wi_1", "c_fc", "fc_in",
                                            "dense_h_to_4h", "wi", "fc1",  NULL};
static const char *const ffn__down_names[] = {"down_proj",     "w2",  "wo", "c_proj", "fc_out",
                                              "dense_4h_to_h", "fc2", NULL};
static const char *const ffn__fused_names[] = {"gate_up_proj", NULL};

static bool ffn__in(const char *base, size_t n, const char *const *list) {
    for (int i = 0; list[i]; i++)
        if (strlen(list[i]) == n && !strncmp(base, list[i], n)) return true;
    return false;
}

// --- error statistics --------------------------------------------------------------------------

struct ffn__err {
    double max_abs, max_ref;
    int64_t nonfinite, n;
};

// Values compared by the whole run (printed with the result).
static int64_t ffn__n_values;

static void ffn__acc(struct ffn__err *e, const float *got, const float *ref, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        if (!isfinite(got[i])) {
            e->nonfinite++;
            continue;
        }
        const double d = fabs((double)got[i] - (double)ref[i]);
        if (d > e->max_abs || isnan(d)) e->max_abs = d;
        if (fabs((double)ref[i]) > e->max_ref) e->max_ref = fabs((double)ref[i]);
    }
    e->n += n;
}

static double ffn__rel(const struct ffn__err *e) {
    if (e->nonfinite) return INFINITY;
    return e->max_ref > 0 ? e->max_abs / e->max_ref : e->max_abs;
}

// --- runs --------------------------------------------------------------------------------------

struct ffn__job {
    ffn_ctx_t ctx;
    const struct ffn_model_layer *l;
    int64_t tokens;
    const float *x, *y_ref;
};

// Forward of one variant; returns the rel error of y (INFINITY on failure).
static double ffn__try(const struct ffn__job *j, const struct ffn_tool_variant *v, float *y) {
    struct ffn_tool_block b;
    if (ffn_tool_block_make(j->ctx, j->l, v, &b)) return INFINITY;
    const int64_t d = j->l->d_model;
    struct ffn_tensor tx = ffn_tensor_2d((void *)j->x, FFN_DTYPE_F32, j->tokens, d, d);
    struct ffn_tensor ty = ffn_tensor_2d(y, FFN_DTYPE_F32, j->tokens, d, d);
    double rel = INFINITY;
    if (!ffn_block_forward(j->ctx, b.block, &ty, &tx, FFN_BLOCK_POLICY_NONE)) {
        struct ffn__err e = {0};
        ffn__acc(&e, y, j->y_ref, j->tokens * d);
        rel = ffn__rel(&e);
    }
    ffn_tool_block_free(&b);
    return rel;
}

static const char *ffn__rel_name(const struct ffn_model_layer *l, const struct ffn_file_tensor *t) {
    const size_t n = strlen(l->prefix);
    return (t->name && !strncmp(t->name, l->prefix, n)) ? t->name + n : (t->name ? t->name : "?");
}

// Tries the usual converter mistakes; prints the one that explains the reference, if any.
static void ffn__diagnose(const struct ffn__job *j, double tol, float *y) {
    const struct ffn_model_layer *l = j->l;
    struct cand {
        struct ffn_tool_variant v;
        char what[256];
    } c[8];
    int n = 0;
    if (l->gated && l->layout == FFN_GATE_UP_SEPARATE) {
        c[n].v = (struct ffn_tool_variant){true, 0, false};
        snprintf(c[n++].what, sizeof c[0].what, "%s and %s appear swapped",
                 ffn__rel_name(l, &l->gate), ffn__rel_name(l, &l->up));
    } else if (l->gated) {
        c[n].v = (struct ffn_tool_variant){true, 0, false};
        snprintf(c[n++].what, sizeof c[0].what,
                 "the halves of %s appear swapped (the reference has [up | gate], not [gate | up])",
                 ffn__rel_name(l, &l->gate_up));
    }
    const struct {
        const struct ffn_file_tensor *t;
        unsigned bit;
    } ws[] = {{&l->gate, FFN_TOOL_W_GATE},
              {&l->up, FFN_TOOL_W_UP},
              {&l->gate_up, FFN_TOOL_W_GATE_UP},
              {&l->down, FFN_TOOL_W_DOWN}};
    unsigned all = 0;
    for (size_t i = 0; i < 4; i++) {
        if (!ws[i].t->name) continue;
        all |= ws[i].bit;
        c[n].v = (struct ffn_tool_variant){false, ws[i].bit, false};
        snprintf(c[n++].what, sizeof c[0].what,
                 "%s appears transposed (its bytes hold the matrix in the other orientation)",
                 ffn__rel_name(l, ws[i].t));
    }
    c[n].v = (struct ffn_tool_variant){false, all, false};
    snprintf(
        c[n++].what, sizeof c[0].what,
        "all weights appear transposed ([in, out] bytes under [out, in] shapes, or the reverse)");
    if (l->act == FFN_ACT_GELU_TANH || l->act == FFN_ACT_GELU_ERF) {
        c[n].v = (struct ffn_tool_variant){false, 0, true};
        snprintf(c[n++].what, sizeof c[0].what, "the reference uses the %s GeLU, not the %s one",
                 l->act == FFN_ACT_GELU_TANH ? "erf" : "tanh",
                 l->act == FFN_ACT_GELU_TANH ? "tanh" : "erf");
    }
    int best = -1;
    double best_rel = INFINITY;
    for (int i = 0; i < n; i++) {
        const double r = ffn__try(j, &c[i].v, y);
        if (r < best_rel) best_rel = r, best = i;
    }
    if (best >= 0 && best_rel <= tol)
        printf("diagnosis: %s: with that undone the max rel error is %.1e\n", c[best].what,
               best_rel);
    else
        printf(
            "diagnosis: none of the usual converter mistakes (gate/up swapped, fused halves "
            "swapped, a weight transposed, tanh vs erf GeLU) explains the reference (best: "
            "%.1e)\n",
            best_rel);
}

// --- reference gradients -----------------------------------------------------------------------

// "[a, b]" of a tensor's shape.
static void ffn__shape(char *buf, size_t cap, const struct ffn_file_tensor *t) {
    size_t k = (size_t)snprintf(buf, cap, "[");
    for (int i = 0; i < t->n_dims && k < cap; i++)
        k += (size_t)snprintf(buf + k, cap - k, "%s%" PRId64, i ? ", " : "", t->shape[i]);
    if (k < cap) snprintf(buf + k, cap - k, "]");
}

// The roles a reference gradient "grad.<param>" stands for (two for a fused gate_up) and whether
// it is a bias; false when <param> is not a parameter name ffn knows.
static bool ffn__grad_roles(const char *name, int roles[2], bool *bias) {
    roles[0] = roles[1] = -1;
    const char *rel = name + 5, *dot = strrchr(rel, '.');
    if (!dot) return false;
    const size_t bl = (size_t)(dot - rel);
    *bias = !strcmp(dot, ".bias");
    if (!*bias && strcmp(dot, ".weight")) return false;
    if (ffn__in(rel, bl, ffn__gate_names))
        roles[0] = *bias ? R_BGATE : R_GATE;
    else if (ffn__in(rel, bl, ffn__up_names))
        roles[0] = *bias ? R_BUP : R_UP;
    else if (ffn__in(rel, bl, ffn__down_names))
        roles[0] = *bias ? R_BDOWN : R_DOWN;
    else if (ffn__in(rel, bl, ffn__fused_names))
        roles[0] = *bias ? R_BGATE : R_GATE, roles[1] = *bias ? R_BUP : R_UP;
    return roles[0] >= 0;
}

// Whether reference gradient t fits its roles at (d, m): a bias [out], a weight [out, in] or
// [in, out]. *ro is the orientation to read it in (ambiguous when square: the architecture's
// Hugging Face convention), *out_rows the logical output rows; *want the expected shape in words.
static bool ffn__grad_shape(const struct ffn_file_tensor *t, const int roles[2], bool bias,
                            int64_t d, int64_t m, bool hf_in_out, enum ffn_weight_orient *ro,
                            int64_t *out_rows) {
    const bool is_down = roles[0] == R_DOWN || roles[0] == R_BDOWN;
    const int64_t out = is_down ? d : (roles[1] >= 0 ? 2 * m : m);
    const int64_t in = is_down ? m : d;
    *out_rows = out;
    *ro = hf_in_out ? FFN_WEIGHT_IN_OUT : FFN_WEIGHT_OUT_IN;
    if (bias) return t->n_dims == 1 && t->shape[0] == out;
    const bool oi = t->n_dims == 2 && t->shape[0] == out && t->shape[1] == in;
    const bool io = t->n_dims == 2 && t->shape[0] == in && t->shape[1] == out;
    if (oi && !io) *ro = FFN_WEIGHT_OUT_IN;
    if (io && !oi) *ro = FFN_WEIGHT_IN_OUT;
    return oi || io;
}

// Every reference gradient of a known parameter must have its parameter's shape: a wrong one is
// bad input (exit 2), found before anything runs, not a numeric failure.
static bool ffn__grads_shapes_ok(ffn_safetensors_t io, const char *path, int64_t d, int64_t m,
                                 bool hf_in_out) {
    for (int64_t i = 0; i < ffn_safetensors_count(io); i++) {
        struct ffn_file_tensor t;
        ffn_safetensors_get(NULL, io, i, &t);
        int roles[2];
        bool bias;
        if (strncmp(t.name, "grad.", 5) || !ffn__grad_roles(t.name, roles, &bias)) continue;
        enum ffn_weight_orient ro;
        int64_t out;
        if (ffn__grad_shape(&t, roles, bias, d, m, hf_in_out, &ro, &out)) continue;
        const bool is_down = roles[0] == R_DOWN || roles[0] == R_BDOWN;
        const int64_t in = is_down ? m : d;
        char sh[96];
        ffn__shape(sh, sizeof sh, &t);
        if (bias)
            fprintf(stderr,
                    "ffn verify: %s: %s is %s; with d = %" PRId64 ", m = %" PRId64
                    " it must be [%" PRId64 "]\n",
                    ffn_tool_esc(path), ffn_tool_esc(t.name), sh, d, m, out);
        else
            fprintf(stderr,
                    "ffn verify: %s: %s is %s; with d = %" PRId64 ", m = %" PRId64
                    " it must be [%" PRId64 ", %" PRId64 "] ([out, in]) or [%" PRId64 ", %" PRId64
                    "] ([in, out])\n",
                    ffn_tool_esc(path), ffn_tool_esc(t.name), sh, d, m, out, in, in, out);
        return false;
    }
    return true;
}

// --- the command ------------------------------------------------------------------------------

struct ffn__opts {
    const char *model, *io;
    int64_t layer, expert;
    double tol;
    struct ffn_tool_tp tp;
};

static int ffn__parse(int argc, char **argv, struct ffn__opts *o) {
    *o = (struct ffn__opts){NULL, NULL, -1, -1, -1.0, {0}};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const int k = ffn_tool_tp_option("ffn verify", argc, argv, &i, &o->tp);
        if (k < 0) return 2;
        if (k) continue;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            ffn__usage(stdout);
            return 0;
        } else if (!strcmp(a, "--layer") || !strcmp(a, "--expert") || !strcmp(a, "--tol")) {
            const char *v = ffn_arg_value("verify", argc, argv, &i);
            if (!v) return 2;
            bool ok;
            if (!strcmp(a, "--tol"))
                ok = ffn_arg_f64("verify", a, v, 0.0, FFN_TOL_MAX, true, &o->tol);
            else if (!strcmp(a, "--layer"))
                ok = ffn_arg_i64("verify", a, v, 0, FFN_TOOL_MAX_LAYER, &o->layer);
            else
                ok = ffn_arg_i64("verify", a, v, 0, FFN_TOOL_MAX_EXPERT, &o->expert);
            if (!ok) return 2;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "ffn verify: unknown option '%s'\n", ffn_tool_esc(a));
            return 2;
        } else if (!o->model) {
            o->model = a;
        } else if (!o->io) {
            o->io = a;
        } else {
            fprintf(stderr, "ffn verify: unexpected argument '%s'\n", ffn_tool_esc(a));
            return 2;
        }
    }
    if (!o->model || !o->io) {
        ffn__usage(stderr);
        return 2;
    }
    if (!ffn_arg_want("verify", "IO", o->io, false)) return 2;
    return -1;  // go on
}

static double ffn__default_tol(const struct ffn_model_layer *l) {
    const struct ffn_file_tensor *ts[] = {&l->gate, &l->up, &l->gate_up, &l->down};
    double tol = FFN_TOL_F32;
    for (size_t i = 0; i < 4; i++) {
        if (!ts[i]->name) continue;
        double t = FFN_TOL_F32;
        switch (ts[i]->dtype) {
        case FFN_FILE_DTYPE_F16: t = FFN_TOL_F16; break;
        case FFN_FILE_DTYPE_BF16: t = FFN_TOL_BF16; break;
        case FFN_FILE_DTYPE_Q8_0: t = FFN_TOL_Q8_0; break;
        case FFN_FILE_DTYPE_Q4_0: t = FFN_TOL_Q4_0; break;
        default: break;
        }
        if (t > tol) tol = t;
    }
    return tol;
}

// __metadata__.<key> as a non-negative integer in [0, max]: *v = -1 when absent; false (with a
// message) when present but not such a number.
static bool ffn__meta_int(ffn_safetensors_t io, const char *path, const char *key, int64_t max,
                          int64_t *v) {
    *v = -1;
    const char *s = ffn_safetensors_metadata(io, key);
    if (!s) return true;
    if (ffn_arg_parse_i64(s, 0, max, v) == FFN_ARG_OK) return true;
    fprintf(stderr, "ffn verify: %s: __metadata__.%s = \"%s\" is not a %s number in [0, %lld]\n",
            ffn_tool_esc(path), key, ffn_tool_esc(s), key, (long long)max);
    *v = -1;
    return false;
}

// A reference tensor that must be [T, d] exactly (not merely T·d elements): false with a
// message otherwise.
static bool ffn__want_td(const char *io, const struct ffn_file_tensor *t, int64_t T, int64_t d) {
    if (t->n_dims == 2 && t->shape[0] == T && t->shape[1] == d) return true;
    char sh[96];
    ffn__shape(sh, sizeof sh, t);
    fprintf(stderr,
            "ffn verify: %s: %s is %s; it must be [%" PRId64 ", %" PRId64
            "] = [tokens, d], as x%s\n",
            ffn_tool_esc(io), ffn_tool_esc(t->name), sh, T, d,
            t->n_dims == 2 && t->shape[0] == d && t->shape[1] == T ? " (stored transposed?)" : "");
    return false;
}

// Prints one comparison line; returns true when within tolerance.
static bool ffn__report(const char *name, const struct ffn__err *e, double tol) {
    ffn__n_values += e->n;
    const double rel = ffn__rel(e);
    const bool ok = rel <= tol;
    if (e->nonfinite)
        printf("  %-28s %" PRId64 " non-finite values (NaN/inf) in ffn's output   FAIL\n", name,
               e->nonfinite);
    else
        printf("  %-28s %-12.2e %-12.2e %-10.2g %s\n", name, e->max_abs, rel, tol,
               ok ? "ok" : "FAIL");
    return ok;
}

// --- the command, step by step -------------------------------------------------------------------

// One run of the command: what it opened, read, computed and found. Every step below returns
// false (after printing why) when the input is bad; the result is then exit status 2.
struct ffn__verify {
    struct ffn__opts o;
    ffn_ctx_t ctx;
    ffn_model_t model;
    ffn_safetensors_t io;
    const struct ffn_model_desc *desc;
    struct ffn_model_layer l;
    char mp[1024], iop[1024];  // the paths as printed (escaped once)
    int64_t T, d, m;           // tokens, d_model, d_ff
    bool train;                // the reference holds dy: the backward is checked too
    double tol;
    float *x, *y_ref, *dy, *dx_ref, *y, *dx;
    float *g[8];              // ffn's gradients in storage layout (order of struct ffn_model_layer)
    struct ffn__canon ours;   // the same, canonical ([out, in] per role)
    struct ffn_tool_block b;  // one process
    struct ffn_tool_tpb tb;   // --tp
    bool all_ok;
    int n_checked;
};

// Step 1: the model, the reference file, and the layer (and expert) to check: --layer / --expert,
// else the reference's __metadata__.
static bool ffn__open_layer(struct ffn__verify *v) {
    if (ffn_model_open(v->ctx, v->o.model, &v->model) ||
        ffn_safetensors_open(v->ctx, v->o.io, &v->io)) {
        fprintf(stderr, "ffn verify: %s\n", ffn_tool_errmsg(v->ctx));
        return false;
    }
    v->desc = ffn_model_desc(v->model);
    ffn_text_escape(v->mp, sizeof v->mp, v->o.model);
    ffn_text_escape(v->iop, sizeof v->iop, v->o.io);
    const bool expert_given = v->o.expert >= 0;
    int64_t meta_layer, meta_expert;
    if (!ffn__meta_int(v->io, v->o.io, "layer", FFN_TOOL_MAX_LAYER, &meta_layer) ||
        !ffn__meta_int(v->io, v->o.io, "expert", FFN_TOOL_MAX_EXPERT, &meta_expert))
        return false;
    if (v->o.layer < 0) v->o.layer = meta_layer;
    if (v->o.expert < 0) v->o.expert = meta_expert;
    if (v->o.layer < 0) {
        fprintf(stderr, "ffn verify: %s: no __metadata__.layer; give --layer L\n", v->iop);
        return false;
    }
    if (v->desc->n_experts && v->o.expert < 0) {
        fprintf(stderr, "ffn verify: %s has %" PRId64 " experts per layer; give --expert E\n",
                v->mp, v->desc->n_experts);
        return false;
    }
    if (!v->desc->n_experts && v->o.expert >= 0) {
        fprintf(stderr, "ffn verify: %s %" PRId64 ": %s has no experts (a dense model)\n",
                expert_given ? "--expert" : "__metadata__.expert", v->o.expert, v->mp);
        return false;
    }
    if (ffn_model_layer(v->ctx, v->model, v->o.layer, v->desc->n_experts ? v->o.expert : -1,
                        &v->l)) {
        fprintf(stderr, "ffn verify: %s: %s\n", v->mp, ffn_tool_errmsg(v->ctx));
        return false;
    }
    v->d = v->l.d_model, v->m = v->l.d_ff;
    return true;
}

// Step 2: the reference tensors x and y [tokens, d], and when present dy, dx (same shape) and
// the grad.<param> tensors (shapes checked against the layer).
static bool ffn__read_reference(struct ffn__verify *v) {
    const int64_t d = v->d;
    struct ffn_file_tensor tx, ty, tdy, tdx;
    if (!(v->x = ffn_tool_read_f32(v->ctx, "ffn verify", v->io, v->o.io, "x", &tx)) ||
        !(v->y_ref = ffn_tool_read_f32(v->ctx, "ffn verify", v->io, v->o.io, "y", &ty)))
        return false;
    if (tx.n_dims != 2 || tx.shape[1] != d) {
        char sh[96];
        ffn__shape(sh, sizeof sh, &tx);
        fprintf(stderr,
                "ffn verify: %s: x is %s; it must be [tokens, %" PRId64 "] (d of %s layer %" PRId64
                ")\n",
                v->iop, sh, d, v->mp, v->o.layer);
        return false;
    }
    const int64_t T = v->T = tx.shape[0];
    if (T == 0) {
        fprintf(stderr, "ffn verify: %s: x has 0 tokens: there is nothing to compare\n", v->iop);
        return false;
    }
    if (!ffn__want_td(v->o.io, &ty, T, d)) return false;
    v->train = ffn_safetensors_find(NULL, v->io, "dy", &tdy) == FFN_STATUS_OK;
    if (!v->train) return true;
    if (!ffn__want_td(v->o.io, &tdy, T, d)) return false;
    if (!(v->dy = ffn_tool_read_f32(v->ctx, "ffn verify", v->io, v->o.io, "dy", &tdy)))
        return false;
    if (ffn_safetensors_find(NULL, v->io, "dx", &tdx) == FFN_STATUS_OK) {
        if (!ffn__want_td(v->o.io, &tdx, T, d)) return false;
        if (!(v->dx_ref = ffn_tool_read_f32(v->ctx, "ffn verify", v->io, v->o.io, "dx", &tdx)))
            return false;
    }
    return ffn__grads_shapes_ok(v->io, v->o.io, d, v->m, v->desc->hf_in_out);
}

// Step 3: the tolerance, the output buffers and the block (or the tensor-parallel block).
static bool ffn__make_block(struct ffn__verify *v) {
    const int64_t T = v->T, d = v->d;
    v->tol = v->o.tol > 0 ? v->o.tol : ffn__default_tol(&v->l);
    v->y = malloc((size_t)(T * d) * sizeof *v->y);
    v->dx = malloc((size_t)(T * d) * sizeof *v->dx);
    if (!v->y || !v->dx) {
        fprintf(stderr,
                "ffn verify: out of memory for y and dx [%" PRId64 ", %" PRId64 "] (%.1f MiB)\n", T,
                d, 2.0 * (double)(T * d) * 4.0 / (1 << 20));
        return false;
    }
    if (v->o.tp.world ? ffn_tool_tpb_make(v->ctx, &v->o.tp, v->o.model, &v->l, &v->tb)
                      : ffn_tool_block_make(v->ctx, &v->l, NULL, &v->b)) {
        fprintf(stderr, "ffn verify: %s layer %" PRId64 ": %s\n", v->mp, v->o.layer,
                ffn_tool_errmsg(v->ctx));
        return false;
    }
    return true;
}

// Step 4: what is checked against what, and the table's header.
static void ffn__print_header(const struct ffn__verify *v) {
    const struct ffn_model_desc *desc = v->desc;
    char dt[48];
    ffn_tool_layer_dtype(&v->l, dt, sizeof dt);
    const char *module = ffn_safetensors_metadata(v->io, "module");
    printf("ffn verify: %s layer %" PRId64, v->mp, v->o.layer);
    if (desc->n_experts) printf(" expert %" PRId64, v->o.expert);
    printf(" (%s, %s, %s weights, %s) against %s%s%s%s, %" PRId64 " tokens\n",
           ffn_tool_esc(desc->arch), ffn_tool_ffn_name(v->l.act, v->l.gated), dt,
           ffn_tool_layout_name(&v->l), v->iop, module ? " (" : "",
           module ? ffn_tool_esc(module) : "", module ? ")" : "", v->T);
    if (desc->note[0]) printf("note: %s\n", ffn_tool_esc(desc->note));
    // The block multiplies in the weights' own dtype (bf16 as stored; f16 through an exact f32
    // copy: the CPU matmul has no f16 kernel), accumulating in f32.
    struct ffn_block_info binfo = FFN_BLOCK_INFO_INIT;
    if (v->b.block && !ffn_block_info(v->ctx, v->b.block, v->T, &binfo))
        printf("computed in %s (f32 accumulation)\n", ffn_dtype_name(binfo.compute_dtype));
    if (v->o.tp.world)
        printf("tensor-parallel over %" PRId64
               " ranks%s%s; gradients gathered back to the "
               "checkpoint's layout\n",
               v->o.tp.world, v->o.tp.shards ? ", weights from " : " (sharded in memory)",
               v->o.tp.shards ? ffn_tool_esc(v->o.tp.shards) : "");
    printf("  %-28s %-12s %-12s %-10s\n", "tensor", "max abs err", "max rel err", "tolerance");
}

// Step 5: the forward (keeping what the backward needs), y compared. False when it fails to run.
static bool ffn__check_forward(struct ffn__verify *v) {
    const int64_t T = v->T, d = v->d;
    struct ffn_tensor vx = ffn_tensor_2d(v->x, FFN_DTYPE_F32, T, d, d);
    struct ffn_tensor vy = ffn_tensor_2d(v->y, FFN_DTYPE_F32, T, d, d);
    const enum ffn_block_policy pol = v->train ? FFN_BLOCK_POLICY_SAVE : FFN_BLOCK_POLICY_NONE;
    if (v->o.tp.world ? ffn_tp_block_forward(v->ctx, v->tb.block, &vy, &vx, pol)
                      : ffn_block_forward(v->ctx, v->b.block, &vy, &vx, pol)) {
        fprintf(stderr, "ffn verify: forward failed: %s\n", ffn_tool_errmsg(v->ctx));
        return false;
    }
    struct ffn__err ey = {0};
    ffn__acc(&ey, v->y, v->y_ref, T * d);
    v->all_ok = ffn__report("y", &ey, v->tol);
    v->n_checked = 1;
    return true;
}

// Step 6: the backward into gradient buffers in the weights' storage layout; dx compared.
static bool ffn__run_backward(struct ffn__verify *v) {
    const int64_t T = v->T, d = v->d;
    const struct ffn_model_layer *l = &v->l;
    struct ffn_block_grads gr = FFN_BLOCK_GRADS_INIT;
    const struct ffn_file_tensor *ts[8] = {&l->gate,   &l->up,   &l->gate_up,   &l->down,
                                           &l->b_gate, &l->b_up, &l->b_gate_up, &l->b_down};
    void **slots[8] = {&gr.gate,   &gr.up,   &gr.gate_up,   &gr.down,
                       &gr.b_gate, &gr.b_up, &gr.b_gate_up, &gr.b_down};
    for (int i = 0; i < 8; i++) {
        if (!ts[i]->name) continue;
        if (!(v->g[i] = ffn__canon_alloc(ffn_file_tensor_numel(ts[i])))) {
            fprintf(stderr,
                    "ffn verify: out of memory for the gradient of %s (%" PRId64 " values)\n",
                    ffn_tool_esc(ts[i]->name), ffn_file_tensor_numel(ts[i]));
            return false;
        }
        *slots[i] = v->g[i];
    }
    struct ffn_tensor vdy = ffn_tensor_2d(v->dy, FFN_DTYPE_F32, T, d, d);
    struct ffn_tensor vdx = ffn_tensor_2d(v->dx, FFN_DTYPE_F32, T, d, d);
    if (v->o.tp.world ? ffn_tool_tpb_backward(v->ctx, &v->o.tp, &v->tb, &gr, &vdx, &vdy)
                      : ffn_block_backward(v->ctx, v->b.block, &gr, &vdx, &vdy)) {
        fprintf(stderr, "ffn verify: backward failed: %s\n", ffn_tool_errmsg(v->ctx));
        return false;
    }
    if (v->dx_ref) {
        struct ffn__err e = {0};
        ffn__acc(&e, v->dx, v->dx_ref, T * d);
        v->all_ok &= ffn__report("dx", &e, v->tol);
        v->n_checked++;
    }
    return true;
}

// Step 7: ffn's gradients in canonical form, by role: every buffer allocated (and checked)
// before any is filled.
static bool ffn__canonical_grads(struct ffn__verify *v) {
    const int64_t d = v->d, m = v->m;
    float **g = v->g;
    struct ffn__canon *ours = &v->ours;
    const enum ffn_weight_orient ow = v->l.orient;
    const bool gf = v->l.layout != FFN_GATE_UP_FUSED_UP_FIRST;
    if (g[0] || g[2]) ours->v[R_GATE] = ffn__canon_alloc(m * d);
    if (g[1] || g[2]) ours->v[R_UP] = ffn__canon_alloc(m * d);
    if (g[3]) ours->v[R_DOWN] = ffn__canon_alloc(d * m);
    if (g[6]) ours->v[R_BGATE] = ffn__canon_alloc(m), ours->v[R_BUP] = ffn__canon_alloc(m);
    if (((g[0] || g[2]) && !ours->v[R_GATE]) || ((g[1] || g[2]) && !ours->v[R_UP]) ||
        (g[3] && !ours->v[R_DOWN]) || (g[6] && (!ours->v[R_BGATE] || !ours->v[R_BUP]))) {
        fprintf(stderr,
                "ffn verify: out of memory for the weight gradients (d = %" PRId64 ", m = %" PRId64
                ")\n",
                d, m);
        return false;
    }
    if (g[0]) ffn__extract(ours->v[R_GATE], g[0], ow, m, d, 0, m);
    if (g[1]) ffn__extract(ours->v[R_UP], g[1], ow, m, d, 0, m);
    if (g[2]) {
        ffn__extract(ours->v[R_GATE], g[2], ow, m, d, gf ? 0 : m, 2 * m);
        ffn__extract(ours->v[R_UP], g[2], ow, m, d, gf ? m : 0, 2 * m);
    }
    if (g[3]) ffn__extract(ours->v[R_DOWN], g[3], ow, d, m, 0, d);
    if (g[4]) ours->v[R_BGATE] = g[4], g[4] = NULL;
    if (g[5]) ours->v[R_BUP] = g[5], g[5] = NULL;
    if (g[6]) {
        memcpy(ours->v[R_BGATE], g[6] + (gf ? 0 : m), (size_t)m * sizeof(float));
        memcpy(ours->v[R_BUP], g[6] + (gf ? m : 0), (size_t)m * sizeof(float));
    }
    if (g[7]) ours->v[R_BDOWN] = g[7], g[7] = NULL;
    return true;
}

// Step 8, per reference gradient: grad.<param> compared with ours in its role (or its two roles,
// for a fused gate_up; shapes were checked in step 2). False on out of memory.
static bool ffn__check_grad(struct ffn__verify *v, const struct ffn_file_tensor *t) {
    const int64_t d = v->d, m = v->m;
    int roles[2];
    bool bias;
    if (!ffn__grad_roles(t->name, roles, &bias)) {
        printf("  %-28s skipped: not a parameter of an FFN that ffn knows\n",
               ffn_tool_esc(t->name));
        return true;
    }
    enum ffn_weight_orient ro;
    int64_t out;
    ffn__grad_shape(t, roles, bias, d, m, v->desc->hf_in_out, &ro, &out);
    float *rv = ffn_tool_read_f32(v->ctx, "ffn verify", v->io, v->o.io, t->name, NULL);
    if (!rv) return false;
    struct ffn__err e = {0};
    bool ok = true;
    for (int k = 0; k < 2 && ok && roles[k] >= 0; k++) {
        const int r = roles[k];
        if (!v->ours.v[r]) {
            printf("  %-28s FAIL: the model has no such parameter\n", ffn_tool_esc(t->name));
            ok = false;
            break;
        }
        const int64_t ro_rows = r == R_DOWN || r == R_BDOWN ? d : m;
        const int64_t n = bias ? ro_rows : ro_rows * (r == R_DOWN ? m : d);
        float *cv = ffn__canon_alloc(n);
        if (!cv) {
            fprintf(stderr, "ffn verify: out of memory for a copy of %s (%" PRId64 " values)\n",
                    ffn_tool_esc(t->name), n);
            free(rv);
            return false;
        }
        if (bias)
            memcpy(cv, rv + (k ? m : 0), (size_t)n * sizeof(float));
        else
            ffn__extract(cv, rv, ro, ro_rows, r == R_DOWN ? m : d, k ? m : 0, out);
        ffn__acc(&e, v->ours.v[r], cv, n);
        free(cv);
    }
    free(rv);
    if (ok)
        v->all_ok &= ffn__report(ffn_tool_esc(t->name), &e, v->tol);
    else
        v->all_ok = false;
    v->n_checked++;
    return true;
}

// Step 9: non-finite outputs named, a failed forward diagnosed (the usual converter mistakes),
// the result line. Returns the exit status.
static int ffn__conclude(struct ffn__verify *v, bool fwd_ok) {
    const int64_t T = v->T, d = v->d;
    int64_t first;
    const int64_t bad_y = ffn_tool_nonfinite(v->y, T * d, &first);
    if (bad_y) {
        const int64_t bad_w = ffn_tool_layer_nonfinite(v->ctx, &v->l);
        printf("non-finite output: y has %" PRId64 " NaN/inf values (first at [%" PRId64
               ", %" PRId64 "]); the layer's weights hold %" PRId64 " non-finite values\n",
               bad_y, first / d, first % d, bad_w);
    }
    if (!fwd_ok && !bad_y) {
        struct ffn__job j = {v->ctx, &v->l, T, v->x, v->y_ref};
        ffn__diagnose(&j, v->tol, v->y);
    }
    char nv[32];
    ffn_tool_commas(nv, sizeof nv, ffn__n_values);
    printf("result: %s (%d tensors, %s values compared, tolerance %.2g on max rel error)\n",
           v->all_ok ? "PASS" : "FAIL", v->n_checked, nv, v->tol);
    return v->all_ok ? 0 : 1;
}

static void ffn__verify_free(struct ffn__verify *v) {
    ffn_tool_block_free(&v->b);
    ffn_tool_tpb_free(&v->tb);
    for (int i = 0; i < 8; i++) free(v->g[i]);
    ffn__canon_free(&v->ours);
    free(v->x), free(v->y_ref), free(v->dy), free(v->dx_ref), free(v->y), free(v->dx);
    ffn_safetensors_close(v->io);
    ffn_model_close(v->model);
    ffn_tool_tp_stop(&v->o.tp);
    ffn_ctx_destroy(v->ctx);
}

// Runs the steps in order; exit status 2 when one finds the input bad.
static int ffn__verify_run(struct ffn__verify *v) {
    if (ffn_tool_tp_start("ffn verify", v->ctx, &v->o.tp)) return 2;
    if (!ffn__open_layer(v) || !ffn__read_reference(v) || !ffn__make_block(v)) return 2;
    ffn__print_header(v);
    if (!ffn__check_forward(v)) return 2;
    const bool fwd_ok = v->all_ok;
    if (v->train) {
        if (!ffn__run_backward(v) || !ffn__canonical_grads(v)) return 2;
        for (int64_t i = 0; i < ffn_safetensors_count(v->io); i++) {
            struct ffn_file_tensor t;
            ffn_safetensors_get(NULL, v->io, i, &t);
            if (strncmp(t.name, "grad.", 5)) continue;
            if (!ffn__check_grad(v, &t)) return 2;
        }
    }
    return ffn__conclude(v, fwd_ok);
}

int ffn_cmd_verify(int argc, char **argv) {
    struct ffn__verify v = {0};
    const int prc = ffn__parse(argc, argv, &v.o);
    if (prc >= 0) return prc;
    if (ffn_ctx_create(NULL, &v.ctx)) {
        fprintf(stderr, "ffn verify: cannot create a context\n");
        return 2;
    }
    const int rc = ffn__verify_run(&v);
    ffn__verify_free(&v);
    return rc;
}
