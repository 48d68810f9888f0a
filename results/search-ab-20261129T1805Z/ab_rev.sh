#!/usr/bin/env bash
# the same, after first in each round (order check)
for r in 1 2; do
  for tree in /work/main BEFORE; do
    echo "== $tree round $r"
    (cd $tree && SEMANNO_BENCH_RESULTS=/tmp/s31/sab/runs /work/main/.venv/bin/python -m bench.search --n 203057 --repeat 7 2>&1 | grep '"op"')
  done
done
