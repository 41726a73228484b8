#!/usr/bin/env bash
# Installs every system dependency glassbox needs on Debian 12 (idempotent).
# Usage: scripts/setup.sh            (system packages only)
#        scripts/setup.sh --peers    (also the npm peers used by golden/parity tests)
set -euo pipefail

PKGS=(
  build-essential cmake ninja-build pkg-config git
  libonnx-dev libprotobuf-dev protobuf-compiler libonnx-testdata python3-onnx
  libdnnl-dev libopenblas-dev libssl-dev
  libpcre2-dev libicu-dev
  nlohmann-json3-dev libcli11-dev libspdlog-dev libcpp-httplib-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  python3-torch python3-numpy
  python3-dev pybind11-dev python3-pybind11 python3-pytest python3-venv python3-pip
  python3-sklearn python3-xgboost
  libboost-dev python3-requests python3-yaml prometheus python3-prometheus-client
  libgrpc++-dev protobuf-compiler-grpc python3-grpcio python3-grpc-tools
  haproxy yamllint python3-jsonschema
  python3-jinja2 qemu-user
  libturbojpeg0-dev libspng-dev libwebp-dev libexif-dev python3-pil imagemagick fonts-dejavu-core
)

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Node.js and npm (for the peers) may come from outside Debian (this image ships
# node 20 with npm 11); Debian's npm conflicts with that nodejs, so only install
# Debian's when no node is present at all.
if ! command -v node >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
fi

if [ "${1:-}" = "--peers" ]; then
  here="$(cd "$(dirname "$0")" && pwd)"
  bash "$here/install_peers.sh"
fi
echo "setup: system dependencies present" >&2
