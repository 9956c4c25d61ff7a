#!/usr/bin/env bash
# Rewrites tests/golden/expected/ from the current build. Only for a
# deliberate change of results: say why, with before and after, in the commit.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${1:-build}
cmake --build "$BUILD_DIR" >/dev/null
ACESIM_UPDATE_GOLDEN=1 "$BUILD_DIR/tests/acesim_tests" --gtest_filter='Whole/GoldenTest.*'
git status --short tests/golden/expected
