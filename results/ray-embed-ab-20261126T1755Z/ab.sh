#!/bin/bash
# A/B of the Ray CLI import (2,000 tweets): base = a7c9947, new = working tree; in process beside; 3 rounds alternating
cd /work/main
run() { # label app_root engine
  rm -rf /tmp/s7/ray/ab-$1; local t0=$(date +%s.%N)
  (cd $2 && SEMANNO_DATA=/tmp/s7/ray/ab-$1 HF_HUB_OFFLINE=1 PYTHONPATH=$2 /work/main/.venv/bin/python -m precompute.embed /tmp/s7/ray/texts.csv --name b --engine $3 --ray-actors 1 > /tmp/s7/ray/ab-$1.log 2>&1)
  echo "$1 $(echo "$(date +%s.%N) - $t0" | bc)"
}
for r in 1 2 3; do
  if [ $r = 2 ]; then run new-ray /work/main ray; run base-ray /tmp/s7/base ray; else run base-ray /tmp/s7/base ray; run new-ray /work/main ray; fi
  run process /work/main process
done
