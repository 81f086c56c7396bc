// file_dtype.c — element types of checkpoint files: names (safetensors spelling), block sizes,
// and the conversion of any file tensor to f32 (GGUF Q8_0 / Q4_0 dequantised here).
//   Q8_0 block (34 bytes, 32 elements): f16 d, int8 q[32];  x[i] = d·q[i]
//   Q4_0 block (18 bytes, 32 elements): f16 d, uint8 qs[16]; x[i]    = d·((qs[i] & 15) - 8)
//                                                            x[i+16] = d·((qs[i] >> 4) - 8)
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "io/io_impl.h"

#define FFN_IO_QK 32  // elements per Q8_0 / Q4_0 block (ggml QK8_0, QK4_0)

static const struct ffn_io_dtype_info ffn__dtypes[FFN_FILE_DTYPE_COUNT] = {
    [FFN_FILE_DTYPE_F32] = {"F32", 1, 4},
    [FFN_FILE_DTYPE_BF16] = {"BF16", 1, 2},
    [FFN_FILE_DTYPE_F16] = {"F16", 1, 2},
    [FFN_FILE_DTYPE_F64] = {"F64", 1, 8},
    [FFN_FILE_DTYPE_I64] = {"I64", 1, 8},
    [FFN_FILE_DTYPE_I32] = {"I32", 1, 4},
    [FFN_FILE_DTYPE_I16] = {"I16", 1, 2},
    [FFN_FILE_DTYPE_I8] = {"I8", 1, 1},
    [FFN_FILE_DTYPE_U8] = {"U8", 1, 1},
    [FFN_FILE_DTYPE_BOOL] = {"BOOL", 1, 1},
    [FFN_FILE_DTYPE_F8_E4M3] = {"F8_E4M3", 1, 1},
    [FFN_FILE_DTYPE_F8_E5M2] = {"F8_E5M2", 1, 1},
    [FFN_FILE_DTYPE_Q8_0] = {NULL, FFN_IO_QK, 2 + FFN_IO_QK},
    [FFN_FILE_DTYPE_Q4_0] = {NULL, FFN_IO_QK, 2 + FFN_IO_QK / 2},
    [FFN_FILE_DTYPE_U16] = {"U16", 1, 2},
    [FFN_FILE_DTYPE_U32] = {"U32", 1, 4},
    [FFN_FILE_DTYPE_U64] = {"U64", 1, 8},
    [FFN_FILE_DTYPE_F8_E8M0] = {"F8_E8M0", 1, 1},
};

const struct ffn_io_dtype_info *ffn_io_dtype_info(enum ffn_file_dtype dtype) {
    return (unsigned)dtype < FFN_FILE_DTYPE_COUNT ? &ffn__dtypes[dtype] : NULL;
}

bool ffn_io_dtype_bytes(enum ffn_file_dtype dtype, uint64_t numel, uint64_t *bytes_out) {
    const struct ffn_io_dtype_info *d = ffn_io_dtype_info(dtype);
    if (!d || numel % d->block_elems) return false;
    return ffn_io_mul_u64(numel / d->block_elems, d->block_bytes, bytes_out);
}

const char *ffn_file_dtype_name(enum ffn_file_dtype dtype) {
    if ((unsigned)dtype >= FFN_FILE_DTYPE_COUNT) return "?";
    if (dtype == FFN_FILE_DTYPE_Q8_0) return "Q8_0";
    if (dtype == FFN_FILE_DTYPE_Q4_0) return "Q4_0";
    return ffn__dtypes[dtype].st_name;
}

enum ffn_status ffn_file_dtype_from_name(const char *name, enum ffn_file_dtype *dtype_out) {
    if (!name || !dtype_out) return FFN_STATUS_INVALID_ARG;
    for (int i = 0; i < FFN_FILE_DTYPE_COUNT; i++) {
        if (!strcmp(name, ffn_file_dtype_name((enum ffn_file_dtype)i))) {
            *dtype_out = (enum ffn_file_dtype)i;
            return FFN_STATUS_OK;
        }
    }
    return FFN_STATUS_NOT_FOUND;
}

enum ffn_status ffn_file_dtype_to_dtype(enum ffn_file_dtype fd, enum ffn_dtype *dtype_out) {
    if (!dtype_out) return FFN_STATUS_INVALID_ARG;
    switch (fd) {
    case FFN_FILE_DTYPE_F32: *dtype_out = FFN_DTYPE_F32; return FFN_STATUS_OK;
    case FFN_FILE_DTYPE_BF16: *dtype_out = FFN_DTYPE_BF16; return FFN_STATUS_OK;
    case FFN_FILE_DTYPE_F16: *dtype_out = FFN_DTYPE_F16; return FFN_STATUS_OK;
    default: return FFN_STATUS_UNSUPPORTED;
    }
}

int64_t ffn_file_tensor_numel(const struct ffn_file_tensor *t) {
    if (!t || t->n_dims < 0 || t->n_dims > FFN_MAX_DIMS) return -1;
    uint64_t n = 1;
    for (int i = 0; i < t->n_dims; i++)
        if (t->shape[i] < 0 || !ffn_io_mul_u64(n, (uint64_t)t->shape[i], &n) || n > INT64_MAX)
            return -1;
    return (int64_t)n;
}

// --- element decoders (unaligned loads through memcpy; files are little-endian) --------------

static float ffn__f8_e4m3(uint8_t b) {
    // E4M3 "FN": bias 7, no infinities, S.1111.111 is NaN; subnormals m·2^-9.
    const int s = b >> 7, e = (b >> 3) & 15, m = b & 7;
    float v;
    if (e == 15 && m == 7) return NAN;
    if (e == 0)
        v = ldexpf((float)m, -9);
    else
        v = ldexpf(1.0f + (float)m / 8.0f, e - 7);
    return s ? -v : v;
}

static float ffn__f8_e5m2(uint8_t b) { return ffn_f16_to_f32((uint16_t)(b << 8)); }

static float ffn__f8_e8m0(uint8_t b) { return b == 0xff ? NAN : ldexpf(1.0f, (int)b - 127); }

static float ffn__elem(enum ffn_file_dtype dt, const uint8_t *p) {
    switch (dt) {
    case FFN_FILE_DTYPE_F32: {
        float v;
        memcpy(&v, p, 4);
        return v;
    }
    case FFN_FILE_DTYPE_BF16: {
        uint16_t h;
        memcpy(&h, p, 2);
        return ffn_bf16_to_f32(h);
    }
    case FFN_FILE_DTYPE_F16: {
        uint16_t h;
        memcpy(&h, p, 2);
        return ffn_f16_to_f32(h);
    }
    case FFN_FILE_DTYPE_F64: {
        double v;
        memcpy(&v, p, 8);
        return (float)v;
    }
    case FFN_FILE_DTYPE_I64: {
        int64_t v;
        memcpy(&v, p, 8);
        return (float)v;
    }
    case FFN_FILE_DTYPE_I32: {
        int32_t v;
        memcpy(&v, p, 4);
        return (float)v;
    }
    case FFN_FILE_DTYPE_I16: {
        int16_t v;
        memcpy(&v, p, 2);
        return (float)v;
    }
    case FFN_FILE_DTYPE_I8: return (float)(int8_t)p[0];
    case FFN_FILE_DTYPE_U8: return (float)p[0];
    case FFN_FILE_DTYPE_BOOL: return p[0] ? 1.0f : 0.0f;
    case FFN_FILE_DTYPE_F8_E4M3: return ffn__f8_e4m3(p[0]);
    case FFN_FILE_DTYPE_F8_E5M2: return ffn__f8_e5m2(p[0]);
    case FFN_FILE_DTYPE_U16: {
        uint16_t v;
        memcpy(&v, p, 2);
        return (float)v;
    }
    case FFN_FILE_DTYPE_U32: {
        uint32_t v;
        memcpy(&v, p, 4);
        return (float)v;
    }
    case FFN_FILE_DTYPE_U64: {
        uint64_t v;
        memcpy(&v, p, 8);
        return (float)v;
    }
    case FFN_FILE_DTYPE_F8_E8M0: return ffn__f8_e8m0(p[0]);
    default: return NAN;  // block types are handled by the caller
    }
}

enum ffn_status ffn_file_tensor_to_f32(ffn_ctx_t ctx, float *dst, int64_t n,
                                       const struct ffn_file_tensor *t) {
    static const char fn[] = "ffn_file_tensor_to_f32";
    ffn_error_clear(ctx);
    if (!t || (n > 0 && !dst) || n < 0)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: NULL tensor or output", fn);
    const struct ffn_io_dtype_info *d = ffn_io_dtype_info(t->dtype);
    const int64_t numel = ffn_file_tensor_numel(t);
    uint64_t need;
    if (!d || numel < 0 || !ffn_io_dtype_bytes(t->dtype, (uint64_t)numel, &need))
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: %s: bad dtype or shape", fn,
                         t->name ? t->name : "tensor");
    if (numel != n)
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG,
                         "%s: %s holds %" PRId64 " elements; the output has room for %" PRId64, fn,
                         t->name ? t->name : "tensor", numel, n);
    if (need > t->nbytes || (need && !t->data))
        return ffn_error(ctx, FFN_STATUS_INVALID_ARG, "%s: %s: %zu bytes for %" PRIu64 " needed",
                         fn, t->name ? t->name : "tensor", t->nbytes, need);
    const uint8_t *p = t->data;
    if (t->dtype == FFN_FILE_DTYPE_Q8_0) {
        for (int64_t b = 0; b < n / FFN_IO_QK; b++, p += d->block_bytes) {
            uint16_t h;
            memcpy(&h, p, 2);
            const float scale = ffn_f16_to_f32(h);
            for (int i = 0; i < FFN_IO_QK; i++)
                dst[b * FFN_IO_QK + i] = scale * (float)(int8_t)p[2 + i];
        }
    } else if (t->dtype == FFN_FILE_DTYPE_Q4_0) {
        for (int64_t b = 0; b < n / FFN_IO_QK; b++, p += d->block_bytes) {
            uint16_t h;
            memcpy(&h, p, 2);
            const float scale = ffn_f16_to_f32(h);
            float *o = dst + b * FFN_IO_QK;
            for (int i = 0; i < FFN_IO_QK / 2; i++) {
                o[i] = scale * (float)((p[2 + i] & 0x0f) - 8);
                o[i + FFN_IO_QK / 2] = scale * (float)((p[2 + i] >> 4) - 8);
            }
        }
    } else if (t->dtype == FFN_FILE_DTYPE_F32) {
        memcpy(dst, p, (size_t)n * 4);
    } else {
        for (int64_t i = 0; i < n; i++)
            dst[i] = ffn__elem(t->dtype, p + (size_t)i * d->block_bytes);
    }
    return FFN_STATUS_OK;
}
