#!/bin/sh
# check.sh RC SUBSTRING CMD [ARGS...] — runs CMD; passes when its exit status is RC and its output
# (stdout and stderr together) contains SUBSTRING. Prints the output on failure.
want=$1
sub=$2
shift 2
out=$("$@" 2>&1)
rc=$?
if [ "$rc" != "$want" ]; then
    echo "FAIL: exit status $rc, expected $want: $*"
    echo "$out" | head -60
    exit 1
fi
case "$out" in
*"$sub"*) ;;
*)
    echo "FAIL: the output lacks '$sub': $*"
    echo "$out" | head -60
    exit 1
    ;;
esac
echo "ok: $*"
echo "$out" | head -30
