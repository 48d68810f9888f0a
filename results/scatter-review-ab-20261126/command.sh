cd /work/main
for r in 1 2; do
  for code in pre this; do
    if [ $code = pre ]; then dir=/tmp/s8/pre; else dir=/work/main; fi
    echo "== $code round $r"
    (cd $dir && SEMANNO_DATA=/work/main/data PYTHONPATH=$dir /work/main/.venv/bin/python -m bench.scatter scale-300000 scale-10000000 --repeat 3 2>/dev/null | grep scatter_ready)
  done
done
