cd /work/main
for r in 1 2; do
  for side in before after; do
    if [ $side = before ]; then dir=/tmp/s15/before; else dir=/work/main; fi
    echo "== $side round $r"
    (cd $dir && SEMANNO_BENCH_RESULTS=/tmp/s15/benchres /work/main/.venv/bin/python -m bench.search --repeat 9 2>&1 | grep '"op"')
  done
done
