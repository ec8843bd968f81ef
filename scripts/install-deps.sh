#!/usr/bin/env bash
# Installs the Debian packages the build and the tests need, only those missing (idempotent).
set -euo pipefail
packages=(
    pkg-config openssl libssl-dev libsodium-dev liburing-dev libcurl4-openssl-dev libmicrohttpd-dev
    libsqlite3-dev libpq-dev postgresql libisal-dev zlib1g-dev libzstd-dev nftables iproute2 python3-venv nginx curl
    iperf3 iputils-ping procps awscli
)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "installing: ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
