# run_ct.sh TREE TAG SEED: Suggest on the crisis kinds within one event (crisis_topics) with the code of TREE
cd $1 && SEMANNO_DATA=/tmp/s52/d SEMANNO_BENCH_RESULTS=/tmp/s53/ab/runs /work/main/.venv/bin/python -m bench.annotator \
  --data /tmp/s52/crisis_topics.csv --corpus crisis_topics --label-column topic --budget 2 --methods suggest \
  --context-seed $3 > /tmp/s53/ab/ct-$2-s$3.jsonl 2> /tmp/s53/ab/ct-$2-s$3.err
