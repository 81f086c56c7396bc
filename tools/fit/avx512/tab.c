// per-interval fits of g(s) = e^{s^2/2} Phi(-s) on [j/2, (j+1)/2], t = s - j/2, degree 6, j = 0..31:
// c6..c1 rounded to float one at a time (lower coefficients refitted after each), c0 minimax as a float pair.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
typedef long double LD;
static LD g(LD s) { return expl(s * s / 2) * 0.5L * erfcl(s / sqrtl(2.0L)); }
#define DEG 6
#define NT 4001
int main(int argc, char **argv) {
    int print = argc > 1;
    float C[DEG + 1][32], C0L[32];
    LD worst = 0;
    for (int j = 0; j < 32; j++) {
        LD a = 0, b = 0.5L;
        LD fixed[DEG + 1];
        int nfix = 0;  // coefficients k > m already fixed
        for (int m = DEG; m >= 1; m--) {
            int n = m + 1;
            LD A[10][11];
            for (int i = 0; i < n; i++) {
                LD th = 3.14159265358979323846L * (i + 0.5L) / n,
                   t = (a + b) / 2 + (b - a) / 2 * cosl(th);
                LD r = g(j * 0.5L + t);
                LD tp = 1;
                for (int k = 0; k <= DEG; k++) {
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
            nfix++;
        }
        // c0: minimise max |(c0 + R(t))/g - 1| by bisection on the balance of the extremes
        LD lo = 0, hi = 1;
        for (int it = 0; it < 200; it++) {
            LD c0 = (lo + hi) / 2, emax = -1, emin = 1;
            for (int i = 0; i < NT; i++) {
                LD t = b * i / (NT - 1), R = 0, tp = t;
                for (int k = 1; k <= DEG; k++) {
                    R += fixed[k] * tp;
                    tp *= t;
                }
                LD e = (c0 + R) / g(j * 0.5L + t) - 1;
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
        LD me = 0;
        for (int i = 0; i < NT; i++) {
            LD t = b * i / (NT - 1), R = 0, tp = t;
            for (int k = 1; k <= DEG; k++) {
                R += fixed[k] * tp;
                tp *= t;
            }
            LD e = fabsl(((LD)c0h + (LD)c0l + R) / g(j * 0.5L + t) - 1);
            if (e > me) me = e;
        }
        if (me > worst) worst = me;
        for (int k = 1; k <= DEG; k++) C[k][j] = (float)fixed[k];
        C[0][j] = c0h;
        C0L[j] = c0l;
        if (!print) printf("j=%2d maxrel %.3Lg (%.3Lf u)\n", j, me, me / 5.9604644775390625e-8L);
    }
    if (!print) {
        printf("worst %.3Lg (%.3Lf u)\n", worst, worst / 5.9604644775390625e-8L);
        return 0;
    }
    for (int k = 0; k <= DEG + 1; k++) {
        printf("    {  // %s\n", k == 0         ? "c0 (high part)"
                                 : k == DEG + 1 ? "c0 (low part)"
                                                : (char[]){'c', '0' + k, 0});
        for (int j = 0; j < 32; j++)
            printf("%s%a,%s", j % 4 == 0 ? "        " : " ", k == DEG + 1 ? C0L[j] : C[k][j],
                   j % 4 == 3 ? "\n" : "");
        printf("    },\n");
    }
}
