#!/usr/bin/env bash
# The "before" run: the commit before the diacritics rule in a worktree, measured by today's bench/keyterms.py
# (its `unaccented` column needs `_plain`, which the old module lacks: defined beside the import for this run).
set -euo pipefail
git worktree add -q /tmp/old-keyterms 1542118
cp bench/keyterms.py /tmp/old-keyterms/bench/keyterms.py
python - <<'PY'
from pathlib import Path
p = Path("/tmp/old-keyterms/bench/keyterms.py"); s = p.read_text()
s = s.replace("import MIN_TEXTS, Lemmatiser, _plain, _stem,", "import MIN_TEXTS, Lemmatiser, _stem,")
s = s.replace("from testbed.common import", "import unicodedata\n\n\ndef _plain(w):\n    return ''.join(ch for ch in "
              "unicodedata.normalize('NFKD', w) if not unicodedata.combining(ch))\n\n\nfrom testbed.common import", 1)
p.write_text(s)
PY
cd /tmp/old-keyterms && python -m bench.keyterms --corpus politici --clustering kmeans-k78 --against min_texts --repeat 3
