// status.c — status texts, and the names of dtypes, activations and ISAs (static tables with
// designated initializers, so a reordered enum cannot silently mislabel an entry).
#include <string.h>

#include "core_impl.h"

static const char *const ffn__status_text[FFN_STATUS_COUNT] = {
    [FFN_STATUS_OK] = "ok",
    [FFN_STATUS_INVALID_ARG] = "invalid argument",
    [FFN_STATUS_UNSUPPORTED] = "unsupported",
    [FFN_STATUS_OUT_OF_MEMORY] = "out of memory",
    [FFN_STATUS_BAD_FORMAT] = "bad format",
    [FFN_STATUS_IO] = "i/o error",
    [FFN_STATUS_NOT_FOUND] = "not found",
    [FFN_STATUS_NON_FINITE] = "non-finite values",
    [FFN_STATUS_BACKEND] = "backend error",
    [FFN_STATUS_INTERNAL] = "internal error",
};

const char *ffn_status_string(enum ffn_status status) {
    if ((unsigned)status >= FFN_STATUS_COUNT) return "unknown status";
    return ffn__status_text[status];
}

// --- dtypes -----------------------------------------------------------------------------------

static const struct {
    const char *name, *alias;
    size_t size;
} ffn__dtypes[FFN_DTYPE_COUNT] = {
    [FFN_DTYPE_F32] = {"f32", "float32", 4},
    [FFN_DTYPE_BF16] = {"bf16", "bfloat16", 2},
    [FFN_DTYPE_F16] = {"f16", "float16", 2},
};

size_t ffn_dtype_size(enum ffn_dtype dtype) {
    return (unsigned)dtype < FFN_DTYPE_COUNT ? ffn__dtypes[dtype].size : 0;
}

const char *ffn_dtype_name(enum ffn_dtype dtype) {
    return (unsigned)dtype < FFN_DTYPE_COUNT ? ffn__dtypes[dtype].name : "?";
}

enum ffn_status ffn_dtype_from_name(const char *name, enum ffn_dtype *dtype_out) {
    if (!name || !dtype_out) return FFN_STATUS_INVALID_ARG;
    for (int i = 0; i < FFN_DTYPE_COUNT; i++) {
        if (!strcmp(name, ffn__dtypes[i].name) || !strcmp(name, ffn__dtypes[i].alias)) {
            *dtype_out = (enum ffn_dtype)i;
            return FFN_STATUS_OK;
        }
    }
    return FFN_STATUS_INVALID_ARG;
}

// --- activations --------------------------------------------------------------------------------

static const struct {
    const char *name, *glu;
} ffn__acts[FFN_ACT_COUNT] = {
    [FFN_ACT_GELU_TANH] = {"gelu_tanh", "geglu_tanh"},
    [FFN_ACT_GELU_ERF] = {"gelu_erf", "geglu_erf"},
    [FFN_ACT_SILU] = {"silu", "swiglu"},
    [FFN_ACT_RELU] = {"relu", "reglu"},
    [FFN_ACT_SIGMOID] = {"sigmoid", "glu"},
    [FFN_ACT_IDENTITY] = {"identity", "bilinear"},
    [FFN_ACT_QUICK_GELU] = {"quick_gelu", "quick_geglu"},
};

const char *ffn_act_name(enum ffn_act act) {
    return (unsigned)act < FFN_ACT_COUNT ? ffn__acts[act].name : "?";
}

const char *ffn_glu_name(enum ffn_act act) {
    return (unsigned)act < FFN_ACT_COUNT ? ffn__acts[act].glu : "?";
}

enum ffn_status ffn_act_from_name(const char *name, enum ffn_act *act_out) {
    if (!name || !act_out) return FFN_STATUS_INVALID_ARG;
    for (int i = 0; i < FFN_ACT_COUNT; i++) {
        if (!strcmp(name, ffn__acts[i].name)) {
            *act_out = (enum ffn_act)i;
            return FFN_STATUS_OK;
        }
    }
    return FFN_STATUS_INVALID_ARG;
}

// --- ISAs ---------------------------------------------------------------------------------------

static const char *const ffn__isa_names[FFN_ISA_COUNT] = {
    [FFN_ISA_AUTO] = "auto",
    [FFN_ISA_SCALAR] = "scalar",
    [FFN_ISA_AVX2] = "avx2",
    [FFN_ISA_AVX512] = "avx512",
};

const char *ffn_isa_name(enum ffn_isa isa) {
    return (unsigned)isa < FFN_ISA_COUNT ? ffn__isa_names[isa] : "?";
}

static const char *const ffn__op_names[FFN_OP_COUNT] = {
    [FFN_OP_ACT_FWD] = "act_fwd",
    [FFN_OP_ACT_BWD] = "act_bwd",
    [FFN_OP_GLU_FWD] = "glu_fwd",
    [FFN_OP_GLU_BWD] = "glu_bwd",
};

const char *ffn_op_name(enum ffn_op op) {
    return (unsigned)op < FFN_OP_COUNT ? ffn__op_names[op] : "?";
}

enum ffn_status ffn_isa_from_name(const char *name, enum ffn_isa *isa_out) {
    if (!name || !isa_out) return FFN_STATUS_INVALID_ARG;
    for (int i = 0; i < FFN_ISA_COUNT; i++) {
        if (!strcmp(name, ffn__isa_names[i])) {
            *isa_out = (enum ffn_isa)i;
            return FFN_STATUS_OK;
        }
    }
    return FFN_STATUS_INVALID_ARG;
}
