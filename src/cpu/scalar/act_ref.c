// act_ref.c — the reference definitions of every activation and its derivative, in double.
// These are the textbook formulas in their stable forms (docs/design.md, numerical contract),
// written once in act_ref.h (which the CUDA backend compiles for the device too); the MPFR oracle in
// tests/cpu checks them, and every other kernel is tested against them.
#include "cpu/scalar/act_ref.h"

#include "cpu/cpu_impl.h"

double ffn_ref_act(enum ffn_act act, double x) {
    return (unsigned)act < FFN_ACT_COUNT ? ffn_ref_act_eval(act, x) : NAN;
}

double ffn_ref_dact(enum ffn_act act, double x) {
    return (unsigned)act < FFN_ACT_COUNT ? ffn_ref_dact_eval(act, x) : NAN;
}
