#!/usr/bin/env bash
# bench.search before (df0c95d, the session's start, a worktree) and after, alternating, two rounds
for r in 1 2; do
  for tree in BEFORE /work/main; do
    echo "== $tree round $r"
    (cd $tree && SEMANNO_BENCH_RESULTS=/tmp/s31/sab/runs /work/main/.venv/bin/python -m bench.search --n 203057 --repeat 7 2>&1 | grep '"op"')
  done
done
