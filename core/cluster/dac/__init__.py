"""DAC, Deep Amortized Clustering (Lee, Lee & Teh 2019): a Set Transformer that, given a bag of texts
and an anchor (or a set of anchors), predicts which texts of the bag belong to the anchors' cluster.
One name for the feature: this package, the clustering method ``dac`` (:mod:`.method`), the search
method and Annotate button ``dac`` / "DAC" (:mod:`core.search.dac`), the job ``precompute.dac``,
the page "DAC" (pages/6_DAC.py), the benchmark ``bench.dac``, the models in data/NAME/dac/.

- :mod:`.modules`: MAB, SAB, ISAB, PMA with padding masks.
- :mod:`.model`: the anchored-filtering network (:class:`~.model.AnchoredFilter`, :class:`~.model.Config`).
- :mod:`.sampling`: training bags (stages pretrain / kmeans / labels / groups).
- :mod:`.train`: training with checkpoints, save / load, validation scores.
- :mod:`.infer`: the anchors' members, iterative and consensus clustering of a corpus.
- :mod:`.store`: the models trained for a corpus (data/NAME/dac/MODEL.pt).
- :mod:`.method`: the clustering method (registry key ``dac``).
"""

from core.cluster.dac.method import DEFAULTS, LIMITS, METHOD, fit, resolve_model  # noqa: F401
