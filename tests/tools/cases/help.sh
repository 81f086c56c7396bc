# Class 9 (--help) — every subcommand's --help (and -h) prints its usage on stdout and exits 0;
# no command or a bad one prints the usage on stderr and exits 2.
for c in check ulp size info run verify convert; do
    t 0 "usage: ffn $c" stdout -- "$FFN" "$c" --help
    t 0 "usage: ffn $c" stdout -- "$FFN" "$c" -h
done
t 0 "usage: ffn bench act" stdout -- "$FFN" bench act --help
t 0 "usage: ffn bench block" stdout -- "$FFN" bench block --help
t 0 "usage: ffn bench act|block" stdout -- "$FFN" bench --help
t 0 "usage: ffn bench act|block" stdout -- "$FFN" bench -h
t 2 "usage: ffn bench act|block" -- "$FFN" bench
t 0 "usage: ffn <command>" stdout -- "$FFN" --help
t 0 "usage: ffn <command>" stdout -- "$FFN" help
t 2 "usage: ffn <command>" -- "$FFN"
t 2 "ffn: unknown command 'nope'" -- "$FFN" nope
