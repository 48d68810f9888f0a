for round in 1; do
 for tree in /tmp/s89/old /work/main; do
  cd $tree && PYTHONPATH=. /work/main/.venv/bin/python -m bench.pg_snapshot --repeat 2 > /tmp/s89/snap_$(basename $tree).jsonl 2>&1
 done
done
