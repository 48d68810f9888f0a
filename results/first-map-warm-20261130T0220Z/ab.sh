#!/usr/bin/env bash
# Before (/tmp/s36/before: a worktree of e36651f, the warm-up thread importing scikit-learn) and after (the
# working tree: imports at the end of the Home page's run), alternating, five rounds, pause 3 s; crisis 3k.
cd /work/main
for r in 1 2 3 4 5; do
  for tree in /tmp/s36/before /work/main; do
    .venv/bin/python results/first-map-warm-20261130T0220Z/first_map_home.py $tree /tmp/s36/data 3 2>&1 | grep "first map"
  done
done
