// gguf.c — the GGUF reader (versions 2 and 3, little-endian), memory-mapped, zero copy:
//   "GGUF" | u32 version | u64 n_tensors | u64 n_kv | n_kv × (string key, u32 type, value)
//   | n_tensors × (string name, u32 n_dims, u64 ne[n_dims], u32 ggml type, u64 offset)
//   | padding to general.alignment (default 32) | tensor data (each offset aligned)
// string = u64 length + bytes (no NUL); array = u32 element type + u64 count + elements
// (arrays may nest). Every count, length and offset is checked against the bytes that remain
// before it is used; counts are checked against the smallest size their items can have, so a
// hostile count cannot make us allocate or loop beyond the file's size.
// Tensor dims are stored fastest-first (ne[0] = row length): an HF [out, in] weight is GGUF
// {in, out}. ffn_file_tensor.shape lists them slowest-first, as safetensors and PyTorch do.
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "io/io_impl.h"

#define FFN_GGUF_MAGIC "GGUF"
#define FFN_GGUF_MAX_DIMS 4  // GGML_MAX_DIMS
#define FFN_GGUF_MAX_ALIGNMENT (1u << 30)
#define FFN_GGUF_MIN_KV_BYTES 13  // key length u64 + type u32 + a 1-byte value
#define FFN_GGUF_MIN_TI_BYTES 24  // name length u64 + n_dims u32 + type u32 + offset u64
#define FFN_GGUF_MAX_NAME 1024    // tensor names and keys longer than this are refused

static const char ffn__fn_gguf[] = "ffn_gguf_open";

struct ffn__gkv {
    char *key;
    struct ffn_gguf_value v;
};

struct ffn__gnamed {
    const char *name;
    int64_t index;
};

struct ffn_gguf {
    struct ffn_io_map map;
    char *path;
    uint32_t version;
    uint64_t alignment;
    size_t data_off;
    struct ffn__gkv *kv;
    int64_t n_kv;
    struct ffn_file_tensor *t;  // names owned
    int64_t n_t;
    struct ffn__gnamed *by_name;
};

// ggml tensor types ffn reads, by their ggml_type number.
static const struct {
    uint32_t ggml;
    const char *name;
    enum ffn_file_dtype dtype;
} ffn__ggml_types[] = {
    {0, "F32", FFN_FILE_DTYPE_F32},   {1, "F16", FFN_FILE_DTYPE_F16},
    {2, "Q4_0", FFN_FILE_DTYPE_Q4_0}, {8, "Q8_0", FFN_FILE_DTYPE_Q8_0},
    {24, "I8", FFN_FILE_DTYPE_I8},    {25, "I16", FFN_FILE_DTYPE_I16},
    {26, "I32", FFN_FILE_DTYPE_I32},  {27, "I64", FFN_FILE_DTYPE_I64},
    {28, "F64", FFN_FILE_DTYPE_F64},  {30, "BF16", FFN_FILE_DTYPE_BF16},
};

// Names of the ggml types ffn does not read, for messages (index = ggml_type number).
static const char *const ffn__ggml_other[] = {
    [3] = "Q4_1",     [6] = "Q5_0",    [7] = "Q5_1",     [9] = "Q8_1",   [10] = "Q2_K",
    [11] = "Q3_K",    [12] = "Q4_K",   [13] = "Q5_K",    [14] = "Q6_K",  [15] = "Q8_K",
    [16] = "IQ2_XXS", [17] = "IQ2_XS", [18] = "IQ3_XXS", [19] = "IQ1_S", [20] = "IQ4_NL",
    [21] = "IQ3_S",   [22] = "IQ2_S",  [23] = "IQ4_XS",  [29] = "IQ1_M", [34] = "TQ1_0",
    [35] = "TQ2_0",
};

static const char *const ffn__gguf_type_names[FFN_GGUF_TYPE_COUNT] = {
    [FFN_GGUF_TYPE_UINT8] = "uint8",     [FFN_GGUF_TYPE_INT8] = "int8",
    [FFN_GGUF_TYPE_UINT16] = "uint16",   [FFN_GGUF_TYPE_INT16] = "int16",
    [FFN_GGUF_TYPE_UINT32] = "uint32",   [FFN_GGUF_TYPE_INT32] = "int32",
    [FFN_GGUF_TYPE_FLOAT32] = "float32", [FFN_GGUF_TYPE_BOOL] = "bool",
    [FFN_GGUF_TYPE_STRING] = "string",   [FFN_GGUF_TYPE_ARRAY] = "array",
    [FFN_GGUF_TYPE_UINT64] = "uint64",   [FFN_GGUF_TYPE_INT64] = "int64",
    [FFN_GGUF_TYPE_FLOAT64] = "float64",
};

const char *ffn_gguf_type_name(enum ffn_gguf_type type) {
    return (unsigned)type < FFN_GGUF_TYPE_COUNT ? ffn__gguf_type_names[type] : "?";
}

// Bytes of a fixed-size value type; 0 for string and array (variable) and unknown types.
static size_t ffn__fixed_size(uint32_t type) {
    switch (type) {
    case FFN_GGUF_TYPE_UINT8:
    case FFN_GGUF_TYPE_INT8:
    case FFN_GGUF_TYPE_BOOL: return 1;
    case FFN_GGUF_TYPE_UINT16:
    case FFN_GGUF_TYPE_INT16: return 2;
    case FFN_GGUF_TYPE_UINT32:
    case FFN_GGUF_TYPE_INT32:
    case FFN_GGUF_TYPE_FLOAT32: return 4;
    case FFN_GGUF_TYPE_UINT64:
    case FFN_GGUF_TYPE_INT64:
    case FFN_GGUF_TYPE_FLOAT64: return 8;
    default: return 0;
    }
}

// --- a bounds-checked cursor ------------------------------------------------------------------

struct ffn__rd {
    const uint8_t *p;  // start of the buffer
    size_t size, pos;
};

static size_t ffn__left(const struct ffn__rd *r) { return r->size - r->pos; }

static bool ffn__u32(struct ffn__rd *r, uint32_t *v) {
    if (ffn__left(r) < 4) return false;
    *v = 0;
    for (int i = 3; i >= 0; i--) *v = (*v << 8) | r->p[r->pos + (size_t)i];
    r->pos += 4;
    return true;
}

static bool ffn__u64(struct ffn__rd *r, uint64_t *v) {
    if (ffn__left(r) < 8) return false;
    *v = 0;
    for (int i = 7; i >= 0; i--) *v = (*v << 8) | r->p[r->pos + (size_t)i];
    r->pos += 8;
    return true;
}

// A string: u64 length (checked against what remains) and its bytes.
static bool ffn__str(struct ffn__rd *r, const char **s, uint64_t *len) {
    if (!ffn__u64(r, len) || *len > ffn__left(r)) return false;
    *s = (const char *)r->p + r->pos;
    r->pos += (size_t)*len;
    return true;
}

// Validates and steps over one value of `type` (arrays recursively, depth-limited). On failure
// *why says what was wrong.
static bool ffn__skip_value(struct ffn__rd *r, uint32_t type, int depth, const char **why) {
    const size_t fs = ffn__fixed_size(type);
    if (fs) {
        if (ffn__left(r) < fs) return *why = "value runs past the end of the file", false;
        if (type == FFN_GGUF_TYPE_BOOL && r->p[r->pos] > 1)
            return *why = "bool value is neither 0 nor 1", false;
        r->pos += fs;
        return true;
    }
    if (type == FFN_GGUF_TYPE_STRING) {
        const char *s;
        uint64_t len;
        if (!ffn__str(r, &s, &len))
            return *why = "string length runs past the end of the file", false;
        return true;
    }
    if (type != FFN_GGUF_TYPE_ARRAY) return *why = "unknown value type", false;
    if (depth >= FFN_IO_GGUF_MAX_ARRAY_DEPTH) return *why = "arrays nested too deep", false;
    uint32_t et;
    uint64_t n;
    if (!ffn__u32(r, &et) || !ffn__u64(r, &n))
        return *why = "array header runs past the end of the file", false;
    const size_t efs = ffn__fixed_size(et);
    if (efs) {
        uint64_t bytes;
        if (!ffn_io_mul_u64(n, efs, &bytes) || bytes > ffn__left(r))
            return *why = "array length runs past the end of the file", false;
        if (et == FFN_GGUF_TYPE_BOOL)
            for (uint64_t i = 0; i < n; i++)
                if (r->p[r->pos + i] > 1) return *why = "bool value is neither 0 nor 1", false;
        r->pos += (size_t)bytes;
        return true;
    }
    if (et != FFN_GGUF_TYPE_STRING && et != FFN_GGUF_TYPE_ARRAY)
        return *why = "unknown array element type", false;
    // Each string takes ≥ 8 bytes, each array ≥ 12: a count beyond that cannot be honest.
    const uint64_t min = et == FFN_GGUF_TYPE_STRING ? 8 : 12;
    if (n > ffn__left(r) / min) return *why = "array length runs past the end of the file", false;
    for (uint64_t i = 0; i < n; i++)
        if (!ffn__skip_value(r, et, depth + 1, why)) return false;
    return true;
}

// --- parse ---------------------------------------------------------------------------------------

static bool ffn__plain_text(const char *s, uint64_t len) {
    if (len == 0 || len > FFN_GGUF_MAX_NAME) return false;
    for (uint64_t i = 0; i < len; i++)
        if (s[i] == '\0') return false;
    return true;
}

static int ffn__cmp_gnamed(const void *a, const void *b) {
    return strcmp(((const struct ffn__gnamed *)a)->name, ((const struct ffn__gnamed *)b)->name);
}

struct ffn__gspan {
    uint64_t begin, end;
    int64_t index;
};

static int ffn__cmp_gspan(const void *a, const void *b) {
    const struct ffn__gspan *x = a, *y = b;
    return x->begin != y->begin ? (x->begin < y->begin ? -1 : 1) : 0;
}

#define FFN__BAD(...) ffn_error(ctx, FFN_STATUS_BAD_FORMAT, __VA_ARGS__)
// Out of memory while parsing (fn and path are locals of each step): which file, and where.
#define FFN__OOM()                                                                                 \
    ffn_error(ctx, FFN_STATUS_OUT_OF_MEMORY, "%s: %s: out of memory while reading the header", fn, \
              path)

// Step 1: the magic, the version and the two counts, each count checked against the bytes left.
static enum ffn_status ffn__parse_header(ffn_ctx_t ctx, struct ffn_gguf *g, struct ffn__rd *r,
                                         uint64_t *n_t, uint64_t *n_kv) {
    const char *fn = ffn__fn_gguf, *path = g->path;
    uint32_t version;
    if (r->size < 4 || memcmp(r->p, FFN_GGUF_MAGIC, 4)) {
        const enum ffn_io_kind kind = ffn_io_sniff(r->p, r->size);  // say what it is instead
        return FFN__BAD("%s: %s: not a GGUF file (no \"GGUF\" magic%s%s)", fn, path,
                        kind ? "; it is " : "", kind ? ffn_io_kind_name(kind) : "");
    }
    r->pos = 4;
    if (!ffn__u32(r, &version) || !ffn__u64(r, n_t) || !ffn__u64(r, n_kv))
        return FFN__BAD("%s: %s: truncated header (%zu bytes)", fn, path, r->size);
    if (version == 1)
        return ffn_error(ctx, FFN_STATUS_UNSUPPORTED,
                         "%s: %s: GGUF version 1 is not supported (2 or 3)", fn, path);
    if (version != 2 && version != 3) {
        if ((version & 0xffffu) == 0 && version)
            return ffn_error(ctx, FFN_STATUS_UNSUPPORTED,
                             "%s: %s: a big-endian GGUF; only little-endian is read", fn, path);
        return FFN__BAD("%s: %s: unknown GGUF version %" PRIu32, fn, path, version);
    }
    g->version = version;
    if (*n_kv > ffn__left(r) / FFN_GGUF_MIN_KV_BYTES)
        return FFN__BAD("%s: %s: %" PRIu64
                        " metadata entries cannot fit in the %zu bytes that remain",
                        fn, path, *n_kv, ffn__left(r));
    if (*n_t > ffn__left(r) / FFN_GGUF_MIN_TI_BYTES)
        return FFN__BAD("%s: %s: %" PRIu64 " tensors cannot fit in the %zu bytes that remain", fn,
                        path, *n_t, ffn__left(r));
    return FFN_STATUS_OK;
}

// Step 2, per entry: one metadata key and its value (validated, kept as raw bytes); the entry
// general.alignment sets the alignment of the data section.
static enum ffn_status ffn__parse_kv(ffn_ctx_t ctx, struct ffn_gguf *g, struct ffn__rd *r,
                                     uint64_t i) {
    const char *fn = ffn__fn_gguf, *path = g->path;
    const char *key, *why = NULL;
    uint64_t klen;
    uint32_t type;
    if (!ffn__str(r, &key, &klen))
        return FFN__BAD("%s: %s: metadata key %" PRIu64 ": length runs past the end of the file",
                        fn, path, i);
    if (!ffn__plain_text(key, klen))
        return FFN__BAD("%s: %s: metadata key %" PRIu64 " is empty, too long or holds a NUL", fn,
                        path, i);
    struct ffn__gkv *kv = &g->kv[g->n_kv];
    if (!(kv->key = ffn_io_strndup(key, (size_t)klen))) return FFN__OOM();
    g->n_kv++;
    if (!ffn__u32(r, &type))
        return FFN__BAD("%s: %s: metadata '%.200s': truncated", fn, path, kv->key);
    if (type >= FFN_GGUF_TYPE_COUNT)
        return FFN__BAD("%s: %s: metadata '%.200s' has unknown value type %" PRIu32, fn, path,
                        kv->key, type);
    kv->v.type = (enum ffn_gguf_type)type;
    size_t start = r->pos;
    if (type == FFN_GGUF_TYPE_ARRAY) {
        // Peek the element type and count, then validate the whole array.
        struct ffn__rd peek = *r;
        uint32_t et;
        uint64_t n;
        if (ffn__u32(&peek, &et) && ffn__u64(&peek, &n)) {
            kv->v.elem_type = (enum ffn_gguf_type)(et < FFN_GGUF_TYPE_COUNT ? et : 0);
            kv->v.n = (int64_t)(n > INT64_MAX ? INT64_MAX : n);
            start = peek.pos;
        }
    }
    if (!ffn__skip_value(r, type, 0, &why))
        return FFN__BAD("%s: %s: metadata '%.200s': %s", fn, path, kv->key, why);
    kv->v.raw = r->p + start;
    kv->v.raw_len = r->pos - start;
    if (!strcmp(kv->key, "general.alignment")) {
        int64_t a;
        if (ffn_gguf_value_int(NULL, &kv->v, &a) != FFN_STATUS_OK || a <= 0 ||
            (uint64_t)a > FFN_GGUF_MAX_ALIGNMENT || (a & (a - 1)))
            return FFN__BAD("%s: %s: general.alignment must be a power of two in [1, 2^30]", fn,
                            path);
        g->alignment = (uint64_t)a;
    }
    return FFN_STATUS_OK;
}

// Step 3: no metadata key twice.
static enum ffn_status ffn__check_keys_unique(ffn_ctx_t ctx, struct ffn_gguf *g) {
    const char *fn = ffn__fn_gguf, *path = g->path;
    struct ffn__gnamed *names = malloc((size_t)(g->n_kv ? g->n_kv : 1) * sizeof *names);
    if (!names) return FFN__OOM();
    for (int64_t i = 0; i < g->n_kv; i++) names[i] = (struct ffn__gnamed){g->kv[i].key, i};
    qsort(names, (size_t)g->n_kv, sizeof *names, ffn__cmp_gnamed);
    for (int64_t i = 1; i < g->n_kv; i++) {
        if (!strcmp(names[i].name, names[i - 1].name)) {
            const enum ffn_status s =
                FFN__BAD("%s: %s: duplicate metadata key '%.200s'", fn, path, names[i].name);
            free(names);
            return s;
        }
    }
    free(names);
    return FFN_STATUS_OK;
}

// Step 4, per tensor: name, dims, ggml type and offset into g->t[g->n_t] (dims reversed: slowest
// first), its byte span relative to the data section into *span.
static enum ffn_status ffn__parse_tensor_info(ffn_ctx_t ctx, struct ffn_gguf *g, struct ffn__rd *r,
                                              uint64_t i, struct ffn__gspan *span) {
    const char *fn = ffn__fn_gguf, *path = g->path;
    const char *name;
    uint64_t nlen, ne[FFN_GGUF_MAX_DIMS], off;
    uint32_t nd, type;
    if (!ffn__str(r, &name, &nlen))
        return FFN__BAD("%s: %s: tensor %" PRIu64 ": name length runs past the end of the file", fn,
                        path, i);
    if (!ffn__plain_text(name, nlen))
        return FFN__BAD("%s: %s: tensor %" PRIu64 ": name is empty, too long or holds a NUL", fn,
                        path, i);
    struct ffn_file_tensor *t = &g->t[g->n_t];
    if (!(t->name = ffn_io_strndup(name, (size_t)nlen))) return FFN__OOM();
    g->n_t++;
    if (!ffn__u32(r, &nd)) return FFN__BAD("%s: %s: tensor '%.200s': truncated", fn, path, t->name);
    if (nd == 0 || nd > FFN_GGUF_MAX_DIMS)
        return FFN__BAD("%s: %s: tensor '%.200s' has %" PRIu32 " dimensions; 1 to %d allowed", fn,
                        path, t->name, nd, FFN_GGUF_MAX_DIMS);
    uint64_t numel = 1;
    bool bad = false;
    for (uint32_t k = 0; k < nd && !bad; k++) {
        if (!ffn__u64(r, &ne[k]) || ne[k] > INT64_MAX || !ffn_io_mul_u64(numel, ne[k], &numel))
            bad = true;
    }
    if (bad || numel > INT64_MAX)
        return FFN__BAD(
            "%s: %s: tensor '%.200s': truncated dims or an element count that "
            "overflows",
            fn, path, t->name);
    if (!ffn__u32(r, &type) || !ffn__u64(r, &off))
        return FFN__BAD("%s: %s: tensor '%.200s': truncated", fn, path, t->name);
    size_t ti = 0;
    while (ti < FFN_ARRAY_LEN(ffn__ggml_types) && ffn__ggml_types[ti].ggml != type) ti++;
    if (ti == FFN_ARRAY_LEN(ffn__ggml_types)) {
        const char *other = type < FFN_ARRAY_LEN(ffn__ggml_other) ? ffn__ggml_other[type] : NULL;
        return other ? ffn_error(ctx, FFN_STATUS_UNSUPPORTED,
                                 "%s: %s: tensor '%.200s' has ggml type %s (%" PRIu32
                                 "), which ffn does not read (F32, F16, BF16, Q8_0, Q4_0 are read)",
                                 fn, path, t->name, other, type)
                     : FFN__BAD("%s: %s: tensor '%.200s' has unknown ggml type %" PRIu32, fn, path,
                                t->name, type);
    }
    t->dtype = ffn__ggml_types[ti].dtype;
    uint64_t nbytes;
    const struct ffn_io_dtype_info *di = ffn_io_dtype_info(t->dtype);
    if (ne[0] % di->block_elems)
        return FFN__BAD("%s: %s: tensor '%.200s': row length %" PRIu64
                        " is not a multiple of the %s block (%" PRIu32 ")",
                        fn, path, t->name, ne[0], ffn_file_dtype_name(t->dtype), di->block_elems);
    if (!ffn_io_dtype_bytes(t->dtype, numel, &nbytes))
        return FFN__BAD("%s: %s: tensor '%.200s': byte size overflows", fn, path, t->name);
    t->n_dims = (int)nd;
    for (uint32_t k = 0; k < nd; k++) t->shape[k] = (int64_t)ne[nd - 1 - k];  // slowest first
    t->nbytes = (size_t)nbytes;
    *span = (struct ffn__gspan){off, 0, g->n_t - 1};
    if (!ffn_io_add_u64(off, nbytes, &span->end))
        return FFN__BAD("%s: %s: tensor '%.200s': offset + size overflows", fn, path, t->name);
    if (off % g->alignment)
        return FFN__BAD("%s: %s: tensor '%.200s' offset %" PRIu64
                        " is not a multiple of the alignment %" PRIu64,
                        fn, path, t->name, off, g->alignment);
    return FFN_STATUS_OK;
}

// Step 5: the data section starts at the next multiple of the alignment after the header; every
// tensor's span lies inside it and no two overlap; the tensors' data pointers are set.
static enum ffn_status ffn__place_data(ffn_ctx_t ctx, struct ffn_gguf *g, const struct ffn__rd *r,
                                       struct ffn__gspan *spans) {
    const char *fn = ffn__fn_gguf, *path = g->path;
    enum ffn_status s = FFN_STATUS_OK;
    const uint64_t pad = (g->alignment - r->pos % g->alignment) % g->alignment;
    if (pad > ffn__left(r) && g->n_t > 0)
        s = FFN__BAD("%s: %s: the tensor data section begins past the end of the file", fn, path);
    g->data_off = r->pos + (size_t)(pad <= ffn__left(r) ? pad : ffn__left(r));
    if (s) return s;
    const uint64_t data_len = g->map.size - g->data_off;
    qsort(spans, (size_t)g->n_t, sizeof *spans, ffn__cmp_gspan);
    uint64_t prev_end = 0;
    for (int64_t i = 0; i < g->n_t; i++) {
        const struct ffn_file_tensor *t = &g->t[spans[i].index];
        if (spans[i].end > data_len)
            return FFN__BAD("%s: %s: tensor '%.200s' ends at byte %" PRIu64
                            " of the data section, which holds %" PRIu64 " (truncated file?)",
                            fn, path, t->name, spans[i].end, data_len);
        if (spans[i].begin < prev_end)
            return FFN__BAD("%s: %s: tensor '%.200s' overlaps the tensor before it", fn, path,
                            t->name);
        prev_end = spans[i].end > prev_end ? spans[i].end : prev_end;
    }
    for (int64_t i = 0; i < g->n_t; i++)
        g->t[spans[i].index].data = g->map.data + g->data_off + spans[i].begin;
    return FFN_STATUS_OK;
}

// Step 6: the name index (sorted, for ffn_gguf_find); names must be unique.
static enum ffn_status ffn__index_names(ffn_ctx_t ctx, struct ffn_gguf *g) {
    const char *fn = ffn__fn_gguf, *path = g->path;
    g->by_name = malloc((size_t)(g->n_t ? g->n_t : 1) * sizeof *g->by_name);
    if (!g->by_name) return FFN__OOM();
    for (int64_t i = 0; i < g->n_t; i++) g->by_name[i] = (struct ffn__gnamed){g->t[i].name, i};
    qsort(g->by_name, (size_t)g->n_t, sizeof *g->by_name, ffn__cmp_gnamed);
    for (int64_t i = 1; i < g->n_t; i++)
        if (!strcmp(g->by_name[i].name, g->by_name[i - 1].name))
            return FFN__BAD("%s: %s: duplicate tensor name '%.200s'", fn, path, g->by_name[i].name);
    return FFN_STATUS_OK;
}

// The whole file: header, metadata, tensor infos, data section, name index. On failure the
// message names the file and what is wrong; g holds what was read so far (ffn_gguf_close frees it).
static enum ffn_status ffn__parse(ffn_ctx_t ctx, struct ffn_gguf *g) {
    const char *fn = ffn__fn_gguf, *path = g->path;
    struct ffn__rd r = {g->map.data, g->map.size, 0};
    uint64_t n_t = 0, n_kv = 0;
    enum ffn_status s = ffn__parse_header(ctx, g, &r, &n_t, &n_kv);
    if (s) return s;

    g->kv = calloc((size_t)(n_kv ? n_kv : 1), sizeof *g->kv);
    if (!g->kv) return FFN__OOM();
    g->alignment = FFN_IO_GGUF_DEFAULT_ALIGNMENT;
    for (uint64_t i = 0; i < n_kv; i++)
        if ((s = ffn__parse_kv(ctx, g, &r, i))) return s;
    if ((s = ffn__check_keys_unique(ctx, g))) return s;

    g->t = calloc((size_t)(n_t ? n_t : 1), sizeof *g->t);
    struct ffn__gspan *spans = calloc((size_t)(n_t ? n_t : 1), sizeof *spans);
    if (!g->t || !spans) {
        free(spans);
        return FFN__OOM();
    }
    for (uint64_t i = 0; i < n_t && !s; i++) s = ffn__parse_tensor_info(ctx, g, &r, i, &spans[i]);
    if (!s) s = ffn__place_data(ctx, g, &r, spans);
    free(spans);
    if (s) return s;
    return ffn__index_names(ctx, g);
}

static enum ffn_status ffn__finish(ffn_ctx_t ctx, struct ffn_gguf *g, ffn_gguf_t *out) {
    const enum ffn_status s = ffn__parse(ctx, g);
    if (s) {
        ffn_gguf_close(g);
        return s;
    }
    *out = g;
    return FFN_STATUS_OK;
}

enum ffn_status ffn_gguf_open(ffn_ctx_t ctx, const char *path, ffn_gguf_t *g_out) {
    ffn_error_clear(ctx);
    if (!path || !g_out)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: NULL argument", ffn__fn_gguf);
    *g_out = NULL;
    struct ffn_gguf *g = calloc(1, sizeof *g);
    if (!g || !(g->path = ffn_io_strdup(path))) {
        free(g);
        return ffn_error(ctx, FFN_STATUS_OUT_OF_MEMORY, "%s: out of memory", ffn__fn_gguf);
    }
    const enum ffn_status s = ffn_io_map_file(ctx, ffn__fn_gguf, path, &g->map);
    if (s) {
        ffn_gguf_close(g);
        return s;
    }
    return ffn__finish(ctx, g, g_out);
}

enum ffn_status ffn_gguf_open_memory(ffn_ctx_t ctx, const void *data, size_t size, const char *name,
                                     ffn_gguf_t *g_out) {
    ffn_error_clear(ctx);
    if ((!data && size) || !g_out)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "ffn_gguf_open_memory: NULL argument");
    *g_out = NULL;
    struct ffn_gguf *g = calloc(1, sizeof *g);
    if (!g || !(g->path = ffn_io_strdup(name ? name : "<memory>"))) {
        free(g);
        return ffn_error(ctx, FFN_STATUS_OUT_OF_MEMORY, "ffn_gguf_open_memory: out of memory");
    }
    g->map.data = data;
    g->map.size = size;
    return ffn__finish(ctx, g, g_out);
}

void ffn_gguf_close(ffn_gguf_t g) {
    if (!g) return;
    for (int64_t i = 0; i < g->n_kv; i++) free(g->kv[i].key);
    free(g->kv);
    for (int64_t i = 0; i < g->n_t; i++) free((char *)g->t[i].name);
    free(g->t);
    free(g->by_name);
    ffn_io_unmap(&g->map);
    free(g->path);
    free(g);
}

uint32_t ffn_gguf_version(ffn_gguf_t g) { return g ? g->version : 0; }
uint64_t ffn_gguf_alignment(ffn_gguf_t g) { return g ? g->alignment : 0; }
size_t ffn_gguf_data_offset(ffn_gguf_t g) { return g ? g->data_off : 0; }
int64_t ffn_gguf_kv_count(ffn_gguf_t g) { return g ? g->n_kv : 0; }
int64_t ffn_gguf_count(ffn_gguf_t g) { return g ? g->n_t : 0; }
const char *ffn_gguf_path(ffn_gguf_t g) { return g ? g->path : NULL; }

enum ffn_status ffn_gguf_kv_get(ffn_ctx_t ctx, ffn_gguf_t g, int64_t i, const char **key_out,
                                struct ffn_gguf_value *v_out) {
    ffn_error_clear(ctx);
    if (!g || i < 0 || i >= g->n_kv)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "ffn_gguf_kv_get: no entry %" PRId64, i);
    if (key_out) *key_out = g->kv[i].key;
    if (v_out) *v_out = g->kv[i].v;
    return FFN_STATUS_OK;
}

enum ffn_status ffn_gguf_kv_find(ffn_ctx_t ctx, ffn_gguf_t g, const char *key,
                                 struct ffn_gguf_value *v_out) {
    ffn_error_clear(ctx);
    if (!g || !key)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "ffn_gguf_kv_find: NULL argument");
    for (int64_t i = 0; i < g->n_kv; i++) {
        if (!strcmp(g->kv[i].key, key)) {
            if (v_out) *v_out = g->kv[i].v;
            return FFN_STATUS_OK;
        }
    }
    return ffn_error(ctx, FFN_STATUS_NOT_FOUND, "ffn_gguf_kv_find: %s: no metadata key '%.200s'",
                     g->path, key);
}

// --- values ----------------------------------------------------------------------------------

static uint64_t ffn__le(const uint8_t *p, size_t n) {
    uint64_t v = 0;
    for (size_t i = n; i-- > 0;) v = (v << 8) | p[i];
    return v;
}

enum ffn_status ffn_gguf_value_int(ffn_ctx_t ctx, const struct ffn_gguf_value *v, int64_t *out) {
    if (!v || !out || !v->raw)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "ffn_gguf_value_int: NULL argument");
    const size_t fs = ffn__fixed_size(v->type);
    if (!fs || v->raw_len < fs || v->type == FFN_GGUF_TYPE_FLOAT32 ||
        v->type == FFN_GGUF_TYPE_FLOAT64)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "ffn_gguf_value_int: a %s is not an integer",
                         ffn_gguf_type_name(v->type));
    const uint64_t u = ffn__le(v->raw, fs);
    switch (v->type) {
    case FFN_GGUF_TYPE_INT8: *out = (int8_t)u; break;
    case FFN_GGUF_TYPE_INT16: *out = (int16_t)u; break;
    case FFN_GGUF_TYPE_INT32: *out = (int32_t)u; break;
    case FFN_GGUF_TYPE_INT64: *out = (int64_t)u; break;
    case FFN_GGUF_TYPE_UINT64:
        if (u > INT64_MAX)
            return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                             "ffn_gguf_value_int: %" PRIu64 " exceeds int64", u);
        *out = (int64_t)u;
        break;
    default: *out = (int64_t)u; break;  // uint8/16/32, bool
    }
    return FFN_STATUS_OK;
}

enum ffn_status ffn_gguf_value_float(ffn_ctx_t ctx, const struct ffn_gguf_value *v, double *out) {
    if (!v || !out || !v->raw)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "ffn_gguf_value_float: NULL argument");
    if (v->type == FFN_GGUF_TYPE_FLOAT32 && v->raw_len >= 4) {
        float f;
        memcpy(&f, v->raw, 4);
        *out = f;
        return FFN_STATUS_OK;
    }
    if (v->type == FFN_GGUF_TYPE_FLOAT64 && v->raw_len >= 8) {
        memcpy(out, v->raw, 8);
        return FFN_STATUS_OK;
    }
    int64_t i;
    const enum ffn_status s = ffn_gguf_value_int(ctx, v, &i);
    if (!s) *out = (double)i;
    return s;
}

enum ffn_status ffn_gguf_value_string(ffn_ctx_t ctx, const struct ffn_gguf_value *v,
                                      const char **s_out, size_t *len_out) {
    if (!v || !s_out || !len_out || !v->raw)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "ffn_gguf_value_string: NULL argument");
    if (v->type != FFN_GGUF_TYPE_STRING || v->raw_len < 8)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "ffn_gguf_value_string: a %s is not a string",
                         ffn_gguf_type_name(v->type));
    const uint64_t len = ffn__le(v->raw, 8);
    if (len > v->raw_len - 8)
        return ffn_error(ctx, FFN_STATUS_INTERNAL, "ffn_gguf_value_string: length past the value");
    *s_out = (const char *)v->raw + 8;
    *len_out = (size_t)len;
    return FFN_STATUS_OK;
}

enum ffn_status ffn_gguf_value_element(ffn_ctx_t ctx, const struct ffn_gguf_value *array, int64_t j,
                                       struct ffn_gguf_value *out) {
    static const char fn[] = "ffn_gguf_value_element";
    if (!array || !out || array->type != FFN_GGUF_TYPE_ARRAY)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: not an array", fn);
    if (j < 0 || j >= array->n)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: index %" PRId64 " outside [0, %" PRId64 ")", fn, j, array->n);
    memset(out, 0, sizeof *out);
    out->type = array->elem_type;
    const size_t fs = ffn__fixed_size(array->elem_type);
    if (fs) {
        out->raw = (const uint8_t *)array->raw + (size_t)j * fs;
        out->raw_len = fs;
        return FFN_STATUS_OK;
    }
    // Variable-size elements: walk (the array was validated at open; re-checked here).
    struct ffn__rd r = {array->raw, array->raw_len, 0};
    const char *why = NULL;
    for (int64_t i = 0; i < j; i++)
        if (!ffn__skip_value(&r, array->elem_type, 1, &why))
            return ffn_error(ctx, FFN_STATUS_INTERNAL, "%s: %s", fn, why);
    size_t start = r.pos;
    if (array->elem_type == FFN_GGUF_TYPE_ARRAY) {
        struct ffn__rd peek = r;
        uint32_t et;
        uint64_t n;
        if (!ffn__u32(&peek, &et) || !ffn__u64(&peek, &n))
            return ffn_error(ctx, FFN_STATUS_INTERNAL, "%s: truncated array", fn);
        out->elem_type = (enum ffn_gguf_type)(et < FFN_GGUF_TYPE_COUNT ? et : 0);
        out->n = (int64_t)(n > INT64_MAX ? INT64_MAX : n);
        start = peek.pos;
    }
    if (!ffn__skip_value(&r, array->elem_type, 1, &why))
        return ffn_error(ctx, FFN_STATUS_INTERNAL, "%s: %s", fn, why);
    out->raw = r.p + start;
    out->raw_len = r.pos - start;
    return FFN_STATUS_OK;
}

// --- tensors ---------------------------------------------------------------------------------

enum ffn_status ffn_gguf_get(ffn_ctx_t ctx, ffn_gguf_t g, int64_t i, struct ffn_file_tensor *out) {
    ffn_error_clear(ctx);
    if (!g || !out || i < 0 || i >= g->n_t)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "ffn_gguf_get: no tensor %" PRId64, i);
    *out = g->t[i];
    return FFN_STATUS_OK;
}

enum ffn_status ffn_gguf_find(ffn_ctx_t ctx, ffn_gguf_t g, const char *name,
                              struct ffn_file_tensor *out) {
    ffn_error_clear(ctx);
    if (!g || !name || !out)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "ffn_gguf_find: NULL argument");
    int64_t lo = 0, hi = g->n_t;
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        const int c = strcmp(g->by_name[mid].name, name);
        if (c == 0) {
            *out = g->t[g->by_name[mid].index];
            return FFN_STATUS_OK;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return ffn_error(ctx, FFN_STATUS_NOT_FOUND, "ffn_gguf_find: %s: no tensor '%.200s'", g->path,
                     name);
}
