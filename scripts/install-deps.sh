#!/usr/bin/env bash
# Installs the Debian packages whatif's build, tests, demo and benchmarks need.
# Idempotent and quiet when everything is present; called by `make demo`, `make test` and `make bench`.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config python3
  libdwarf-dev libdwarf1 libelf-dev zlib1g-dev libunwind-dev libfmt-dev nlohmann-json3-dev
  libgtest-dev libzydis-dev libcli11-dev libpfm4-dev
  clang valgrind coz-profiler llvm
  # create_gcov/dump_gcov: the AutoFDO export's test and benchmark (whatif export --autofdo)
  autofdo
  # llvm-bolt-16: benchmarks/lbr/bolt_compare.py bolts a binary with --lbr's profile and an exact one
  bolt-16
  chromium nodejs npm
  rustc cargo
  # make bench's server benchmark: memcached built from Debian's source (dpkg-source, libevent)
  # under Debian's load generator memcslap
  dpkg-dev libevent-dev libmemcached-tools
)

missing=()
for pkg in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    # nodejs/npm may come from outside Debian (e.g. nodesource); accept any working binary.
    case "$pkg" in
      nodejs) command -v node >/dev/null 2>&1 && continue ;;
      npm) command -v npm >/dev/null 2>&1 && continue ;;
      # The Rust integration test needs rustc; a rustup toolchain (~/.cargo/bin) serves as well.
      rustc) command -v rustc >/dev/null 2>&1 && continue ;;
      cargo) command -v cargo >/dev/null 2>&1 && continue ;;
    esac
    missing+=("$pkg")
  fi
done

if ((${#missing[@]} == 0)); then
  exit 0
fi

SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
echo "whatif: installing ${#missing[@]} missing package(s): ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "whatif: dependencies installed" >&2
