#!/usr/bin/env bash
# A/B of the tokeniser: the tree before (0557650, in a worktree, with today's bench/keyterms.py copied in) and after,
# on four stored clusterings, c-TF-IDF and rule key lemmas, top 10.
set -uo pipefail
TREE=$1; OUT=$2
cp /work/main/bench/keyterms.py $TREE/bench/keyterms.py
cd $TREE
run() { SEMANNO_DATA=$1 SEMANNO_BENCH_RESULTS=$OUT /work/main/.venv/bin/python -m bench.keyterms --corpus $2 --clustering $3 --against min_texts --top 10 --repeat 3 --show 15; }
run /tmp/walk2/data troll kmeans-k141
run /tmp/walk/data politici kmeans-k78
run /tmp/walk/data stackoverflow kmeans-k100
run /tmp/walk/data crisis kmeans-k118
