// json.c — hostile JSON: the checks cJSON does not make (strict UTF-8, raw control characters,
// nesting depth before any recursion, a top-level object, trailing bytes, duplicate keys), then
// the parse. Used for safetensors headers, config.json and model.safetensors.index.json.
#include <stdlib.h>
#include <string.h>

#include "io/io_impl.h"

// Length of the valid UTF-8 sequence at s[0..n), or 0 when it is not one. Strict (RFC 3629):
// no overlong forms, no surrogates (U+D800..U+DFFF), nothing above U+10FFFF.
static size_t ffn__utf8_seq(const uint8_t *s, size_t n) {
    const uint8_t c = s[0];
    if (c < 0x80) return 1;
    size_t len;
    uint32_t cp, min;
    if (c >= 0xc2 && c <= 0xdf) {
        len = 2, cp = c & 0x1fu, min = 0x80;
    } else if ((c & 0xf0) == 0xe0) {
        len = 3, cp = c & 0x0fu, min = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4, cp = c & 0x07u, min = 0x10000;
    } else {
        return 0;  // continuation byte, 0xc0/0xc1 (always overlong) or 0xf5..0xff
    }
    if (n < len) return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0;
        cp = (cp << 6) | (s[i] & 0x3fu);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
    return len;
}

static bool ffn__is_space(uint8_t c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// One pass over the bytes: UTF-8, string contents, depth. Brackets inside strings do not count.
static enum ffn_status ffn__prescan(ffn_ctx_t ctx, const char *fn, const char *what,
                                    const uint8_t *s, size_t n) {
    size_t i = 0;
    while (i < n && ffn__is_space(s[i])) i++;
    if (i == n || s[i] != '{')
        return ffn_error(ctx, FFN_STATUS_BAD_FORMAT,
                         "%s: %s: does not start with '{' (a JSON object)", fn, what);
    int depth = 0;
    bool in_str = false;
    while (i < n) {
        const uint8_t c = s[i];
        if (c >= 0x80) {
            const size_t k = ffn__utf8_seq(s + i, n - i);
            if (!k)
                return ffn_error(ctx, FFN_STATUS_BAD_FORMAT, "%s: %s: invalid UTF-8 at byte %zu",
                                 fn, what, i);
            i += k;
            continue;
        }
        if (in_str) {
            if (c < 0x20)
                return ffn_error(ctx, FFN_STATUS_BAD_FORMAT,
                                 "%s: %s: raw control character 0x%02x in a string at byte %zu", fn,
                                 what, c, i);
            if (c == '"') {
                in_str = false;
            } else if (c == '\\') {
                if (i + 1 >= n)
                    return ffn_error(ctx, FFN_STATUS_BAD_FORMAT, "%s: %s: unterminated string", fn,
                                     what);
                // \u0000 would end the C string cJSON builds: a name could then hide its tail.
                if (s[i + 1] == 'u' && n - i >= 6 && !memcmp(s + i + 2, "0000", 4))
                    return ffn_error(ctx, FFN_STATUS_BAD_FORMAT,
                                     "%s: %s: \\u0000 in a string at byte %zu", fn, what, i);
                i += 2;
                continue;
            }
        } else if (c == '"') {
            in_str = true;
        } else if (c == '{' || c == '[') {
            if (++depth > FFN_IO_JSON_MAX_DEPTH)
                return ffn_error(ctx, FFN_STATUS_BAD_FORMAT,
                                 "%s: %s: JSON nested deeper than %d levels (at byte %zu)", fn,
                                 what, FFN_IO_JSON_MAX_DEPTH, i);
        } else if (c == '}' || c == ']') {
            depth--;
        } else if (c == '\0') {
            return ffn_error(ctx, FFN_STATUS_BAD_FORMAT, "%s: %s: NUL byte at byte %zu", fn, what,
                             i);
        }
        i++;
    }
    if (in_str)
        return ffn_error(ctx, FFN_STATUS_BAD_FORMAT, "%s: %s: unterminated string", fn, what);
    return FFN_STATUS_OK;
}

static int ffn__cmp_str(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

// Duplicate keys in any object of the tree (cJSON keeps both; the reference rejects the file).
// Recursion depth is bounded by the prescan's FFN_IO_JSON_MAX_DEPTH.
static enum ffn_status ffn__dups(ffn_ctx_t ctx, const char *fn, const char *what,
                                 const cJSON *node) {
    if (cJSON_IsObject(node)) {
        size_t n = 0;
        for (const cJSON *c = node->child; c; c = c->next) n++;
        if (n > 1) {
            const char **names = malloc(n * sizeof *names);
            if (!names) return ffn_error(ctx, FFN_STATUS_OUT_OF_MEMORY, "%s: out of memory", fn);
            size_t k = 0;
            for (const cJSON *c = node->child; c; c = c->next)
                names[k++] = c->string ? c->string : "";
            qsort(names, n, sizeof *names, ffn__cmp_str);
            for (size_t i = 1; i < n; i++) {
                if (!strcmp(names[i - 1], names[i])) {
                    const enum ffn_status st =
                        ffn_error(ctx, FFN_STATUS_BAD_FORMAT, "%s: %s: duplicate key '%.200s'", fn,
                                  what, names[i]);
                    free(names);
                    return st;
                }
            }
            free(names);
        }
    }
    for (const cJSON *c = node->child; c; c = c->next) {
        const enum ffn_status st = ffn__dups(ctx, fn, what, c);
        if (st) return st;
    }
    return FFN_STATUS_OK;
}

enum ffn_status ffn_io_json_parse(ffn_ctx_t ctx, const char *fn, const char *what, const char *text,
                                  size_t len, cJSON **out) {
    *out = NULL;
    enum ffn_status st = ffn__prescan(ctx, fn, what, (const uint8_t *)text, len);
    if (st) return st;
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (!root) {
        const char *at = cJSON_GetErrorPtr();
        const size_t off = (at && at >= text && at <= text + len) ? (size_t)(at - text) : 0;
        return ffn_error(ctx, FFN_STATUS_BAD_FORMAT, "%s: %s: invalid JSON near byte %zu", fn, what,
                         off);
    }
    // Only whitespace may follow the object (the safetensors writer pads with spaces).
    for (const char *p = end; p && p < text + len; p++) {
        if (!ffn__is_space((uint8_t)*p)) {
            cJSON_Delete(root);
            return ffn_error(ctx, FFN_STATUS_BAD_FORMAT,
                             "%s: %s: trailing bytes after the JSON object (byte %zu)", fn, what,
                             (size_t)(p - text));
        }
    }
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return ffn_error(ctx, FFN_STATUS_BAD_FORMAT, "%s: %s: not a JSON object", fn, what);
    }
    st = ffn__dups(ctx, fn, what, root);
    if (st) {
        cJSON_Delete(root);
        return st;
    }
    *out = root;
    return FFN_STATUS_OK;
}

bool ffn_io_json_u64(const cJSON *item, uint64_t *out) {
    if (!cJSON_IsNumber(item)) return false;
    const double v = item->valuedouble;
    // 2^53: beyond it a double no longer holds every integer, so the file's value may be lost.
    if (!(v >= 0.0 && v <= 9007199254740992.0) || v != (double)(uint64_t)v) return false;
    *out = (uint64_t)v;
    return true;
}
