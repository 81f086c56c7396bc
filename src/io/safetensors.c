// safetensors.c — the safetensors reader: memory-mapped, zero copy, header validated as hostile
// input with every rule of the reference implementation (huggingface/safetensors):
//   file = u64 LE header length N | N bytes of UTF-8 JSON | data section
//   N ≤ 100 MB and 8 + N ≤ file size; the JSON is one object starting with '{', no duplicate
//   names; each tensor {"dtype", "shape", "data_offsets": [begin, end]} relative to the data
//   section; sorted by offset the tensors tile the data section exactly (no overlap, no hole,
//   the last one ends at the file's end); numel = Π shape and numel·size = end - begin, both
//   computed with overflow checks. "__metadata__" is an object of strings.
// Sharded checkpoints: model.safetensors.index.json {"weight_map": {name: shard file}}.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/io_impl.h"

#define FFN_ST_LEN_BYTES 8  // the little-endian u64 header length in front of the JSON

struct ffn__st_shard {
    char *path;
    struct ffn_io_map map;
};

struct ffn__named;

struct ffn_safetensors {
    struct ffn__st_shard *shards;
    int n_shards;
    struct ffn_file_tensor *t;  // names owned; sorted by (shard, data offset)
    int *shard_of;              // shard of each tensor
    int64_t n, cap;
    struct ffn__named *by_name;  // (name, index into t) sorted by name (binary search)
    char **meta;                 // key0, value0, key1, value1, ... (first shard's __metadata__)
    int64_t n_meta;
};

static const char ffn__fn_open[] = "ffn_safetensors_open";
// Out of memory while reading file `path` (the message names it).
#define FFN__OOM(path)                                                                 \
    ffn_error(ctx, FFN_STATUS_OUT_OF_MEMORY, "%s: %s: out of memory while reading it", \
              ffn__fn_open, path)

// --- one file -----------------------------------------------------------------------------------

static uint64_t ffn__le64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

static enum ffn_status ffn__grow(ffn_ctx_t ctx, struct ffn_safetensors *st, int64_t extra) {
    if (st->n + extra <= st->cap) return FFN_STATUS_OK;
    int64_t cap = st->cap ? st->cap : 16;
    while (cap < st->n + extra) cap *= 2;
    void *p = realloc(st->t, (size_t)cap * sizeof *st->t);
    if (p) st->t = p;
    void *q = p ? realloc(st->shard_of, (size_t)cap * sizeof *st->shard_of) : NULL;
    if (q) st->shard_of = q;
    if (!p || !q)
        return ffn_error(ctx, FFN_STATUS_OUT_OF_MEMORY, "%s: out of memory", ffn__fn_open);
    st->cap = cap;
    return FFN_STATUS_OK;
}

// Parses one tensor entry of the header into *t (name set by the caller). begin/end are the
// data_offsets, relative to the data section.
static enum ffn_status ffn__tensor_entry(ffn_ctx_t ctx, const char *what, const cJSON *e,
                                         struct ffn_file_tensor *t, uint64_t *begin,
                                         uint64_t *end) {
    const char *fn = ffn__fn_open, *name = e->string;
    if (!cJSON_IsObject(e))
        return ffn_error(ctx, FFN_STATUS_BAD_FORMAT, "%s: %s: tensor '%.200s' is not an object", fn,
                         what, name);
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(e, "dtype");
    const cJSON *sh = cJSON_GetObjectItemCaseSensitive(e, "shape");
    const cJSON *off = cJSON_GetObjectItemCaseSensitive(e, "data_offsets");
    if (!cJSON_IsString(dt) || !cJSON_IsArray(sh) || !cJSON_IsArray(off))
        return ffn_error(ctx, FFN_STATUS_BAD_FORMAT,
                         "%s: %s: tensor '%.200s' needs \"dtype\" (string), \"shape\" and "
                         "\"data_offsets\" (arrays)",
                         fn, what, name);
    enum ffn_file_dtype fd;
    const struct ffn_io_dtype_info *info = NULL;
    if (ffn_file_dtype_from_name(dt->valuestring, &fd) == FFN_STATUS_OK)
        info = ffn_io_dtype_info(fd);
    if (!info || !info->st_name)
        return ffn_error(ctx, FFN_STATUS_BAD_FORMAT,
                         "%s: %s: tensor '%.200s' has unknown or unsupported dtype '%.40s'", fn,
                         what, name, dt->valuestring);
    const int rank = cJSON_GetArraySize(sh);
    if (rank > FFN_MAX_DIMS)
        return ffn_error(ctx, FFN_STATUS_BAD_FORMAT,
                         "%s: %s: tensor '%.200s' has %d dimensions; at most %d are supported", fn,
                         what, name, rank, FFN_MAX_DIMS);
    memset(t, 0, sizeof *t);
    t->dtype = fd;
    t->n_dims = rank;
    uint64_t numel = 1;
    bool overflow = false;
    int k = 0;
    for (const cJSON *d = sh->child; d; d = d->next, k++) {
        uint64_t v;
        if (!ffn_io_json_u64(d, &v) || v > INT64_MAX)
            return ffn_error(ctx, FFN_STATUS_BAD_FORMAT,
                             "%s: %s: tensor '%.200s' shape[%d] is not a non-negative integer", fn,
                             what, name, k);
        t->shape[k] = (int64_t)v;
        if (!ffn_io_mul_u64(numel, v, &numel)) overflow = true;
    }
    uint64_t nbytes = 0;
    if (overflow || numel > INT64_MAX || !ffn_io_dtype_bytes(fd, numel, &nbytes))
        return ffn_error(ctx, FFN_STATUS_BAD_FORMAT,
                         "%s: %s: tensor '%.200s': the shape's element count overflows", fn, what,
                         name);
    if (cJSON_GetArraySize(off) != 2 || !ffn_io_json_u64(off->child, begin) ||
        !ffn_io_json_u64(off->child->next, end))
        return ffn_error(ctx, FFN_STATUS_BAD_FORMAT,
                         "%s: %s: tensor '%.200s' data_offsets must be two non-negative integers",
                         fn, what, name);
    if (*end < *begin)
        return ffn_error(ctx, FFN_STATUS_BAD_FORMAT,
                         "%s: %s: tensor '%.200s' data_offsets [%" PRIu64 ", %" PRIu64
                         "] end before they begin",
                         fn, what, name, *begin, *end);
    if (*end - *begin != nbytes)
        return ffn_error(ctx, FFN_STATUS_BAD_FORMAT,
                         "%s: %s: tensor '%.200s' is %s with %" PRIu64 " elements = %" PRIu64
                         " bytes, but data_offsets span %" PRIu64,
                         fn, what, name, info->st_name, numel, nbytes, *end - *begin);
    t->nbytes = (size_t)nbytes;
    return FFN_STATUS_OK;
}

struct ffn__span {
    uint64_t begin, end;
    int64_t index;
};

static int ffn__cmp_span(const void *a, const void *b) {
    const struct ffn__span *x = a, *y = b;
    if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
    if (x->end != y->end) return x->end < y->end ? -1 : 1;
    return 0;
}

// Parses the header of shard `si` (already mapped) and appends its tensors.
static enum ffn_status ffn__parse_shard(ffn_ctx_t ctx, struct ffn_safetensors *st, int si,
                                        bool keep_meta) {
    const char *fn = ffn__fn_open, *what = st->shards[si].path;
    const struct ffn_io_map *m = &st->shards[si].map;
    // The kind first: a GGUF file or a JSON text is named as such, not reported as a safetensors
    // header of some absurd length.
    const enum ffn_io_kind kind = ffn_io_sniff(m->data, m->size);
    if (kind == FFN_IO_KIND_GGUF || kind == FFN_IO_KIND_JSON)
        return ffn_error(ctx, FFN_STATUS_BAD_FORMAT, "%s: %s: is %s, not a safetensors file", fn,
                         what, ffn_io_kind_name(kind));
    if (m->size < FFN_ST_LEN_BYTES)
        return ffn_error(ctx, FFN_STATUS_BAD_FORMAT,
                         "%s: %s: %zu bytes; a safetensors file starts with an 8-byte header "
                         "length (truncated file?)",
                         fn, what, m->size);
    const uint64_t hlen = ffn__le64(m->data);
    if (hlen > FFN_IO_ST_MAX_HEADER)
        return ffn_error(ctx, FFN_STATUS_BAD_FORMAT,
                         "%s: %s: header length %" PRIu64 " exceeds the 100 MB limit%s", fn, what,
                         hlen, kind == FFN_IO_KIND_UNKNOWN ? " (not a safetensors file?)" : "");
    if (hlen > m->size - FFN_ST_LEN_BYTES)
        return ffn_error(ctx, FFN_STATUS_BAD_FORMAT,
                         "%s: %s: header length %" PRIu64
                         " runs past the end of the file (%zu "
                         "bytes; truncated?)",
                         fn, what, hlen, m->size);
    const uint8_t *data = m->data + FFN_ST_LEN_BYTES + hlen;
    const uint64_t data_len = m->size - FFN_ST_LEN_BYTES - hlen;

    char hwhat[320];
    snprintf(hwhat, sizeof hwhat, "%.280s: header", what);
    cJSON *root;
    enum ffn_status stt = ffn_io_json_parse(
        ctx, fn, hwhat, (const char *)m->data + FFN_ST_LEN_BYTES, (size_t)hlen, &root);
    if (stt) return stt;

    int64_t n_entries = 0;
    for (const cJSON *e = root->child; e; e = e->next) n_entries++;
    struct ffn__span *spans = malloc((size_t)(n_entries ? n_entries : 1) * sizeof *spans);
    stt = spans ? ffn__grow(ctx, st, n_entries) : FFN__OOM(what);
    int64_t n_spans = 0;
    const int64_t first = st->n;
    for (const cJSON *e = root->child; e && !stt; e = e->next) {
        if (!strcmp(e->string, "__metadata__")) {
            if (!cJSON_IsObject(e)) {
                stt = ffn_error(ctx, FFN_STATUS_BAD_FORMAT, "%s: %s: __metadata__ is not an object",
                                fn, what);
                break;
            }
            int64_t nm = 0;
            for (const cJSON *kv = e->child; kv; kv = kv->next, nm++) {
                if (!cJSON_IsString(kv)) {
                    stt = ffn_error(ctx, FFN_STATUS_BAD_FORMAT,
                                    "%s: %s: __metadata__ value '%.200s' is not a string", fn, what,
                                    kv->string);
                    break;
                }
            }
            if (stt || !keep_meta) continue;
            st->meta = calloc((size_t)(2 * nm + 1), sizeof *st->meta);
            if (!st->meta) {
                stt = FFN__OOM(what);
                break;
            }
            for (const cJSON *kv = e->child; kv; kv = kv->next) {
                st->meta[2 * st->n_meta] = ffn_io_strdup(kv->string);
                st->meta[2 * st->n_meta + 1] = ffn_io_strdup(kv->valuestring);
                st->n_meta++;
                if (!st->meta[2 * st->n_meta - 2] || !st->meta[2 * st->n_meta - 1])
                    stt = FFN__OOM(what);
            }
            continue;
        }
        struct ffn_file_tensor t;
        uint64_t b, en;
        stt = ffn__tensor_entry(ctx, what, e, &t, &b, &en);
        if (stt) break;
        if (en > data_len) {
            stt = ffn_error(ctx, FFN_STATUS_BAD_FORMAT,
                            "%s: %s: tensor '%.200s' ends at byte %" PRIu64
                            " but the data section holds %" PRIu64,
                            fn, what, e->string, en, data_len);
            break;
        }
        t.name = ffn_io_strdup(e->string);
        if (!t.name) {
            stt = FFN__OOM(what);
            break;
        }
        t.data = data + b;
        spans[n_spans] = (struct ffn__span){b, en, n_spans};
        n_spans++;
        st->shard_of[st->n] = si;
        st->t[st->n++] = t;
    }
    cJSON_Delete(root);

    // The tensors, sorted by offset, must tile [0, data_len) exactly.
    if (!stt) {
        qsort(spans, (size_t)n_spans, sizeof *spans, ffn__cmp_span);
        uint64_t expect = 0;
        for (int64_t i = 0; i < n_spans && !stt; i++) {
            const char *nm = st->t[first + spans[i].index].name;
            if (spans[i].begin < expect)
                stt = ffn_error(ctx, FFN_STATUS_BAD_FORMAT,
                                "%s: %s: tensor '%.200s' at bytes [%" PRIu64 ", %" PRIu64
                                ") overlaps the tensor before it (which ends at %" PRIu64 ")",
                                fn, what, nm, spans[i].begin, spans[i].end, expect);
            else if (spans[i].begin > expect)
                stt = ffn_error(ctx, FFN_STATUS_BAD_FORMAT,
                                "%s: %s: a hole in the data section: bytes [%" PRIu64 ", %" PRIu64
                                ") belong to no tensor (next is '%.200s')",
                                fn, what, expect, spans[i].begin, nm);
            expect = spans[i].end;
        }
        if (!stt && expect != data_len)
            stt = ffn_error(ctx, FFN_STATUS_BAD_FORMAT,
                            "%s: %s: the tensors end at byte %" PRIu64
                            " of the data section, but it holds %" PRIu64 " bytes",
                            fn, what, expect, data_len);
        // Keep the shard's tensors in data order ("file order").
        if (!stt) {
            struct ffn_file_tensor *tmp = malloc((size_t)(n_spans ? n_spans : 1) * sizeof *tmp);
            if (!tmp) {
                stt = FFN__OOM(what);
            } else {
                for (int64_t i = 0; i < n_spans; i++) tmp[i] = st->t[first + spans[i].index];
                if (n_spans) memcpy(st->t + first, tmp, (size_t)n_spans * sizeof *tmp);
                free(tmp);
            }
        }
    }
    free(spans);
    return stt;
}

// --- the whole checkpoint -----------------------------------------------------------------------

struct ffn__named {
    const char *name;
    int64_t index;
};

static int ffn__cmp_named(const void *a, const void *b) {
    return strcmp(((const struct ffn__named *)a)->name, ((const struct ffn__named *)b)->name);
}

// Builds the by-name index and rejects a name that appears twice (across shards).
static enum ffn_status ffn__index(ffn_ctx_t ctx, struct ffn_safetensors *st) {
    st->by_name = malloc((size_t)(st->n ? st->n : 1) * sizeof *st->by_name);
    if (!st->by_name)
        return ffn_error(ctx, FFN_STATUS_OUT_OF_MEMORY, "%s: out of memory", ffn__fn_open);
    for (int64_t i = 0; i < st->n; i++) st->by_name[i] = (struct ffn__named){st->t[i].name, i};
    qsort(st->by_name, (size_t)st->n, sizeof *st->by_name, ffn__cmp_named);
    for (int64_t i = 1; i < st->n; i++)
        if (!strcmp(st->by_name[i - 1].name, st->by_name[i].name))
            return ffn_error(ctx, FFN_STATUS_BAD_FORMAT,
                             "%s: tensor '%.200s' appears in more than one shard", ffn__fn_open,
                             st->by_name[i].name);
    return FFN_STATUS_OK;
}

static int64_t ffn__lookup(const struct ffn_safetensors *st, const char *name) {
    int64_t lo = 0, hi = st->n;
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        const int c = strcmp(st->by_name[mid].name, name);
        if (c == 0) return st->by_name[mid].index;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

// A shard name from an index must be a plain file name beside the index (no path tricks).
static bool ffn__plain_name(const char *s) {
    return s[0] && strcmp(s, ".") && strcmp(s, "..") && !strchr(s, '/') && !strchr(s, '\\');
}

static int ffn__cmp_cstr(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static enum ffn_status ffn__add_shard(ffn_ctx_t ctx, struct ffn_safetensors *st, char *path) {
    struct ffn__st_shard *p = realloc(st->shards, (size_t)(st->n_shards + 1) * sizeof *p);
    if (!p) {
        free(path);
        return ffn_error(ctx, FFN_STATUS_OUT_OF_MEMORY, "%s: out of memory", ffn__fn_open);
    }
    st->shards = p;
    memset(&p[st->n_shards], 0, sizeof p[0]);
    p[st->n_shards].path = path;
    st->n_shards++;
    return ffn_io_map_file(ctx, ffn__fn_open, path, &p[st->n_shards - 1].map);
}

static enum ffn_status ffn__open_index(ffn_ctx_t ctx, struct ffn_safetensors *st,
                                       const char *index_path) {
    const char *fn = ffn__fn_open;
    char *text;
    size_t len;
    enum ffn_status s = ffn_io_read_file(ctx, fn, index_path, FFN_IO_CONFIG_MAX_BYTES, &text, &len);
    if (s) return s;
    cJSON *root;
    s = ffn_io_json_parse(ctx, fn, index_path, text, len, &root);
    free(text);
    if (s) return s;
    const cJSON *wm = cJSON_GetObjectItemCaseSensitive(root, "weight_map");
    if (!cJSON_IsObject(wm)) {
        // Say what the JSON is instead: a model config, a bare safetensors header, or other.
        const cJSON *mt = cJSON_GetObjectItemCaseSensitive(root, "model_type");
        if (cJSON_IsString(mt))
            s = ffn_error(ctx, FFN_STATUS_BAD_FORMAT,
                          "%s: %s: is a model config (model_type \"%.60s\"), not a shard index "
                          "(model.safetensors.index.json with a \"weight_map\"); give the "
                          "checkpoint's directory",
                          fn, index_path, mt->valuestring);
        else if (wm)
            s = ffn_error(ctx, FFN_STATUS_BAD_FORMAT,
                          "%s: %s: \"weight_map\" is not an object (tensor name -> shard file)", fn,
                          index_path);
        else
            s = ffn_error(ctx, FFN_STATUS_BAD_FORMAT,
                          "%s: %s: a JSON file but not a shard index (no \"weight_map\" object)",
                          fn, index_path);
        cJSON_Delete(root);
        return s;
    }
    // The distinct shard names, sorted.
    int64_t n = 0;
    for (const cJSON *e = wm->child; e; e = e->next) {
        if (!cJSON_IsString(e) || !ffn__plain_name(e->valuestring)) {
            s = ffn_error(ctx, FFN_STATUS_BAD_FORMAT,
                          "%s: %s: weight_map['%.200s'] is not a file name beside the index", fn,
                          index_path, e->string);
            cJSON_Delete(root);
            return s;
        }
        n++;
    }
    const char **names = malloc((size_t)(n ? n : 1) * sizeof *names);
    if (!names) {
        cJSON_Delete(root);
        return FFN__OOM(index_path);
    }
    int64_t k = 0;
    for (const cJSON *e = wm->child; e; e = e->next) names[k++] = e->valuestring;
    qsort(names, (size_t)n, sizeof *names, ffn__cmp_cstr);
    int64_t uniq = 0;
    for (int64_t i = 0; i < n; i++)
        if (i == 0 || strcmp(names[i], names[i - 1])) names[uniq++] = names[i];
    if (uniq > FFN_IO_MAX_SHARDS)
        s = ffn_error(ctx, FFN_STATUS_BAD_FORMAT, "%s: %s: %" PRId64 " shards; at most %d accepted",
                      fn, index_path, uniq, FFN_IO_MAX_SHARDS);
    if (uniq == 0)
        s = ffn_error(ctx, FFN_STATUS_BAD_FORMAT, "%s: %s: empty weight_map", fn, index_path);
    // Shards live beside the index.
    char *dir = ffn_io_strdup(index_path);
    if (!dir && !s) s = FFN__OOM(index_path);
    if (dir) {
        char *slash = strrchr(dir, '/');
        if (slash)
            slash[1] = '\0';
        else
            strcpy(dir, ".");
    }
    for (int64_t i = 0; i < uniq && !s; i++) {
        char *p = ffn_io_path_join(dir, names[i]);
        s = p ? ffn__add_shard(ctx, st, p) : FFN__OOM(index_path);
        if (!s) s = ffn__parse_shard(ctx, st, st->n_shards - 1, i == 0);
    }
    free(dir);
    free(names);
    if (!s) s = ffn__index(ctx, st);
    // Every tensor the index names must be in the shard it names.
    for (const cJSON *e = wm->child; e && !s; e = e->next) {
        const int64_t i = ffn__lookup(st, e->string);
        bool ok = false;
        if (i >= 0) {
            const char *sp = st->shards[st->shard_of[i]].path, *base = strrchr(sp, '/');
            ok = !strcmp(base ? base + 1 : sp, e->valuestring);
        }
        if (!ok)
            s = ffn_error(ctx, i < 0 ? FFN_STATUS_NOT_FOUND : FFN_STATUS_BAD_FORMAT,
                          "%s: %s: the index puts tensor '%.200s' in '%.200s', which does not "
                          "hold it",
                          fn, index_path, e->string, e->valuestring);
    }
    cJSON_Delete(root);
    return s;
}

enum ffn_status ffn_safetensors_open(ffn_ctx_t ctx, const char *path, ffn_safetensors_t *st_out) {
    const char *fn = ffn__fn_open;
    ffn_error_clear(ctx);
    if (!path || !st_out) return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: NULL argument", fn);
    *st_out = NULL;
    struct ffn_safetensors *st = calloc(1, sizeof *st);
    if (!st) return ffn_error(ctx, FFN_STATUS_OUT_OF_MEMORY, "%s: out of memory", fn);
    enum ffn_status s = FFN_STATUS_OK;
    enum ffn_io_kind kind;
    char *index = NULL, *single = NULL;
    if (ffn_io_is_dir(path)) {
        index = ffn_io_path_join(path, "model.safetensors.index.json");
        single = ffn_io_path_join(path, "model.safetensors");
        if (!index || !single)
            s = ffn_error(ctx, FFN_STATUS_OUT_OF_MEMORY, "%s: out of memory", fn);
        else if (ffn_io_exists(index))
            s = ffn__open_index(ctx, st, index);
        else if (ffn_io_exists(single)) {
            s = ffn__add_shard(ctx, st, single);
            single = NULL;
            if (!s) s = ffn__parse_shard(ctx, st, 0, true);
            if (!s) s = ffn__index(ctx, st);
        } else {
            s = ffn_error(ctx, FFN_STATUS_NOT_FOUND,
                          "%s: %s: no model.safetensors or model.safetensors.index.json there", fn,
                          path);
        }
    } else if ((s = ffn_io_file_kind(ctx, fn, path, &kind)) != FFN_STATUS_OK) {
        // not a regular file, or unreadable: the message is set
    } else if (kind == FFN_IO_KIND_JSON) {
        s = ffn__open_index(ctx, st, path);
    } else if (kind == FFN_IO_KIND_GGUF) {
        s = ffn_error(ctx, FFN_STATUS_BAD_FORMAT, "%s: %s: is a GGUF file, not a safetensors file",
                      fn, path);
    } else {
        char *p = ffn_io_strdup(path);
        s = p ? ffn__add_shard(ctx, st, p)
              : ffn_error(ctx, FFN_STATUS_OUT_OF_MEMORY, "%s: out of memory", fn);
        if (!s) s = ffn__parse_shard(ctx, st, 0, true);
        if (!s) s = ffn__index(ctx, st);
    }
    free(index);
    free(single);
    if (s) {
        ffn_safetensors_close(st);
        return s;
    }
    *st_out = st;
    return FFN_STATUS_OK;
}

enum ffn_status ffn_safetensors_open_memory(ffn_ctx_t ctx, const void *data, size_t size,
                                            const char *name, ffn_safetensors_t *st_out) {
    const char *fn = "ffn_safetensors_open_memory";
    ffn_error_clear(ctx);
    if ((!data && size) || !st_out)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: NULL argument", fn);
    *st_out = NULL;
    struct ffn_safetensors *st = calloc(1, sizeof *st);
    if (!st) return ffn_error(ctx, FFN_STATUS_OUT_OF_MEMORY, "%s: out of memory", fn);
    st->shards = calloc(1, sizeof *st->shards);
    enum ffn_status s = FFN_STATUS_OK;
    if (!st->shards || !(st->shards[0].path = ffn_io_strdup(name ? name : "<memory>"))) {
        s = ffn_error(ctx, FFN_STATUS_OUT_OF_MEMORY, "%s: out of memory", fn);
    } else {
        st->n_shards = 1;
        st->shards[0].map.data = data;
        st->shards[0].map.size = size;
        s = ffn__parse_shard(ctx, st, 0, true);
        if (!s) s = ffn__index(ctx, st);
    }
    if (s) {
        ffn_safetensors_close(st);
        return s;
    }
    *st_out = st;
    return FFN_STATUS_OK;
}

void ffn_safetensors_close(ffn_safetensors_t st) {
    if (!st) return;
    for (int64_t i = 0; i < st->n; i++) free((char *)st->t[i].name);
    free(st->t);
    free(st->shard_of);
    free(st->by_name);
    for (int64_t i = 0; i < 2 * st->n_meta; i++) free(st->meta[i]);
    free(st->meta);
    for (int i = 0; i < st->n_shards; i++) {
        ffn_io_unmap(&st->shards[i].map);
        free(st->shards[i].path);
    }
    free(st->shards);
    free(st);
}

int64_t ffn_safetensors_count(ffn_safetensors_t st) { return st ? st->n : 0; }

enum ffn_status ffn_safetensors_get(ffn_ctx_t ctx, ffn_safetensors_t st, int64_t index,
                                    struct ffn_file_tensor *out) {
    ffn_error_clear(ctx);
    if (!st || !out)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "ffn_safetensors_get: NULL argument");
    if (index < 0 || index >= st->n)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "ffn_safetensors_get: index %" PRId64 " is outside [0, %" PRId64 ")",
                         index, st->n);
    *out = st->t[index];
    return FFN_STATUS_OK;
}

enum ffn_status ffn_safetensors_find(ffn_ctx_t ctx, ffn_safetensors_t st, const char *name,
                                     struct ffn_file_tensor *out) {
    ffn_error_clear(ctx);
    if (!st || !name || !out)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "ffn_safetensors_find: NULL argument");
    const int64_t i = ffn__lookup(st, name);
    if (i < 0)
        return ffn_error(ctx, FFN_STATUS_NOT_FOUND, "ffn_safetensors_find: %s: no tensor '%.200s'",
                         st->n_shards ? st->shards[0].path : "?", name);
    *out = st->t[i];
    return FFN_STATUS_OK;
}

const char *ffn_safetensors_metadata(ffn_safetensors_t st, const char *key) {
    if (!st || !key) return NULL;
    for (int64_t i = 0; i < st->n_meta; i++)
        if (!strcmp(st->meta[2 * i], key)) return st->meta[2 * i + 1];
    return NULL;
}

int64_t ffn_safetensors_metadata_count(ffn_safetensors_t st) { return st ? st->n_meta : 0; }

const char *ffn_safetensors_metadata_key(ffn_safetensors_t st, int64_t i) {
    return (st && i >= 0 && i < st->n_meta) ? st->meta[2 * i] : NULL;
}

const char *ffn_safetensors_path(ffn_safetensors_t st) {
    return (st && st->n_shards) ? st->shards[0].path : NULL;
}

int ffn_safetensors_shard_count(ffn_safetensors_t st) { return st ? st->n_shards : 0; }

const char *ffn_io_safetensors_shard_path(ffn_safetensors_t st, int i) {
    return (st && i >= 0 && i < st->n_shards) ? st->shards[i].path : NULL;
}
