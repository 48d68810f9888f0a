"""Search methods, one module each, one signature:

    search(ctx, included_rows, excluded_rows, k=10, **params) -> Ranked

``REGISTRY`` maps a name to its :class:`~core.search.base.Method`; pages and the simulated
annotator iterate it.
"""

from core.search import cos, dac, keyword, lda, nn1, nn2, suggest
from core.search.base import Method, NotApplicable, Ranked, SearchContext

REGISTRY: dict[str, Method] = {m.METHOD.name: m.METHOD for m in (keyword, cos, lda, nn1, nn2, suggest, dac)}
SEMANTIC = [name for name in REGISTRY if name != "keyword"]
# The Annotate page's buttons. A method is a button only when the simulated annotator finds it at
# least as good as Suggest (issue 31); DAC measured below it (bench/RESULTS.md), so it stays a
# registered method (the bench, the DAC page) without a button.
BUTTONS = [name for name in SEMANTIC if name != "dac"]

__all__ = ["REGISTRY", "SEMANTIC", "BUTTONS", "Method", "NotApplicable", "Ranked", "SearchContext"]
