#!/bin/bash
# A/B: local Ray workers at niceness 0 (working tree) against Ray's default 15 (04f8a6b); in process beside; 4 rounds alternating
cd /work/main
run() { rm -rf /tmp/s7/ray/ab2-$1; local t0=$(date +%s.%N)
  (cd $2 && SEMANNO_DATA=/tmp/s7/ray/ab2-$1 HF_HUB_OFFLINE=1 PYTHONPATH=$2 /work/main/.venv/bin/python -m precompute.embed /tmp/s7/ray/texts.csv --name b --engine $3 --ray-actors 1 > /tmp/s7/ray/ab2-$1.log 2>&1)
  echo "$1 $(echo "$(date +%s.%N) - $t0" | bc)"; }
for r in ${ROUNDS:-1 2 3 4}; do
  if [ $((r % 2)) = 0 ]; then run nice0 /work/main ray; run nice15 /tmp/s7/base2 ray; else run nice15 /tmp/s7/base2 ray; run nice0 /work/main ray; fi
  [ -n "${WITH_PROCESS:-}" ] && run process /work/main process
done
