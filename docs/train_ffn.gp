# gnuplot script written by train_ffn
set terminal png size 800,700
set output 'docs/train_ffn.png'
set multiplot layout 2,1
set title 'plain GeLU vs SwiGLU FFN, equal parameters (d=64, m=256 vs 171), f32 and bf16'
set xlabel 'step'
set ylabel 'MSE loss'
set logscale y
set grid
plot 'docs/train_ffn.dat' using 1:2 with lines title 'plain GeLU (m=256), f32', \
     'docs/train_ffn.dat' using 1:3 with lines title 'SwiGLU (m=171), f32', \
     'docs/train_ffn.dat' using 1:4 with lines dt 2 title 'plain GeLU, bf16', \
     'docs/train_ffn.dat' using 1:5 with lines dt 2 title 'SwiGLU, bf16'
set title 'bf16 loss / f32 loss (the bf16 curves above lie on the f32 ones)'
unset logscale y
set ylabel 'ratio'
plot 'docs/train_ffn.dat' using 1:($4/$2) with lines title 'plain GeLU', \
     'docs/train_ffn.dat' using 1:($5/$3) with lines title 'SwiGLU'
unset multiplot
