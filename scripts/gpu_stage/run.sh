#!/bin/bash
# The fourth stage on the GPU machine: train squad2-lexicon-long from its prepared folder (at most TRAIN_SECONDS),
# score every kept model on the held-out articles at once, export the best, draw the hand-written set's curves.
# Usage: bash .gpu/run.sh TRAIN_SECONDS [extra train options]
set -u
TRAIN_SECONDS=$1; shift
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
RES=/tmp/res; rm -rf "$RES"; mkdir -p "$RES/scores"
HERE=$(cd "$(dirname "$0")" && pwd)
cd "$HERE/repo"
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PYTHONPATH="$HERE/stubs:$PWD" RCQA_CACHE_DIR=/tmp/rcqa-cache
PY=${PY:-python3}
RUN=runs/squad2-lexicon-long
T0=$(date +%s); stamp() { echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a "$RES/timeline.txt"; }
finish() {
  cp $RUN/train_config.json $RUN/train_log.jsonl "$RES/" 2>/dev/null
  if [ -f "$RES/model/model.safetensors" ]; then
    sha256sum "$RES/model/model.safetensors" > "$RES/model.sha256"
    split -b 15M -d "$RES/model/model.safetensors" "$OUT/model.safetensors.part"
    rm "$RES/model/model.safetensors"
  fi
  stamp "done"
  tar czf "$OUT/results.tgz" -C "$RES" .
}
trap finish EXIT
stamp "start on $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null || echo no-gpu)"
$PY -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__, 'cuda', torch.cuda.is_available())" 2>&1 | tee -a "$RES/timeline.txt"
mkdir -p /tmp/rcqa-cache/squad
unxz() { $PY -c "import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], 'wb'))" "$1" "$2"; }
unxz train-v1.1.json.xz /tmp/rcqa-cache/squad/train-v1.1.json
for f in $RUN/*.xz; do unxz "$f" "${f%.xz}" && rm "$f"; done
$PY "$HERE/pack.py" unpack $RUN/features.npz "$RUN/$($PY -c "import json; print(json.load(open('$RUN/train_config.json'))['features_file'])")"
rm -f $RUN/features.npz
stamp "unpacked"
timeout -k 20 --signal=INT "$TRAIN_SECONDS" $PY -m rcqa train --recipe squad2-lexicon-long --device cuda "$@" > "$RES/train.out" 2>&1
stamp "train exit $? ($(tail -n1 $RUN/train_log.jsonl 2>/dev/null))"
ls $RUN >> "$RES/timeline.txt"
n=0
for model in $RUN/step-* $RUN/final rcqa/default_squad2_model; do
  [ -f "$model/config.json" ] || continue
  timeout 150 $PY "$HERE/choose.py" score "$model" $RUN/held_out-v2.json "$RES/scores/$(basename $model).json" > "$RES/scores/$(basename $model).out" 2>&1 &
  n=$((n+1))
done
wait
stamp "scored $n models on the held-out questions"
timeout 60 $PY "$HERE/choose.py" pick $RUN "$RES" $(ls "$RES"/scores/*.json | grep -v default_squad2_model) > "$RES/pick.out" 2>&1
stamp "pick exit $?"
