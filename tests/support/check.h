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
// Starts a section: failures print "[label]" after the location (label NULL: none), and up to
// max_print of them are shown (0: FFN_CHECK_MAX_PRINT). Returns the test's failures so far.
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

// The checks. Each is an expression that evaluates its operands once, then (only when the check
// fails) the message's arguments: a message may read what the condition computed, such as
// ffn_ctx_last_error(ctx) after the call under test. Each returns whether it passed.
#define CHECK(cond, ...) \
    ((cond) ? ffn_check__pass() : ffn_check__fail(__FILE__, __LINE__, #cond, "" __VA_ARGS__))
#define FAIL(...) ffn_check__fail(__FILE__, __LINE__, NULL, "" __VA_ARGS__)
#define CHECK_EQ(got, want, ...)                        \
    (ffn_check__eq((long long)(got), (long long)(want)) \
         ? ffn_check__pass()                            \
         : ffn_check__fail(__FILE__, __LINE__, #got " == " #want, "" __VA_ARGS__))
#define CHECK_STATUS(got, want, ...)            \
    (ffn_check__status((int)(got), (int)(want)) \
         ? ffn_check__pass()                    \
         : ffn_check__fail(__FILE__, __LINE__, #got " == " #want, "" __VA_ARGS__))
#define CHECK_NEAR(got, want, tol, ...)                            \
    (ffn_check__near((double)(got), (double)(want), (double)(tol)) \
         ? ffn_check__pass()                                       \
         : ffn_check__fail(__FILE__, __LINE__, #got " ~ " #want, "" __VA_ARGS__))
#define CHECK_STR_HAS(str, sub, ...) \
    (ffn_check__has((str), (sub))    \
         ? ffn_check__pass()         \
         : ffn_check__fail(__FILE__, __LINE__, "strstr(" #str ", " #sub ")", "" __VA_ARGS__))

// The implementations behind the macros. The comparisons keep a description of their operands
// ("got 3, want 4") for the failure line that follows.
bool ffn_check__pass(void);
bool ffn_check__fail(const char *file, int line, const char *expr, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
bool ffn_check__eq(long long got, long long want);
bool ffn_check__status(int got, int want);
bool ffn_check__near(double got, double want, double tol);
bool ffn_check__has(const char *str, const char *sub);

#ifdef __cplusplus
}
#endif

#endif  // FFN_TEST_CHECK_H
