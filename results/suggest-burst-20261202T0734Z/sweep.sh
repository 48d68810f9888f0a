# usage: sweep.sh CORPUS TAG DAY SEED...  (env BURST_* passed through)
cd /work/main
export SEMANNO_DATA=/tmp/s52/d
corpus=$1; tag=$2; d=$3; shift 3
for s in "$@"; do
  out=/tmp/s53/out/$corpus-$tag-s$s.jsonl
  [ -s "$out" ] && continue
  if [ "$corpus" = crisis_topics ]; then
    .venv/bin/python /tmp/s53/burst.py --data /tmp/s52/crisis_topics.csv --corpus crisis_topics \
      --label-column topic --budget 2 --methods suggest --context-seed $s --param day=$d > $out.tmp 2> $out.err
  elif [ "$corpus" = crisis ]; then
    .venv/bin/python /tmp/s53/burst.py --data ../shared/data/crisislex_t26.csv --corpus crisis \
      --label-column info_type --classes "Infrastructure and utilities" "Caution and advice" "Donations and volunteering" \
      --budget 2 --methods suggest --context-seed $s --param day=$d > $out.tmp 2> $out.err
  else
    .venv/bin/python /tmp/s53/burst.py --data /tmp/s52/czech_gold.csv --corpus $corpus --budget 2 \
      --word-forms cs --methods suggest --context-seed $s --param day=$d > $out.tmp 2> $out.err
  fi
  mv $out.tmp $out
done
