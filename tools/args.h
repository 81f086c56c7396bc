// args.h — the edges of the `ffn` tool that every subcommand shares: one checked parser for
// option values (the whole string, a decimal number, in range, overflow refused, the option
// named in the message), option values that may be missing, display-safe text from files, and
// the kind of a path given as an input. What the library checks (regular files for reading,
// outputs: ffn_file_check_output) is not repeated here.
#ifndef FFN_TOOL_ARGS_H
#define FFN_TOOL_ARGS_H

#include <stdbool.h>
#include <stdint.h>

// --- numbers -------------------------------------------------------------------------------------
// Why a value was refused (FFN_ARG_OK when it was not).
enum ffn_arg_err {
    FFN_ARG_OK = 0,
    FFN_ARG_EMPTY,       // "" (or NULL)
    FFN_ARG_NOT_NUMBER,  // not the whole string a number of the kind asked for ("64abc", "1e30"
                         // for an integer, " 5", "0x10", "nan", "inf")
    FFN_ARG_RANGE,       // a number, outside [min, max] (or too large for the type at all)
};

// All of s as a decimal integer: an optional sign, then digits; nothing else, no spaces.
enum ffn_arg_err ffn_arg_parse_i64(const char *s, int64_t min, int64_t max, int64_t *out);
// All of s as a finite decimal number (strtod's syntax without leading spaces, hex, inf or
// nan) in [min, max], or in (min, max] when min_open.
enum ffn_arg_err ffn_arg_parse_f64(const char *s, double min, double max, bool min_open,
                                   double *out);

// The same, for option `opt` of `ffn <cmd>`: on refusal prints one line on stderr, e.g.
// "ffn size: --d '64abc' is not an integer" or "ffn ulp: --threads 100000 is out of range
// [1, 2]", and returns false.
bool ffn_arg_i64(const char *cmd, const char *opt, const char *s, int64_t min, int64_t max,
                 int64_t *out);
bool ffn_arg_int(const char *cmd, const char *opt, const char *s, int min, int max, int *out);
bool ffn_arg_f64(const char *cmd, const char *opt, const char *s, double min, double max,
                 bool min_open, double *out);

// --- option values -------------------------------------------------------------------------------
// The value after option argv[*i] (*i advanced past it), or NULL after printing
// "ffn <cmd>: <opt> needs a value".
const char *ffn_arg_value(const char *cmd, int argc, char **argv, int *i);

// --- text ----------------------------------------------------------------------------------------
// `s` made safe to print (ffn_text_escape: control characters, bytes that are not UTF-8 and
// bidi overrides escaped). The result lives in one of a few rotating static buffers, so a
// printf may take several; each holds up to 1 KiB (longer text is cut at a character).
const char *ffn_tool_esc(const char *s);

// --- paths ---------------------------------------------------------------------------------------
// Checks, without opening it, that `path` (given as `what`, e.g. "--input") is a regular file
// (want_dir false) or a directory (want_dir true). Prints why not and returns false.
bool ffn_arg_want(const char *cmd, const char *what, const char *path, bool want_dir);

#endif  // FFN_TOOL_ARGS_H
