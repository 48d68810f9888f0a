"""Clustering methods, one module each, one signature:

    fit(ctx, k, *, seed=0, device="cpu", progress=None, **params) -> Clustering

``REGISTRY`` maps a name (= module name = the name in stored file names) to its
:class:`~core.cluster.base.Method`; the CLI (``precompute.cluster``), the benchmarks and the
Topics page iterate it. Stored clusterings: :mod:`core.cluster.store`; key lemmas:
:mod:`core.cluster.keyterms`; scores against labels and groups: :mod:`core.cluster.evaluate`.
"""

from core.cluster import clusterbert, dac, dec, dec_crl, dec_mlm, idec, kmeans, sccl
from core.cluster.base import ClusterContext, Clustering, Method

REGISTRY: dict[str, Method] = {m.METHOD.name: m.METHOD for m in (kmeans, dec, idec, dac, clusterbert, dec_mlm, dec_crl,
                                                                  sccl)}

__all__ = ["REGISTRY", "ClusterContext", "Clustering", "Method"]
