// check.c — the assertion helper of the C tests (see check.h).
#include "check.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static struct {
    const char *name;
    int64_t checks, failures;
    const char *section;
    int64_t section_failures;
    int max_print;
    ffn_ctx_t show_error;
} ffn__chk = {.name = "test"};

void ffn_check_begin(const char *name) {
    ffn__chk.name = name ? name : "test";
    ffn__chk.checks = ffn__chk.failures = ffn__chk.section_failures = 0;
    ffn__chk.section = NULL;
    ffn__chk.max_print = 0;
}

int64_t ffn_check_section(const char *label, int max_print) {
    ffn__chk.section = label;
    ffn__chk.section_failures = 0;
    ffn__chk.max_print = max_print;
    return ffn__chk.failures;
}

int64_t ffn_check_section_failures(void) { return ffn__chk.section_failures; }
int64_t ffn_check_failures(void) { return ffn__chk.failures; }
void ffn_check_show_error(ffn_ctx_t ctx) { ffn__chk.show_error = ctx; }
void ffn_check_count(int64_t n) { ffn__chk.checks += n; }

int ffn_check_summary(void) {
    if (ffn__chk.failures) {
        printf("%s: %lld of %lld checks FAILED\n", ffn__chk.name, (long long)ffn__chk.failures,
               (long long)ffn__chk.checks);
        return 1;
    }
    printf("%s: all %lld checks passed\n", ffn__chk.name, (long long)ffn__chk.checks);
    return 0;
}

int ffn_check_skip(const char *fmt, ...) {
    if (ffn__chk.failures) return ffn_check_summary();
    va_list ap;
    va_start(ap, fmt);
    printf("%s: skipped: ", ffn__chk.name);
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    fflush(stdout);
    return FFN_CHECK_SKIP;
}

// The path from its last "tests/" on: __FILE__ is absolute in CMake builds.
static const char *ffn__short_path(const char *file) {
    const char *best = file;
    for (const char *p = strstr(file, "tests/"); p; p = strstr(p + 1, "tests/")) best = p;
    return best;
}

// Counts a check; when it failed and is among the printed ones, prints the location, the
// section and the expression and returns true (the caller then prints its details and calls
// ffn__end). Returns false when nothing is to be printed.
static bool ffn__begin(const char *file, int line, const char *expr, bool ok) {
    ffn__chk.checks++;
    if (ok) return false;
    ffn__chk.failures++;
    const int max_print = ffn__chk.max_print > 0 ? ffn__chk.max_print : FFN_CHECK_MAX_PRINT;
    if (++ffn__chk.section_failures > max_print) return false;
    printf("%s:%d: FAIL", ffn__short_path(file), line);
    if (ffn__chk.section) printf(" [%s]", ffn__chk.section);
    if (expr) printf(" %s", expr);
    return true;
}

// Prints ": <message>" when fmt is not empty, the context's last error, and the newline.
static void ffn__end(const char *fmt, va_list ap) {
    if (fmt && *fmt) {
        printf(": ");
        vprintf(fmt, ap);
    }
    if (ffn__chk.show_error) {
        const char *e = ffn_ctx_last_error(ffn__chk.show_error);
        if (e && *e) printf(" [last error: %s]", e);
    }
    printf("\n");
    const int max_print = ffn__chk.max_print > 0 ? ffn__chk.max_print : FFN_CHECK_MAX_PRINT;
    if (ffn__chk.section_failures == max_print) printf("(further failures not shown)\n");
    fflush(stdout);
}

bool ffn_check__bool(const char *file, int line, const char *expr, int ok, const char *fmt, ...) {
    if (ffn__begin(file, line, expr, ok)) {
        va_list ap;
        va_start(ap, fmt);
        ffn__end(fmt, ap);
        va_end(ap);
    }
    return ok;
}

bool ffn_check__int(const char *file, int line, const char *expr, const char *want_expr,
                    long long got, long long want, const char *fmt, ...) {
    const bool ok = got == want;
    if (ffn__begin(file, line, expr, ok)) {
        printf(" == %s: got %lld, want %lld", want_expr, got, want);
        va_list ap;
        va_start(ap, fmt);
        ffn__end(fmt, ap);
        va_end(ap);
    }
    return ok;
}

bool ffn_check__status(const char *file, int line, const char *expr, int got, int want,
                       const char *fmt, ...) {
    const bool ok = got == want;
    if (ffn__begin(file, line, expr, ok)) {
        printf(": got \"%s\", want \"%s\"", ffn_status_string((enum ffn_status)got),
               ffn_status_string((enum ffn_status)want));
        va_list ap;
        va_start(ap, fmt);
        ffn__end(fmt, ap);
        va_end(ap);
    }
    return ok;
}

bool ffn_check__near(const char *file, int line, const char *expr, double got, double want,
                     double tol, const char *fmt, ...) {
    const bool ok = fabs(got - want) <= tol;  // false for NaN
    if (ffn__begin(file, line, expr, ok)) {
        printf(": got %.9g, want %.9g within %.3g (off by %.3g)", got, want, tol, got - want);
        va_list ap;
        va_start(ap, fmt);
        ffn__end(fmt, ap);
        va_end(ap);
    }
    return ok;
}

bool ffn_check__has(const char *file, int line, const char *expr, const char *str,
                    const char *sub, const char *fmt, ...) {
    const bool ok = str && sub && strstr(str, sub);
    if (ffn__begin(file, line, expr, ok)) {
        printf(": \"%s\" does not contain \"%s\"", str ? str : "(null)", sub ? sub : "(null)");
        va_list ap;
        va_start(ap, fmt);
        ffn__end(fmt, ap);
        va_end(ap);
    }
    return ok;
}
