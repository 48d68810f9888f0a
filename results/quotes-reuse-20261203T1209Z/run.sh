# the sitting: the new code and the code before it (worktree of 95d673c) alternating, then the import arm
cd /work/main
R=$(cat /tmp/s61/R)
for r in 1 2 3; do
  PYTHONPATH=. .venv/bin/python $R/time.py --rounds 1 reuse dup >> $R/lines.jsonl
  PYTHONPATH=/tmp/s61/before .venv/bin/python $R/time.py --tree /tmp/s61/before --rounds 1 reuse dup >> $R/lines.jsonl
done
PYTHONPATH=. .venv/bin/python $R/time.py --rounds 2 import >> $R/lines.jsonl
echo done >> $R/lines.jsonl
