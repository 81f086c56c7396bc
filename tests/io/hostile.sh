#!/bin/sh
# hostile.sh FFN CASES — every hostile checkpoint listed in CASES ("path<TAB>substring" lines, made
# by `io_testgen hostile`) must make `ffn info` exit with status 2 and print exactly one line on
# stderr, naming the file, that contains the substring: no crash, no sanitizer report.
ffn=$1
cases=$2
n=0
bad=0
tab=$(printf '\t')
while IFS="$tab" read -r path sub; do
    n=$((n + 1))
    err=$("$ffn" info "$path" 2>&1 >/dev/null)
    rc=$?
    lines=$(printf '%s\n' "$err" | wc -l)
    ok=1
    [ "$rc" = 2 ] || ok=0
    [ "$lines" = 1 ] || ok=0
    case "$err" in *"$sub"*) ;; *) ok=0 ;; esac
    case "$err" in "ffn info: "*) ;; *) ok=0 ;; esac
    base=$(basename "$path")
    case "$err" in *"$base"*) ;; *) ok=0 ;; esac
    if [ $ok = 0 ]; then
        bad=$((bad + 1))
        echo "FAIL: $path: exit $rc, $lines line(s), expected '$sub':"
        printf '%s\n' "$err" | head -20
    else
        echo "ok: $base: $err"
    fi
done < "$cases"
echo "$n hostile files, $bad failed"
[ "$n" -gt 30 ] && [ "$bad" = 0 ]
