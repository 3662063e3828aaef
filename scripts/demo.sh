#!/usr/bin/env bash
# Sets up and builds what the main job needs -- the library and the `fieldft` tool, CMake preset
# `app`, with the CUDA backend only when a GPU is present (FIELDFT_CUDA=IF_GPU) -- installs the
# tool on PATH (scripts/setup.sh), then runs `fieldft demo`, passing on any arguments: e.g.
# `bash scripts/demo.sh --help`. No tests or benchmarks are built (scripts/test.sh does that).
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"

export FIELDFT_PRESET="${FIELDFT_PRESET:-app}"
bash scripts/setup.sh
preset="$FIELDFT_PRESET"
cli="$repo_root/build/$preset/apps/fieldft/fieldft"
if [[ ! -x "$cli" ]]; then
  printf '[fieldft demo] error: %s was not built (is FIELDFT_BUILD_APPS off?)\n' "$cli" >&2
  exit 1
fi
printf '[fieldft demo] %s demo %s\n' "$cli" "$*"
exec "$cli" demo "$@"
