#!/usr/bin/env bash
# Every C++ source and header of the project is formatted as .clang-format says
# (clang-format --dry-run --Werror); the offending lines are printed. Fix with
#   clang-format -i $(git ls-files '*.cpp' '*.hpp')
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root"
command -v clang-format >/dev/null || { echo "format: clang-format is missing (scripts/deps installs it)"; exit 1; }
mapfile -t files < <(find daemon rules collectors compare tests -name '*.cpp' -o -name '*.hpp' | sort)
clang-format --dry-run --Werror "${files[@]}"
echo "format: ${#files[@]} files checked"
