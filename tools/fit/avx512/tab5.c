// direct fits of Phi(-s) on intervals uniform in s^2: s in [sqrt(j*D), sqrt((j+1)*D)], D = S^2/NJ, t = s - c_j (c_j float midpoint)
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
typedef long double LD;
static int MODE;
static LD Phi(LD s) { return 0.5L * erfcl(s / sqrtl(2.0L)); }
static LD phi(LD s) {
    return expl(-s * s / 2) / sqrtl(2.0L * 3.14159265358979323846264338327950288L);
}
static LD F(LD s) { return MODE ? Phi(s) - s * phi(s) : Phi(s); }
static LD Wt(LD s) { return MODE ? Phi(s) + s * phi(s) : Phi(s); }
#define NT 2001
int main(int argc, char **argv) {
    int Dg = atoi(argv[1]);
    LD S = strtold(argv[2], 0);
    int NJ = atoi(argv[3]);
    LD B = strtold(argv[4], 0);
    MODE = atoi(argv[5]);
    int print = argc > 6;
    float Df = (float)(NJ / (S * (S + B)));
    static float C[12][32], C0L[32], CJ[32];
    LD worst = 0, worst_hi = 0;
    int wj = 0;
    for (int j = 0; j < NJ; j++) {
        LD a0 = (-B + sqrtl(B * B + 4 * j / (LD)Df)) / 2,
           b0 = (-B + sqrtl(B * B + 4 * (j + 1) / (LD)Df)) /
                2;  // interval from the float scale used for indexing
        float cj = (float)((a0 + b0) / 2);
        LD a = a0 - cj, b = b0 - cj;
        LD fixed[12];
        for (int m = Dg; m >= 1; m--) {
            int n = m + 1;
            LD A[12][13];
            for (int i = 0; i < n; i++) {
                LD th = 3.14159265358979323846L * (i + 0.5L) / n,
                   t = (a + b) / 2 + (b - a) / 2 * cosl(th);
                LD r = F(cj + t), tp = 1;
                for (int k = 0; k <= Dg; k++) {
                    if (k > m) r -= fixed[k] * tp;
                    tp *= t;
                }
                LD v = 1;
                for (int k = 0; k < n; k++) {
                    A[i][k] = v;
                    v *= t;
                }
                A[i][n] = r;
            }
            for (int k = 0; k < n; k++) {
                int p = k;
                for (int i = k + 1; i < n; i++)
                    if (fabsl(A[i][k]) > fabsl(A[p][k])) p = i;
                for (int q = 0; q <= n; q++) {
                    LD x = A[k][q];
                    A[k][q] = A[p][q];
                    A[p][q] = x;
                }
                for (int i = 0; i < n; i++)
                    if (i != k) {
                        LD f = A[i][k] / A[k][k];
                        for (int q = k; q <= n; q++) A[i][q] -= f * A[k][q];
                    }
            }
            fixed[m] = (float)(A[m][n] / A[m][m]);
        }
        LD lo = -1, hi = 1;
        for (int it = 0; it < 200; it++) {
            LD c0 = (lo + hi) / 2, emax = -1, emin = 1;
            for (int i = 0; i < NT; i++) {
                LD t = a + (b - a) * i / (NT - 1), R = 0, tp = t;
                for (int k = 1; k <= Dg; k++) {
                    R += fixed[k] * tp;
                    tp *= t;
                }
                LD e = (c0 + R - F(cj + t)) / Wt(cj + t);
                if (e > emax) emax = e;
                if (e < emin) emin = e;
            }
            if (emax + emin > 0)
                hi = c0;
            else
                lo = c0;
        }
        LD c0 = (lo + hi) / 2;
        float c0h = (float)c0, c0l = (float)(c0 - c0h);
        LD me = 0, meh = 0;
        for (int i = 0; i < NT; i++) {
            LD t = a + (b - a) * i / (NT - 1), R = 0, tp = t;
            for (int k = 1; k <= Dg; k++) {
                R += fixed[k] * tp;
                tp *= t;
            }
            LD e = fabsl(((LD)c0h + (LD)c0l + R - F(cj + t)) / Wt(cj + t));
            if (e > me) me = e;
            LD eh = fabsl(((LD)c0h + R - F(cj + t)) / Wt(cj + t));
            if (eh > meh) meh = eh;
        }
        if (me > worst) {
            worst = me;
            wj = j;
        }
        if (meh > worst_hi) worst_hi = meh;
        for (int k = 1; k <= Dg; k++) C[k][j] = fixed[k];
        C[0][j] = c0h;
        C0L[j] = c0l;
        CJ[j] = cj;
    }
    if (!print) {
        printf(
            "B=%Lg deg %d S=%Lg NJ=%d (scale %a): worst rel %.3Lg (%.3Lf u) at j=%d with c0 pair; "
            "%.3Lg (%.3Lf u) c0 float\n",
            B, Dg, S, NJ, Df, worst, worst / 5.9604644775390625e-8L, wj, worst_hi,
            worst_hi / 5.9604644775390625e-8L);
        return 0;
    }
    printf("scale %a\n", Df);
    for (int k = -1; k <= Dg + 1; k++) {
        printf("    {  // %s\n", k == -1       ? "centre"
                                 : k == 0      ? "c0 (high part)"
                                 : k == Dg + 1 ? "c0 (low part)"
                                               : (char[]){'c', '0' + k, 0});
        for (int j = 0; j < NJ; j++)
            printf("%s%a,%s", j % 4 == 0 ? "        " : " ",
                   k == -1       ? CJ[j]
                   : k == Dg + 1 ? C0L[j]
                                 : C[k][j],
                   j % 4 == 3 ? "\n" : "");
        printf("    },\n");
    }
}
