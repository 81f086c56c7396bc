// simd.h — what every SIMD vocabulary of src/cpu/simd/ provides, and what they share. The
// activation kernels are written once (src/cpu/act/*.inc, over vmath.h and loops.h) against this
// vocabulary and compiled once per ISA: a file src/cpu/<isa>/<act>_<isa>.c includes one
// vocabulary header (simd_avx512.h, simd_avx2.h) and then the activation's body. Nothing here is
// installed; no state, no allocation.
//
// A vocabulary header defines (a new ISA, e.g. NEON or SVE, is one more such header, a folder of
// seven two-line files and a kernels_<isa>.inc):
//   types      ffn__vf (FFN_VL f32 lanes), ffn__vi (FFN_VL i32 lanes), ffn__vm (a lane mask)
//   names      FFN_V_ISA, the kernel suffix: FFN_V_FN(ffn_silu_fwd) is ffn_silu_fwd__<isa>
//   costs      FFN_V_FIXUP, FFN_V_SCALEF_1OP: 1 where nan_take, or scalef and the masked
//              operations, are one instruction each (then a general form may serve every lane);
//              FFN_V_FEW_TESTS: 1 where a mask test costs a vector move and a branch (the x·σ
//              gated backward then tests its rare and NaN lanes at once);
//              FFN_V_CACHE_WAYS, FFN_V_CACHE_WAYS_PLAIN, FFN_V_CACHE_AHEAD: how a call in cache
//              is walked (sub-ranges, 4 bits per op kind, bits 4k..4k+3 for enum ffn_kop k: 0 =
//              as when streaming; _PLAIN: those of the activations without a pre stage, ReLU
//              and identity; the op kinds, bits 1 << enum ffn_kop, whose pre stage runs a vector
//              ahead: 0xf = all); FFN_V_STREAM_WAYS, FFN_V_STREAM_AHEAD: the same for a
//              streaming call (default 0: ffn_stream_ways(), and 0xf; bf16 pairs keep the pre
//              stage ahead), FFN_V_STREAM_NT: op kinds whose streaming calls store
//              non-temporally whatever their output type (default 0: where ffn__nt_pays),
//              FFN_V_APART: op kinds whose big loops (streaming, accurate tier, parity mode) lie
//              in a function apart from the loop in cache (default 0; loops.h, enum ffn__part),
//              as plain numbers, which the file of an activation in src/cpu/<isa>/ may set for
//              its own kernels before it includes the vocabulary
//   tables     FFN_V_LUT_FAST: entries of the largest table one lookup instruction reads (8 or
//              32: 2^z takes a 16-entry table where that is one lookup, else an 8-entry one with
//              one more polynomial term; the GeLU-erf fast path has a table for 8 and for 32)
//   arithmetic ffn__c (broadcast), ffn__zero, ffn__negzero, add sub mul div, fmadd (a·b + c)
//              fmsub (a·b - c) fnmadd (-a·b + c) fnmsub (-a·b - c), each rounded once; min, max
//              (x86 rule: the second operand where either is NaN: the kernels rely on
//              max(c, x) keeping a NaN x); abs, neg_abs (sign bit set), floor, cvtt_i (truncate
//              to i32, INT_MIN where out of range), as_i / as_f (bit casts)
//              rcp14: 1/d within a relative 2^-14 for normal d ≥ 1
//              scalef(v, n): v·2^floor(n) rounded once (vscalefps), for n < 128 and any v;
//   integers   ci (broadcast), add_i, and_i, slli_i (i32 lanes)
//   masks      cmp_lt cmp_le cmp_gt (ordered: false on NaN), cmp_nlt cmp_nge cmp_nle (true on NaN),
//              isnan, signmask (sign bit set), is_sub (subnormal), is_zero_inf, is_inf,
//              is_ninf, is_special (NaN, ±0, ±inf); m_or m_and m_andn (a & ~b) m_not m_any
//              m_tail(k) (lanes < k); mask_mov(src, m, a) = m ? a : src, maskz_mov(m, a),
//              mask_mul(src, m, a, b), mask_sub(src, m, a, b), maskz_fmsub(m, a, b, c);
//              mask_sub_pos(src, x, a, b): a - b where x > 0, src where x < 0, either at ±0 and
//              NaN (a compare, or the sign bit where a blend reads it)
//   specials   nan_take(r, src): r, with src made quiet where src is NaN (FFN_V_FIXUP: 1 where
//              that is one instruction, then the NaN rule of a unary op uses it unconditionally);
//              zero_special(v): +0 where v is NaN, ±0 or ±inf, else v
//   lookups    lut16(tab, j), lut32(tab, j): tab[j mod 16], tab[j mod 32] per lane (tab
//              aligned to 64 bytes); lut_fast(tab, j): tab[j mod FFN_V_LUT_FAST]
//   memory     vload(p, i, dt, full, m): FFN_VL elements of dtype dt from p[i..] as f32 (all,
//              or the lanes of the tail mask m, others 0); vstore(p, i, dt, v, st, m, cvt):
//              rounded to dt by RNE, bits as ffn_f32_to_bf16 / ffn_f32_to_f16 (cvt: the CPU
//              has a bf16 conversion instruction, an ISA may ignore it); st = FFN_ST_FULL,
//              FFN_ST_MASK (the lanes of m) or FFN_ST_STREAM (non-temporal, p + i aligned to
//              the bytes of one vector); vround_to(v, dt): rounded to dt and back;
//              eo_load / eo_store: 2·FFN_VL bf16 as two vectors (odd and even elements) in one
//              load and one store (FFN_ST_FULL, or FFN_ST_STREAM aligned to FFN_VL·4 bytes);
//              sfence (orders non-temporal stores)
// Every lane is computed from its own inputs only, so each element's result is the same
// wherever it lies in a call.
#ifndef FFN_SIMD_H
#define FFN_SIMD_H

#include <stdint.h>

#include "cpu/kernels.h"

// Every helper is force-inlined so that each (in, out) dtype pair gets its own loop with the
// conversions resolved at compile time, and the per-vector functions (passed as constant
// function pointers) are inlined into it.
#define FFN_VINLINE static inline __attribute__((always_inline))

// The kernel suffix: FFN_V_FN(ffn_silu_fwd) is ffn_silu_fwd__avx512 under simd_avx512.h.
#define FFN_V_FN(name) FFN__V_CAT(name, FFN_V_ISA)
#define FFN__V_CAT(a, b) FFN__V_CAT2(a, b)
#define FFN__V_CAT2(a, b) a##__##b

// How a vector of outputs is stored: all lanes, the lanes of a tail mask, or non-temporally.
enum ffn__st { FFN_ST_FULL, FFN_ST_MASK, FFN_ST_STREAM };

#endif  // FFN_SIMD_H
