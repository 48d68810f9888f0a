# usage: sweep.sh CORPUS VARIANT WEIGHT SEED...   (runs in /work/main; output /tmp/s52/x/out/CORPUS-VARIANT-wW-sS.jsonl)
cd /work/main
export SEMANNO_DATA=/tmp/s52/d
corpus=$1; v=$2; w=$3; shift 3
mkdir -p /tmp/s52/x/out
for s in "$@"; do
  out=/tmp/s52/x/out/$corpus-$v-w$w-s$s.jsonl
  [ -s "$out" ] && continue
  [ -e "$out.tmp" ] && continue
  if [ "$corpus" = crisis_topics ]; then
    DAY_VARIANT=$v .venv/bin/python /tmp/s52/x/variant.py --data /tmp/s52/crisis_topics.csv --corpus crisis_topics \
      --label-column topic --budget 2 --methods suggest --context-seed $s --param day=$w > $out.tmp 2> $out.err
  elif [ "$corpus" = crisis ]; then
    args="--data ../shared/data/crisislex_t26.csv --corpus crisis --label-column info_type --classes Infrastructure\ and\ utilities Caution\ and\ advice Donations\ and\ volunteering --budget 2 --methods suggest"
    DAY_VARIANT=$v .venv/bin/python /tmp/s52/x/variant.py --data ../shared/data/crisislex_t26.csv --corpus crisis \
      --label-column info_type --classes "Infrastructure and utilities" "Caution and advice" "Donations and volunteering" \
      --budget 2 --methods suggest --context-seed $s --param day=$w > $out.tmp 2> $out.err
  else
    DAY_VARIANT=$v .venv/bin/python /tmp/s52/x/variant.py --data /tmp/s52/czech_gold.csv --corpus $corpus --budget 2 \
      --word-forms cs --methods suggest --context-seed $s --param day=$w > $out.tmp 2> $out.err
  fi
  mv $out.tmp $out
done
