// tp_file.c — shard files: `ffn_tp_model_shard` splits every FFN of a checkpoint by its plan
// into one safetensors file per rank (written into a temporary folder, renamed into place when
// complete), and `ffn_tp_shards_open` checks that the file a rank opens belongs to that rank, to
// that world, to the same set as every other rank's (source files and plans, compared with rank
// 0's) and, when the checkpoint is named, to that checkpoint (its files hashed again).
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/io_impl.h"
#include "tp/tp_impl.h"

#define FFN_TP_FORMAT "1"
#define FFN_TP_HASH_CHUNK ((size_t)1 << 20)
#define FFN_TP_NAME_MAX 160  // "layers.<L>.experts.<E>.gate_up_proj.weight"

static const char *const ffn__roles[] = {"gate_proj", "up_proj", "gate_up_proj", "down_proj"};

// --- small helpers ----------------------------------------------------------------------------

// "layers.<L>" or "layers.<L>.experts.<E>": an FFN's key in names and metadata.
static void ffn__ffn_key(char *buf, size_t cap, int64_t layer, int64_t expert) {
    if (expert >= 0)
        snprintf(buf, cap, "layers.%" PRId64 ".experts.%" PRId64, layer, expert);
    else
        snprintf(buf, cap, "layers.%" PRId64, layer);
}

static void ffn__file_name(char *buf, size_t cap, const char *dir, int64_t rank, int64_t world) {
    snprintf(buf, cap, "%s/rank-%" PRId64 "-of-%" PRId64 ".safetensors", dir, rank, world);
}

static const char *ffn__base(const char *path) {
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

// SHA-256 and size of a file, read in chunks.
static enum ffn_status ffn__hash_file(ffn_ctx_t ctx, const char *fn, const char *path, char hex[65],
                                      uint64_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return ffn_error(ctx, FFN_STATUS_IO, "%s: %s: cannot open: %s", fn, path, strerror(errno));
    unsigned char *buf = malloc(FFN_TP_HASH_CHUNK);
    if (!buf) {
        fclose(f);
        return ffn_error(ctx, FFN_STATUS_OUT_OF_MEMORY, "%s: out of memory", fn);
    }
    struct ffn_sha256 h;
    ffn_sha256_init(&h);
    size_t k;
    *size = 0;
    while ((k = fread(buf, 1, FFN_TP_HASH_CHUNK, f)) > 0) {
        ffn_sha256_update(&h, buf, k);
        *size += k;
    }
    const bool bad = ferror(f);
    fclose(f);
    free(buf);
    if (bad) return ffn_error(ctx, FFN_STATUS_IO, "%s: %s: read error", fn, path);
    uint8_t dg[32];
    ffn_sha256_final(&h, dg);
    ffn_sha256_hex(dg, hex);
    return FFN_STATUS_OK;
}

// Appends "name:size:sha256;" for `path` to a growing string.
static enum ffn_status ffn__source_add(ffn_ctx_t ctx, const char *fn, char **s, size_t *len,
                                       const char *path) {
    char hex[65];
    uint64_t size = 0;
    enum ffn_status st = ffn__hash_file(ctx, fn, path, hex, &size);
    if (st) return st;
    const char *b = ffn__base(path);
    const size_t need = strlen(b) + 96;
    char *p = realloc(*s, *len + need);
    if (!p) return ffn_error(ctx, FFN_STATUS_OUT_OF_MEMORY, "%s: out of memory", fn);
    *s = p;
    *len += (size_t)snprintf(p + *len, need, "%s%s:%" PRIu64 ":%s", *len ? ";" : "", b, size, hex);
    return FFN_STATUS_OK;
}

// The checkpoint's files, hashed: config.json and every safetensors file, or the GGUF file.
static enum ffn_status ffn__source(ffn_ctx_t ctx, const char *fn, const char *model_path,
                                   ffn_model_t model, char **out) {
    *out = NULL;
    char *s = NULL;
    size_t len = 0;
    enum ffn_status st = FFN_STATUS_OK;
    ffn_safetensors_t sts = ffn_model_safetensors(model);
    if (sts) {
        char *dir = ffn_io_strdup(model_path);
        if (!dir) return ffn_error(ctx, FFN_STATUS_OUT_OF_MEMORY, "%s: out of memory", fn);
        if (!ffn_io_is_dir(model_path)) {
            char *slash = strrchr(dir, '/');
            if (slash)
                *slash = '\0';
            else
                strcpy(dir, ".");
        }
        char *cfg = ffn_io_path_join(dir, "config.json");
        free(dir);
        if (!cfg) return ffn_error(ctx, FFN_STATUS_OUT_OF_MEMORY, "%s: out of memory", fn);
        st = ffn__source_add(ctx, fn, &s, &len, cfg);
        free(cfg);
        for (int i = 0; !st && i < ffn_safetensors_shard_count(sts); i++)
            st = ffn__source_add(ctx, fn, &s, &len, ffn_io_safetensors_shard_path(sts, i));
    } else {
        st = ffn__source_add(ctx, fn, &s, &len, model_path);
    }
    if (st) {
        free(s);
        return st;
    }
    *out = s;
    return FFN_STATUS_OK;
}

// --- a checkpoint's FFN as whole-block weights ------------------------------------------------

struct ffn__full {
    struct ffn_block_spec spec;
    struct ffn_block_weights w;
    void *owned[8];  // f32 copies of quantised or misaligned tensors
};

static void ffn__full_free(struct ffn__full *f) {
    for (int i = 0; i < 8; i++) free(f->owned[i]);
    memset(f, 0, sizeof *f);
}

static enum ffn_status ffn__full_make(ffn_ctx_t ctx, const char *fn,
                                      const struct ffn_model_layer *l, struct ffn__full *f) {
    memset(f, 0, sizeof *f);
    struct ffn_block_spec spec = FFN_BLOCK_SPEC_INIT;
    struct ffn_block_weights w = FFN_BLOCK_WEIGHTS_INIT;
    spec.d_model = l->d_model;
    spec.d_ff = l->d_ff;
    spec.act = l->act;
    spec.gated = l->gated;
    spec.gate_up_layout = l->gated ? l->layout : FFN_GATE_UP_SEPARATE;
    const struct ffn_file_tensor *ts[8] = {&l->gate,   &l->up,   &l->gate_up,   &l->down,
                                           &l->b_gate, &l->b_up, &l->b_gate_up, &l->b_down};
    struct ffn_weight *ws[8] = {&w.gate,   &w.up,   &w.gate_up,   &w.down,
                                &w.b_gate, &w.b_up, &w.b_gate_up, &w.b_down};
    for (int k = 0; k < 8; k++) {
        const struct ffn_file_tensor *t = ts[k];
        if (!t->name) continue;
        enum ffn_dtype dt = FFN_DTYPE_F32;
        const void *data = t->data;
        if (ffn_file_dtype_to_dtype(t->dtype, &dt) || (uintptr_t)data % ffn_dtype_size(dt)) {
            const int64_t n = ffn_file_tensor_numel(t);
            float *buf = n > 0 ? malloc((size_t)n * sizeof *buf) : NULL;
            if (!buf) {
                ffn__full_free(f);
                return ffn_error(ctx, FFN_STATUS_OUT_OF_MEMORY, "%s: out of memory", fn);
            }
            const enum ffn_status st = ffn_file_tensor_to_f32(ctx, buf, n, t);
            if (st) {
                free(buf);
                ffn__full_free(f);
                return st;
            }
            f->owned[k] = buf;
            data = buf;
            dt = FFN_DTYPE_F32;
        }
        *ws[k] = ffn_weight_dense(data, dt, l->orient);
        ws[k]->rows = t->n_dims == 2 ? t->shape[0] : 1;
        ws[k]->cols = t->n_dims == 2 ? t->shape[1] : t->shape[0];
    }
    const bool fused = spec.gated && spec.gate_up_layout != FFN_GATE_UP_SEPARATE;
    spec.bias_gate = fused ? w.b_gate_up.data != NULL : w.b_gate.data != NULL;
    spec.bias_up = fused ? w.b_gate_up.data != NULL : w.b_up.data != NULL;
    spec.bias_down = w.b_down.data != NULL;
    f->spec = spec;
    f->w = w;
    return FFN_STATUS_OK;
}

// --- writing a set ------------------------------------------------------------------------------

static bool ffn__dir_empty(const char *path) {
    DIR *d = opendir(path);
    if (!d) return false;
    struct dirent *e;
    bool empty = true;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) empty = false;
    closedir(d);
    return empty;
}

// Removes the files this writer put in tmp, then tmp itself.
static void ffn__remove_tmp(const char *tmp, int64_t world) {
    char p[4200];
    for (int64_t r = 0; r < world; r++) {
        ffn__file_name(p, sizeof p, tmp, r, world);
        unlink(p);
    }
    rmdir(tmp);
}

static int ffn__cmp_esize(const void *a, const void *b) {
    const struct ffn_file_tensor *x = a, *y = b;
    const int ex = x->dtype == FFN_FILE_DTYPE_F32 ? 4 : 2,
              ey = y->dtype == FFN_FILE_DTYPE_F32 ? 4 : 2;
    return ey - ex;  // 4-byte tensors first: every tensor then starts on its dtype's alignment
}

static enum ffn_file_dtype ffn__file_dtype(enum ffn_dtype dt) {
    return dt == FFN_DTYPE_F32    ? FFN_FILE_DTYPE_F32
           : dt == FFN_DTYPE_BF16 ? FFN_FILE_DTYPE_BF16
                                  : FFN_FILE_DTYPE_F16;
}

enum ffn_status ffn_tp_model_shard(ffn_ctx_t ctx, const char *model_path, int64_t world,
                                   const struct ffn_tp_plan_opts *opts, const char *out_dir) {
    static const char fn[] = "ffn_tp_model_shard";
    if (!ctx) return FFN_STATUS_INVALID_ARG;
    ffn_error_clear(ctx);
    if (!model_path || !out_dir || !*out_dir)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: model_path and out_dir must be given",
                         fn);
    if (world < 1 || world > FFN_TP_MAX_WORLD)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: world=%" PRId64 "; expected 1 to %d", fn,
                         world, FFN_TP_MAX_WORLD);
    if (strlen(out_dir) > 4000)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: out_dir is too long", fn);
    struct stat sb;
    if (stat(out_dir, &sb) == 0 && (!S_ISDIR(sb.st_mode) || !ffn__dir_empty(out_dir)))
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: %s %s; the shards go into a new or "
                         "empty folder only",
                         fn, out_dir,
                         S_ISDIR(sb.st_mode) ? "is not empty" : "exists and is not a folder");

    ffn_model_t model = NULL;
    enum ffn_status st = ffn_model_open(ctx, model_path, &model);
    if (st) return st;
    const struct ffn_model_desc *desc = ffn_model_desc(model);
    const int64_t per = desc->n_experts ? desc->n_experts : 1, n_ffn = desc->n_layers * per;
    struct ffn__full *full = calloc((size_t)n_ffn, sizeof *full);
    struct ffn_tp_plan *plans = calloc((size_t)n_ffn, sizeof *plans);
    char(*ptext)[FFN_TP_PLAN_TEXT_MAX] = calloc((size_t)n_ffn, sizeof *ptext);
    char(*keys)[96] = calloc((size_t)n_ffn, sizeof *keys);
    struct ffn_safetensors_kv *meta = calloc((size_t)n_ffn + 8, sizeof *meta);
    struct ffn_file_tensor *tens = calloc((size_t)n_ffn * 8, sizeof *tens);
    char(*tnames)[FFN_TP_NAME_MAX] = calloc((size_t)n_ffn * 8, sizeof *tnames);
    ffn_tp_shard_t *shards = calloc((size_t)n_ffn, sizeof *shards);
    char *source = NULL, tmp[4200] = "";
    bool tmp_made = false;
    if (!full || !plans || !ptext || !keys || !meta || !tens || !tnames || !shards) {
        st = ffn_error(ctx, FFN_STATUS_OUT_OF_MEMORY, "%s: out of memory", fn);
        goto done;
    }
    // Every FFN's whole weights and plan; the set's identity.
    struct ffn_sha256 h;
    ffn_sha256_init(&h);
    if ((st = ffn__source(ctx, fn, model_path, model, &source))) goto done;
    ffn_sha256_update(&h, source, strlen(source));
    for (int64_t i = 0; i < n_ffn; i++) {
        struct ffn_model_layer l;
        const int64_t L = i / per, E = desc->n_experts ? i % per : -1;
        if ((st = ffn_model_layer(ctx, model, L, E, &l))) goto done;
        if ((st = ffn__full_make(ctx, fn, &l, &full[i]))) goto done;
        plans[i] = (struct ffn_tp_plan)FFN_TP_PLAN_INIT;
        if ((st = ffn_tp_plan_make(ctx, &full[i].spec, &full[i].w, world, opts, &plans[i]))) {
            char msg[sizeof ctx->err];
            snprintf(msg, sizeof msg, "%s", ctx->err);
            st = ffn_error(ctx, st, "%s: layer %" PRId64 ": %s", fn, L, msg);
            goto done;
        }
        if ((st = ffn_tp_plan_to_string(ctx, &plans[i], ptext[i], sizeof ptext[i]))) goto done;
        char k[64];
        ffn__ffn_key(k, sizeof k, L, E);
        snprintf(keys[i], sizeof keys[i], "ffn.tp.plan.%s", k);
        ffn_sha256_update(&h, "\n", 1);
        ffn_sha256_update(&h, keys[i], strlen(keys[i]));
        ffn_sha256_update(&h, "=", 1);
        ffn_sha256_update(&h, ptext[i], strlen(ptext[i]));
    }
    uint8_t dg[32];
    char set[65], sworld[24], srank[24], slayers[24], sexperts[24];
    ffn_sha256_final(&h, dg);
    ffn_sha256_hex(dg, set);

    // The temporary folder beside out_dir (mkdir: the permissions the umask gives, as out_dir's).
    bool made = false;
    for (unsigned k = 0; k < 100 && !made; k++) {
        snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%u", out_dir, (long)getpid(),
                 (unsigned)(dg[k % 32] << 8 | k));
        made = mkdir(tmp, 0777) == 0;
        if (!made && errno != EEXIST) break;
    }
    if (!made) {
        st = ffn_error(ctx, FFN_STATUS_IO,
                       "%s: cannot create a temporary folder %s beside %s "
                       "(does the folder that holds it exist and is it writable?): %s",
                       fn, tmp, out_dir, strerror(errno));
        goto done;
    }
    tmp_made = true;
    snprintf(sworld, sizeof sworld, "%" PRId64, world);
    snprintf(slayers, sizeof slayers, "%" PRId64, desc->n_layers);
    snprintf(sexperts, sizeof sexperts, "%" PRId64, desc->n_experts);
    for (int64_t r = 0; r < world && !st; r++) {
        snprintf(srank, sizeof srank, "%" PRId64, r);
        int64_t nm = 0, nt = 0;
        meta[nm++] = (struct ffn_safetensors_kv){"format", "pt"};
        meta[nm++] = (struct ffn_safetensors_kv){"ffn.tp.format", FFN_TP_FORMAT};
        meta[nm++] = (struct ffn_safetensors_kv){"ffn.tp.world", sworld};
        meta[nm++] = (struct ffn_safetensors_kv){"ffn.tp.rank", srank};
        meta[nm++] = (struct ffn_safetensors_kv){"ffn.tp.layers", slayers};
        meta[nm++] = (struct ffn_safetensors_kv){"ffn.tp.experts", sexperts};
        meta[nm++] = (struct ffn_safetensors_kv){"ffn.tp.source", source};
        meta[nm++] = (struct ffn_safetensors_kv){"ffn.tp.set", set};
        for (int64_t i = 0; i < n_ffn && !st; i++) {
            meta[nm++] = (struct ffn_safetensors_kv){keys[i], ptext[i]};
            if ((st = ffn_tp_shard_create(ctx, &plans[i], r, &full[i].w, &shards[i]))) break;
            const struct ffn_block_weights *sw = ffn_tp_shard_weights(shards[i]);
            const struct ffn_weight *ws[8] = {&sw->gate,   &sw->up,   &sw->gate_up,   &sw->down,
                                              &sw->b_gate, &sw->b_up, &sw->b_gate_up, &sw->b_down};
            for (int k = 0; k < 8; k++) {
                const struct ffn_weight *w = ws[k];
                if (!w->data) continue;
                char *name = tnames[nt];
                snprintf(name, FFN_TP_NAME_MAX, "%s.%s.%s", keys[i] + strlen("ffn.tp.plan."),
                         ffn__roles[k % 4], k < 4 ? "weight" : "bias");
                struct ffn_file_tensor t = {
                    .name = name, .dtype = ffn__file_dtype(w->dtype), .data = w->data};
                t.n_dims = k < 4 ? 2 : 1;
                t.shape[0] = k < 4 ? w->rows : w->cols;
                t.shape[1] = w->cols;
                t.nbytes = (size_t)(w->rows * w->cols) * ffn_dtype_size(w->dtype);
                tens[nt++] = t;
            }
        }
        if (!st) {
            qsort(tens, (size_t)nt, sizeof *tens, ffn__cmp_esize);
            char path[4300];
            ffn__file_name(path, sizeof path, tmp, r, world);
            st = ffn_safetensors_write(ctx, path, tens, nt, meta, nm);
        }
        for (int64_t i = 0; i < n_ffn; i++) ffn_tp_shard_destroy(shards[i]), shards[i] = NULL;
    }
    if (!st && rename(tmp, out_dir) != 0)
        st = ffn_error(ctx, FFN_STATUS_IO, "%s: cannot rename %s to %s: %s", fn, tmp, out_dir,
                       strerror(errno));
    if (!st) tmp_made = false;
done:
    if (tmp_made) ffn__remove_tmp(tmp, world);
    for (int64_t i = 0; full && i < n_ffn; i++) ffn__full_free(&full[i]);
    free(full), free(plans), free(ptext), free(keys), free(meta), free(tens), free(tnames);
    free(shards), free(source);
    ffn_model_close(model);
    return st;
}

// --- opening one rank's file ------------------------------------------------------------------

struct ffn_tp_shards {
    ffn_safetensors_t st;
    int64_t rank, world, n_layers, n_experts;
    char path[4300];
};

void ffn_tp_shards_close(ffn_tp_shards_t s) {
    if (!s) return;
    ffn_safetensors_close(s->st);
    free(s);
}

static bool ffn__meta_int(ffn_safetensors_t st, const char *key, int64_t lo, int64_t hi,
                          int64_t *out) {
    const char *v = ffn_safetensors_metadata(st, key);
    if (!v || !*v || strlen(v) > 18) return false;
    int64_t x = 0;
    for (const char *p = v; *p; p++) {
        if (*p < '0' || *p > '9') return false;
        x = x * 10 + (*p - '0');
    }
    if (x < lo || x > hi) return false;
    *out = x;
    return true;
}

// "the set in <dir> is for 4 ranks" when the rank's file is missing but others exist.
static void ffn__set_hint(const char *dir, int64_t world, char *buf, size_t cap) {
    buf[0] = '\0';
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    long long r, w;
    char tail[32];
    while ((e = readdir(d)))
        if (sscanf(e->d_name, "rank-%lld-of-%lld%31s", &r, &w, tail) == 3 &&
            !strcmp(tail, ".safetensors") && w != world) {
            snprintf(buf, cap, " (the folder holds a set for %lld ranks, not %" PRId64 ")", w,
                     world);
            break;
        }
    closedir(d);
}

// The identity text of an opened file: its source, then every FFN's plan line. Equal texts on
// every rank mean one set.
static enum ffn_status ffn__identity(ffn_ctx_t ctx, const char *fn, const struct ffn_tp_shards *s,
                                     char **out) {
    const int64_t per = s->n_experts ? s->n_experts : 1, n = s->n_layers * per;
    const char *src = ffn_safetensors_metadata(s->st, "ffn.tp.source");
    size_t cap = strlen(src) + 2 + (size_t)n * (FFN_TP_PLAN_TEXT_MAX + 64), len;
    char *t = malloc(cap);
    if (!t) return ffn_error(ctx, FFN_STATUS_OUT_OF_MEMORY, "%s: out of memory", fn);
    len = (size_t)snprintf(t, cap, "%s", src);
    for (int64_t i = 0; i < n; i++) {
        char k[64], key[96];
        ffn__ffn_key(k, sizeof k, i / per, s->n_experts ? i % per : -1);
        snprintf(key, sizeof key, "ffn.tp.plan.%s", k);
        len += (size_t)snprintf(t + len, cap - len, "\n%s=%s", key,
                                ffn_safetensors_metadata(s->st, key));
    }
    *out = t;
    return FFN_STATUS_OK;
}

// First differing entry of two source texts ("name:size:sha256;..."), for a message.
static void ffn__source_diff(const char *a, const char *b, char *buf, size_t cap) {
    while (*a || *b) {
        const size_t la = strcspn(a, ";"), lb = strcspn(b, ";");
        if (la != lb || memcmp(a, b, la)) {
            snprintf(buf, cap, "%.*s vs %.*s (name:bytes:sha256)", (int)(la > 120 ? 120 : la), a,
                     (int)(lb > 120 ? 120 : lb), b);
            return;
        }
        a += la + (a[la] == ';'), b += lb + (b[lb] == ';');
    }
    snprintf(buf, cap, "the sources differ");
}

// Local checks of this rank's file (no communication).
static enum ffn_status ffn__open_local(ffn_ctx_t ctx, const char *fn, struct ffn_tp_shards *s,
                                       const char *dir, const char *model_path) {
    ffn__file_name(s->path, sizeof s->path, dir, s->rank, s->world);
    if (!ffn_io_exists(s->path)) {
        char hint[96];
        ffn__set_hint(dir, s->world, hint, sizeof hint);
        return ffn_error(ctx, FFN_STATUS_NOT_FOUND,
                         "%s: rank %" PRId64 " of %" PRId64
                         ": %s does "
                         "not exist%s",
                         fn, s->rank, s->world, s->path, hint);
    }
    enum ffn_status st = ffn_safetensors_open(ctx, s->path, &s->st);
    if (st) return st;
    const char *b = ffn__base(s->path);
    const char *format = ffn_safetensors_metadata(s->st, "ffn.tp.format");
    if (!format || strcmp(format, FFN_TP_FORMAT))
        return ffn_error(ctx, FFN_STATUS_BAD_FORMAT,
                         "%s: %s is not an ffn shard file of format %s "
                         "(__metadata__ ffn.tp.format is %s)",
                         fn, s->path, FFN_TP_FORMAT, format ? format : "absent");
    int64_t w, r;
    if (!ffn__meta_int(s->st, "ffn.tp.world", 1, FFN_TP_MAX_WORLD, &w) ||
        !ffn__meta_int(s->st, "ffn.tp.rank", 0, FFN_TP_MAX_WORLD - 1, &r) ||
        !ffn__meta_int(s->st, "ffn.tp.layers", 1, (int64_t)1 << 20, &s->n_layers) ||
        !ffn__meta_int(s->st, "ffn.tp.experts", 0, (int64_t)1 << 16, &s->n_experts) ||
        !ffn_safetensors_metadata(s->st, "ffn.tp.source") ||
        !ffn_safetensors_metadata(s->st, "ffn.tp.set"))
        return ffn_error(ctx, FFN_STATUS_BAD_FORMAT,
                         "%s: %s: ffn.tp.world, rank, layers, experts, "
                         "source and set must all be in __metadata__",
                         fn, s->path);
    if (w != s->world || r != s->rank)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: %s was written for rank %" PRId64 " of %" PRId64
                         "; this process is rank %" PRId64 " of %" PRId64,
                         fn, s->path, r, w, s->rank, s->world);
    if (s->n_layers * (s->n_experts ? s->n_experts : 1) > ((int64_t)1 << 20))
        return ffn_error(ctx, FFN_STATUS_BAD_FORMAT, "%s: %s: too many FFNs", fn, s->path);
    // Every plan parses and is for this world; the set id is the hash of what the file says.
    const int64_t per = s->n_experts ? s->n_experts : 1, n = s->n_layers * per;
    struct ffn_sha256 h;
    ffn_sha256_init(&h);
    const char *src = ffn_safetensors_metadata(s->st, "ffn.tp.source");
    ffn_sha256_update(&h, src, strlen(src));
    for (int64_t i = 0; i < n; i++) {
        char k[64], key[96];
        ffn__ffn_key(k, sizeof k, i / per, s->n_experts ? i % per : -1);
        snprintf(key, sizeof key, "ffn.tp.plan.%s", k);
        const char *text = ffn_safetensors_metadata(s->st, key);
        struct ffn_tp_plan p = FFN_TP_PLAN_INIT;
        if (!text)
            return ffn_error(ctx, FFN_STATUS_BAD_FORMAT, "%s: %s: no %s in __metadata__", fn,
                             s->path, key);
        if ((st = ffn_tp_plan_parse(ctx, text, &p))) {
            char msg[sizeof ctx->err];
            snprintf(msg, sizeof msg, "%s", ctx->err);
            return ffn_error(ctx, st, "%s: %s: %s: %s", fn, s->path, key, msg);
        }
        if (p.world != s->world)
            return ffn_error(ctx, FFN_STATUS_BAD_FORMAT,
                             "%s: %s: %s is for %" PRId64
                             " ranks, the "
                             "file for %" PRId64,
                             fn, s->path, key, p.world, s->world);
        ffn_sha256_update(&h, "\n", 1);
        ffn_sha256_update(&h, key, strlen(key));
        ffn_sha256_update(&h, "=", 1);
        ffn_sha256_update(&h, text, strlen(text));
    }
    uint8_t dg[32];
    char set[65];
    ffn_sha256_final(&h, dg);
    ffn_sha256_hex(dg, set);
    if (strcmp(set, ffn_safetensors_metadata(s->st, "ffn.tp.set")))
        return ffn_error(ctx, FFN_STATUS_BAD_FORMAT,
                         "%s: %s: ffn.tp.set does not match the file's "
                         "source and plans (edited metadata?)",
                         fn, s->path);
    if (!model_path) return FFN_STATUS_OK;

    // The named checkpoint: its files must be the source, its FFNs must make these plans.
    ffn_model_t model = NULL;
    char *msrc = NULL;
    if ((st = ffn_model_open(ctx, model_path, &model))) return st;
    st = ffn__source(ctx, fn, model_path, model, &msrc);
    if (!st && strcmp(msrc, src)) {
        char diff[400];
        ffn__source_diff(src, msrc, diff, sizeof diff);
        st = ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                       "%s: %s was not made from %s: %s (shard vs "
                       "checkpoint)",
                       fn, b, model_path, diff);
    }
    const struct ffn_model_desc *desc = ffn_model_desc(model);
    if (!st && (desc->n_layers != s->n_layers || desc->n_experts != s->n_experts))
        st = ffn_error(
            ctx, FFN_STATUS_INVALID_ARG,
            "%s: %s has %" PRId64 " layers x %" PRId64 " experts, %s %" PRId64 " x %" PRId64, fn, b,
            s->n_layers, s->n_experts, model_path, desc->n_layers, desc->n_experts);
    for (int64_t i = 0; i < n && !st; i++) {
        struct ffn_model_layer l;
        struct ffn__full f;
        struct ffn_tp_plan p = FFN_TP_PLAN_INIT, q = FFN_TP_PLAN_INIT;
        char k[64], key[96], why[160];
        ffn__ffn_key(k, sizeof k, i / per, s->n_experts ? i % per : -1);
        snprintf(key, sizeof key, "ffn.tp.plan.%s", k);
        ffn_tp_plan_parse(ctx, ffn_safetensors_metadata(s->st, key), &p);
        if ((st = ffn_model_layer(ctx, model, i / per, s->n_experts ? i % per : -1, &l))) break;
        if ((st = ffn__full_make(ctx, fn, &l, &f))) break;
        // The plan this checkpoint's FFN makes with the file's choices.
        struct ffn_tp_plan_opts o = FFN_TP_PLAN_OPTS_INIT;
        o.align = p.align;
        o.layout = p.shard_layout;
        o.down_bias = p.down_bias;
        if (p.shard_orient_gate == p.shard_orient_up && p.shard_orient_up == p.shard_orient_down)
            o.orient = p.shard_orient_down;
        st = ffn_tp_plan_make(ctx, &f.spec, &f.w, s->world, &o, &q);
        ffn__full_free(&f);
        if (!st && !ffn_tp_plan_equal(&p, &q, why, sizeof why))
            st = ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                           "%s: %s: the plan of %s does not fit %s's "
                           "FFN: %s (shard vs checkpoint)",
                           fn, b, k, model_path, why);
    }
    free(msrc);
    ffn_model_close(model);
    return st;
}

enum ffn_status ffn_tp_shards_open(ffn_ctx_t ctx, ffn_comm_t comm, const char *dir,
                                   const char *model_path, ffn_tp_shards_t *shards_out) {
    static const char fn[] = "ffn_tp_shards_open";
    if (!ctx) return FFN_STATUS_INVALID_ARG;
    ffn_error_clear(ctx);
    if (!comm || !shards_out)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: comm and shards_out must not be NULL",
                         fn);
    *shards_out = NULL;
    enum ffn_status st = FFN_STATUS_OK;
    struct ffn_tp_shards *s = calloc(1, sizeof *s);
    if (!s)
        st = ffn_error(ctx, FFN_STATUS_OUT_OF_MEMORY, "%s: out of memory", fn);
    else if (!dir || strlen(dir) > 4000)
        st = ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: dir is NULL or too long", fn);
    if (!st) {
        s->rank = comm->rank;
        s->world = comm->size;
        st = ffn__open_local(ctx, fn, s, dir, model_path);
    }
    st = ffn_comm_agree_vals(ctx, comm, fn, st, NULL, NULL, 0);
    if (!st) {
        // One set: rank 0's source and plans, compared with this rank's.
        char *mine = NULL, *theirs = NULL;
        st = ffn__identity(ctx, fn, s, &mine);
        const enum ffn_status bs = ffn_comm_bcast_text(ctx, comm, mine, &theirs);
        if (!st) st = bs;
        if (!st && strcmp(mine, theirs)) {
            const char *a = mine, *b = theirs;
            const size_t la = strcspn(a, "\n"), lb = strcspn(b, "\n");
            char why[600];
            if (la != lb || memcmp(a, b, la)) {  // the first line: the source files
                char sa[300], sb[300];
                snprintf(sa, sizeof sa, "%.*s", (int)(la < 299 ? la : 299), a);
                snprintf(sb, sizeof sb, "%.*s", (int)(lb < 299 ? lb : 299), b);
                ffn__source_diff(sa, sb, why, sizeof why);
                st = ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                               "%s: rank %" PRId64
                               "'s %s comes from "
                               "another checkpoint than rank 0's: %s (this rank vs rank 0)",
                               fn, s->rank, ffn__base(s->path), why);
            } else {  // a plan line
                snprintf(why, sizeof why, "the FFN lists differ");
                a += la, b += lb;
                while (*a && *b) {
                    a++, b++;
                    const size_t ka = strcspn(a, "\n"), kb = strcspn(b, "\n");
                    if (ka != kb || memcmp(a, b, ka)) {
                        const char *ea = memchr(a, '=', ka), *eb = memchr(b, '=', kb);
                        struct ffn_tp_plan pa = FFN_TP_PLAN_INIT, pb = FFN_TP_PLAN_INIT;
                        char ta[FFN_TP_PLAN_TEXT_MAX] = "", tb[FFN_TP_PLAN_TEXT_MAX] = "", w2[160];
                        if (ea && eb) {
                            snprintf(ta, sizeof ta, "%.*s", (int)(ka - (size_t)(ea + 1 - a)),
                                     ea + 1);
                            snprintf(tb, sizeof tb, "%.*s", (int)(kb - (size_t)(eb + 1 - b)),
                                     eb + 1);
                        }
                        if (ea && eb && !ffn_tp_plan_parse(ctx, ta, &pa) &&
                            !ffn_tp_plan_parse(ctx, tb, &pb) &&
                            !ffn_tp_plan_equal(&pa, &pb, w2, sizeof w2))
                            snprintf(why, sizeof why, "%.*s: %s",
                                     (int)(ea - a - 12 > 0 ? ea - a - 12 : 0), a + 12, w2);
                        else
                            snprintf(why, sizeof why, "%.*s vs %.*s", (int)(ka > 100 ? 100 : ka), a,
                                     (int)(kb > 100 ? 100 : kb), b);
                        break;
                    }
                    a += ka, b += kb;
                }
                st = ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                               "%s: rank %" PRId64
                               "'s %s belongs to "
                               "another shard set than rank 0's (another plan): %s (this rank vs "
                               "rank 0)",
                               fn, s->rank, ffn__base(s->path), why);
            }
        }
        free(mine), free(theirs);
        st = ffn_comm_agree_vals(ctx, comm, fn, st, NULL, NULL, 0);
    }
    if (st) {
        ffn_tp_shards_close(s);
        return st;
    }
    *shards_out = s;
    return FFN_STATUS_OK;
}

enum ffn_status ffn_tp_shards_layer(ffn_ctx_t ctx, ffn_tp_shards_t s, int64_t layer, int64_t expert,
                                    struct ffn_tp_plan *plan_out, struct ffn_block_weights *w_out) {
    static const char fn[] = "ffn_tp_shards_layer";
    if (!ctx) return FFN_STATUS_INVALID_ARG;
    ffn_error_clear(ctx);
    if (!s || !plan_out || !w_out)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: NULL argument", fn);
    if (layer < 0 || layer >= s->n_layers ||
        (s->n_experts ? (expert < 0 || expert >= s->n_experts) : (expert != 0 && expert != -1)))
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: layer %" PRId64 " expert %" PRId64 " is outside the set's %" PRId64
                         " layers x %" PRId64 " experts",
                         fn, layer, expert, s->n_layers, s->n_experts);
    char k[64], key[96];
    ffn__ffn_key(k, sizeof k, layer, s->n_experts ? expert : -1);
    snprintf(key, sizeof key, "ffn.tp.plan.%s", k);
    struct ffn_tp_plan p = FFN_TP_PLAN_INIT;
    enum ffn_status st = ffn_tp_plan_parse(ctx, ffn_safetensors_metadata(s->st, key), &p);
    struct ffn_block_spec rs;
    if (!st) st = ffn_tp_plan_shard_spec(ctx, &p, s->rank, &rs);
    if (st) return st;
    // The members the rank's block reads (AFTER_REDUCE: b_down too, though its spec has none).
    const bool fused = rs.gated && rs.gate_up_layout != FFN_GATE_UP_SEPARATE;
    const bool bd =
        p.block.bias_down && (p.down_bias == FFN_TP_DOWN_BIAS_AFTER_REDUCE || s->rank == 0);
    const bool mat[4] = {rs.gated && !fused, !fused, fused, true};
    const bool vec[4] = {rs.gated && !fused && rs.bias_gate, !fused && rs.bias_up,
                         fused && rs.bias_up, bd};
    const enum ffn_weight_orient o[4] = {p.shard_orient_gate, p.shard_orient_up,
                                         p.shard_orient_gate, p.shard_orient_down};
    const int64_t d = rs.d_model, n = rs.d_ff;
    const int64_t n_out[4] = {n, n, 2 * n, d}, n_in[4] = {d, d, d, n};
    struct ffn_block_weights w = FFN_BLOCK_WEIGHTS_INIT;
    struct ffn_weight *wm[8] = {&w.gate,   &w.up,   &w.gate_up,   &w.down,
                                &w.b_gate, &w.b_up, &w.b_gate_up, &w.b_down};
    for (int i = 0; i < 8; i++) {
        const int kk = i % 4;
        if (!(i < 4 ? mat[kk] : vec[kk])) continue;
        char name[FFN_TP_NAME_MAX];
        snprintf(name, sizeof name, "%s.%s.%s", k, ffn__roles[kk], i < 4 ? "weight" : "bias");
        struct ffn_file_tensor t;
        enum ffn_dtype dt;
        if (ffn_safetensors_find(ctx, s->st, name, &t) || ffn_file_dtype_to_dtype(t.dtype, &dt))
            return ffn_error(ctx, FFN_STATUS_BAD_FORMAT,
                             "%s: %s: tensor %s is missing or not "
                             "f32/bf16/f16",
                             fn, s->path, name);
        const int64_t R = i >= 4 ? n_out[kk] : o[kk] == FFN_WEIGHT_OUT_IN ? n_out[kk] : n_in[kk];
        const int64_t C = i >= 4 ? 0 : o[kk] == FFN_WEIGHT_OUT_IN ? n_in[kk] : n_out[kk];
        const bool ok = i >= 4 ? (t.n_dims == 1 && t.shape[0] == R)
                               : (t.n_dims == 2 && t.shape[0] == R && t.shape[1] == C);
        if (!ok || (uintptr_t)t.data % ffn_dtype_size(dt))
            return ffn_error(ctx, FFN_STATUS_BAD_FORMAT,
                             "%s: %s: tensor %s has the wrong shape or "
                             "alignment for rank %" PRId64 "'s plan (%" PRId64 " columns of d_ff)",
                             fn, s->path, name, s->rank, n);
        *wm[i] = ffn_weight_dense(t.data, dt, i < 4 ? o[kk] : FFN_WEIGHT_OUT_IN);
        wm[i]->rows = i < 4 ? R : 1;
        wm[i]->cols = i < 4 ? C : R;
    }
    *plan_out = p;
    *w_out = w;
    return FFN_STATUS_OK;
}
