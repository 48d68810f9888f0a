"""Deep Amortized Clustering (Lee, Lee & Teh 2019): a Set Transformer that, given a bag of texts and
an anchor (or a set of anchors), predicts which texts of the bag belong to the anchors' cluster.

- :mod:`.modules`: MAB, SAB, ISAB, PMA with padding masks.
- :mod:`.model`: the anchored-filtering network (:class:`~.model.AnchoredFilter`, :class:`~.model.Config`).
- :mod:`.sampling`: training bags (stages pretrain / kmeans / labels / groups).
- :mod:`.train`: training with checkpoints, save / load, validation scores.
- :mod:`.infer`: the anchors' members, iterative and consensus clustering of a corpus.
- :mod:`.store`: the models trained for a corpus (data/NAME/amortized/MODEL.pt).

The clustering method (registry key ``dac``) is :mod:`core.cluster.dac`; the Annotate search method
is :mod:`core.search.dac`.
"""
