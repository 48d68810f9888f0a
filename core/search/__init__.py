"""Search methods, one module each, one signature:

    search(ctx, included_rows, excluded_rows, k=10, **params) -> Ranked

``REGISTRY`` maps a name to its :class:`~core.search.base.Method`; pages and the simulated
annotator iterate it.
"""

from core.search import cos, dac, keyword, lda, nn1, nn2, suggest
from core.search.base import Method, NotApplicable, Ranked, SearchContext

REGISTRY: dict[str, Method] = {m.METHOD.name: m.METHOD for m in (keyword, cos, lda, nn1, nn2, suggest, dac)}
SEMANTIC = [name for name in REGISTRY if name != "keyword"]

__all__ = ["REGISTRY", "SEMANTIC", "Method", "NotApplicable", "Ranked", "SearchContext"]
