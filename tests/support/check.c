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

// The operands of the comparison being checked, described for its failure line.
static char ffn__detail[512];

bool ffn_check__pass(void) {
    ffn__chk.checks++;
    ffn__detail[0] = '\0';
    return true;
}

bool ffn_check__fail(const char *file, int line, const char *expr, const char *fmt, ...) {
    ffn__chk.checks++;
    ffn__chk.failures++;
    const int max_print = ffn__chk.max_print > 0 ? ffn__chk.max_print : FFN_CHECK_MAX_PRINT;
    if (++ffn__chk.section_failures <= max_print) {
        printf("%s:%d: FAIL", ffn__short_path(file), line);
        if (ffn__chk.section) printf(" [%s]", ffn__chk.section);
        if (expr) printf(" %s", expr);
        if (ffn__detail[0]) printf(": %s", ffn__detail);
        if (fmt && *fmt) {
            va_list ap;
            va_start(ap, fmt);
            printf(": ");
            vprintf(fmt, ap);
            va_end(ap);
        }
        if (ffn__chk.show_error) {
            const char *e = ffn_ctx_last_error(ffn__chk.show_error);
            if (e && *e) printf(" [last error: %s]", e);
        }
        printf("\n");
        if (ffn__chk.section_failures == max_print) printf("(further failures not shown)\n");
        fflush(stdout);
    }
    ffn__detail[0] = '\0';
    return false;
}

bool ffn_check__eq(long long got, long long want) {
    if (got == want) return true;
    snprintf(ffn__detail, sizeof ffn__detail, "got %lld, want %lld", got, want);
    return false;
}

bool ffn_check__status(int got, int want) {
    if (got == want) return true;
    snprintf(ffn__detail, sizeof ffn__detail, "got \"%s\", want \"%s\"",
             ffn_status_string((enum ffn_status)got), ffn_status_string((enum ffn_status)want));
    return false;
}

bool ffn_check__near(double got, double want, double tol) {
    if (fabs(got - want) <= tol) return true;  // false for NaN
    snprintf(ffn__detail, sizeof ffn__detail, "got %.9g, want %.9g within %.3g (off by %.3g)", got,
             want, tol, got - want);
    return false;
}

bool ffn_check__has(const char *str, const char *sub) {
    if (str && sub && strstr(str, sub)) return true;
    snprintf(ffn__detail, sizeof ffn__detail, "\"%.300s\" does not contain \"%.150s\"",
             str ? str : "(null)", sub ? sub : "(null)");
    return false;
}
