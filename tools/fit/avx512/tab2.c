// centered per-interval fits of g on [c_j - w/2, c_j + w/2], c_j = j * W (float W), t = s - c_j, degree D, j = 0..NJ-1.
// coefficients rounded to float from the top (refit), c0 as float (and lo part, printed separately); max rel error.
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
typedef long double LD;
static LD g(LD s) { return expl(s * s / 2) * 0.5L * erfcl(s / sqrtl(2.0L)); }
#define NT 2001
int main(int argc, char **argv) {
    int D = atoi(argv[1]); float W = strtof(argv[2], 0); int NJ = atoi(argv[3]); int print = argc > 4;
    static float C[12][32], C0L[32]; LD worst = 0, worst_hi = 0;
    for (int j = 0; j < NJ; j++) {
        LD c = (LD)j * (LD)W, a = j == 0 ? 0 : -(LD)W / 2, b = (LD)W / 2;
        LD fixed[12];
        for (int m = D; m >= 1; m--) {
            int n = m + 1; LD A[12][13];
            for (int i = 0; i < n; i++) {
                LD th = 3.14159265358979323846L * (i + 0.5L) / n, t = (a + b) / 2 + (b - a) / 2 * cosl(th);
                LD r = g(c + t), tp = 1;
                for (int k = 0; k <= D; k++) { if (k > m) r -= fixed[k] * tp; tp *= t; }
                LD v = 1; for (int k = 0; k < n; k++) { A[i][k] = v; v *= t; } A[i][n] = r;
            }
            for (int k = 0; k < n; k++) { int p = k; for (int i = k + 1; i < n; i++) if (fabsl(A[i][k]) > fabsl(A[p][k])) p = i;
                for (int q = 0; q <= n; q++) { LD x = A[k][q]; A[k][q] = A[p][q]; A[p][q] = x; }
                for (int i = 0; i < n; i++) if (i != k) { LD f = A[i][k] / A[k][k]; for (int q = k; q <= n; q++) A[i][q] -= f * A[k][q]; } }
            fixed[m] = (float)(A[m][n] / A[m][m]);
        }
        LD lo = 0, hi = 1;
        for (int it = 0; it < 200; it++) {
            LD c0 = (lo + hi) / 2, emax = -1, emin = 1;
            for (int i = 0; i < NT; i++) { LD t = a + (b - a) * i / (NT - 1), R = 0, tp = t; for (int k = 1; k <= D; k++) { R += fixed[k] * tp; tp *= t; }
                LD e = (c0 + R) / g(c + t) - 1; if (e > emax) emax = e; if (e < emin) emin = e; }
            if (emax + emin > 0) hi = c0; else lo = c0;
        }
        LD c0 = (lo + hi) / 2; float c0h = (float)c0, c0l = (float)(c0 - c0h);
        LD me = 0, meh = 0;
        for (int i = 0; i < NT; i++) { LD t = a + (b - a) * i / (NT - 1), R = 0, tp = t; for (int k = 1; k <= D; k++) { R += fixed[k] * tp; tp *= t; }
            LD e = fabsl(((LD)c0h + (LD)c0l + R) / g(c + t) - 1); if (e > me) me = e;
            LD eh = fabsl(((LD)c0h + R) / g(c + t) - 1); if (eh > meh) meh = eh; }
        if (me > worst) worst = me; if (meh > worst_hi) worst_hi = meh;
        for (int k = 1; k <= D; k++) C[k][j] = fixed[k]; C[0][j] = c0h; C0L[j] = c0l;
    }
    if (!print) { printf("D=%d W=%g NJ=%d: worst rel %.3Lg (%.3Lf u) with c0 pair, %.3Lg (%.3Lf u) c0 float only\n", D, W, NJ, worst, worst / 5.9604644775390625e-8L, worst_hi, worst_hi / 5.9604644775390625e-8L); return 0; }
    for (int k = 0; k <= D + 1; k++) {
        printf("    {  // %s\n", k == 0 ? "c0 (high part)" : k == D + 1 ? "c0 (low part)" : (char[]){'c', '0' + k, 0});
        for (int j = 0; j < NJ; j++) printf("%s%a,%s", j % 4 == 0 ? "        " : " ", k == D + 1 ? C0L[j] : C[k][j], j % 4 == 3 ? "\n" : "");
        printf("    },\n");
    }
}
