// block_ref.h — the tests' own FFN block in double, written from the textbook formulas and
// independent of the library (no ffn_* call): activations, forward, loss, and the packing of
// logical weights into every stored layout/orientation the library accepts (ref_store; and back,
// for gradients). Shared by the block tests; header-only (static functions).
#ifndef FFN_TEST_BLOCK_REF_H
#define FFN_TEST_BLOCK_REF_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "ffn.h"

// act(x) by the defining formulas (not the library's stable forms: an independent oracle).
static double ref_act(enum ffn_act act, double x) {
    switch (act) {
    case FFN_ACT_GELU_TANH: {
        const double u = sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x);
        return 0.5 * x * (1.0 + tanh(u));
    }
    case FFN_ACT_GELU_ERF: return 0.5 * x * (1.0 + erf(x / sqrt(2.0)));
    case FFN_ACT_SILU: return x / (1.0 + exp(-x));
    case FFN_ACT_RELU: return x > 0 ? x : 0.0;
    case FFN_ACT_SIGMOID: return 1.0 / (1.0 + exp(-x));
    case FFN_ACT_IDENTITY: return x;
    case FFN_ACT_QUICK_GELU: return x / (1.0 + exp(-1.702 * x));
    default: return NAN;
    }
}

// Logical weights, as nn.Linear holds them: Wg, Wu [m][d] (out, in), Wd [d][m]; biases.
struct ref_ffn {
    int64_t d, m;
    enum ffn_act act;
    bool gated, bias;
    double *Wg, *Wu, *Wd, *bg, *bu, *bd;
};

// y[T][d] = down(act(x·Wgᵀ + bg) ⊙ (x·Wuᵀ + bu)) (gated) or down(act(x·Wuᵀ + bu)) (plain).
static void ref_forward(const struct ref_ffn *f, int64_t T, const double *x, double *y) {
    const int64_t d = f->d, m = f->m;
    double *h = malloc((size_t)m * sizeof(double));
    for (int64_t t = 0; t < T; t++) {
        for (int64_t j = 0; j < m; j++) {
            double u = f->bias ? f->bu[j] : 0.0, g = f->bias && f->gated ? f->bg[j] : 0.0;
            for (int64_t i = 0; i < d; i++) {
                u += x[t * d + i] * f->Wu[j * d + i];
                if (f->gated) g += x[t * d + i] * f->Wg[j * d + i];
            }
            h[j] = f->gated ? ref_act(f->act, g) * u : ref_act(f->act, u);
        }
        for (int64_t o = 0; o < d; o++) {
            double s = f->bias ? f->bd[o] : 0.0;
            for (int64_t j = 0; j < m; j++) s += h[j] * f->Wd[o * m + j];
            y[t * d + o] = s;
        }
    }
    free(h);
}

// L = Σ y ⊙ dy: its gradient is the backward of the block for upstream gradient dy.
static double ref_loss(const struct ref_ffn *f, int64_t T, const double *x, const double *dy) {
    double *y = malloc((size_t)(T * f->d) * sizeof(double)), L = 0.0;
    ref_forward(f, T, x, y);
    for (int64_t k = 0; k < T * f->d; k++) L += y[k] * dy[k];
    free(y);
    return L;
}

// Central difference dL/dp for every element of p[n] (restored afterwards), step h.
static void ref_fd(const struct ref_ffn *f, int64_t T, double *x, const double *dy, double *p,
                   int64_t n, double *g) {
    const double h = 1e-6;
    for (int64_t k = 0; k < n; k++) {
        const double v = p[k];
        p[k] = v + h;
        const double lp = ref_loss(f, T, x, dy);
        p[k] = v - h;
        const double lm = ref_loss(f, T, x, dy);
        p[k] = v;
        g[k] = (lp - lm) / (2.0 * h);
    }
}

// --- stored layouts -------------------------------------------------------------------------

// Element (o, i) of a logical out × in matrix in a stored array of the given orientation.
static int64_t ref_idx(enum ffn_weight_orient orient, int64_t n_out, int64_t n_in, int64_t o,
                       int64_t i, int64_t row_stride) {
    if (orient == FFN_WEIGHT_OUT_IN) return o * (row_stride ? row_stride : n_in) + i;
    return i * (row_stride ? row_stride : n_out) + o;
}

// Position on the fused 2m output axis of output j of the gate (up = false) or up (up = true).
static int64_t ref_fused_pos(enum ffn_gate_up_layout layout, int64_t groups, int64_t m, bool up,
                             int64_t j) {
    switch (layout) {
    case FFN_GATE_UP_FUSED: return up ? m + j : j;
    case FFN_GATE_UP_FUSED_UP_FIRST: return up ? j : m + j;
    case FFN_GATE_UP_INTERLEAVED: return 2 * j + (up ? 1 : 0);
    case FFN_GATE_UP_BLOCKED: {
        const int64_t gw = m / groups;
        return (j / gw) * 2 * gw + (up ? gw : 0) + j % gw;
    }
    default: return up ? m + j : j;  // SEPARATE: not fused (callers do not ask)
    }
}

// The weights and biases of f as one configuration stores them, in f32: w[0..3] the gate, up,
// fused gate_up and down matrices (orientations o_first / o_down; gate and up, or gate_up, as the
// layout has them), w[4..7] the biases b_gate, b_up, b_gate_up, b_down (when f has biases). Only
// the members that configuration holds are written.
static inline void ref_store(const struct ref_ffn *f, enum ffn_gate_up_layout layout,
                             int64_t groups, enum ffn_weight_orient o_first,
                             enum ffn_weight_orient o_down, float *const w[8]) {
    const int64_t d = f->d, m = f->m;
    const bool fused = f->gated && layout != FFN_GATE_UP_SEPARATE;
    for (int64_t j = 0; j < m; j++)
        for (int64_t i = 0; i < d; i++) {
            if (fused) {
                w[2][ref_idx(o_first, 2 * m, d, ref_fused_pos(layout, groups, m, false, j), i, 0)] =
                    (float)f->Wg[j * d + i];
                w[2][ref_idx(o_first, 2 * m, d, ref_fused_pos(layout, groups, m, true, j), i, 0)] =
                    (float)f->Wu[j * d + i];
            } else {
                if (f->gated) w[0][ref_idx(o_first, m, d, j, i, 0)] = (float)f->Wg[j * d + i];
                w[1][ref_idx(o_first, m, d, j, i, 0)] = (float)f->Wu[j * d + i];
            }
            w[3][ref_idx(o_down, d, m, i, j, 0)] = (float)f->Wd[i * m + j];
        }
    if (!f->bias) return;
    for (int64_t j = 0; j < m; j++) {
        if (fused) {
            w[6][ref_fused_pos(layout, groups, m, false, j)] = (float)f->bg[j];
            w[6][ref_fused_pos(layout, groups, m, true, j)] = (float)f->bu[j];
        } else {
            if (f->gated) w[4][j] = (float)f->bg[j];
            w[5][j] = (float)f->bu[j];
        }
    }
    for (int64_t i = 0; i < d; i++) w[7][i] = (float)f->bd[i];
}

#endif  // FFN_TEST_BLOCK_REF_H
