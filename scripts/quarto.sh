#!/usr/bin/env bash
# Build Quarto with the kit in ../shared/tools/quarto (when it exists) and print its bin dir.
#
#   export PATH="$(bash scripts/quarto.sh):$PATH"    # .ci/run does this before `make test`
#
# The prefix is keyed by the kit's SHA256SUMS and build.sh, so a new kit builds afresh and
# a re-run on a prefix this script finished returns at once (< 1 s).
# Prints nothing and exits 0 without the kit: the Quarto tests then skip with a reason.
# QUARTO_CACHE (default ~/.cache/gpu-report/quarto) is where prefixes go; cache it in CI.
set -euo pipefail
kit="$(cd "$(dirname "$0")/.." && pwd)/../shared/tools/quarto"
[ -f "$kit/build.sh" ] && [ -f "$kit/SHA256SUMS" ] || exit 0
key="$(cat "$kit/SHA256SUMS" "$kit/build.sh" | sha256sum | cut -c1-16)"
prefix="${QUARTO_CACHE:-$HOME/.cache/gpu-report/quarto}/$key"
# A prefix this script finished before (same key) is used as is: no kit run at all.
if [ -x "$prefix/bin/quarto" ] && [ -f "$prefix/.gpu-report-built" ]; then
  echo "$prefix/bin"
  exit 0
fi
quarto="$(bash "$kit/build.sh" "$prefix" 2>"${TMPDIR:-/tmp}/quarto-build.log")" || {
  echo "scripts/quarto.sh: building Quarto failed; see ${TMPDIR:-/tmp}/quarto-build.log" >&2
  tail -n 20 "${TMPDIR:-/tmp}/quarto-build.log" >&2
  exit 1
}
touch "$prefix/.gpu-report-built"
dirname "$quarto"
