// test_args.c — tables for the tool's checked number parser (tools/args.c) and for
// ffn_text_escape, each row an input and the answer written out by hand.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../../tools/args.h"
#include "check.h"
#include "ffn.h"

static void test_i64(void) {
    static const struct {
        const char *s;
        int64_t min, max;
        enum ffn_arg_err want;
        int64_t value;
    } rows[] = {
        {"64", 1, 100, FFN_ARG_OK, 64},
        {"+64", 1, 100, FFN_ARG_OK, 64},
        {"007", 0, 10, FFN_ARG_OK, 7},
        {"-0", 0, 10, FFN_ARG_OK, 0},
        {"-5", -10, 10, FFN_ARG_OK, -5},
        {"9223372036854775807", 0, INT64_MAX, FFN_ARG_OK, INT64_MAX},
        {"-9223372036854775808", INT64_MIN, 0, FFN_ARG_OK, INT64_MIN},
        {"9223372036854775808", 0, INT64_MAX, FFN_ARG_RANGE, 0},
        {"99999999999999999999", 1, 100, FFN_ARG_RANGE, 0},
        {"101", 1, 100, FFN_ARG_RANGE, 0},
        {"0", 1, 100, FFN_ARG_RANGE, 0},
        {"-1", 0, 100, FFN_ARG_RANGE, 0},
        {"", 1, 100, FFN_ARG_EMPTY, 0},
        {"1e30", 1, 100, FFN_ARG_NOT_NUMBER, 0},
        {"64abc", 1, 100, FFN_ARG_NOT_NUMBER, 0},
        {"4096.5", 1, 10000, FFN_ARG_NOT_NUMBER, 0},
        {" 5", 1, 100, FFN_ARG_NOT_NUMBER, 0},
        {"5 ", 1, 100, FFN_ARG_NOT_NUMBER, 0},
        {"0x10", 1, 100, FFN_ARG_NOT_NUMBER, 0},
        {"-", 1, 100, FFN_ARG_NOT_NUMBER, 0},
        {"+-5", -10, 100, FFN_ARG_NOT_NUMBER, 0},
        {"５", 1, 100, FFN_ARG_NOT_NUMBER, 0},  // a full-width digit
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        int64_t v = -12345;
        const enum ffn_arg_err e = ffn_arg_parse_i64(rows[i].s, rows[i].min, rows[i].max, &v);
        CHECK(e == rows[i].want, "i64 '%s': error %d, expected %d", rows[i].s, e, rows[i].want);
        if (rows[i].want == FFN_ARG_OK)
            CHECK(v == rows[i].value, "i64 '%s': %lld, expected %lld", rows[i].s, (long long)v,
                  (long long)rows[i].value);
        else
            CHECK(v == -12345, "i64 '%s': the output was written on refusal", rows[i].s);
    }
}

static void test_f64(void) {
    static const struct {
        const char *s;
        double min, max;
        bool open;
        enum ffn_arg_err want;
        double value;
    } rows[] = {
        {"1e-3", 0, 1, true, FFN_ARG_OK, 1e-3},
        {"0.5", 0, 1, true, FFN_ARG_OK, 0.5},
        {".5", 0, 1, true, FFN_ARG_OK, 0.5},
        {"5.", 0, 10, true, FFN_ARG_OK, 5.0},
        {"+2E+1", 0, 100, false, FFN_ARG_OK, 20.0},
        {"1", 0, 1, true, FFN_ARG_OK, 1.0},
        {"0", 0, 1, true, FFN_ARG_RANGE, 0},
        {"0", 0, 1, false, FFN_ARG_OK, 0},
        {"-1", 0, 1, true, FFN_ARG_RANGE, 0},
        {"1e400", 0, 1e300, true, FFN_ARG_RANGE, 0},
        {"1e-400", 0, 1, true, FFN_ARG_RANGE, 0},
        {"inf", 0, 1, true, FFN_ARG_NOT_NUMBER, 0},
        {"nan", 0, 1, true, FFN_ARG_NOT_NUMBER, 0},
        {"infinity", 0, 1, true, FFN_ARG_NOT_NUMBER, 0},
        {"0x1p-3", 0, 1, true, FFN_ARG_NOT_NUMBER, 0},
        {" 0.5", 0, 1, true, FFN_ARG_NOT_NUMBER, 0},
        {"1e", 0, 1, true, FFN_ARG_NOT_NUMBER, 0},
        {"1e+", 0, 1, true, FFN_ARG_NOT_NUMBER, 0},
        {"1.5.2", 0, 10, true, FFN_ARG_NOT_NUMBER, 0},
        {"e5", 0, 10, true, FFN_ARG_NOT_NUMBER, 0},
        {".", 0, 10, true, FFN_ARG_NOT_NUMBER, 0},
        {"", 0, 10, true, FFN_ARG_EMPTY, 0},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        double v = -7;
        const enum ffn_arg_err e =
            ffn_arg_parse_f64(rows[i].s, rows[i].min, rows[i].max, rows[i].open, &v);
        CHECK(e == rows[i].want, "f64 '%s': error %d, expected %d", rows[i].s, e, rows[i].want);
        if (rows[i].want == FFN_ARG_OK)
            CHECK(v == rows[i].value, "f64 '%s': %g, expected %g", rows[i].s, v, rows[i].value);
    }
}

static void test_escape(void) {
    static const struct {
        const char *in;
        size_t cap;
        const char *want;
    } rows[] = {
        {"model.layers.0.mlp.up_proj.weight", 64, "model.layers.0.mlp.up_proj.weight"},
        {"lla\x1b[31mma\nX", 64, "lla\\e[31mma\\nX"},
        {"a\rb\tc\x07", 64, "a\\rb\\tc\\x07"},
        {"del\x7f", 64, "del\\x7f"},
        {"\xc3\xa9t\xc3\xa9", 64, "\xc3\xa9t\xc3\xa9"},                // é: printable UTF-8 kept
        {"\xe6\x97\xa5\xe6\x9c\xac", 64, "\xe6\x97\xa5\xe6\x9c\xac"},  // CJK kept
        {"csi\xc2\x9b", 64, "csi\\u{9b}"},                             // C1 CSI as UTF-8
        {"raw\x9b", 64, "raw\\x9b"},                                   // C1 CSI as one byte
        {"rlo\xe2\x80\xae"
         "x",
         64, "rlo\\u{202e}x"},                          // right-to-left override
        {"ls\xe2\x80\xa8", 64, "ls\\u{2028}"},          // line separator
        {"over\xc0\xaf", 64, "over\\xc0\\xaf"},         // overlong '/'
        {"sur\xed\xa0\x80", 64, "sur\\xed\\xa0\\x80"},  // a surrogate
        {"cut\xe6\x97", 64, "cut\\xe6\\x97"},           // a truncated character
        {"abcdef", 4, "abc"},                           // cut to the buffer
        {"ab\x1b", 4, "ab"},                            // never half an escape
        {"a\xc3\xa9", 3, "a"},                          // never half a character
        {"", 8, ""},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char buf[128];
        memset(buf, 'Z', sizeof buf);
        const size_t n = ffn_text_escape(buf, rows[i].cap, rows[i].in);
        CHECK(!strcmp(buf, rows[i].want) && n == strlen(rows[i].want),
              "escape row %zu: got '%s', expected '%s'", i, buf, rows[i].want);
        CHECK(buf[rows[i].cap] == 'Z', "escape row %zu: wrote past cap", i);
    }
    CHECK(ffn_text_escape(NULL, 8, "x") == 0, "NULL buffer");
}

int main(void) {
    ffn_check_begin("test_args");
    test_i64();
    test_f64();
    test_escape();
    return ffn_check_summary();
}
