#!/usr/bin/env bash
# Sets up and builds fieldft (scripts/setup.sh), then runs `fieldft demo`, passing on any
# arguments: e.g. `bash scripts/demo.sh --help`.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"

bash scripts/setup.sh
preset="${FIELDFT_PRESET:-ci}"
cli="$repo_root/build/$preset/apps/fieldft/fieldft"
if [[ ! -x "$cli" ]]; then
  printf '[fieldft demo] error: %s was not built (is FIELDFT_BUILD_APPS off?)\n' "$cli" >&2
  exit 1
fi
printf '[fieldft demo] %s demo %s\n' "$cli" "$*"
exec "$cli" demo "$@"
