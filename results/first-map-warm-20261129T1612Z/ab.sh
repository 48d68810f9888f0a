#!/usr/bin/env bash
# Before (a worktree of HEAD before the warm-up) and after, alternating, five rounds, pauses 0 and 3 s.
cd /work/main
for r in 1 2 3 4 5; do
  for pause in 0 3; do
    for tree in /tmp/s31/before /work/main; do
      .venv/bin/python results/first-map-warm-20261129T1612Z/first_map_home.py $tree /tmp/s31/data $pause 2>&1 | grep "first map"
    done
  done
done
