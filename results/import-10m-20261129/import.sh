#!/bin/bash
# The 10M import with brought vectors, every output line time-stamped
cd /work/main
/usr/bin/time -v .venv/bin/python -m precompute.embed data/.scale-input/rows-10000000/texts.parquet \
  --name scale-10m-import-check --vectors data/.scale-input/rows-10000000/vectors.npy \
  --vectors-model "synthetic clustered unit vectors (bench.make_scale_corpus)" --overwrite 2>&1 |
  while IFS= read -r l; do printf '%s %s\n' "$(date -u +%T)" "$l"; done
echo "RC=${PIPESTATUS[0]}"
