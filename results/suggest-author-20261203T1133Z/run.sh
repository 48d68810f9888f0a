# usage: run.sh TAG SEED [--param k=v ...]   (bench.annotator on czech_gold, Suggest, budget 2)
cd ${TREE:-/work/main}
export SEMANNO_DATA=/tmp/s61/d SEMANNO_BENCH_RESULTS=/tmp/s61/res
tag=$1; s=$2; shift 2
out=/tmp/s61/out/$tag-s$s.jsonl
/work/main/.venv/bin/python -m bench.annotator --data /tmp/s61/czech_gold.csv --corpus czech_gold --budget 2 \
  --word-forms cs --methods suggest --context-seed $s "$@" > $out.tmp 2> $out.err && mv $out.tmp $out
