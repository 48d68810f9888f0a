"""IDEC (registry key ``idec``, shown as "IDEC"): Improved DEC, Guo, Gao, Liu & Yin 2017.

DEC (:mod:`core.cluster.dec`) with the autoencoder's decoder kept during clustering: the loss is
``gamma`` x KL(P || Q) + the reconstruction error, so the latent space keeps the structure of the
embeddings instead of being distorted (or collapsed) by the clustering loss alone.
"""

from __future__ import annotations

from core.cluster.base import ClusterContext, Clustering, Method, Progress
from core.cluster.dec import DEFAULTS as DEC_DEFAULTS
from core.cluster.dec import LIMITS as DEC_LIMITS
from core.cluster.dec import train

DEFAULTS = {**DEC_DEFAULTS, "gamma": 0.1}  # the paper's gamma


def fit(ctx: ClusterContext, k: int | None, *, seed: int = 0, device: str = "cpu",
        progress: Progress | None = None, **params) -> Clustering:
    p = METHOD.params(params)
    gamma = float(p.pop("gamma"))
    return train(ctx, k, method="idec", gamma=gamma, seed=seed, device=device, progress=progress, params=p)


METHOD = Method("idec", "IDEC", "Improved DEC (Guo et al. 2017): DEC plus the autoencoder's reconstruction "
                "loss, which keeps the latent space from collapsing.", fit, DEFAULTS,
                limits={**DEC_LIMITS, "gamma": (0.0, 1e6)})
