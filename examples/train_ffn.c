// train_ffn.c — trains a plain GeLU FFN and a SwiGLU FFN of equal parameter count
// (m_gated = 2/3 · m_plain, so 3·d·m_gated ≈ 2·d·m_plain) on the same synthetic regression task
// with AdamW, both from the same seed, using only the public API (ffn_block_forward / _backward;
// the blocks read the weights where they lie, so the optimizer updates them in place). Each
// student trains twice: in f32, and in bf16 the mixed-precision way (f32 master weights that
// AdamW updates, a bf16 copy the block multiplies on the matrix engines, rounded from the
// masters after every step; f32 gradients; pre-activations saved in bf16).
// Prints the four loss curves and writes them as train_ffn.dat + train_ffn.gp, then runs gnuplot
// (if installed) to draw train_ffn.png.
//
// usage: train_ffn [--steps N] [--out DIR]      (default 1500 steps, DIR ".")
//
// Task: y* = tanh(x·A)·B for a fixed random teacher (A [d, 2d], B [2d, d]), x ~ U(-1, 1)^d;
// loss = mean((y - y*)²) over a fresh batch each step. Neither student's activation is the
// teacher's.
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ffn.h>

#define D 64         // d_model
#define M_PLAIN 256  // plain width (4d); the gated width is 2/3 of it
#define BATCH 128    // tokens per step
#define STEPS 1500
#define LOG_EVERY 50
#define LR 3e-3
#define BETA1 0.9
#define BETA2 0.999
#define EPS 1e-8
#define WEIGHT_DECAY 0.01
#define SEED 1234u

static uint64_t rng;
static float urand(void) {  // U(-1, 1)
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

// One parameter tensor with its gradient and AdamW moments.
struct param {
    float *w, *g, *m, *v;
    size_t n;
};

static struct param param_new(size_t n, float scale) {
    struct param p = {malloc(n * 4), calloc(n, 4), calloc(n, 4), calloc(n, 4), n};
    for (size_t i = 0; i < n; i++) p.w[i] = scale * urand();
    return p;
}

static void param_free(struct param *p) { free(p->w), free(p->g), free(p->m), free(p->v); }

// AdamW (decoupled weight decay), step t ≥ 1.
static void adamw(struct param *p, int t) {
    const double c1 = 1.0 - pow(BETA1, t), c2 = 1.0 - pow(BETA2, t);
    for (size_t i = 0; i < p->n; i++) {
        p->m[i] = (float)(BETA1 * p->m[i] + (1 - BETA1) * p->g[i]);
        p->v[i] = (float)(BETA2 * p->v[i] + (1 - BETA2) * p->g[i] * p->g[i]);
        const double mh = p->m[i] / c1, vh = p->v[i] / c2;
        p->w[i] -= (float)(LR * (mh / (sqrt(vh) + EPS) + WEIGHT_DECAY * p->w[i]));
    }
}

struct model {
    const char *name;
    ffn_block_t blk;
    struct param gate, up, down;  // [m, d], [m, d], [d, m] as nn.Linear stores them
    bool gated;
    bool bf16;  // the block multiplies bf16 copies of the f32 masters
    uint16_t *h_gate, *h_up, *h_down;
    int64_t m;
};

// The bf16 copy of a master tensor (round to nearest even), what the bf16 block reads.
static void to_bf16(uint16_t *h, const struct param *p) {
    for (size_t i = 0; i < p->n; i++) h[i] = ffn_f32_to_bf16(p->w[i]);
}

static int model_init(ffn_ctx_t ctx, struct model *md, const char *name, bool gated, int64_t m,
                      bool bf16) {
    rng = SEED;  // same seed for every student
    md->name = name;
    md->gated = gated;
    md->bf16 = bf16;
    md->m = m;
    const float s_in = 1.0f / sqrtf((float)D), s_out = 1.0f / sqrtf((float)m);
    md->up = param_new((size_t)(m * D), s_in);
    md->gate = gated ? param_new((size_t)(m * D), s_in) : (struct param){0};
    md->down = param_new((size_t)(D * m), s_out);
    struct ffn_block_spec spec = FFN_BLOCK_SPEC_INIT;
    spec.d_model = D;
    spec.d_ff = m;
    spec.gated = gated;
    spec.act = gated ? FFN_ACT_SILU : FFN_ACT_GELU_TANH;
    struct ffn_block_weights w = FFN_BLOCK_WEIGHTS_INIT;
    struct ffn_block_opts opts = FFN_BLOCK_OPTS_INIT;
    if (bf16) {
        md->h_up = malloc(md->up.n * 2), md->h_down = malloc(md->down.n * 2);
        md->h_gate = gated ? malloc(md->gate.n * 2) : NULL;
        to_bf16(md->h_up, &md->up), to_bf16(md->h_down, &md->down);
        if (gated) to_bf16(md->h_gate, &md->gate);
        w.up = ffn_weight_dense(md->h_up, FFN_DTYPE_BF16, FFN_WEIGHT_OUT_IN);
        w.down = ffn_weight_dense(md->h_down, FFN_DTYPE_BF16, FFN_WEIGHT_OUT_IN);
        if (gated) w.gate = ffn_weight_dense(md->h_gate, FFN_DTYPE_BF16, FFN_WEIGHT_OUT_IN);
        opts.save_dtype = FFN_DTYPE_BF16;
    } else {
        w.up = ffn_weight_dense(md->up.w, FFN_DTYPE_F32, FFN_WEIGHT_OUT_IN);
        w.down = ffn_weight_dense(md->down.w, FFN_DTYPE_F32, FFN_WEIGHT_OUT_IN);
        if (gated) w.gate = ffn_weight_dense(md->gate.w, FFN_DTYPE_F32, FFN_WEIGHT_OUT_IN);
    }
    if (ffn_block_create(ctx, &spec, &w, &opts, &md->blk)) {
        fprintf(stderr, "train_ffn: %s\n", ffn_ctx_last_error(ctx));
        return 1;
    }
    return 0;
}

// One step on batch (x, target): returns the loss before the update.
static double model_step(ffn_ctx_t ctx, struct model *md, const float *x, const float *target,
                         float *y, float *dy, int t) {
    struct ffn_tensor tx = ffn_tensor_2d((void *)x, FFN_DTYPE_F32, BATCH, D, D);
    struct ffn_tensor ty = ffn_tensor_2d(y, FFN_DTYPE_F32, BATCH, D, D);
    struct ffn_tensor tdy = ffn_tensor_2d(dy, FFN_DTYPE_F32, BATCH, D, D);
    if (ffn_block_forward(ctx, md->blk, &ty, &tx, FFN_BLOCK_POLICY_SAVE)) return NAN;
    // loss = mean((y - y*)²);  dL/dy = 2 (y - y*) / (BATCH·D)
    double loss = 0;
    for (int k = 0; k < BATCH * D; k++) {
        const double e = (double)y[k] - target[k];
        loss += e * e;
        dy[k] = (float)(2.0 * e / (BATCH * D));
    }
    struct ffn_block_grads g = FFN_BLOCK_GRADS_INIT;
    g.up = md->up.g, g.down = md->down.g, g.gate = md->gated ? md->gate.g : NULL;
    if (ffn_block_backward(ctx, md->blk, &g, NULL, &tdy)) return NAN;
    adamw(&md->up, t), adamw(&md->down, t);
    if (md->gated) adamw(&md->gate, t);
    if (md->bf16) {  // the block sees the updated masters through fresh bf16 copies
        to_bf16(md->h_up, &md->up), to_bf16(md->h_down, &md->down);
        if (md->gated) to_bf16(md->h_gate, &md->gate);
    }
    return loss / (BATCH * D);
}

int main(int argc, char **argv) {
    int steps = STEPS;
    const char *out = ".";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--steps") && i + 1 < argc)
            steps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--out") && i + 1 < argc)
            out = argv[++i];
        else {
            fprintf(stderr, "usage: train_ffn [--steps N] [--out DIR]\n");
            return 2;
        }
    }
    if (steps < 1) steps = 1;
    ffn_ctx_t ctx;
    if (ffn_ctx_create(NULL, &ctx)) return 1;
    int64_t m_gated = (2 * M_PLAIN + 2) / 3;  // 2/3 · m_plain, rounded: 171 for 256
    struct model plain, gated, plain16, gated16;
    if (model_init(ctx, &plain, "plain GeLU", false, M_PLAIN, false) ||
        model_init(ctx, &gated, "SwiGLU", true, m_gated, false) ||
        model_init(ctx, &plain16, "plain GeLU bf16", false, M_PLAIN, true) ||
        model_init(ctx, &gated16, "SwiGLU bf16", true, m_gated, true))
        return 1;
    printf(
        "train_ffn: d=%d, plain GeLU m=%d (%d params), SwiGLU m=%lld (%lld params), batch %d, "
        "AdamW lr %g, seed %u\n",
        D, M_PLAIN, 2 * D * M_PLAIN, (long long)m_gated, (long long)(3 * D * m_gated), BATCH, LR,
        SEED);

    // Teacher and data stream (its own generator state, the same batches for both students).
    rng = SEED ^ 0x5eedu;
    float *A = malloc(D * 2 * D * 4), *B = malloc(2 * D * D * 4);
    for (int k = 0; k < 2 * D * D; k++)
        A[k] = urand() * 2.0f / sqrtf(D), B[k] = urand() / sqrtf(2 * D);
    float *x = malloc(BATCH * D * 4), *tgt = malloc(BATCH * D * 4), *y = malloc(BATCH * D * 4);
    float *dy = malloc(BATCH * D * 4), *hid = malloc(2 * D * 4);

    char path[4096];
    snprintf(path, sizeof path, "%s/train_ffn.dat", out);
    FILE *dat = fopen(path, "w");
    if (!dat) {
        fprintf(stderr, "train_ffn: cannot write %s\n", path);
        return 1;
    }
    fprintf(dat, "# step  loss_plain_gelu  loss_swiglu  loss_plain_gelu_bf16  loss_swiglu_bf16\n");
    uint64_t data_rng = rng;
    double lp = 0, lg = 0, lp16 = 0, lg16 = 0;
    for (int t = 1; t <= steps; t++) {
        rng = data_rng;
        for (int k = 0; k < BATCH * D; k++) x[k] = urand();
        data_rng = rng;
        for (int r = 0; r < BATCH; r++) {
            for (int j = 0; j < 2 * D; j++) {
                double s = 0;
                for (int i = 0; i < D; i++) s += x[r * D + i] * A[i * 2 * D + j];
                hid[j] = (float)tanh(s);
            }
            for (int o = 0; o < D; o++) {
                double s = 0;
                for (int j = 0; j < 2 * D; j++) s += hid[j] * B[j * D + o];
                tgt[r * D + o] = (float)s;
            }
        }
        lp = model_step(ctx, &plain, x, tgt, y, dy, t);
        lg = model_step(ctx, &gated, x, tgt, y, dy, t);
        lp16 = model_step(ctx, &plain16, x, tgt, y, dy, t);
        lg16 = model_step(ctx, &gated16, x, tgt, y, dy, t);
        if (isnan(lp) || isnan(lg) || isnan(lp16) || isnan(lg16)) {
            fprintf(stderr, "train_ffn: step %d failed: %s\n", t, ffn_ctx_last_error(ctx));
            return 1;
        }
        fprintf(dat, "%d %.6g %.6g %.6g %.6g\n", t, lp, lg, lp16, lg16);
        if (t == 1 || t % LOG_EVERY == 0 || t == steps)
            printf("step %5d  loss plain GeLU %.5f  SwiGLU %.5f  (bf16: %.5f  %.5f)\n", t, lp, lg,
                   lp16, lg16);
    }
    fclose(dat);
    printf(
        "final loss: plain GeLU %.5f, SwiGLU %.5f (equal parameter count); bf16 compute: "
        "%.5f, %.5f\n",
        lp, lg, lp16, lg16);

    snprintf(path, sizeof path, "%s/train_ffn.gp", out);
    FILE *gp = fopen(path, "w");
    if (gp) {
        fprintf(gp,
                "# gnuplot script written by train_ffn\n"
                "set terminal png size 800,700\n"
                "set output '%s/train_ffn.png'\n"
                "set multiplot layout 2,1\n"
                "set title 'plain GeLU vs SwiGLU FFN, equal parameters (d=%d, m=%d vs %lld), "
                "f32 and bf16'\n"
                "set xlabel 'step'\nset ylabel 'MSE loss'\nset logscale y\nset grid\n"
                "plot '%s/train_ffn.dat' using 1:2 with lines title 'plain GeLU (m=%d), f32', \\\n"
                "     '%s/train_ffn.dat' using 1:3 with lines title 'SwiGLU (m=%lld), f32', \\\n"
                "     '%s/train_ffn.dat' using 1:4 with lines dt 2 title 'plain GeLU, bf16', \\\n"
                "     '%s/train_ffn.dat' using 1:5 with lines dt 2 title 'SwiGLU, bf16'\n"
                "set title 'bf16 loss / f32 loss (the bf16 curves above lie on the f32 ones)'\n"
                "unset logscale y\nset ylabel 'ratio'\n"
                "plot '%s/train_ffn.dat' using 1:($4/$2) with lines title 'plain GeLU', \\\n"
                "     '%s/train_ffn.dat' using 1:($5/$3) with lines title 'SwiGLU'\n"
                "unset multiplot\n",
                out, D, M_PLAIN, (long long)m_gated, out, M_PLAIN, out, (long long)m_gated, out,
                out, out, out);
        fclose(gp);
        char cmd[8400];
        snprintf(cmd, sizeof cmd, "command -v gnuplot >/dev/null 2>&1 && gnuplot '%s'", path);
        if (system(cmd) == 0)
            printf("wrote %s/train_ffn.png\n", out);
        else
            printf("gnuplot not found: %s has the plot script\n", path);
    }
    struct model *all[] = {&plain, &gated, &plain16, &gated16};
    for (int k = 0; k < 4; k++) {
        ffn_block_destroy(all[k]->blk);
        param_free(&all[k]->up), param_free(&all[k]->down);
        if (all[k]->gated) param_free(&all[k]->gate);
        free(all[k]->h_up), free(all[k]->h_down), free(all[k]->h_gate);
    }
    free(A), free(B), free(x), free(tgt), free(y), free(dy), free(hid);
    ffn_ctx_destroy(ctx);
    return 0;
}
