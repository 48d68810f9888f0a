# run.sh TREE TAG SEED: Suggest in the simulated annotator on the hand-judged Czech topics with the code of TREE
cd $1 && SEMANNO_DATA=/tmp/s52/d SEMANNO_BENCH_RESULTS=/tmp/s53/ab/runs /work/main/.venv/bin/python -m bench.annotator \
  --data /tmp/s52/czech_gold.csv --corpus czech_gold --budget 2 --word-forms cs --methods suggest --context-seed $3 \
  > /tmp/s53/ab/$2-s$3.jsonl 2> /tmp/s53/ab/$2-s$3.err
