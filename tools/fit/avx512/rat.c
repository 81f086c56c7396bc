// rational fit P(s)/Q(s) (Q(0)=1 normalisation via q0=1) of g(s)=e^{s^2/2} Phi(-s) on [a,b], relative error,
// Loeb iteration: minimise sum w_i (P(s_i) - g_i Q(s_i))^2 / (g_i Q_prev(s_i))^2, then a few IRLS passes for minimax-ish
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
typedef long double LD;
static LD g(LD s){ return expl(s*s/2)*0.5L*erfcl(s/sqrtl(2.0L)); }
#define NS 2000
static int solve(int n, LD A[][40], LD *x){ // normal eq solve, A is n x (n+1)
  for(int k=0;k<n;k++){int p=k;for(int i=k+1;i<n;i++)if(fabsl(A[i][k])>fabsl(A[p][k]))p=i; for(int m=0;m<=n;m++){LD t=A[k][m];A[k][m]=A[p][m];A[p][m]=t;}
    if(A[k][k]==0)return -1; for(int i=0;i<n;i++)if(i!=k){LD f=A[i][k]/A[k][k]; for(int m=k;m<=n;m++)A[i][m]-=f*A[k][m];}}
  for(int k=0;k<n;k++)x[k]=A[k][n]/A[k][k]; return 0;}
int main(int argc,char**argv){
  int m=atoi(argv[1]), n=atoi(argv[2]); LD a=strtold(argv[3],0), b=strtold(argv[4],0); LD c=argc>5?strtold(argv[5],0):0; // t = s - c
  LD S[NS],G[NS],W[NS],Qp[NS]; for(int i=0;i<NS;i++){ S[i]=(a+b)/2-(b-a)/2*cosl(3.14159265358979L*(i+0.5L)/NS); G[i]=g(S[i]); W[i]=1; Qp[i]=1;}
  int nu=m+1+n; LD co[40];
  for(int it=0;it<60;it++){
    static LD A[40][40]; for(int i=0;i<nu;i++)for(int j=0;j<=nu;j++)A[i][j]=0;
    for(int i=0;i<NS;i++){ LD t=S[i]-c; LD row[40]; LD v=1; for(int k=0;k<=m;k++){row[k]=v; v*=t;} v=t; for(int k=0;k<n;k++){row[m+1+k]=-G[i]*v; v*=t;}
      LD rhs=G[i]; LD wt=W[i]/(G[i]*Qp[i]); wt*=wt;
      for(int p=0;p<nu;p++){ for(int q=0;q<nu;q++)A[p][q]+=wt*row[p]*row[q]; A[p][nu]+=wt*row[p]*rhs; } }
    if(solve(nu,A,co)){printf("singular\n");return 1;}
    LD maxe=0; LD E[NS];
    for(int i=0;i<NS;i++){ LD t=S[i]-c; LD P=0,Q=0; for(int k=m;k>=0;k--)P=P*t+co[k]; for(int k=n-1;k>=0;k--)Q=Q*t+co[m+1+k]; Q=Q*t+1; Qp[i]=Q; E[i]=fabsl(P/Q/G[i]-1); if(E[i]>maxe)maxe=E[i]; }
    if(it>=10) for(int i=0;i<NS;i++) W[i]*=powl(E[i]/maxe+1e-3L,0.3L) ; // Lawson-ish reweight
    if(it%10==9||it==59) fprintf(stderr,"it %d maxrel %.3Lg\n",it,maxe);
  }
  // float-coef evaluation error (Horner in long double with float coefs)
  float cf[40]; for(int k=0;k<nu;k++)cf[k]=(float)co[k];
  LD maxe=0,maxf=0,maxq=0,minq=1e30; for(int i=0;i<=20000;i++){ LD s=a+(b-a)*i/20000.0L, t=s-c; LD P=0,Q=0,Pf=0,Qf=0; for(int k=m;k>=0;k--){P=P*t+co[k];Pf=Pf*t+cf[k];} for(int k=n-1;k>=0;k--){Q=Q*t+co[m+1+k];Qf=Qf*t+cf[m+1+k];} Q=Q*t+1; Qf=Qf*t+1;
    LD e=fabsl(P/Q/g(s)-1), ef=fabsl(Pf/Qf/g(s)-1); if(e>maxe)maxe=e; if(ef>maxf)maxf=ef; if(Q>maxq)maxq=Q; if(Q<minq)minq=Q;}
  printf("(%d,%d) on [%Lg,%Lg] c=%Lg: maxrel %.3Lg (%.2Lf u), float coefs %.3Lg (%.2Lf u); Q in [%Lg, %Lg]\n",m,n,a,b,c,maxe,maxe/5.96e-8L,maxf,maxf/5.96e-8L,minq,maxq);
  printf("P:"); for(int k=0;k<=m;k++)printf(" %a",cf[k]); printf("\nQ: 1"); for(int k=0;k<n;k++)printf(" %a",cf[m+1+k]); printf("\n");
}
