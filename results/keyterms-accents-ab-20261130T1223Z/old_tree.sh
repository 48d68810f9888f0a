#!/usr/bin/env bash
# The "before" run: the commit before the diacritics rule in a worktree, measured by today's bench/keyterms.py
# (its `unaccented` column folds words with core.search.keyword.fold, which the old tree has too).
set -euo pipefail
git worktree add -q /tmp/old-keyterms 1542118
cp bench/keyterms.py /tmp/old-keyterms/bench/keyterms.py
cd /tmp/old-keyterms && python -m bench.keyterms --corpus politici --clustering kmeans-k78 --against min_texts --repeat 3
