# Ray before/after (old tree in a worktree) with the in-process path beside, 2,000 tweets, rotating order
set -u
cd /work/main
SRC=/tmp/s15/ray/t2000.csv
.venv/bin/python -c "import pandas as pd; pd.read_csv('../shared/data/russian_troll_tweets_recent300k.csv', usecols=['id','text'], dtype=str, keep_default_na=False, nrows=2000).to_csv('$SRC', index=False)"
one() {  # label tree engine
  local root=/tmp/s15/ray/ab-$1-$RANDOM; local t0=$(date +%s.%N)
  (cd $2 && SEMANNO_DATA=$root HF_HUB_OFFLINE=1 PYTHONPATH=$2 /work/main/.venv/bin/python -m precompute.embed $SRC --name b --engine $3 > /dev/null 2>&1) || echo "FAILED $1"
  echo "$1 $(echo "$(date +%s.%N) - $t0" | bc)"; rm -rf $root
}
for r in 1 2 3 4; do
  case $r in
    1) order="process ray-old ray-new";; 2) order="ray-new process ray-old";;
    3) order="ray-old ray-new process";; 4) order="process ray-new ray-old";;
  esac
  for x in $order; do
    case $x in process) one process /work/main process;; ray-old) one ray-old /tmp/s15/rayold ray;; ray-new) one ray-new /work/main ray;; esac
  done
done
