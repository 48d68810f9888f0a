#!/bin/bash
cd /work/main
run() { rm -rf /tmp/s7/ray/n-$1; local t0=$(date +%s.%N)
  env $2 SEMANNO_DATA=/tmp/s7/ray/n-$1 HF_HUB_OFFLINE=1 PYTHONPATH=. .venv/bin/python -m precompute.embed /tmp/s7/ray/texts.csv --name b --engine ray --ray-actors 1 > /tmp/s7/ray/n-$1.log 2>&1
  echo "$1 $(echo "$(date +%s.%N) - $t0" | bc)"; }
for r in 1 2 3; do
  if [ $r = 2 ]; then run nice0 RAY_worker_niceness=0; run default X=1; else run default X=1; run nice0 RAY_worker_niceness=0; fi
done
