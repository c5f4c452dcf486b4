#!/usr/bin/env bash
# The fair rerun of the 200-question spared-answer comparison (docs/findings.md): every method ranked both ways,
# one run per deletion operator, NAOPC on the first 100 (beam 1, pad) and the sanity check on the first 10. Each
# run folder starts from the committed spared run's kept IG explanations, so IG is not computed again. Run the
# runs one after the other (they share the cores) under nice; each resumes if stopped (rerun into the same folder).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-reports/runs}
seed_results() { mkdir -p "$1/results" && cp -n reports/runs/squad-dev-200-spared/results/*.npz "$1/results/"; }
for op in pad remove; do
  seed_results "$runs/squad-dev-200-rankings-$op"
  nice -n 10 python -m rcqa reproduce --data squad-dev --limit 200 --workers 2 --faithfulness --operator "$op" \
      --out "$runs/squad-dev-200-rankings-$op"
done
seed_results "$runs/squad-dev-100-naopc-pad"
nice -n 10 python -m rcqa reproduce --data squad-dev --limit 100 --workers 2 --faithfulness --naopc-beam 1 \
    --out "$runs/squad-dev-100-naopc-pad"
seed_results "$runs/squad-dev-10-sanity"
nice -n 10 python -m rcqa reproduce --data squad-dev --limit 10 --workers 2 --sanity --out "$runs/squad-dev-10-sanity"
for run in squad-dev-200-rankings-pad squad-dev-200-rankings-remove squad-dev-100-naopc-pad squad-dev-10-sanity; do
  python -m rcqa report "$runs/$run" --out "reports/squad-dev-200-rankings/$run" --no-images
done
