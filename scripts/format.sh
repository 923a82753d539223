#!/usr/bin/env bash
# kiln's formatting, as a check (the default; the test command runs it) or a fix (--fix).
#
# Every C++ and CUDA file tracked in git is formatted by .clang-format, except data whose bytes
# or line numbers matter: the zoo's teaching kernels (kb/zoo/*/, their layout is part of what
# they teach; kb/zoo/references is code and is formatted), task bundles (tasks/NAME/, hashed
# into every result), and the test corpora and test kernels (tests/corpus/, tests/**/*.cu),
# whose line numbers the tests assert; and the zoo entries' candidate replacements timed by
# bench/zoo_membound (variants/ID/vN_*.cu), which are kb/zoo kernels in waiting.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=check
[ "${1:-}" = "--fix" ] && mode=fix

files() {
  git ls-files '*.cpp' '*.h' '*.cu' '*.cuh' |
    grep -v -E '^kb/zoo/[^/]+/' | grep -v -E '^tasks/[^/]+/(baseline|starter|reference)' |
    grep -v -E '^tests/corpus/' | grep -v -E '^tests/.*\.cu$' |
    grep -v -E '^bench/zoo_membound/variants/' || true
  git ls-files 'kb/zoo/references/*.cpp' 'kb/zoo/references/*.h'
}

# Tracked files that exist in the work tree (a deletion not yet committed is not a file).
existing() { while IFS= read -r f; do [ -f "$f" ] && echo "$f"; done; }

if ! command -v clang-format >/dev/null; then
  echo "kiln: clang-format is missing; scripts/install-deps.sh installs it" >&2
  exit 1
fi
if [ "$mode" = fix ]; then
  files | existing | xargs -r clang-format -i
  exit 0
fi
if ! files | existing | xargs -r clang-format --dry-run --Werror 2>/tmp/kiln-format.$$; then
  grep -E '^[^ ].*: (error|warning):' /tmp/kiln-format.$$ | cut -d: -f1 | sort -u |
    sed 's/^/  /' >&2 || head -5 /tmp/kiln-format.$$ >&2
  rm -f /tmp/kiln-format.$$
  echo "kiln: the files above differ from .clang-format; run scripts/format.sh --fix" >&2
  exit 1
fi
rm -f /tmp/kiln-format.$$
echo "kiln: formatting matches .clang-format"
