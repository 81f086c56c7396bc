#!/usr/bin/env bash
# Installs what the WebGPU tests and `make demo-web` need, if anything is missing: Debian's
# Chromium (its WebGPU runs on SwiftShader, no GPU needed; it also ships SwiftShader's Vulkan
# driver, /usr/lib/chromium/vk_swiftshader_icd.json), the Vulkan loader libvulkan1 (for Dawn in
# Node) and, from webgpu/'s committed package.json + package-lock.json, the npm packages
# playwright-core (a driver only: it downloads no browser) and webgpu (Dawn for Node, with its
# prebuilt dawn.node). Idempotent: does nothing, and needs no network, when everything is present.
# Exit status 0 when everything is there afterwards; non-zero with a message otherwise.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
web="$root/webgpu"

# --- Debian packages: chromium, libvulkan1 (and node/npm only where the image lacks them) ----
pkgs=(chromium libvulkan1)
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

# --- npm: playwright-core and webgpu, pinned by the committed lock file ----------------------
# The lock file's versions are compared with the installed ones, so a bumped pin reinstalls.
versions() {  # $1: lock (the lock file's versions) or installed
  node -e "const fs=require('fs'), l=require('$web/package-lock.json');
    console.log(['playwright-core','webgpu'].map((p) => {
      if ('$1' === 'lock') return l.packages['node_modules/' + p].version;
      try { return JSON.parse(fs.readFileSync('$web/node_modules/' + p + '/package.json')).version; }
      catch (e) { return 'none'; } }).join(' '))"
}
want="$(versions lock)"
have="$(versions installed)"
if [ "$want" != "$have" ]; then
  echo "web-deps.sh: npm ci in webgpu/ (playwright-core, webgpu: $want; installed: $have)"
  # PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: playwright-core downloads nothing, but say it anyway.
  (cd "$web" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error)
fi

[ -x /usr/bin/chromium ] || { echo "web-deps.sh: /usr/bin/chromium missing" >&2; exit 1; }
[ -f /usr/lib/chromium/vk_swiftshader_icd.json ] ||
  { echo "web-deps.sh: /usr/lib/chromium/vk_swiftshader_icd.json (SwiftShader Vulkan) missing" >&2; exit 1; }
