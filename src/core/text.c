// text.c — untrusted text made safe to print. Names and strings from checkpoint files (tensor
// names, model_type, general.architecture, JSON keys, metadata) reach error messages and the
// tool's output; a raw newline could split a message, an ESC sequence could drive the user's
// terminal, a bidirectional override could reorder what is shown. ffn_text_escape keeps
// printable UTF-8 as it is and writes everything else as an escape.
#include <stdio.h>
#include <string.h>

#include "core_impl.h"

// Length of the valid UTF-8 sequence at s (NUL-terminated), 0 when it is not one; *cp its code
// point. Strict: no overlong forms, no surrogates, nothing above U+10FFFF.
static size_t ffn__utf8(const unsigned char *s, uint32_t *cp) {
    const unsigned char c = s[0];
    size_t len;
    uint32_t v, min;
    if (c >= 0xc2 && c <= 0xdf) {
        len = 2, v = c & 0x1fu, min = 0x80;
    } else if ((c & 0xf0) == 0xe0) {
        len = 3, v = c & 0x0fu, min = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4, v = c & 0x07u, min = 0x10000;
    } else {
        return 0;
    }
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0;  // also stops at the terminating NUL
        v = (v << 6) | (s[i] & 0x3fu);
    }
    if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) return 0;
    *cp = v;
    return len;
}

// Code points a terminal acts on instead of showing: C1 controls, and the bidirectional
// formatting characters (LRE..RLO, LRI..PDI) and line/paragraph separators.
static bool ffn__unsafe_cp(uint32_t cp) {
    return (cp >= 0x80 && cp <= 0x9f) || (cp >= 0x202a && cp <= 0x202e) ||
           (cp >= 0x2066 && cp <= 0x2069) || cp == 0x2028 || cp == 0x2029 || cp == 0x200e ||
           cp == 0x200f || cp == 0x061c;
}

size_t ffn_text_escape(char *dst, size_t cap, const char *src) {
    if (!dst || cap == 0) return 0;
    size_t k = 0;
    const unsigned char *s = (const unsigned char *)(src ? src : "");
    while (*s) {
        char esc[16];
        const char *piece;
        size_t n, len;
        uint32_t cp = 0;
        if (*s >= 0x20 && *s < 0x7f) {
            piece = (const char *)s, n = 1;
            s++;
        } else if (*s < 0x80) {  // C0 controls and DEL
            static const char *const named[0x20] = {
                ['\n'] = "\\n", ['\r'] = "\\r", ['\t'] = "\\t", [0x1b] = "\\e"};
            if (*s < 0x20 && named[*s])
                snprintf(esc, sizeof esc, "%s", named[*s]);
            else
                snprintf(esc, sizeof esc, "\\x%02x", *s);
            piece = esc, n = strlen(esc);
            s++;
        } else if ((len = ffn__utf8(s, &cp)) != 0 && !ffn__unsafe_cp(cp)) {
            piece = (const char *)s, n = len;
            s += len;
        } else if (len) {  // valid UTF-8, but a control or formatting character
            snprintf(esc, sizeof esc, "\\u{%x}", (unsigned)cp);
            piece = esc, n = strlen(esc);
            s += len;
        } else {  // a byte that is not UTF-8 (a legacy terminal may read 0x9b as CSI)
            snprintf(esc, sizeof esc, "\\x%02x", *s);
            piece = esc, n = strlen(esc);
            s++;
        }
        if (k + n >= cap) break;  // never a partial escape or character
        memcpy(dst + k, piece, n);
        k += n;
    }
    dst[k] = '\0';
    return k;
}
