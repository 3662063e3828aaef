#!/usr/bin/env bash
# Sets up and builds what the main job needs -- the library and the `fieldft` tool, CMake preset
# `app`, with the CUDA backend only when a GPU is present (FIELDFT_CUDA=IF_GPU) -- installs the
# tool on PATH (scripts/setup.sh), then runs the main job: `fieldft simulate` writes a 128 x 128,
# 8-coil spiral dataset with a field map (ISMRMRD when the build has it, else a BART .cfl set) and
# `fieldft recon` reconstructs it with field-map correction, printing its choices, the times and
# the NRMSE against the simulated truth, and writing a NIfTI file and a PNG into build/demo (or
# $FIELDFT_DEMO_DIR). A second recon that ignores the field map shows what the correction buys.
# Arguments go to the main `fieldft recon`, e.g. `bash scripts/demo.sh --iters 30` or `--help`.
# No tests or benchmarks are built (scripts/test.sh does that).
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
if [[ " $* " == *" --help "* || " $* " == *" -h "* ]]; then
  exec "$cli" recon --help
fi

out="${FIELDFT_DEMO_DIR:-$repo_root/build/demo}"
mkdir -p "$out"
# ISMRMRD when this build reads it (FIELDFT_ISMRMRD, libismrmrd-dev), else BART .cfl files.
data="$out/spiral.h5"
if ! "$cli" simulate -o "$out/probe.h5" --matrix 8 --coils 1 --snr 0 --field-hz 0 \
     --susceptibility-hz 0 --json >/dev/null 2>&1; then
  data="$out/spiral"
fi
rm -f "$out/probe.h5"
# 128 x 128 Shepp-Logan, 8 coils, 16 spiral interleaves of 1609 samples (6.4 ms readouts at 4 us),
# a smooth 80 Hz field map plus a 150 Hz susceptibility-like offset, SNR 50; exact DFT.
sim=(simulate -o "$data" --matrix 128 --coils 8 --traj spiral --dwell 4 --field-hz 80
     --susceptibility-hz 150 --snr 50 --seed 1)
printf '[fieldft demo] fieldft %s\n' "${sim[*]}"
"$cli" "${sim[@]}"
printf '\n[fieldft demo] fieldft recon %s -o %s -o %s %s\n' "$data" "$out/recon.nii.gz" "$out/recon.png" "$*"
"$cli" recon "$data" -o "$out/recon.nii.gz" -o "$out/recon.png" "$@"
printf '\n[fieldft demo] the same without field-map correction (--encoding nufft), for comparison:\n'
"$cli" recon "$data" -o "$out/recon_no_field_correction.png" --encoding nufft "$@" | grep -E 'NRMSE|times'
printf '\n[fieldft demo] images: %s, %s (and %s)\n' "$out/recon.nii.gz" "$out/recon.png" "$out/recon_no_field_correction.png"
