// testutil.h — helpers shared by the tests of tests/cpu, tests/core and tests/cuda: a context per
// supported ISA (and accuracy tier), a seeded PRNG, guarded buffers. Checks and the summary line
// come from tests/support/check.h (included here).
#ifndef FFN_TESTUTIL_H
#define FFN_TESTUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "check.h"
#include "cpu/cpu_impl.h"
#include "ffn.h"

#define FFN_TEST_MAX_CTX 8

// --- contexts -----------------------------------------------------------------------------------
struct ffn_test_ctx {
    ffn_ctx_t ctx;
    enum ffn_isa isa;
    bool accurate;
    char label[32];  // "avx2", "avx2+high"
};

// One single-threaded context per ISA that ffn_isa_supported() accepts (scalar first), and when
// with_high, another with FFN_ACCURACY_HIGH for each. Returns the count.
int ffn_test_contexts(struct ffn_test_ctx *out, bool with_high);
void ffn_test_contexts_free(struct ffn_test_ctx *c, int n);
// "avx2" or "avx2 (scalar kernel)" when the table entry of (op, act) comes from a lower ISA.
const char *ffn_test_kernel_label(const struct ffn_test_ctx *c, enum ffn_kop op, enum ffn_act act,
                                  char *buf, size_t size);

// --- random numbers (splitmix64: a fixed, printed seed reproduces every run) --------------------
uint64_t ffn_test_rand(uint64_t *state);
double ffn_test_uniform(uint64_t *state, double lo, double hi);
// ±2^U(lo_exp, hi_exp): a random sign and a log-uniform magnitude.
float ffn_test_logrand(uint64_t *state, double lo_exp, double hi_exp);

// --- buffers ------------------------------------------------------------------------------------
// 64-byte aligned, zeroed; exits the test on failure.
void *ffn_test_alloc(size_t bytes);

// Element i of an array of dtype dt, as float / from float (rounded to nearest even).
float ffn_test_get(const void *p, enum ffn_dtype dt, int64_t i);
void ffn_test_set(void *p, enum ffn_dtype dt, int64_t i, float v);
// True when a and b are the same value bit for bit, or both NaN.
bool ffn_test_same(float a, float b);
// True when the elements i of two dtype-dt arrays have the same bits, or are both NaN.
bool ffn_test_same_elem(const void *a, const void *b, enum ffn_dtype dt, int64_t i);

#endif  // FFN_TESTUTIL_H
