// args.c — the checked option-value parser, display-safe text and input path kinds of the `ffn`
// tool (see args.h). Every number a user types goes through ffn_arg_parse_i64 / _f64: atoi,
// atoll and bare strtol accept "64abc" as 64, "1e30" as 1 and wrap on overflow.
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "args.h"
#include "ffn.h"

#define FFN__ESC_BUFS 8    // rotating buffers of ffn_tool_esc
#define FFN__ESC_CAP 1024  // bytes each

// --- numbers -------------------------------------------------------------------------------------

enum ffn_arg_err ffn_arg_parse_i64(const char *s, int64_t min, int64_t max, int64_t *out) {
    if (!s || !*s) return FFN_ARG_EMPTY;
    // strtoll alone would skip leading spaces, take a prefix and accept "0x" in base 0: the
    // syntax is checked first, so that strtoll only converts.
    const char *p = s + (s[0] == '+' || s[0] == '-');
    if (!*p) return FFN_ARG_NOT_NUMBER;
    for (const char *q = p; *q; q++)
        if (*q < '0' || *q > '9') return FFN_ARG_NOT_NUMBER;
    errno = 0;
    char *end;
    const long long v = strtoll(s, &end, 10);
    if (errno == ERANGE || *end) return FFN_ARG_RANGE;  // digits only: *end is NUL unless ERANGE
    if (v < min || v > max) return FFN_ARG_RANGE;
    *out = (int64_t)v;
    return FFN_ARG_OK;
}

enum ffn_arg_err ffn_arg_parse_f64(const char *s, double min, double max, bool min_open,
                                   double *out) {
    if (!s || !*s) return FFN_ARG_EMPTY;
    // Decimal syntax only: digits, one '.', an exponent; strtod would also take spaces, hex,
    // "inf", "nan" and "infinity".
    const char *p = s + (s[0] == '+' || s[0] == '-');
    bool digits = false, dot = false, exp = false;
    for (const char *q = p; *q; q++) {
        if (*q >= '0' && *q <= '9') {
            digits = true;
        } else if (*q == '.' && !dot && !exp) {
            dot = true;
        } else if ((*q == 'e' || *q == 'E') && digits && !exp) {
            exp = true;
            if (q[1] == '+' || q[1] == '-') q++;
            if (q[1] < '0' || q[1] > '9') return FFN_ARG_NOT_NUMBER;
        } else {
            return FFN_ARG_NOT_NUMBER;
        }
    }
    if (!digits) return FFN_ARG_NOT_NUMBER;
    errno = 0;
    char *end;
    const double v = strtod(s, &end);
    if (*end) return FFN_ARG_NOT_NUMBER;
    if (!isfinite(v) || (errno == ERANGE && fabs(v) > 1.0)) return FFN_ARG_RANGE;
    if (v > max || v < min || (min_open && v == min)) return FFN_ARG_RANGE;
    *out = v;
    return FFN_ARG_OK;
}

static void ffn__refused(const char *cmd, const char *opt, const char *s, enum ffn_arg_err e,
                         const char *kind, const char *range) {
    if (e == FFN_ARG_EMPTY)
        fprintf(stderr, "ffn %s: %s needs a value (%s %s)\n", cmd, opt, kind, range);
    else if (e == FFN_ARG_NOT_NUMBER)
        fprintf(stderr, "ffn %s: %s '%s' is not %s (expected %s)\n", cmd, opt, ffn_tool_esc(s),
                kind, range);
    else
        fprintf(stderr, "ffn %s: %s %s is out of range %s\n", cmd, opt, ffn_tool_esc(s), range);
}

bool ffn_arg_i64(const char *cmd, const char *opt, const char *s, int64_t min, int64_t max,
                 int64_t *out) {
    const enum ffn_arg_err e = ffn_arg_parse_i64(s, min, max, out);
    if (e == FFN_ARG_OK) return true;
    char range[64];
    snprintf(range, sizeof range, "[%lld, %lld]", (long long)min, (long long)max);
    ffn__refused(cmd, opt, s, e, "an integer", range);
    return false;
}

bool ffn_arg_int(const char *cmd, const char *opt, const char *s, int min, int max, int *out) {
    int64_t v;
    if (!ffn_arg_i64(cmd, opt, s, min, max, &v)) return false;
    *out = (int)v;
    return true;
}

bool ffn_arg_f64(const char *cmd, const char *opt, const char *s, double min, double max,
                 bool min_open, double *out) {
    const enum ffn_arg_err e = ffn_arg_parse_f64(s, min, max, min_open, out);
    if (e == FFN_ARG_OK) return true;
    char range[64];
    snprintf(range, sizeof range, "%s%g, %g]", min_open ? "(" : "[", min, max);
    ffn__refused(cmd, opt, s, e, "a number", range);
    return false;
}

// --- option values -------------------------------------------------------------------------------

const char *ffn_arg_value(const char *cmd, int argc, char **argv, int *i) {
    if (*i + 1 >= argc) {
        fprintf(stderr, "ffn %s: %s needs a value\n", cmd, ffn_tool_esc(argv[*i]));
        return NULL;
    }
    return argv[++*i];
}

// --- text ----------------------------------------------------------------------------------------

const char *ffn_tool_esc(const char *s) {
    static char bufs[FFN__ESC_BUFS][FFN__ESC_CAP];
    static unsigned next;
    char *b = bufs[next++ % FFN__ESC_BUFS];
    ffn_text_escape(b, FFN__ESC_CAP, s ? s : "(null)");
    return b;
}

// --- paths ---------------------------------------------------------------------------------------

bool ffn_arg_want(const char *cmd, const char *what, const char *path, bool want_dir) {
    struct stat sb;
    if (stat(path, &sb) != 0) {
        fprintf(stderr, "ffn %s: %s %s: %s\n", cmd, what, ffn_tool_esc(path), strerror(errno));
        return false;
    }
    if (want_dir ? S_ISDIR(sb.st_mode) : S_ISREG(sb.st_mode)) return true;
    const char *is = S_ISDIR(sb.st_mode)    ? "a directory"
                     : S_ISFIFO(sb.st_mode) ? "a FIFO (named pipe)"
                     : S_ISCHR(sb.st_mode)  ? "a character device"
                     : S_ISBLK(sb.st_mode)  ? "a block device"
                     : S_ISSOCK(sb.st_mode) ? "a socket"
                     : S_ISREG(sb.st_mode)  ? "a file"
                                            : "not a regular file";
    fprintf(stderr, "ffn %s: %s %s is %s; %s is expected\n", cmd, what, ffn_tool_esc(path), is,
            want_dir ? "a directory" : "a regular file");
    return false;
}
