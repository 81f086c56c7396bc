// rational P(s)/Q(s), Q = 1 + q1 s + ..., fit of g(s) = e^{s^2/2}Phi(-s) on [0,b] (relative), coefficients rounded to
// float one at a time with refits; then f32 evaluation error (Horner with fmaf) over a dense grid.
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
typedef long double LD;
static LD g(LD s) { return expl(s * s / 2) * 0.5L * erfcl(s / sqrtl(2.0L)); }
#define NS 3000
static int m, n, nu; static LD S[NS], G[NS], W[NS], Qp[NS]; static int isfix[40]; static LD fixv[40];
static int solve(int k, LD A[][41], LD *x) {
    for (int c = 0; c < k; c++) { int p = c; for (int i = c + 1; i < k; i++) if (fabsl(A[i][c]) > fabsl(A[p][c])) p = i;
        for (int q = 0; q <= k; q++) { LD t = A[c][q]; A[c][q] = A[p][q]; A[p][q] = t; }
        if (A[c][c] == 0) return -1; for (int i = 0; i < k; i++) if (i != c) { LD f = A[i][c] / A[c][c]; for (int q = c; q <= k; q++) A[i][q] -= f * A[c][q]; } }
    for (int c = 0; c < k; c++) x[c] = A[c][k] / A[c][c]; return 0;
}
static LD evalr(const LD *co, LD s) { LD P = 0, Q = 0; for (int k = m; k >= 0; k--) P = P * s + co[k]; for (int k = n - 1; k >= 0; k--) Q = Q * s + co[m + 1 + k]; Q = Q * s + 1; return P / Q; }
static LD fit(LD *co, int iters) {
    for (int i = 0; i < NS; i++) { W[i] = 1; Qp[i] = 1; }
    LD maxe = 0;
    for (int it = 0; it < iters; it++) {
        int idx[40], k = 0; for (int c = 0; c < nu; c++) if (!isfix[c]) idx[k++] = c;
        static LD A[40][41]; for (int i = 0; i < k; i++) for (int j = 0; j <= k; j++) A[i][j] = 0;
        for (int i = 0; i < NS; i++) {
            LD s = S[i], row[40], v = 1; for (int c = 0; c <= m; c++) { row[c] = v; v *= s; } v = s; for (int c = 0; c < n; c++) { row[m + 1 + c] = -G[i] * v; v *= s; }
            LD rhs = G[i]; for (int c = 0; c < nu; c++) if (isfix[c]) rhs -= row[c] * fixv[c];
            LD wt = W[i] / (G[i] * Qp[i]); wt *= wt;
            for (int p = 0; p < k; p++) { for (int q = 0; q < k; q++) A[p][q] += wt * row[idx[p]] * row[idx[q]]; A[p][k] += wt * row[idx[p]] * rhs; }
        }
        LD x[40]; if (solve(k, A, x)) return 1;
        for (int c = 0; c < nu; c++) co[c] = isfix[c] ? fixv[c] : 0; for (int p = 0; p < k; p++) co[idx[p]] = x[p];
        maxe = 0; LD E[NS];
        for (int i = 0; i < NS; i++) { LD s = S[i], Q = 0; for (int c = n - 1; c >= 0; c--) Q = Q * s + co[m + 1 + c]; Q = Q * s + 1; Qp[i] = Q; E[i] = fabsl(evalr(co, s) / G[i] - 1); if (E[i] > maxe) maxe = E[i]; }
        if (it >= 8) for (int i = 0; i < NS; i++) W[i] *= powl(E[i] / maxe + 1e-3L, 0.3L);
    }
    return maxe;
}
int main(int argc, char **argv) {
    m = atoi(argv[1]); n = atoi(argv[2]); LD b = strtold(argv[3], 0); nu = m + 1 + n;
    for (int i = 0; i < NS; i++) { S[i] = b / 2 - b / 2 * cosl(3.14159265358979L * (i + 0.5L) / NS); G[i] = g(S[i]); }
    LD co[40]; LD e0 = fit(co, 60);
    // round: Q from highest degree down, then P from highest degree down
    int order[40], no = 0; for (int c = n - 1; c >= 0; c--) order[no++] = m + 1 + c; for (int c = m; c >= 0; c--) order[no++] = c;
    LD e = e0;
    for (int o = 0; o < no; o++) { int c = order[o]; isfix[c] = 1; fixv[c] = (float)co[c]; if (o < no - 1) e = fit(co, 60); else { co[c] = fixv[c]; } }
    float cf[40]; for (int c = 0; c < nu; c++) cf[c] = (float)co[c];
    // exact-arithmetic error with float coefficients, and f32 Horner evaluation error
    LD me = 0, mf = 0;
    for (int i = 0; i <= 200000; i++) { LD s = b * i / 200000.0L; LD ex = g(s);
        LD P = 0, Q = 0; for (int k = m; k >= 0; k--) P = P * s + cf[k]; for (int k = n - 1; k >= 0; k--) Q = Q * s + cf[m + 1 + k]; Q = Q * s + 1;
        LD er = fabsl(P / Q / ex - 1); if (er > me) me = er;
        float sf = (float)s; if ((LD)sf != s) continue;
        float Pf = cf[m]; for (int k = m - 1; k >= 0; k--) Pf = fmaf(Pf, sf, cf[k]);
        float Qf = cf[m + n]; for (int k = n - 2; k >= 0; k--) Qf = fmaf(Qf, sf, cf[m + 1 + k]); Qf = fmaf(Qf, sf, 1.0f);
        LD ef = fabsl(((LD)Pf / (LD)Qf) / g((LD)sf) - 1); if (ef > mf) mf = ef; }
    printf("(%d,%d) [0,%Lg]: exact fit %.3Lg (%.2Lf u); float coefs %.3Lg (%.2Lf u); f32 Horner P/Q (exact div) %.3Lg (%.2Lf u)\n", m, n, b,
           e0, e0 / 5.96e-8L, me, me / 5.96e-8L, mf, mf / 5.96e-8L);
    printf("P:"); for (int k = 0; k <= m; k++) printf(" %a", cf[k]); printf("\nQ: 1"); for (int k = 0; k < n; k++) printf(" %a", cf[m + 1 + k]); printf("\n");
}
