#!/usr/bin/env bash
# Installs the Debian packages the build, tests and demo need, if any is missing. Idempotent:
# does nothing (and needs no network) when everything is present. Run as root on Debian 12.
set -euo pipefail

pkgs=(build-essential cmake pkg-config libmpfr-dev libgmp-dev libopenblas-dev libcjson-dev
      libopenblas0-openmp libopenblas-openmp-dev libdnnl-dev)
# The Python package's tests (tests/python): NumPy, PyTorch (CPU, 1.13 on Debian 12; ~160
# packages, about 1.5 minutes to download and install) and pip for the install test.
pkgs+=(python3-numpy python3-torch python3-pip)
# Tensor parallelism across processes (src/tp/comm_mpi.c, tests/tp under mpirun): Open MPI.
pkgs+=(libopenmpi-dev openmpi-bin)
# The format check of `make test` (scripts/format-check.sh) and scripts/format.sh: clang-format.
pkgs+=(clang-format)
# Extra groups, selected by arguments: `deps.sh bench` adds PyTorch and gnuplot.
for extra in "$@"; do
  case "$extra" in
    bench) pkgs+=(python3-torch gnuplot-nox python3-numpy) ;;
    *) echo "deps.sh: unknown group '$extra'" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "deps.sh: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
