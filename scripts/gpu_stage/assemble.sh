#!/usr/bin/env bash
# Here (2 CPU cores, spaCy): prepare the squad2-lexicon-long run (its negatives take about 25 minutes) and assemble
# the folder .gpu/ that travels to the GPU machine: the code without the default model, the prepared run with its
# features packed (pack.py) and compressed, SQuAD v1.1 train compressed (the run checks the data's size), these
# scripts and the stand-ins for spaCy and lemminflect (written by write_stubs.py). The base, default-squad2's
# weights, travels inside the code. About 59 MB.
set -euo pipefail
cd "$(dirname "$0")/../.."
run=runs/squad2-lexicon-long
[ -f "$run/train_config.json" ] || nice -n 10 python -m rcqa train --recipe squad2-lexicon-long --prepare-only --device cpu
grep -qx '/.gpu/' .git/info/exclude || echo '/.gpu/' >> .git/info/exclude
rm -rf .gpu && mkdir -p .gpu/repo/tests/data ".gpu/repo/$run"
cp scripts/gpu_stage/run.sh scripts/gpu_stage/choose.py scripts/gpu_stage/pack.py .gpu/
python scripts/gpu_stage/write_stubs.py .gpu/stubs  # the stand-ins, kept as text here, become packages there
cp -r rcqa .gpu/repo/ && rm -rf .gpu/repo/rcqa/default_model && find .gpu -name __pycache__ -prune -exec rm -rf {} +
cp tests/data/hard_unanswerable.json .gpu/repo/tests/data/
cp "$run/base_card.json" "$run/train_config.json" ".gpu/repo/$run/"
xz -9 -T2 -c "$run/held_out-v2.json" > ".gpu/repo/$run/held_out-v2.json.xz"
python scripts/gpu_stage/pack.py pack "$run"/features-*.json /tmp/features.npz
xz -9 -T2 -c /tmp/features.npz > ".gpu/repo/$run/features.npz.xz" && rm /tmp/features.npz
xz -9 -T2 -c "$(python -c 'from rcqa.resources import squad_file; print(squad_file("train"))')" > .gpu/repo/train-v1.1.json.xz
du -sb .gpu
