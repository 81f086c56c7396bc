# gnuplot script written by train_ffn
set terminal png size 800,500
set output 'docs/train_ffn.png'
set title 'plain GeLU vs SwiGLU FFN, equal parameters (d=64, m=256 vs 171)'
set xlabel 'step'
set ylabel 'MSE loss'
set logscale y
set grid
plot 'docs/train_ffn.dat' using 1:2 with lines title 'plain GeLU (m=256)', \
     'docs/train_ffn.dat' using 1:3 with lines title 'SwiGLU (m=171)'
