// no_mpfr.c — `ffn ulp` and `ffn check` in a build without MPFR: both need the MPFR oracle
// (tools/oracle.c), so they say how to get it instead of running. Compiled only in such builds.
#include <stdio.h>

#include "../tools.h"

static int ffn__no_mpfr(const char *cmd) {
    fprintf(stderr,
            "ffn %s: this ffn was built without MPFR, which the accuracy oracle needs; "
            "install it (Debian: libmpfr-dev) and rebuild\n",
            cmd);
    return 2;
}

int ffn_cmd_ulp(int argc, char **argv) {
    (void)argc, (void)argv;
    return ffn__no_mpfr("ulp");
}

int ffn_cmd_check(int argc, char **argv) {
    (void)argc, (void)argv;
    return ffn__no_mpfr("check");
}
