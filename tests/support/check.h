// check.h — the one assertion helper of the C tests. A check that fails prints where it is
// (file:line), the expression, the values it compared and an optional message; every check is
// counted; ffn_check_summary() prints one line ("<test>: all N checks passed" or "<test>: F of N
// checks FAILED") and returns the exit status. A test that cannot run here (no GPU, no MPI peer)
// returns ffn_check_skip(why), which ctest reports as skipped (SKIP_RETURN_CODE 77).
//
//     int main(int argc, char **argv) {
//         ffn_check_begin("io");
//         CHECK(ptr != NULL, "open %s", path);       // boolean, optional printf message
//         CHECK_EQ(n_tensors, 3);                     // integers: both values printed
//         CHECK_STATUS(st, FFN_STATUS_INVALID_ARG);   // statuses by name
//         CHECK_NEAR(y, 0.5, 1e-6);                   // |got - want| <= tol
//         CHECK_STR_HAS(msg, "shape");                // substring
//         return ffn_check_summary();
//     }
//
// Failures print to stdout: the first FFN_CHECK_MAX_PRINT of each section (ffn_check_section),
// then only a count, so that a broken kernel does not print a million lines. State is per process
// (MPI ranks print their own summaries); the helper is not thread-safe: check from one thread.
#ifndef FFN_TEST_CHECK_H
#define FFN_TEST_CHECK_H

#include <stdbool.h>
#include <stdint.h>

#include "ffn.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FFN_CHECK_MAX_PRINT 10
#define FFN_CHECK_SKIP 77  // exit status of a skipped test

// Names the test in the summary line (default "test"); resets the counts.
void ffn_check_begin(const char *name);
// Starts a section: failures print "[label]" after the location, and up to max_print of them are
// shown (0: FFN_CHECK_MAX_PRINT). label NULL ends the section. Returns the failures so far.
int64_t ffn_check_section(const char *label, int max_print);
// Failures of the current section, and of the whole test.
int64_t ffn_check_section_failures(void);
int64_t ffn_check_failures(void);
// Failures also print ctx's last error (when non-empty). NULL: no longer.
void ffn_check_show_error(ffn_ctx_t ctx);
// Counts n checks that passed without a call each (a bulk comparison that reports only failures).
void ffn_check_count(int64_t n);
// Prints the summary line; returns 0 when no check failed, else 1.
int ffn_check_summary(void);
// Prints "<test>: skipped: <why>"; returns FFN_CHECK_SKIP, or 1 when a check already failed.
int ffn_check_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

// The checks. Each evaluates its arguments once and returns whether it passed.
#define CHECK(cond, ...) ffn_check__bool(__FILE__, __LINE__, #cond, (cond) ? 1 : 0, "" __VA_ARGS__)
#define FAIL(...) ffn_check__bool(__FILE__, __LINE__, NULL, 0, "" __VA_ARGS__)
#define CHECK_EQ(got, want, ...)                                                                  \
    ffn_check__int(__FILE__, __LINE__, #got, #want, (long long)(got), (long long)(want),          \
                   "" __VA_ARGS__)
#define CHECK_STATUS(got, want, ...)                                                              \
    ffn_check__status(__FILE__, __LINE__, #got, (int)(got), (int)(want), "" __VA_ARGS__)
#define CHECK_NEAR(got, want, tol, ...)                                                           \
    ffn_check__near(__FILE__, __LINE__, #got, (double)(got), (double)(want), (double)(tol),       \
                    "" __VA_ARGS__)
#define CHECK_STR_HAS(str, sub, ...)                                                              \
    ffn_check__has(__FILE__, __LINE__, #str, (str), (sub), "" __VA_ARGS__)

// The implementations behind the macros.
bool ffn_check__bool(const char *file, int line, const char *expr, int ok, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
bool ffn_check__int(const char *file, int line, const char *expr, const char *want_expr,
                    long long got, long long want, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));
bool ffn_check__status(const char *file, int line, const char *expr, int got, int want,
                       const char *fmt, ...) __attribute__((format(printf, 6, 7)));
bool ffn_check__near(const char *file, int line, const char *expr, double got, double want,
                     double tol, const char *fmt, ...) __attribute__((format(printf, 7, 8)));
bool ffn_check__has(const char *file, int line, const char *expr, const char *str,
                    const char *sub, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

#ifdef __cplusplus
}
#endif

#endif  // FFN_TEST_CHECK_H
