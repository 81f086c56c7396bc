// abi_dump.c — prints, as JSON, the size and field offsets of every struct that the Python
// package mirrors with ctypes (python/ffn/_lib.py), and the value of every enum constant it uses,
// as the compiler sees include/ffn.h. test_abi.py compares the two: a field appended to a struct
// in the header changes its sizeof and fails the test until the mirror follows, instead of
// corrupting memory at run time. Keep this table and the mirrors in step.
#include <stddef.h>
#include <stdio.h>

#include "ffn.h"

// Compiled with -DFFN_ABI_FIELD_CHECK -Werror=missing-field-initializers (test_abi.py does, with
// the build's compiler): one positional initializer per struct with exactly the fields the
// mirror has, so a field added to the header (even one that fits in padding and leaves sizeof
// unchanged) is a compile error naming it, and a removed one is "excess elements".
#ifdef FFN_ABI_FIELD_CHECK
#    define W_ \
        { NULL, 0, 0, 0, 0, 0 }
#    define FT_ \
        { NULL, 0, 0, {0}, NULL, 0 }
void ffn_abi_field_check(void);
void ffn_abi_field_check(void) {
    struct ffn_ctx_opts a = {0, 0, 0, 0, false, NULL, NULL, 0, 0, NULL};
    struct ffn_tensor b = {NULL, 0, 0, 0, 0};
    struct ffn_weight c = W_;
    struct ffn_block_spec d = {0, 0, 0, 0, false, 0, 0, false, false, false};
    struct ffn_block_weights e = {0, W_, W_, W_, W_, W_, W_, W_, W_};
    struct ffn_block_grads f = {0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, false, 0};
    struct ffn_block_opts g = {0, 0, 0, 0, 0, 0, 0};
    struct ffn_block_info h = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, ""};
    struct ffn_file_tensor i = FT_;
    struct ffn_model_desc j = {"", "", 0, 0, 0, 0, 0, false, false, "", "", 0, 0};
    struct ffn_model_layer k = {0,   0,   0,   0,   0,   false, 0,   0,  "",
                                FT_, FT_, FT_, FT_, FT_, FT_,   FT_, FT_};
    (void)a, (void)b, (void)c, (void)d, (void)e, (void)f, (void)g, (void)h, (void)i, (void)j;
    (void)k;
}
#endif

static int first;

static void open_struct(const char *name, size_t size) {
    printf("%s\n  \"%s\": {\"sizeof\": %zu, \"fields\": {", first ? "" : ",", name, size);
    first = 0;
}

static int ffirst;
static void field(const char *name, size_t off) {
    printf("%s\"%s\": %zu", ffirst ? "" : ", ", name, off);
    ffirst = 0;
}

#define STRUCT(S) (open_struct(#S, sizeof(struct S)), ffirst = 1)
#define F(S, f) field(#f, offsetof(struct S, f))
#define END() printf("}}")

static void constant(const char *name, long value) {
    printf("%s\n  \"%s\": %ld", first ? "" : ",", name, value);
    first = 0;
}
#define C(k) constant(#k, (long)(k))

int main(void) {
    printf("{\"structs\": {");
    first = 1;
    STRUCT(ffn_ctx_opts);
    F(ffn_ctx_opts, size), F(ffn_ctx_opts, force_isa), F(ffn_ctx_opts, n_threads);
    F(ffn_ctx_opts, accuracy), F(ffn_ctx_opts, bf16_parity), F(ffn_ctx_opts, log);
    F(ffn_ctx_opts, log_user), F(ffn_ctx_opts, backend), F(ffn_ctx_opts, device);
    F(ffn_ctx_opts, stream);
    END();
    STRUCT(ffn_tensor);
    F(ffn_tensor, data), F(ffn_tensor, dtype), F(ffn_tensor, rows), F(ffn_tensor, cols);
    F(ffn_tensor, row_stride);
    END();
    STRUCT(ffn_weight);
    F(ffn_weight, data), F(ffn_weight, dtype), F(ffn_weight, orient), F(ffn_weight, rows);
    F(ffn_weight, cols), F(ffn_weight, row_stride);
    END();
    STRUCT(ffn_block_spec);
    F(ffn_block_spec, size), F(ffn_block_spec, d_model), F(ffn_block_spec, d_ff);
    F(ffn_block_spec, act), F(ffn_block_spec, gated), F(ffn_block_spec, gate_up_layout);
    F(ffn_block_spec, tp_groups), F(ffn_block_spec, bias_gate), F(ffn_block_spec, bias_up);
    F(ffn_block_spec, bias_down);
    END();
    STRUCT(ffn_block_weights);
    F(ffn_block_weights, size), F(ffn_block_weights, gate), F(ffn_block_weights, up);
    F(ffn_block_weights, gate_up), F(ffn_block_weights, down), F(ffn_block_weights, b_gate);
    F(ffn_block_weights, b_up), F(ffn_block_weights, b_gate_up), F(ffn_block_weights, b_down);
    END();
    STRUCT(ffn_block_grads);
    F(ffn_block_grads, size), F(ffn_block_grads, gate), F(ffn_block_grads, up);
    F(ffn_block_grads, gate_up), F(ffn_block_grads, down), F(ffn_block_grads, b_gate);
    F(ffn_block_grads, b_up), F(ffn_block_grads, b_gate_up), F(ffn_block_grads, b_down);
    F(ffn_block_grads, accumulate), F(ffn_block_grads, dtype);
    END();
    STRUCT(ffn_block_opts);
    F(ffn_block_opts, size), F(ffn_block_opts, schedule), F(ffn_block_opts, tile_rows);
    F(ffn_block_opts, max_tokens), F(ffn_block_opts, math), F(ffn_block_opts, save_dtype);
    F(ffn_block_opts, pack_weights);
    END();
    STRUCT(ffn_block_info);
    F(ffn_block_info, size), F(ffn_block_info, n_params), F(ffn_block_info, weight_bytes);
    F(ffn_block_info, cache_bytes), F(ffn_block_info, saved_bytes_save);
    F(ffn_block_info, saved_bytes_recompute), F(ffn_block_info, workspace_bytes);
    F(ffn_block_info, schedule), F(ffn_block_info, tile_rows), F(ffn_block_info, compute_dtype);
    F(ffn_block_info, gemm_impl);
    END();
    STRUCT(ffn_file_tensor);
    F(ffn_file_tensor, name), F(ffn_file_tensor, dtype), F(ffn_file_tensor, n_dims);
    F(ffn_file_tensor, shape), F(ffn_file_tensor, data), F(ffn_file_tensor, nbytes);
    END();
    STRUCT(ffn_model_desc);
    F(ffn_model_desc, arch), F(ffn_model_desc, format), F(ffn_model_desc, n_layers);
    F(ffn_model_desc, d_model), F(ffn_model_desc, d_ff), F(ffn_model_desc, n_experts);
    F(ffn_model_desc, act), F(ffn_model_desc, gated), F(ffn_model_desc, hf_in_out);
    F(ffn_model_desc, act_source), F(ffn_model_desc, note), F(ffn_model_desc, n_params);
    F(ffn_model_desc, n_params_ffn);
    END();
    STRUCT(ffn_model_layer);
    F(ffn_model_layer, layer), F(ffn_model_layer, expert), F(ffn_model_layer, d_model);
    F(ffn_model_layer, d_ff), F(ffn_model_layer, act), F(ffn_model_layer, gated);
    F(ffn_model_layer, orient), F(ffn_model_layer, layout), F(ffn_model_layer, prefix);
    F(ffn_model_layer, gate), F(ffn_model_layer, up), F(ffn_model_layer, gate_up);
    F(ffn_model_layer, down), F(ffn_model_layer, b_gate), F(ffn_model_layer, b_up);
    F(ffn_model_layer, b_gate_up), F(ffn_model_layer, b_down);
    END();

    printf("\n}, \"enums\": {");
    first = 1;
    C(FFN_STATUS_OK), C(FFN_STATUS_INVALID_ARG), C(FFN_STATUS_UNSUPPORTED);
    C(FFN_STATUS_OUT_OF_MEMORY), C(FFN_STATUS_BAD_FORMAT), C(FFN_STATUS_IO);
    C(FFN_STATUS_NOT_FOUND), C(FFN_STATUS_NON_FINITE), C(FFN_STATUS_BACKEND);
    C(FFN_STATUS_INTERNAL), C(FFN_STATUS_COUNT);
    C(FFN_DTYPE_F32), C(FFN_DTYPE_BF16), C(FFN_DTYPE_F16), C(FFN_DTYPE_COUNT);
    C(FFN_ACT_GELU_TANH), C(FFN_ACT_GELU_ERF), C(FFN_ACT_SILU), C(FFN_ACT_RELU);
    C(FFN_ACT_SIGMOID), C(FFN_ACT_IDENTITY), C(FFN_ACT_QUICK_GELU), C(FFN_ACT_COUNT);
    C(FFN_ISA_AUTO), C(FFN_ISA_SCALAR), C(FFN_ISA_AVX2), C(FFN_ISA_AVX512), C(FFN_ISA_COUNT);
    C(FFN_ACCURACY_DEFAULT), C(FFN_ACCURACY_HIGH);
    C(FFN_GATE_UP_GATE_FIRST), C(FFN_GATE_UP_UP_FIRST);
    C(FFN_WEIGHT_OUT_IN), C(FFN_WEIGHT_IN_OUT), C(FFN_WEIGHT_ORIENT_COUNT);
    C(FFN_GATE_UP_SEPARATE), C(FFN_GATE_UP_FUSED), C(FFN_GATE_UP_FUSED_UP_FIRST);
    C(FFN_GATE_UP_INTERLEAVED), C(FFN_GATE_UP_BLOCKED), C(FFN_GATE_UP_LAYOUT_COUNT);
    C(FFN_BLOCK_SCHEDULE_AUTO), C(FFN_BLOCK_SCHEDULE_TILED), C(FFN_BLOCK_SCHEDULE_SEPARATE);
    C(FFN_BLOCK_SCHEDULE_COUNT);
    C(FFN_BACKEND_CPU), C(FFN_BACKEND_CUDA), C(FFN_BACKEND_COUNT);
    C(FFN_BLOCK_MATH_STRICT), C(FFN_BLOCK_MATH_BF16), C(FFN_BLOCK_MATH_TF32),
        C(FFN_BLOCK_MATH_COUNT);
    C(FFN_BLOCK_POLICY_NONE), C(FFN_BLOCK_POLICY_SAVE), C(FFN_BLOCK_POLICY_RECOMPUTE);
    C(FFN_BLOCK_POLICY_COUNT);
    C(FFN_FILE_DTYPE_F32), C(FFN_FILE_DTYPE_BF16), C(FFN_FILE_DTYPE_F16), C(FFN_FILE_DTYPE_F64);
    C(FFN_FILE_DTYPE_I64), C(FFN_FILE_DTYPE_I32), C(FFN_FILE_DTYPE_I16), C(FFN_FILE_DTYPE_I8);
    C(FFN_FILE_DTYPE_U8), C(FFN_FILE_DTYPE_BOOL), C(FFN_FILE_DTYPE_F8_E4M3);
    C(FFN_FILE_DTYPE_F8_E5M2), C(FFN_FILE_DTYPE_Q8_0), C(FFN_FILE_DTYPE_Q4_0);
    C(FFN_FILE_DTYPE_U16), C(FFN_FILE_DTYPE_U32), C(FFN_FILE_DTYPE_U64);
    C(FFN_FILE_DTYPE_F8_E8M0), C(FFN_FILE_DTYPE_COUNT);
    C(FFN_MAX_DIMS);
    printf("\n}}\n");
    return 0;
}
