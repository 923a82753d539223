#!/usr/bin/env bash
# Installs what kiln needs to build and test on Debian 12 (run as root).
#   scripts/install-deps.sh          everything scripts/test.sh needs (the default)
#   scripts/install-deps.sh --demo   only what scripts/demo.sh needs: the build tools and
#                                    libraries, and jq (no Chromium, no Node.js check)
# Idempotent: packages already present are left as they are.
set -euo pipefail

mode="test"
case "${1:-}" in
  "") ;;
  --demo) mode=demo ;;
  *) echo "usage: scripts/install-deps.sh [--demo]" >&2; exit 2 ;;
esac

packages=(
  build-essential cmake ninja-build pkg-config git jq clang-format
  libcpp-httplib-dev nlohmann-json3-dev libspdlog-dev libfmt-dev libcli11-dev
  libsqlite3-dev libssl-dev libgtest-dev libgmock-dev libbenchmark-dev
)
# Headless Chromium loads the page of `kiln report` in its browser test (label browser).
[ "$mode" = test ] && packages+=(chromium)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# A single-node Slurm cluster on loopback runs kiln's Slurm backend tests (label slurm,
# scripts/slurm_test_cluster.sh); without recommends, so no mail server or docs come along.
slurm_packages=()
if [ "$mode" = test ]; then
  for p in slurmctld slurmd slurm-client munge; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || slurm_packages+=("$p")
  done
fi
if ((${#missing[@]} + ${#slurm_packages[@]})); then
  echo "kiln: installing ${missing[*]} ${slurm_packages[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  if ((${#missing[@]})); then apt-get install -y -qq "${missing[@]}"; fi
  if ((${#slurm_packages[@]})); then
    apt-get install -y -qq --no-install-recommends "${slurm_packages[@]}"
  fi
fi

# Node.js 20+ drives the MCP client integration tests. Use the machine's node
# when it is new enough; Debian 12's own nodejs (18) is too old for the SDK.
if [ "$mode" = test ] &&
  { ! command -v node >/dev/null || [ "$(node -p 'process.versions.node.split(".")[0]')" -lt 20 ]; }; then
  echo "kiln: Node.js 20 or newer is needed for the integration tests (found: $(node --version 2>/dev/null || echo none))" >&2
  exit 1
fi

if [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "kiln: note: no CUDA toolkit at /usr/local/cuda; CUDA parts will be left out of the build" >&2
fi
