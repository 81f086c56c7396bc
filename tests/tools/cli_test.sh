#!/usr/bin/env bash
# cli_test.sh FFN CLI_GEN DATA CASES — runs one class of the CLI edge tests: CASES (a bash file of
# `t` lines, tests/tools/cases/<class>.sh) is sourced after CLI_GEN has written its inputs into
# $G, inside a fresh temporary work folder $W (removed afterwards). Each case runs under
# `timeout` ($FFN_CASE_LIMIT seconds, 30 by default), so a hang is a failure, not a stall.
#
#   t RC SUBSTRING [CHECK...] -- COMMAND [ARGS...]
#       passes when COMMAND exits with RC and its output (stdout and stderr) holds SUBSTRING, and
#       every CHECK holds:
#         clean    the output holds no control character but newlines (no ESC, CR, BEL, ...)
#         oneline  stderr is exactly one line
#         noint    no internal function name (ffn_xxx) in the output
#         stdout   SUBSTRING is on stdout and stderr is empty
#         no:TEXT  the output does not hold TEXT
#   p DESCRIPTION -- COMMAND [ARGS...]
#       a condition after the previous case (e.g. "the FIFO is still a FIFO"): COMMAND must
#       succeed; counts as part of that case.
#   skip WHY     notes a case that cannot run here (e.g. mknod needs root).
#
# Variables for the cases: FFN, DATA (tests/data), G (generated inputs), W (work folder),
# ROOT (1 when running as root), ASAN (1 in the sanitizer build).
set -u
FFN=$1
GEN=$2
DATA=$3
CASES=$4
LIMIT=${FFN_CASE_LIMIT:-30}
W=$(mktemp -d "${TMPDIR:-/tmp}/ffn-cli.XXXXXX") || exit 1
trap 'rm -rf "$W"' EXIT
G=$W/gen
ROOT=0
[ "$(id -u)" = 0 ] && ROOT=1
ASAN=0
case "${FFN_SANITIZE:-0}" in 1 | ON | on | TRUE | true) ASAN=1 ;; esac
"$GEN" "$G" "$DATA/hf/llama/io.safetensors" >/dev/null || {
    echo "FAIL: cli_gen could not write the inputs"
    exit 1
}

n=0
bad=0
case_failed=0

fail() {
    echo "FAIL [$n]: $1"
    echo "    command: $2"
    [ -s "$W/.out" ] && sed -e 's/^/    stdout: /' "$W/.out" | head -12 | cat -v
    [ -s "$W/.err" ] && sed -e 's/^/    stderr: /' "$W/.err" | head -12 | cat -v
    bad=$((bad + 1))
    case_failed=1
}

t() {
    local want=$1 sub=$2
    shift 2
    local checks=() c
    while [ $# -gt 0 ] && [ "$1" != -- ]; do
        checks+=("$1")
        shift
    done
    shift  # --
    n=$((n + 1))
    case_failed=0
    local cmd="$*"
    timeout -k 5 "$LIMIT" "$@" >"$W/.out" 2>"$W/.err" </dev/null
    local rc=$?
    if [ $rc = 124 ] || [ $rc = 137 ]; then
        fail "timed out after ${LIMIT}s (a hang)" "$cmd"
        return
    fi
    if [ "$rc" != "$want" ]; then
        fail "exit status $rc, expected $want" "$cmd"
        return
    fi
    local where="$W/.all"
    cat "$W/.out" "$W/.err" >"$W/.all"
    for c in "${checks[@]}"; do
        case "$c" in
        stdout)
            where="$W/.out"
            if [ -s "$W/.err" ]; then
                fail "stderr is not empty" "$cmd"
                return
            fi
            ;;
        clean)
            if LC_ALL=C grep -q "$(printf '[\001-\011\013-\037\177]')" "$W/.all"; then
                fail "a raw control character reached the output" "$cmd"
                return
            fi
            ;;
        oneline)
            if [ "$(wc -l <"$W/.err")" != 1 ]; then
                fail "stderr is not exactly one line" "$cmd"
                return
            fi
            ;;
        no:*)
            if LC_ALL=C grep -qF -- "${c#no:}" "$W/.all"; then
                fail "the output holds '${c#no:}'" "$cmd"
                return
            fi
            ;;
        noint)
            if LC_ALL=C grep -qE 'ffn_[a-z0-9_]+' "$W/.all"; then
                fail "an internal function name reached the output" "$cmd"
                return
            fi
            ;;
        *)
            fail "unknown check '$c' in the case table" "$cmd"
            return
            ;;
        esac
    done
    if ! LC_ALL=C grep -qF -- "$sub" "$where"; then
        fail "the output lacks '$sub'" "$cmd"
        return
    fi
    echo "ok [$n]: $cmd"
    head -2 "$W/.err" | cat -v | sed -e 's/^/    /'
}

p() {
    local what=$1
    shift 2  # DESCRIPTION --
    if ! "$@" >/dev/null 2>&1; then
        echo "FAIL [$n]: after the case: $what ($*)"
        [ $case_failed = 1 ] || bad=$((bad + 1))
        case_failed=1
    fi
}

skip() { echo "skip: $*"; }

# shellcheck source=/dev/null
. "$CASES"
echo "$(basename "$CASES" .sh): $n cases, $bad failed"
[ "$bad" = 0 ] && [ "$n" -gt 0 ]
