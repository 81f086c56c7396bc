#!/usr/bin/env bash
# Installs what the WebGPU browser tests and `make demo-web` need, if anything is missing:
# Debian's Chromium (its WebGPU runs on SwiftShader, no GPU needed) and, from webgpu/'s committed
# package.json + package-lock.json, the npm package playwright-core (a driver only: it downloads
# no browser). Idempotent: does nothing, and needs no network, when everything is present.
# Exit status 0 when everything is there afterwards; non-zero with a message otherwise.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
web="$root/webgpu"

# --- Debian packages: chromium (and node/npm only where the image lacks them) ----------------
pkgs=(chromium)
command -v node >/dev/null 2>&1 || pkgs+=(nodejs)
command -v npm >/dev/null 2>&1 || pkgs+=(npm)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "web-deps.sh: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# --- npm: playwright-core, pinned by the committed lock file --------------------------------
# The lock file's version is compared with the installed one, so a bumped pin reinstalls.
want="$(node -e "const l=require('$web/package-lock.json');
  console.log(l.packages['node_modules/playwright-core'].version)")"
have="$(node -e "try{console.log(require('$web/node_modules/playwright-core/package.json').version)}
  catch(e){console.log('none')}")"
if [ "$want" != "$have" ]; then
  echo "web-deps.sh: npm ci in webgpu/ (playwright-core $want, installed: $have)"
  # PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: playwright-core downloads nothing, but say it anyway.
  (cd "$web" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error)
fi

[ -x /usr/bin/chromium ] || { echo "web-deps.sh: /usr/bin/chromium missing" >&2; exit 1; }
