// safetensors_write.c — the safetensors writer: u64 LE header length, a JSON header written by
// hand (integers printed exactly, never in exponent form), padded with spaces to a multiple of 8
// bytes as the reference writer does, then the tensors' bytes back to back in the given order.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/io_impl.h"

static const char ffn__fn_write[] = "ffn_safetensors_write";
#define FFN_ST_HEADER_ALIGN 8  // the reference pads the header so the data starts 8-aligned

// A growable text buffer.
struct ffn__buf {
    char *p;
    size_t len, cap;
    bool oom;
};

static void ffn__put(struct ffn__buf *b, const char *s, size_t n) {
    if (b->oom) return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (b->len + n + 1 > cap) cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->oom = true;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void ffn__puts(struct ffn__buf *b, const char *s) { ffn__put(b, s, strlen(s)); }

// A JSON string literal: quotes, backslashes and control characters escaped.
static void ffn__put_json_string(struct ffn__buf *b, const char *s) {
    ffn__puts(b, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        char esc[8];
        if (*p == '"' || *p == '\\') {
            esc[0] = '\\', esc[1] = (char)*p, esc[2] = '\0';
            ffn__puts(b, esc);
        } else if (*p < 0x20) {
            snprintf(esc, sizeof esc, "\\u%04x", *p);
            ffn__puts(b, esc);
        } else {
            ffn__put(b, (const char *)p, 1);
        }
    }
    ffn__puts(b, "\"");
}

static int ffn__cmp_cstr(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

enum ffn_status ffn_safetensors_write(ffn_ctx_t ctx, const char *path,
                                      const struct ffn_file_tensor *tensors, int64_t n_tensors,
                                      const struct ffn_safetensors_kv *metadata,
                                      int64_t n_metadata) {
    const char *fn = ffn__fn_write;
    ffn_error_clear(ctx);
    if (!path || n_tensors < 0 || n_metadata < 0 || (n_tensors && !tensors) ||
        (n_metadata && !metadata))
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: NULL argument or negative count", fn);
    // Validate every tensor before writing anything.
    const char **names = malloc((size_t)(n_tensors ? n_tensors : 1) * sizeof *names);
    if (!names) return ffn_error(ctx, FFN_STATUS_OUT_OF_MEMORY, "%s: out of memory", fn);
    enum ffn_status s = FFN_STATUS_OK;
    for (int64_t i = 0; i < n_tensors && !s; i++) {
        const struct ffn_file_tensor *t = &tensors[i];
        const struct ffn_io_dtype_info *d = ffn_io_dtype_info(t->dtype);
        const int64_t numel = ffn_file_tensor_numel(t);
        uint64_t need = 0;
        if (!t->name || !t->name[0] || !strcmp(t->name, "__metadata__"))
            s = ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: tensor %" PRId64 " has no valid name",
                          fn, i);
        else if (!d || !d->st_name)
            s = ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                          "%s: tensor '%s': dtype %s cannot be stored in safetensors", fn, t->name,
                          ffn_file_dtype_name(t->dtype));
        else if (numel < 0 || !ffn_io_dtype_bytes(t->dtype, (uint64_t)numel, &need))
            s = ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: tensor '%s': bad shape", fn, t->name);
        else if (need != t->nbytes || (need && !t->data))
            s = ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                          "%s: tensor '%s': nbytes is %zu; its shape and dtype need %" PRIu64, fn,
                          t->name, t->nbytes, need);
        names[i] = t->name;
    }
    if (!s) {
        qsort(names, (size_t)n_tensors, sizeof *names, ffn__cmp_cstr);
        for (int64_t i = 1; i < n_tensors && !s; i++)
            if (!strcmp(names[i], names[i - 1]))
                s = ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: tensor name '%s' given twice", fn,
                              names[i]);
    }
    free(names);
    for (int64_t i = 0; i < n_metadata && !s; i++)
        if (!metadata[i].key || !metadata[i].value)
            s = ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: metadata entry %" PRId64 " is NULL", fn,
                          i);
    if (s) return s;

    // The header.
    struct ffn__buf b = {0};
    ffn__puts(&b, "{");
    if (n_metadata) {
        ffn__puts(&b, "\"__metadata__\":{");
        for (int64_t i = 0; i < n_metadata; i++) {
            if (i) ffn__puts(&b, ",");
            ffn__put_json_string(&b, metadata[i].key);
            ffn__puts(&b, ":");
            ffn__put_json_string(&b, metadata[i].value);
        }
        ffn__puts(&b, "}");
    }
    uint64_t off = 0;
    for (int64_t i = 0; i < n_tensors; i++) {
        const struct ffn_file_tensor *t = &tensors[i];
        char num[64];
        if (i || n_metadata) ffn__puts(&b, ",");
        ffn__put_json_string(&b, t->name);
        ffn__puts(&b, ":{\"dtype\":\"");
        ffn__puts(&b, ffn_io_dtype_info(t->dtype)->st_name);
        ffn__puts(&b, "\",\"shape\":[");
        for (int k = 0; k < t->n_dims; k++) {
            snprintf(num, sizeof num, "%s%" PRId64, k ? "," : "", t->shape[k]);
            ffn__puts(&b, num);
        }
        snprintf(num, sizeof num, "],\"data_offsets\":[%" PRIu64 ",%" PRIu64 "]}", off,
                 off + t->nbytes);
        ffn__puts(&b, num);
        off += t->nbytes;
    }
    ffn__puts(&b, "}");
    while (!b.oom && b.len % FFN_ST_HEADER_ALIGN) ffn__puts(&b, " ");
    if (b.oom) {
        free(b.p);
        return ffn_error(ctx, FFN_STATUS_OUT_OF_MEMORY, "%s: out of memory", fn);
    }
    if (b.len > FFN_IO_ST_MAX_HEADER) {
        free(b.p);
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: header of %zu bytes exceeds 100 MB", fn,
                         b.len);
    }
    uint8_t len8[8];
    for (int i = 0; i < 8; i++) len8[i] = (uint8_t)((uint64_t)b.len >> (8 * i));

    // Scatter list: length, header, then each tensor's bytes.
    const int n_parts = 2 + (int)n_tensors;
    const void **parts = malloc((size_t)n_parts * sizeof *parts);
    size_t *lens = malloc((size_t)n_parts * sizeof *lens);
    if (!parts || !lens || n_tensors > INT32_MAX - 2) {
        free(parts), free(lens), free(b.p);
        return ffn_error(ctx, FFN_STATUS_OUT_OF_MEMORY, "%s: out of memory", fn);
    }
    parts[0] = len8, lens[0] = 8;
    parts[1] = b.p, lens[1] = b.len;
    for (int64_t i = 0; i < n_tensors; i++)
        parts[2 + i] = tensors[i].data, lens[2 + i] = tensors[i].nbytes;
    s = ffn_io_write_file(ctx, fn, path, parts, lens, n_parts);
    free(parts), free(lens), free(b.p);
    return s;
}
