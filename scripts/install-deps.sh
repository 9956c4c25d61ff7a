#!/usr/bin/env bash
# Installs the Debian packages acesim builds with, only those missing.
# Used by `make demo` and `make test`; safe to run again.
set -euo pipefail
packages=(
  cmake g++ make ninja-build pkg-config ccache
  libyaml-cpp-dev nlohmann-json3-dev libcli11-dev libfmt-dev rapidjson-dev zlib1g-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  python3-matplotlib python3-dev pybind11-dev
  openmpi-bin libopenmpi-dev
  libprotobuf-dev protobuf-compiler libfccp-dev libutfcpp-dev libeigen3-dev
  clang libclang-rt-14-dev
)
missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}" >&2
  sudo_cmd=()
  if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
