# alternate: before (aa0d3f8: decisions kept, no cache) and after (the working tree), 3 rounds each
cd /work/main
for r in 1 2 3; do
  for side in before after; do
    dir=/work/main; [ $side = before ] && dir=/tmp/s29/before
    echo "== $side round $r"
    (cd $dir && SEMANNO_DATA=/work/main/data SEMANNO_BENCH_RESULTS=/tmp/s29/abres /work/main/.venv/bin/python -m bench.review 2>&1 | grep '^{')
  done
done
