#!/bin/bash
# The Scatter map's topic names, first call in a fresh process, before (a0f1c9d, in a worktree) and after, alternating.
# Corpus: the first 3,000 lines of ../shared/data/crisislex_t26.csv imported as crisis3000 (2,998 texts, MiniLM):
#   head -3001 ../shared/data/crisislex_t26.csv > /tmp/crisis3000.csv
#   SEMANNO_DATA=/tmp/s30/root python -m precompute.embed /tmp/crisis3000.csv --name crisis3000   (or the Home page)
set -e
here=$(dirname "$0")
for i in 1 2 3 4 5; do
  for tree in /tmp/s30/before /work/main; do
    .venv/bin/python "$here/names_cold.py" "$tree" /tmp/s30/root crisis3000 2>&1 | grep names
  done
done
