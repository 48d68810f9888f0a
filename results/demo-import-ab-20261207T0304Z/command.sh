cd /work/main
for r in 1 2 3; do
 for how in embed brought; do
  rm -rf /tmp/s89/droot; 
  if [ $how = embed ]; then extra=""; else extra="--vectors demo/crisislex_demo.vectors.npy --vectors-model default"; fi
  s=$(date +%s.%N)
  SEMANNO_DATA=/tmp/s89/droot HF_HUB_OFFLINE=1 .venv/bin/python -m precompute.embed demo/crisislex_demo.csv.gz --name demo $extra > /tmp/s89/demo_$how.log 2>&1 || echo FAIL
  e=$(date +%s.%N)
  echo "$r $how $(echo "$e - $s" | bc)"
 done
done
