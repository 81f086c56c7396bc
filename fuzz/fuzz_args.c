// fuzz_args.c — libFuzzer harness for the `ffn` tool's argument edges (tools/args.c): the one
// checked number parser every option goes through, and the escaping of text from files
// (ffn_text_escape / ffn_tool_esc). The first input byte picks what is fuzzed and a range; the
// rest is the string (cut at a NUL, as argv is). Properties checked, not just "no crash":
//   integers: accepted exactly when the text is [+-]digits whose value lies in [min, max], and
//             the value printed back is the text (without '+' and leading zeros);
//   numbers:  an accepted value is finite, inside the range, and what strtod reads;
//   escaping: the result holds no control character or non-UTF-8 byte, fits the buffer, is cut
//             only between characters, and keeps printable ASCII as it was.
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../tools/args.h"
#include "ffn.h"

static void die(const char *what, const char *s) {
    fprintf(stderr, "fuzz_args: %s (input '%s')\n", what, s);
    abort();
}

static const int64_t k_mins[] = {INT64_MIN, -1, 0, 1, 1};
static const int64_t k_maxs[] = {INT64_MAX, 0, 1 << 20, 4294967295LL, 1};

static void check_i64(const char *s, int64_t min, int64_t max) {
    int64_t v = 12345;
    const enum ffn_arg_err e = ffn_arg_parse_i64(s, min, max, &v);
    // The reference: sign, digits, nothing else.
    const char *p = s + (s[0] == '+' || s[0] == '-');
    bool digits = *p != '\0';
    for (const char *q = p; *q; q++) digits &= *q >= '0' && *q <= '9';
    if (!*s) {
        if (e != FFN_ARG_EMPTY) die("empty text not reported as empty", s);
        return;
    }
    if (!digits) {
        if (e != FFN_ARG_NOT_NUMBER) die("a non-integer accepted or misreported", s);
        return;
    }
    errno = 0;
    const long long ref = strtoll(s, NULL, 10);
    const bool in = errno != ERANGE && ref >= min && ref <= max;
    if (in != (e == FFN_ARG_OK)) die("range decided wrongly", s);
    if (e != FFN_ARG_OK && e != FFN_ARG_RANGE) die("an integer misreported", s);
    if (e == FFN_ARG_OK) {
        if (v != ref) die("value differs from strtoll", s);
        char back[32], canon[64];
        snprintf(back, sizeof back, "%lld", (long long)v);
        // canonical text: no '+', no leading zeros, "-0" -> "0"
        const bool neg = s[0] == '-';
        while (*p == '0' && p[1]) p++;
        snprintf(canon, sizeof canon, "%s%s", neg && strcmp(p, "0") ? "-" : "", p);
        if (strcmp(back, canon)) die("value does not print back as the text", s);
    }
}

static void check_f64(const char *s, double min, double max, bool open) {
    double v = 0;
    const enum ffn_arg_err e = ffn_arg_parse_f64(s, min, max, open, &v);
    if (e != FFN_ARG_OK) return;
    if (!isfinite(v) || v < min || v > max || (open && v == min)) die("accepted outside", s);
    if (strtod(s, NULL) != v) die("value differs from strtod", s);
    for (const char *q = s; *q; q++)
        if (!strchr("0123456789+-.eE", *q)) die("accepted a character not in a decimal", s);
}

static void check_escape(const char *s, size_t cap) {
    char buf[4096];
    memset(buf, 0x55, sizeof buf);
    const size_t n = ffn_text_escape(buf, cap, s);
    if (n >= cap || buf[n] != '\0' || strlen(buf) != n) die("length or terminator", s);
    if (cap < sizeof buf && (unsigned char)buf[cap] != 0x55) die("wrote past the buffer", s);
    for (size_t i = 0; i < n;) {
        const unsigned char c = (unsigned char)buf[i];
        if (c < 0x20 || c == 0x7f) die("a control character survived", s);
        size_t len = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : 4;
        if (c >= 0x80 && (c < 0xc2 || c > 0xf4)) die("a byte that is not UTF-8 survived", s);
        if (i + len > n) die("a character cut in two", s);
        for (size_t k = 1; k < len; k++)
            if (((unsigned char)buf[i + k] & 0xc0) != 0x80) die("broken UTF-8 survived", s);
        if (c == 0xc2 && (unsigned char)buf[i + 1] < 0xa0) die("a C1 control survived", s);
        uint32_t cp = len == 1 ? c : c & (0xff >> (len + 1));
        for (size_t k = 1; k < len; k++) cp = (cp << 6) | ((unsigned char)buf[i + k] & 0x3f);
        if ((cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0x2028 ||
            cp == 0x2029 || cp == 0x200e || cp == 0x200f || cp == 0x061c)
            die("a bidi or separator character survived", s);
        i += len;
    }
    // Printable ASCII text comes out unchanged when it fits.
    bool plain = true;
    for (const char *q = s; *q; q++) plain &= *q >= 0x20 && *q < 0x7f;
    if (plain && strlen(s) < cap && strcmp(buf, s)) die("printable text was changed", s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    char s[1024];
    const size_t n = size - 1 < sizeof s - 1 ? size - 1 : sizeof s - 1;
    memcpy(s, data + 1, n);
    s[n] = '\0';  // argv strings end at the first NUL
    const unsigned sel = data[0];
    switch (sel % 3) {
    case 0: check_i64(s, k_mins[(sel / 3) % 5], k_maxs[(sel / 3) % 5]); break;
    case 1: check_f64(s, (sel & 8) ? 0.0 : -1e6, (sel & 16) ? 1.0 : 1e300, sel & 32); break;
    default: check_escape(s, 1 + (sel / 3) % 64 * (sel & 128 ? 64 : 1)); break;
    }
    // The tool's own wrapper, on the same text (rotating buffers; must stay NUL-terminated).
    if (strlen(ffn_tool_esc(s)) >= 1024) die("ffn_tool_esc overflowed", s);
    return 0;
}
