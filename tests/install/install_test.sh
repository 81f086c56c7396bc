#!/usr/bin/env bash
# install_test.sh BUILD_DIR SOURCE_DIR — installs the build into a temporary prefix, then builds a
# tiny consumer program against the installed tree both ways a user would: CMake's
# find_package(ffn) (shared and static targets) and pkg-config (shared, and --static). Each program
# runs a SwiGLU through ffn.h and checks it. Exit 0 when all four build and pass.
set -euo pipefail
build=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix

cmake --install "$build" --prefix "$prefix" >/dev/null
for f in include/ffn.h bin/ffn; do
  [ -e "$prefix/$f" ] || { echo "install_test: $f not installed" >&2; exit 1; }
done
libdir=$(dirname "$(find "$prefix" -name libffn.so -print -quit)")
[ -f "$libdir/libffn.a" ] || { echo "install_test: libffn.a not installed" >&2; exit 1; }

echo "== find_package(ffn)"
cmake -S "$src/tests/install/consumer" -B "$tmp/cm" -DCMAKE_PREFIX_PATH="$prefix" \
      -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$tmp/cm" >/dev/null
LD_LIBRARY_PATH="$libdir" "$tmp/cm/consumer_shared"
"$tmp/cm/consumer_static"

echo "== pkg-config ffn"
export PKG_CONFIG_PATH="$libdir/pkgconfig"
cc=${CC:-cc}
# shellcheck disable=SC2046
$cc -o "$tmp/pc_shared" "$src/tests/install/consumer/consumer.c" $(pkg-config --cflags --libs ffn) -lm
LD_LIBRARY_PATH="$libdir" "$tmp/pc_shared"
# shellcheck disable=SC2046
$cc -o "$tmp/pc_static" "$src/tests/install/consumer/consumer.c" \
    $(pkg-config --cflags ffn) "$libdir/libffn.a" $(pkg-config --libs-only-other --libs-only-l --static ffn | sed 's/-lffn//') -lm
"$tmp/pc_static"
echo "install_test: ok"
