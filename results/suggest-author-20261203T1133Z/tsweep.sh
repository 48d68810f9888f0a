# tsweep.sh VARIANT WEIGHT SEEDS...  (variant.py on czech_topics)
v=$1; w=$2; shift 2
cd /work/main
export SEMANNO_DATA=/tmp/s61/d SEMANNO_BENCH_RESULTS=/tmp/s61/res
for s in "$@"; do
  out=/tmp/s61/out/topics-$v-a$w-s$s.jsonl
  [ -s $out ] && continue
  AUTHOR_VARIANT=$v .venv/bin/python /tmp/s61/variant.py --data /tmp/s61/czech_topics.csv --corpus czech_topics --budget 2 \
    --word-forms cs --methods suggest --context-seed $s --param author=$w > $out.tmp 2> $out.err && mv $out.tmp $out
done
