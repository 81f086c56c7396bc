// cmd_convert.c — `ffn convert MODEL --out DIR [--fuse-gate-up | --split-gate-up]
// [--dtype f32|bf16|f16] [--allow-overflow]`: rewrites a Hugging Face checkpoint's FFN weights in
// another layout (gate and up as two tensors <-> one fused [gate | up] tensor, along the output
// axis, in the checkpoint's own orientation) or dtype, as DIR/model.safetensors + DIR/config.json.
// Every other tensor is copied unchanged. Fused tensors are named <prefix>gate_up_proj.{weight,
// bias}, split ones <prefix>gate_proj / up_proj (Phi-3 / vLLM names), which ffn's loader accepts
// for any architecture, so `ffn verify` runs on the result.
// DIR never holds a mix of old and new files: the whole checkpoint is written into a new
// temporary folder beside DIR, then renamed to DIR, which must be new or an empty directory (a
// rename over a non-empty one fails, so a race cannot mix them either).
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "args.h"
#include "model.h"
#include "tools.h"

#define FFN__F16_MAX 65504.0  // largest finite f16

static void ffn__usage(FILE *f) {
    fprintf(f,
            "usage: ffn convert MODEL --out DIR [--fuse-gate-up | --split-gate-up]\n"
            "                   [--dtype f32|bf16|f16] [--allow-overflow]\n"
            "\n"
            "Rewrites the FFN weights of a Hugging Face checkpoint (a directory with config.json\n"
            "and safetensors) in another layout or dtype, into DIR/model.safetensors and\n"
            "DIR/config.json. Other tensors are copied unchanged. DIR must be new or an empty\n"
            "directory (a symbolic link to one is followed), and not the checkpoint itself: the\n"
            "result is written into a temporary folder beside DIR and renamed into place, so DIR\n"
            "never holds files of two checkpoints.\n"
            "\n"
            "  --fuse-gate-up    store gate and up as one tensor gate_up_proj = [gate | up]\n"
            "  --split-gate-up   store a fused gate_up as two tensors gate_proj and up_proj\n"
            "                    (either one with nothing to do is refused)\n"
            "  --dtype T         FFN weights in f32, bf16 or f16 (default: as they are)\n"
            "  --allow-overflow  write even when a finite weight becomes inf in the new dtype\n"
            "                    (refused by default, naming the first such weight)\n"
            "\n"
            "exit status: 0 success, 2 bad input or usage\n");
}

// The new tensors of the output (owned names and data).
struct ffn__out {
    struct ffn_file_tensor *t;
    bool *owned;  // name and data malloc'ed
    int64_t n, cap;
};

static bool ffn__push(struct ffn__out *o, struct ffn_file_tensor t, bool owned) {
    if (o->n == o->cap) {
        const int64_t cap = o->cap ? 2 * o->cap : 64;
        void *p = realloc(o->t, (size_t)cap * sizeof *o->t), *q;
        if (!p) return false;
        o->t = p;
        q = realloc(o->owned, (size_t)cap * sizeof *o->owned);
        if (!q) return false;
        o->owned = q;
        o->cap = cap;
    }
    o->owned[o->n] = owned;
    o->t[o->n++] = t;
    return true;
}

// Narrowing checks: a finite weight that the new dtype cannot hold (|x| above its largest
// finite value) would silently become inf. The first one is kept for the message.
struct ffn__narrow {
    bool allow;            // --allow-overflow
    int64_t n_overflow;    // finite values that became inf
    char first_name[512];  // the first one's tensor ("" when none)
    int64_t first_index;   // its flat index
    int n_dims;
    int64_t shape[2];
    double first_value;
    const char *first_dtype;
};

static void ffn__overflow(struct ffn__narrow *nw, const char *name, int n_dims, int64_t s0,
                          int64_t s1, int64_t i, double v, const char *dtype) {
    if (!nw->n_overflow++) {
        snprintf(nw->first_name, sizeof nw->first_name, "%s", name);
        nw->first_index = i, nw->first_value = v, nw->first_dtype = dtype;
        nw->n_dims = n_dims, nw->shape[0] = s0, nw->shape[1] = s1;
    }
}

// An owned tensor of `dtype` made from f32 values. False when out of memory, or when a finite
// value overflows and overflow is not allowed (nw->n_overflow > 0 then).
static bool ffn__make(struct ffn__out *o, struct ffn__narrow *nw, const char *name, const float *v,
                      int n_dims, int64_t s0, int64_t s1, enum ffn_dtype dtype) {
    const int64_t n = n_dims == 1 ? s0 : s0 * s1;
    const size_t es = ffn_dtype_size(dtype);
    void *data = malloc((size_t)(n > 0 ? n : 1) * es);
    char *nm = malloc(strlen(name) + 1);
    if (!data || !nm) {
        free(data), free(nm);
        return false;
    }
    strcpy(nm, name);
    for (int64_t i = 0; i < n; i++) {
        float back = v[i];
        if (dtype == FFN_DTYPE_F32) {
            ((float *)data)[i] = v[i];
        } else if (dtype == FFN_DTYPE_BF16) {
            ((uint16_t *)data)[i] = ffn_f32_to_bf16(v[i]);
            back = ffn_bf16_to_f32(((uint16_t *)data)[i]);
        } else {
            ((uint16_t *)data)[i] = ffn_f32_to_f16(v[i]);
            back = ffn_f16_to_f32(((uint16_t *)data)[i]);
        }
        if (isfinite(v[i]) && !isfinite(back))
            ffn__overflow(nw, name, n_dims, s0, s1, i, v[i], ffn_dtype_name(dtype));
    }
    if (nw->n_overflow && !nw->allow) {
        free(data), free(nm);
        return false;
    }
    struct ffn_file_tensor t = {
        .name = nm, .n_dims = n_dims, .data = data, .nbytes = (size_t)n * es};
    t.dtype = dtype == FFN_DTYPE_F32    ? FFN_FILE_DTYPE_F32
              : dtype == FFN_DTYPE_BF16 ? FFN_FILE_DTYPE_BF16
                                        : FFN_FILE_DTYPE_F16;
    t.shape[0] = s0;
    t.shape[1] = s1;
    if (!ffn__push(o, t, true)) {
        free(data), free(nm);
        return false;
    }
    return true;
}

// F64 weights are read as f32: a finite double beyond FLT_MAX overflows already there.
static void ffn__check_f64(struct ffn__narrow *nw, const struct ffn_file_tensor *t) {
    if (t->dtype != FFN_FILE_DTYPE_F64) return;
    const int64_t n = ffn_file_tensor_numel(t);
    for (int64_t i = 0; i < n; i++) {
        double v;
        memcpy(&v, (const char *)t->data + (size_t)i * 8, 8);
        if (isfinite(v) && !isfinite((float)v))
            ffn__overflow(nw, t->name, t->n_dims, t->shape[0], t->n_dims > 1 ? t->shape[1] : 0, i,
                          v, "f32");
    }
}

static float *ffn__f32(ffn_ctx_t ctx, const struct ffn_file_tensor *t) {
    if (!t->name) return NULL;
    const int64_t n = ffn_file_tensor_numel(t);
    float *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
    if (v && ffn_file_tensor_to_f32(ctx, v, n, t)) {
        free(v);
        return NULL;
    }
    return v;
}

// [rows_a + rows_b, cols] from two [rows, cols] (OUT_IN: stack rows) or [rows, ca + cb] from two
// [rows, c] (IN_OUT: concatenate each row): the fused output axis in either orientation.
static float *ffn__concat(const float *a, const float *b, int64_t rows, int64_t cols,
                          bool by_rows) {
    float *v = malloc((size_t)(2 * rows * cols) * sizeof *v);
    if (!v) return NULL;
    if (by_rows) {
        memcpy(v, a, (size_t)(rows * cols) * sizeof *v);
        memcpy(v + rows * cols, b, (size_t)(rows * cols) * sizeof *v);
    } else {
        for (int64_t r = 0; r < rows; r++) {
            memcpy(v + r * 2 * cols, a + r * cols, (size_t)cols * sizeof *v);
            memcpy(v + r * 2 * cols + cols, b + r * cols, (size_t)cols * sizeof *v);
        }
    }
    return v;
}

// The inverse: half `which` (0 first, 1 second) of a fused [2·rows, cols] / [rows, 2·cols].
static float *ffn__half(const float *f, int64_t rows, int64_t cols, bool by_rows, int which) {
    float *v = malloc((size_t)(rows * cols) * sizeof *v);
    if (!v) return NULL;
    if (by_rows)
        memcpy(v, f + which * rows * cols, (size_t)(rows * cols) * sizeof *v);
    else
        for (int64_t r = 0; r < rows; r++)
            memcpy(v + r * cols, f + r * 2 * cols + which * cols, (size_t)cols * sizeof *v);
    return v;
}

static bool ffn__is_ffn_tensor(const struct ffn_model_layer *ls, int64_t n, const char *name) {
    for (int64_t i = 0; i < n; i++) {
        const struct ffn_model_layer *l = &ls[i];
        const struct ffn_file_tensor *ts[] = {&l->gate,   &l->up,   &l->gate_up,   &l->down,
                                              &l->b_gate, &l->b_up, &l->b_gate_up, &l->b_down};
        for (size_t k = 0; k < 8; k++)
            if (ts[k]->name && !strcmp(ts[k]->name, name)) return true;
    }
    return false;
}

// Appends the rewritten tensors of one FFN.
static bool ffn__layer(ffn_ctx_t ctx, struct ffn__out *o, struct ffn__narrow *nw,
                       const struct ffn_model_layer *l, int mode, bool have_dtype,
                       enum ffn_dtype dtype) {
    const int64_t d = l->d_model, m = l->d_ff;
    const bool oi = l->orient == FFN_WEIGHT_OUT_IN;
    const struct ffn_file_tensor *ts[] = {&l->gate,   &l->up,   &l->gate_up,   &l->down,
                                          &l->b_gate, &l->b_up, &l->b_gate_up, &l->b_down};
    float *v[8] = {0};
    bool ok = true;
    for (int k = 0; k < 8 && ok; k++) {
        if (ts[k]->name && !(v[k] = ffn__f32(ctx, ts[k]))) ok = false;
        if (ok && ts[k]->name) ffn__check_f64(nw, ts[k]);
    }
    if (nw->n_overflow && !nw->allow) ok = false;
    // The dtype each output tensor gets: --dtype, else its own when f32/bf16/f16, else f32.
    enum ffn_dtype dt[8];
    for (int k = 0; k < 8; k++) {
        dt[k] = FFN_DTYPE_F32;
        if (have_dtype)
            dt[k] = dtype;
        else if (ts[k]->name)
            ffn_file_dtype_to_dtype(ts[k]->dtype, &dt[k]);
    }
    char name[600];
    const int64_t wr = oi ? m : d, wc = oi ? d : m;  // a gate/up weight's stored shape
    if (ok && mode == 1 && l->gated && l->layout == FFN_GATE_UP_SEPARATE) {
        float *f = ffn__concat(v[0], v[1], wr, wc, oi);
        snprintf(name, sizeof name, "%sgate_up_proj.weight", l->prefix);
        ok = f && ffn__make(o, nw, name, f, 2, oi ? 2 * m : d, oi ? d : 2 * m, dt[0]);
        free(f);
        if (ok && v[4] && v[5]) {
            f = ffn__concat(v[4], v[5], 1, m, false);
            snprintf(name, sizeof name, "%sgate_up_proj.bias", l->prefix);
            ok = f && ffn__make(o, nw, name, f, 1, 2 * m, 0, dt[4]);
            free(f);
        }
        for (int k = 0; k < 2; k++) free(v[k]), v[k] = NULL;
        free(v[4]), free(v[5]), v[4] = v[5] = NULL;
    } else if (ok && mode == 2 && l->gated && l->layout != FFN_GATE_UP_SEPARATE) {
        const int first = l->layout == FFN_GATE_UP_FUSED ? 0 : 1;  // which half is the gate
        for (int k = 0; k < 2 && ok; k++) {
            float *h = ffn__half(v[2], wr, wc, oi, k == 0 ? first : 1 - first);
            snprintf(name, sizeof name, "%s%s_proj.weight", l->prefix, k == 0 ? "gate" : "up");
            ok = h && ffn__make(o, nw, name, h, 2, wr, wc, dt[2]);
            free(h);
            if (ok && v[6]) {
                h = ffn__half(v[6], 1, m, false, k == 0 ? first : 1 - first);
                snprintf(name, sizeof name, "%s%s_proj.bias", l->prefix, k == 0 ? "gate" : "up");
                ok = h && ffn__make(o, nw, name, h, 1, m, 0, dt[6]);
                free(h);
            }
        }
        free(v[2]), free(v[6]), v[2] = v[6] = NULL;
    }
    for (int k = 0; k < 8 && ok; k++)  // what is left keeps its name and shape
        if (v[k])
            ok = ffn__make(o, nw, ts[k]->name, v[k], ts[k]->n_dims, ts[k]->shape[0],
                           ts[k]->shape[1], dt[k]);
    for (int k = 0; k < 8; k++) free(v[k]);
    return ok;
}

// --- the output folder ---------------------------------------------------------------------------

// The folder a path is in ("." when it names none), in a new heap string.
static char *ffn__parent(const char *path) {
    const size_t n = strlen(path);
    char *d = malloc(n + 2);  // room for "." whatever the path
    if (!d) return NULL;
    memcpy(d, path, n + 1);
    char *slash = strrchr(d, '/');
    if (slash == d)
        d[1] = '\0';
    else if (slash)
        *slash = '\0';
    else
        strcpy(d, ".");
    return d;
}

// The directory that holds MODEL's files: MODEL itself, or the folder of a file given.
static char *ffn__model_dir(const char *path) {
    struct stat sb;
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) return strdup(path);
    return ffn__parent(path);
}

// Checks --out before any work: new (in an existing directory) or an empty directory (a
// symbolic link to one is followed), and not the folder being converted. *target_out: the
// directory to create or replace (malloc'ed).
static bool ffn__check_out(const char *out, const char *model, char **target_out) {
    *target_out = NULL;
    struct stat sb, mb;
    char *mdir = ffn__model_dir(model);
    const bool have_m = mdir && stat(mdir, &mb) == 0;
    free(mdir);
    if (!out[0]) {
        fprintf(stderr, "ffn convert: --out is empty\n");
        return false;
    }
    if (stat(out, &sb) != 0) {
        if (errno != ENOENT) {
            fprintf(stderr, "ffn convert: --out %s: %s\n", ffn_tool_esc(out), strerror(errno));
            return false;
        }
        struct stat lb;
        if (lstat(out, &lb) == 0) {  // a link whose target is missing
            fprintf(stderr, "ffn convert: --out %s is a dangling symbolic link\n",
                    ffn_tool_esc(out));
            return false;
        }
        char *parent = ffn__parent(out);  // the folder DIR would be created in
        struct stat pb;
        const bool ok = parent && stat(parent, &pb) == 0 && S_ISDIR(pb.st_mode);
        free(parent);
        if (!ok) {
            fprintf(stderr, "ffn convert: --out %s: its parent directory does not exist\n",
                    ffn_tool_esc(out));
            return false;
        }
        *target_out = strdup(out);
        return *target_out != NULL;
    }
    if (!S_ISDIR(sb.st_mode)) {
        fprintf(stderr, "ffn convert: --out %s exists and is not a directory\n", ffn_tool_esc(out));
        return false;
    }
    if (have_m && sb.st_dev == mb.st_dev && sb.st_ino == mb.st_ino) {
        fprintf(stderr,
                "ffn convert: --out %s is the checkpoint being converted; write the new "
                "one to a new folder\n",
                ffn_tool_esc(out));
        return false;
    }
    DIR *dir = opendir(out);
    if (!dir) {
        fprintf(stderr, "ffn convert: --out %s: %s\n", ffn_tool_esc(out), strerror(errno));
        return false;
    }
    int n = 0;
    for (struct dirent *e; (e = readdir(dir));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(dir);
    if (n) {
        fprintf(stderr,
                "ffn convert: --out %s is not empty (%d entries); give a new or empty "
                "directory, so that no file of another checkpoint stays beside the new one\n",
                ffn_tool_esc(out), n);
        return false;
    }
    *target_out = realpath(out, NULL);  // a link to an empty directory: that directory
    return *target_out != NULL;
}

// Removes the temporary folder and what convert put in it (no subfolders are ever made).
static void ffn__rm_tmp(const char *tmp) {
    static const char *const names[] = {"model.safetensors", "config.json"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", tmp, names[i]);
        unlink(p);
    }
    rmdir(tmp);
}

// Writes text to a new file in the (private, new) temporary folder.
static bool ffn__write_new(const char *path, const char *text) {
    const int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0) return false;
    size_t n = strlen(text), off = 0;
    while (off < n) {
        const ssize_t w = write(fd, text + off, n - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            close(fd);
            return false;
        }
        off += (size_t)w;
    }
    return close(fd) == 0;
}

// --- the command -------------------------------------------------------------------------------

int ffn_cmd_convert(int argc, char **argv) {
    const char *path = NULL, *dir = NULL, *dts = NULL;
    int mode = 0;  // 1 fuse, 2 split
    bool allow_overflow = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            ffn__usage(stdout);
            return 0;
        } else if (!strcmp(a, "--fuse-gate-up") || !strcmp(a, "--split-gate-up")) {
            const int want = !strcmp(a, "--fuse-gate-up") ? 1 : 2;
            if (mode && mode != want) {
                fprintf(stderr,
                        "ffn convert: --fuse-gate-up and --split-gate-up exclude each other\n");
                return 2;
            }
            mode = want;
        } else if (!strcmp(a, "--allow-overflow")) {
            allow_overflow = true;
        } else if (!strcmp(a, "--out") || !strcmp(a, "--dtype")) {
            const char *v = ffn_arg_value("convert", argc, argv, &i);
            if (!v) return 2;
            if (!strcmp(a, "--out"))
                dir = v;
            else
                dts = v;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "ffn convert: unknown option '%s'\n", ffn_tool_esc(a));
            return 2;
        } else if (!path) {
            path = a;
        } else {
            fprintf(stderr, "ffn convert: unexpected argument '%s'\n", ffn_tool_esc(a));
            return 2;
        }
    }
    if (!path || !dir) {
        ffn__usage(stderr);
        return 2;
    }
    enum ffn_dtype dtype = FFN_DTYPE_F32;
    if (dts && ffn_dtype_from_name(dts, &dtype)) {
        fprintf(stderr, "ffn convert: --dtype '%s' is not f32, bf16 or f16\n", ffn_tool_esc(dts));
        return 2;
    }
    // "out/" and "out" name the same folder; the temporary one is made beside it.
    char *out_dir = strdup(dir);
    if (!out_dir) return 2;
    for (size_t k = strlen(out_dir); k > 1 && out_dir[k - 1] == '/'; k--) out_dir[k - 1] = '\0';
    char *target = NULL;
    const bool out_ok = ffn__check_out(out_dir, path, &target);
    free(out_dir);
    if (!out_ok) return 2;
    ffn_ctx_t ctx;
    if (ffn_ctx_create(NULL, &ctx)) {
        fprintf(stderr, "ffn convert: cannot create a context\n");
        free(target);
        return 2;
    }
    int rc = 2;
    ffn_model_t model = NULL;
    struct ffn_model_layer *ls = NULL;
    struct ffn__out o = {0};
    struct ffn__narrow nw = {.allow = allow_overflow};
    char *tmp = NULL, *st_path = NULL, *cfg_path = NULL;
    char mp[1024];
    ffn_text_escape(mp, sizeof mp, path);
    if (ffn_model_open(ctx, path, &model)) {
        fprintf(stderr, "ffn convert: %s\n", ffn_tool_errmsg(ctx));
        goto done;
    }
    ffn_safetensors_t st = ffn_model_safetensors(model);
    if (!st) {
        fprintf(stderr,
                "ffn convert: %s is a GGUF file; convert reads Hugging Face checkpoints "
                "(a directory with config.json and safetensors)\n",
                mp);
        goto done;
    }
    const struct ffn_model_desc *desc = ffn_model_desc(model);
    const int64_t per = desc->n_experts ? desc->n_experts : 1, n = desc->n_layers * per;
    ls = calloc((size_t)n, sizeof *ls);
    if (!ls) {
        fprintf(stderr, "ffn convert: out of memory for %" PRId64 " FFN descriptions\n", n);
        goto done;
    }
    int64_t n_todo = 0;  // FFNs that --fuse-gate-up / --split-gate-up change
    for (int64_t L = 0; L < desc->n_layers; L++)
        for (int64_t e = 0; e < per; e++) {
            struct ffn_model_layer *l = &ls[L * per + e];
            ffn_model_layer(ctx, model, L, desc->n_experts ? e : -1, l);
            n_todo += l->gated && (mode == 1 ? l->layout == FFN_GATE_UP_SEPARATE
                                             : l->layout != FFN_GATE_UP_SEPARATE);
        }
    if (mode && !n_todo) {
        const bool gated = ls[0].gated;
        fprintf(stderr, "ffn convert: %s: nothing to %s: %s\n", mp, mode == 1 ? "fuse" : "split",
                !gated      ? "its FFN is not gated (no gate, only up and down)"
                : mode == 1 ? "gate and up are already one tensor"
                            : "gate and up are already two tensors");
        goto done;
    }
    for (int64_t i = 0; i < ffn_safetensors_count(st); i++) {
        struct ffn_file_tensor t;
        ffn_safetensors_get(NULL, st, i, &t);
        if (!ffn__is_ffn_tensor(ls, n, t.name) && !ffn__push(&o, t, false)) goto oom;
    }
    for (int64_t i = 0; i < n; i++) {
        if (ffn__layer(ctx, &o, &nw, &ls[i], mode, dts != NULL, dtype)) continue;
        if (!nw.n_overflow) goto oom;
        // A finite weight the new dtype cannot hold.
        char at[64];
        if (nw.n_dims == 2 && nw.shape[1] > 0)
            snprintf(at, sizeof at, "[%" PRId64 ", %" PRId64 "]", nw.first_index / nw.shape[1],
                     nw.first_index % nw.shape[1]);
        else
            snprintf(at, sizeof at, "[%" PRId64 "]", nw.first_index);
        fprintf(stderr,
                "ffn convert: %s%s = %.9g is finite, but %s cannot hold it (it would become "
                "inf; f16 holds |x| <= %g); nothing written (--allow-overflow to write it "
                "anyway)\n",
                ffn_tool_esc(nw.first_name), at, nw.first_value, nw.first_dtype, FFN__F16_MAX);
        goto done;
    }
    // The new checkpoint, whole, in a new private folder beside DIR; then one rename.
    const size_t tl = strlen(target);
    tmp = malloc(tl + 32);
    st_path = malloc(tl + 64);
    cfg_path = malloc(tl + 64);
    if (!tmp || !st_path || !cfg_path) goto oom;
    snprintf(tmp, tl + 32, "%s.ffn-tmp-XXXXXX", target);
    if (!mkdtemp(tmp)) {
        fprintf(stderr, "ffn convert: cannot create a temporary folder beside %s: %s\n",
                ffn_tool_esc(dir), strerror(errno));
        free(tmp), tmp = NULL;
        goto done;
    }
    snprintf(st_path, tl + 64, "%s/model.safetensors", tmp);
    snprintf(cfg_path, tl + 64, "%s/config.json", tmp);
    const struct ffn_safetensors_kv meta[] = {{"format", "pt"}};
    if (ffn_safetensors_write(ctx, st_path, o.t, o.n, meta, 1)) {
        fprintf(stderr, "ffn convert: %s\n", ffn_tool_errmsg(ctx));
        goto done;
    }
    if (!ffn__write_new(cfg_path, ffn_model_config_json(model))) {
        fprintf(stderr, "ffn convert: %s/config.json: cannot write: %s\n", ffn_tool_esc(dir),
                strerror(errno));
        goto done;
    }
    // mkdtemp made the folder 0700: give it the permissions a new folder would have.
    const mode_t um = umask(0);
    umask(um);
    chmod(tmp, 0777 & ~um);
    // Over an existing (empty) directory rename is atomic; a non-empty one makes it fail.
    if (rename(tmp, target) != 0) {
        fprintf(stderr, "ffn convert: cannot move the new checkpoint to %s: %s\n",
                ffn_tool_esc(dir),
                errno == ENOTEMPTY || errno == EEXIST ? "it is no longer empty" : strerror(errno));
        goto done;
    }
    free(tmp), tmp = NULL;
    if (nw.n_overflow)
        fprintf(stderr,
                "ffn convert: --allow-overflow: %" PRId64
                " finite weights became inf "
                "(the first: %s)\n",
                nw.n_overflow, ffn_tool_esc(nw.first_name));
    printf("ffn convert: %s -> %s (%" PRId64 " FFNs%s%s%s%s)\n", mp, ffn_tool_esc(dir), n,
           mode == 1 ? ", gate and up fused into gate_up_proj" : "",
           mode == 2 ? ", gate_up split into gate_proj and up_proj" : "", dts ? ", dtype " : "",
           dts ? ffn_dtype_name(dtype) : "");
    rc = 0;
    goto done;
oom:
    fprintf(stderr, "ffn convert: out of memory while building the new tensors of %s\n", mp);
done:
    if (tmp) ffn__rm_tmp(tmp);
    for (int64_t i = 0; i < o.n; i++)
        if (o.owned[i]) free((void *)o.t[i].name), free((void *)o.t[i].data);
    free(o.t);
    free(o.owned);
    free(ls);
    free(tmp);
    free(st_path);
    free(cfg_path);
    free(target);
    ffn_model_close(model);
    ffn_ctx_destroy(ctx);
    return rc;
}
