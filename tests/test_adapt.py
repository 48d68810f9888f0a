"""Encoder adaptation (ClusterBERT) and embedding sets: end to end on real texts with the packaged
model (tiny sizes), resume after a kill, the augmentations, the set switch on the Annotate page. (DEC's
target, which ClusterBERT's hardening uses, is tested in test_cluster.py.)"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from core import embedsets
from core.cluster import REGISTRY, ClusterContext
from core.cluster.deep import delete_words, swap_words
from tests.conftest import shared_file

TINY = dict(tsdae_epochs=1, cluster_rounds=1, cluster_epochs=1, harden_epochs=1, batch_size=16, max_length=24)
TINY_FOR = {"clusterbert": TINY, "dec_mlm": dict(epochs=3, batch_size=16, max_length=24),
            "dec_crl": dict(epochs=3, batch_size=16, max_length=24, vocab=200),
            "sccl": dict(epochs=3, batch_size=16, max_length=24)}
ADAPTING = sorted(TINY_FOR)  # the methods that fine-tune the encoder


@pytest.fixture(autouse=True)
def own_temporary_folder(tmp_path, monkeypatch):
    """A fit without a checkpoint folder saves its adapted encoder (90-450 MB) in the system's temporary folder,
    for its caller to move or remove: here pytest's folder of the test, which pytest clears, takes it."""
    import tempfile

    (tmp_path / "system-tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "system-tmp"))


def test_word_deletion_keeps_at_least_one_word_and_deletes_about_the_ratio():
    gen = np.random.default_rng(0)
    text = " ".join(f"w{i}" for i in range(1000))
    kept = delete_words(text, 0.6, gen).split()
    assert 330 <= len(kept) <= 470 and set(kept) <= set(text.split())
    assert len(delete_words("one", 0.99, gen).split()) == 1


def test_dec_crl_parts_contrast_partners_keep_words_and_make_distributions():
    from core.cluster.dec_crl import Heads, DEFAULTS
    from core.cluster.deep import nt_xent

    gen = np.random.default_rng(0)
    text = " ".join(f"w{i}" for i in range(50))
    swapped = swap_words(text, 0.3, gen)
    assert sorted(swapped.split()) == sorted(text.split()) and swapped != text
    g = torch.Generator().manual_seed(0)
    a = torch.randn(32, 16, generator=g)
    near = a + 0.05 * torch.randn(32, 16, generator=g)
    # partners that agree give a lower loss than the same views paired at random
    assert nt_xent(a, near, 0.5) < nt_xent(a, near[torch.randperm(32, generator=g)], 0.5)
    heads = Heads(16, {**DEFAULTS, "space": "projection", "proj_dim": 8, "topics": 3, "word_dim": 4}, vocab=30)
    beta = heads.topic_word(torch.randn(5, 8, generator=g))
    assert beta.shape == (5, 3, 30)
    torch.testing.assert_close(beta.sum(-1), torch.ones(5, 3))
    q = torch.softmax(torch.randn(4, 5, generator=g), 1)
    bow = torch.zeros(4, 30)
    bow[:3, :4] = 1  # the 4th text has no vocabulary word: left out, not a NaN
    loss = heads.reconstruction_loss(torch.randn(4, 8, generator=g), q, torch.randn(5, 8, generator=g), bow)
    assert torch.isfinite(loss) and loss > 0


def test_the_fused_adamw_makes_the_for_loop_kernels_update_and_resumes_an_older_checkpoints_state():
    """The adapting methods' optimiser (core.cluster.deep.adamw) is torch's fused kernel: the same steps as the
    default one, and an optimiser state saved by a run before it (the for-loop kernel's) loads and goes on."""
    import copy

    from core.cluster.deep import adamw

    g = torch.Generator().manual_seed(0)
    nets = [torch.nn.Sequential(torch.nn.Embedding(500, 16), torch.nn.Linear(16, 4)) for _ in range(3)]
    for net in nets[1:]:
        net.load_state_dict(nets[0].state_dict())
    start = [p.detach().clone() for p in nets[0].parameters()]
    grads = [[torch.randn(p.shape, generator=g) for p in nets[0].parameters()] for _ in range(6)]
    old = torch.optim.AdamW(nets[0].parameters(), lr=1e-2, weight_decay=0.01)
    new = adamw([{"params": nets[1].parameters(), "lr": 1e-2}], weight_decay=0.01)  # a generator, as the methods
    assert new.defaults["fused"] is True and old.defaults["fused"] is None
    assert len(new.param_groups[0]["params"]) == 3
    for opt, net in ((old, nets[0]), (new, nets[1])):
        for grad in grads[:3]:
            for p, gp in zip(net.parameters(), grad):
                p.grad = gp.clone()
            opt.step()
    for a, b, before in zip(nets[0].parameters(), nets[1].parameters(), start):
        torch.testing.assert_close(a, b, rtol=0, atol=1e-6)
        assert (a - before).abs().mean() > 1e-3  # three steps moved the weights (lr 0.01)
    # an older checkpoint: the for-loop state, three steps in, resumed by the fused optimiser of a newer run
    nets[2].load_state_dict(nets[0].state_dict())
    resumed = adamw(nets[2].parameters(), lr=1e-2, weight_decay=0.01)
    resumed.load_state_dict(copy.deepcopy(old.state_dict()))  # as read back from a file: tensors of its own
    for opt, net in ((old, nets[0]), (resumed, nets[2])):
        for grad in grads[3:]:
            for p, gp in zip(net.parameters(), grad):
                p.grad = gp.clone()
            opt.step()
    for a, b in zip(nets[0].parameters(), nets[2].parameters()):
        torch.testing.assert_close(a, b, rtol=0, atol=1e-6)
    assert resumed.state[next(nets[2].parameters())]["step"].item() == 6


def test_warm_up_then_decay_to_zero_and_batch_targets_are_sharper_distributions():
    from core.cluster.deep import batch_or_epoch_target, warmup_decay

    w = torch.nn.Parameter(torch.zeros(1))
    opt = torch.optim.SGD([w], lr=1.0)
    sched = warmup_decay(opt, 20, 0.1)
    lrs = []
    for _ in range(20):
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    assert lrs[0] < lrs[1] == max(lrs) == 1.0  # two warm-up steps, then the full rate
    assert all(a >= b for a, b in zip(lrs[1:], lrs[2:])) and lrs[-1] < 0.1  # then down towards zero
    q = torch.softmax(torch.randn(8, 4, generator=torch.Generator().manual_seed(0)), 1)
    t = batch_or_epoch_target(q, np.arange(8), None)
    torch.testing.assert_close(t.sum(1), torch.ones(8))
    assert (t.max(1).values >= q.max(1).values - 1e-6).all()  # the target sharpens each row
    whole = torch.softmax(torch.randn(20, 4), 1)
    torch.testing.assert_close(batch_or_epoch_target(q, np.array([3, 7]), whole), whole[[3, 7]])


@pytest.fixture(scope="module")
def titles():
    frame = pd.read_csv(shared_file("stackoverflow.csv"), dtype=str, keep_default_na=False)
    frame = frame.groupby("label", group_keys=False).head(6).reset_index(drop=True)  # 120 titles, 20 tags
    return frame["text"].tolist(), frame["label"].astype(int).to_numpy()


class Killed(Exception):
    pass


@pytest.mark.parametrize("method", ADAPTING)
def test_adapting_methods_resume_after_a_kill_to_the_same_result(titles, tmp_path, tiny_encoder, method):
    # how a run stops and starts again does not depend on what the encoder knows: a tiny one (seconds, where the
    # packaged model took 18-33 s a method; what each method gives the packaged model: the CLI test below)
    texts, _ = titles
    tiny = {**TINY_FOR[method], "model": tiny_encoder}
    x = np.zeros((len(texts), 1), np.float32)
    watched: dict[str, list] = {"whole": [], "resumed": []}

    def watcher(run):
        return lambda done, z: watched[run].append((done, z))

    ctx = ClusterContext(x, texts, checkpoint=tmp_path / "ck", watch=watcher("resumed"))
    whole = REGISTRY[method].fit(ClusterContext(x, texts, checkpoint=tmp_path / "w", watch=watcher("whole")), 4,
                                 seed=2, **tiny)

    def kill_after_two_epochs(step, total, info):
        if step == 2:
            raise Killed

    with pytest.raises(Killed):
        REGISTRY[method].fit(ctx, 4, seed=2, progress=kill_after_two_epochs, **tiny)
    assert (tmp_path / "ck" / "state.pt").exists()
    watched["resumed"].clear()  # what the killed run showed
    steps = []
    resumed = REGISTRY[method].fit(ctx, 4, seed=2, progress=lambda s, t, i: steps.append(s), **tiny)
    assert steps == [3]  # the first two epochs were not done again
    np.testing.assert_array_equal(resumed.labels, whole.labels)
    np.testing.assert_allclose(resumed.embeddings, whole.embeddings, atol=1e-5)
    assert whole.model_dir.is_dir() and len(whole.history) >= 3
    # a watcher saw the corpus's unit embeddings after each epoch (ClusterBERT: each stage), once each
    assert [d for d, _ in watched["whole"]] == [1, 2, 3] and [d for d, _ in watched["resumed"]] == [2, 3]
    np.testing.assert_allclose(watched["whole"][-1][1], whole.embeddings, atol=1e-5)
    np.testing.assert_allclose(watched["resumed"][0][1], watched["whole"][1][1], atol=1e-5)  # the kill's state
    assert not np.allclose(watched["whole"][0][1], watched["whole"][2][1], atol=1e-3)  # epochs moved them
    if method == "clusterbert":
        assert [h["phase"] for h in whole.history] == ["tsdae", "cluster", "harden"]


def test_clusterbert_warms_its_decoder_with_the_encoder_still_then_trains_both(titles, monkeypatch):
    """decoder_epochs: the decoder's new weights (cross-attention, masked-LM head) learn the reconstruction while
    the encoder (and the word embeddings the decoder shares) stays as loaded; then TSDAE trains the encoder, with
    every weight's own trainability back (freeze_words kept); the warm-up is a stage of the run's history."""
    from core.cluster import clusterbert

    seen: dict[str, list] = {}
    step = clusterbert._step

    def watched(run, stage, *args):
        if stage not in seen:  # each stage's first batch: the encoder's and the decoder's own weights as they are
            seen[stage] = [{n: w.detach().clone() for n, w in run.model.named_parameters()},
                           [w.detach().clone() for w in run.decoder_own()],
                           {n for n, w in run.model.named_parameters() if w.requires_grad}]
        return step(run, stage, *args)

    monkeypatch.setattr(clusterbert, "_step", watched)
    texts = titles[0][::3]  # 40 titles
    r = REGISTRY["clusterbert"].fit(ClusterContext(np.zeros((len(texts), 1), np.float32), texts), 3, seed=0,
                                    decoder_epochs=2, tsdae_epochs=1, cluster_rounds=0, harden_epochs=0,
                                    batch_size=10, max_length=24, freeze_words=True)
    assert [h["phase"] for h in r.history] == ["decoder", "decoder", "tsdae"]
    assert r.history[1]["loss"] < r.history[0]["loss"]  # the decoder learns
    (enc0, dec0, free0), (enc1, dec1, free1) = seen["decoder"], seen["tsdae"]
    assert all(torch.equal(enc0[n], enc1[n]) for n in enc0)  # the encoder did not move in the warm-up
    assert len(dec0) > 6 and all(not torch.equal(a, b) for a, b in zip(dec0, dec1))  # every new weight did
    assert not free0  # the encoder got no gradient during the warm-up
    assert "0.auto_model.embeddings.word_embeddings.weight" not in free1 and len(free1) == len(enc1) - 1


@pytest.mark.slow  # fine-tunes a transformer: about half a minute
def test_clusterbert_without_the_reconstruction_builds_no_decoder_and_still_adapts(titles, tmp_path, monkeypatch):
    """With no TSDAE stage and lambda = 1 the decoder is never built (it is most of the cost on a CPU),
    the stages run, and the encoder moves away from the packaged model."""
    from sentence_transformers import SentenceTransformer, losses

    from core.embed import resolve_model

    def no_decoder(*args, **kwargs):
        raise AssertionError("the TSDAE decoder was built although nothing weighs its loss")

    monkeypatch.setattr(losses, "DenoisingAutoEncoderLoss", no_decoder)
    texts, _ = titles
    p = {**TINY, "tsdae_epochs": 0, "lam_cluster": 1.0, "lam_harden": 1.0}
    out = REGISTRY["clusterbert"].fit(ClusterContext(np.zeros((len(texts), 1), np.float32), texts,
                                                     checkpoint=tmp_path / "ck"), 4, seed=0, **p)
    assert [h["phase"] for h in out.history] == ["cluster", "harden"]
    base = SentenceTransformer(resolve_model("default"), device="cpu").encode(texts, normalize_embeddings=True)
    moved = 1 - (base * out.embeddings).sum(1)
    assert moved.mean() > 1e-3 and len(set(out.labels.tolist())) > 1


@pytest.mark.slow  # fine-tunes multilingual-e5-small: about a minute
def test_clusterbert_adapts_multilingual_e5_without_tsdae_and_names_the_missing_decoder(titles, tmp_path):
    texts, _ = titles
    texts = texts[::2]
    ctx = ClusterContext(np.zeros((len(texts), 1), np.float32), texts, checkpoint=tmp_path / "ck")
    small = dict(cluster_rounds=1, cluster_epochs=1, harden_epochs=1, batch_size=16, max_length=24)
    with pytest.raises(ValueError, match="without the decoder"):
        REGISTRY["clusterbert"].fit(ctx, 4, seed=0, model="multilingual-e5-small", tsdae_epochs=1, **small)
    out = REGISTRY["clusterbert"].fit(ctx, 4, seed=0, model="multilingual-e5-small", **small)
    assert out.embeddings.shape == (len(texts), 384) and len(set(out.labels.tolist())) > 1
    np.testing.assert_allclose(np.linalg.norm(out.embeddings, axis=1), 1, atol=1e-4)
    assert (out.model_dir / "tokenizer.txt").exists()  # saved as an adapted e5, as SCCL's


@pytest.mark.slow  # fine-tunes a transformer
@pytest.mark.parametrize("method", ADAPTING)
def test_cli_writes_a_loadable_clustering_and_embedding_set(so_copy, method):
    from sentence_transformers import SentenceTransformer

    from core.cluster import store
    from core.corpus import load_corpus
    from precompute import cluster

    args = ["--corpus", "so", "--method", method, "--k", "20", "--no-terms"]
    for key, value in {**TINY_FOR[method], **({"epochs": 1} if method != "clusterbert" else {})}.items():
        args += ["--param", f"{key}={value}"]
    assert cluster.main(args) == 0
    corpus = load_corpus("so")
    sets = {s.name: s for s in embedsets.listing(corpus)}
    name = f"{method}-k20"
    assert list(sets) == ["import", name]
    adapted = embedsets.load_vectors(corpus, name)
    assert adapted.shape == corpus.embeddings.shape
    assert not np.allclose(adapted, corpus.embeddings)  # the encoder changed
    np.testing.assert_allclose(np.linalg.norm(adapted, axis=1), 1, atol=1e-4)
    # the adapted encoder loads offline and embeds as the set says
    model = SentenceTransformer(str(sets[name].model_dir), device="cpu")
    again = model.encode(corpus.frame["text"].tolist()[:5], normalize_embeddings=True)
    np.testing.assert_allclose(again, adapted[:5], atol=2e-3)
    labels = store.labels_for(corpus, name)
    assert labels.shape == (300,) and labels.max() < 20
    # a clustering of the adapted set keeps the import's K-Means apart (tagged with the set)
    assert cluster.main(["--corpus", "so", "--k", "20", "--embedding-set", name, "--no-terms"]) == 0
    assert f"kmeans-k20-{method}_k20" in {s.stem for s in store.listing("so")}


def test_a_damaged_or_mismatched_set_names_itself(so_corpus, tmp_path):
    import shutil

    from core.corpus import load_corpus

    root = tmp_path / "d"
    shutil.copytree(so_corpus.folder, root / "so")
    corpus = load_corpus("so", root)
    embedsets.save(corpus, "shuffled", np.asarray(corpus.embeddings)[::-1], {"method": "test"})
    assert [s.name for s in embedsets.listing(corpus)] == ["import", "shuffled"]
    with pytest.raises(embedsets.EmbeddingSetError, match="does not match"):
        embedsets.save(corpus, "short", np.zeros((5, 384), np.float32), {"method": "test"})
    (embedsets.folder("so", root) / "shuffled" / "vectors.npy").write_bytes(b"garbage")
    with pytest.raises(embedsets.EmbeddingSetError, match="shuffled"):
        embedsets.load_vectors(corpus, "shuffled")
    with pytest.raises(embedsets.EmbeddingSetError, match="no embedding set 'nope'"):
        embedsets.load_vectors(corpus, "nope")


def test_switching_the_embedding_set_changes_what_cos_returns(tweets):
    from streamlit.testing.v1 import AppTest

    from core.corpus import load_corpus
    from tests.conftest import ROOT

    corpus = load_corpus("tweets", tweets)
    rng = np.random.default_rng(0)
    other = np.asarray(corpus.embeddings)[rng.permutation(corpus.n)]  # the same vectors, on other texts
    embedsets.save(corpus, "shuffled", other, {"method": "test"})

    def cos_hits(at):
        at.text_input(key="kw_query").set_value("ockovani")
        at.button(key="FormSubmitter:kw_form-Search (KW)").click().run()
        at.button(key="btn_cos").click().run()
        assert not at.exception
        return [b.key for b in at.button if b.key and b.key.startswith("tog_")]

    at = AppTest.from_file(str(ROOT / "pages/1_Annotate.py"), default_timeout=120).run()
    assert at.selectbox(key="embedding_set").value == "import"
    first = cos_hits(at)
    fresh = AppTest.from_file(str(ROOT / "pages/1_Annotate.py"), default_timeout=120).run()
    fresh.selectbox(key="embedding_set").set_value("shuffled").run()
    second = cos_hits(fresh)
    assert first and second and first != second


@pytest.mark.slow  # fine-tunes multilingual-e5-small: about half a minute
def test_sccl_adapts_multilingual_e5_and_rejects_bad_parameters_by_name(titles):
    texts, y = titles
    texts, y = texts[::3], y[::3]  # 40 titles
    x = np.zeros((len(texts), 1), np.float32)
    r = REGISTRY["sccl"].fit(ClusterContext(x, texts), 4, model="multilingual-e5-small", epochs=1, batch_size=20,
                             max_length=24)
    assert r.embeddings.shape == (len(texts), 384) and r.labels.max() < 4
    np.testing.assert_allclose(np.linalg.norm(r.embeddings, axis=1), 1, atol=1e-4)
    from core.embed import load_model

    base = load_model("multilingual-e5-small", "cpu").encode(texts)
    agree = (base * r.embeddings).sum(1)
    assert 0.5 < agree.min() and agree.mean() < 0.99999  # moved by training, still the same encoder
    assert (r.model_dir / "config.json").exists()
    for method, name, bad in (("sccl", "target", "corpus"), ("dec_crl", "space", "both"), ("dec_mlm", "target", "x")):
        with pytest.raises(ValueError, match=name):
            REGISTRY[method].fit(ClusterContext(x, texts), 4, **{name: bad})


@pytest.mark.slow  # three small fine-tunings of MiniLM: about half a minute
def test_sccl_anchor_holds_the_adapted_embeddings_near_the_base_encoders_and_survives_a_resume(titles, tmp_path):
    texts, _ = titles
    texts = texts[::3]  # 40 titles
    x = np.zeros((len(texts), 1), np.float32)
    base = REGISTRY["sccl"].fit(ClusterContext(x, texts), 4, epochs=0, max_length=24).embeddings  # untrained
    hot = dict(epochs=2, batch_size=20, max_length=24, lr=3e-4, seed=1)  # a learning rate that moves it far

    def fit(anchor, **kw):
        return REGISTRY["sccl"].fit(ClusterContext(x, texts, **kw), 4, anchor=anchor, **hot)

    free, held = fit(0.0), fit(20.0)
    drift = {name: float(1 - (base * r.embeddings).sum(1).mean()) for name, r in (("free", free), ("held", held))}
    assert drift["held"] < drift["free"] / 2 and drift["held"] > 0, drift  # held near, yet still trained
    assert "anchor" in held.history[0] and "anchor" not in free.history[0]

    def kill(step, total, info):
        raise Killed

    with pytest.raises(Killed):  # killed after its first epoch: the resumed run's leash is still the base encoder's
        REGISTRY["sccl"].fit(ClusterContext(x, texts, checkpoint=tmp_path / "ck"), 4, anchor=20.0, progress=kill,
                             **hot)
    resumed = fit(20.0, checkpoint=tmp_path / "ck")
    np.testing.assert_allclose(resumed.embeddings, held.embeddings, atol=1e-5)


@pytest.mark.parametrize("method", ["dec_mlm", "sccl", "clusterbert"])
def test_freeze_words_trains_everything_but_the_word_embeddings(titles, method):
    """freeze_words=True: the saved encoder has the base model's word embeddings (DEC-MLM's tied head and its
    warm-up included, ClusterBERT's TSDAE stage whose decoder is tied to the encoder) and every other weight a loss
    reaches moved; a value of the wrong kind is refused by name."""
    from sentence_transformers import SentenceTransformer

    from core.embed import resolve_model

    texts = titles[0][::6]  # 20 titles
    x = np.zeros((len(texts), 1), np.float32)
    extra = {"dec_mlm": {"epochs": 1, "head_epochs": 1}, "sccl": {"epochs": 1},
             "clusterbert": {"tsdae_epochs": 1, "tsdae_lr": 1e-3, "cluster_rounds": 1, "cluster_epochs": 1,
                             "harden_epochs": 0, "lam_cluster": 0.8}}[method]
    r = REGISTRY[method].fit(ClusterContext(x, texts), 3, batch_size=10, max_length=24, lr=1e-3, freeze_words=True,
                             **extra)
    base = dict(SentenceTransformer(resolve_model("default"), device="cpu")[0].auto_model.named_parameters())
    after = dict(SentenceTransformer(str(r.model_dir), device="cpu")[0].auto_model.named_parameters())
    words = "embeddings.word_embeddings.weight"
    assert torch.equal(after[words], base[words])
    still = {n for n in base if torch.equal(after[n], base[n])}
    assert still == {words} | {n for n in base if n.startswith("pooler.")}, still  # mean pooling: no loss reaches it
    with pytest.raises(ValueError, match="freeze_words"):
        REGISTRY[method].fit(ClusterContext(x, texts), 3, freeze_words="yes")


def test_the_masked_lm_loss_on_masked_positions_only_is_the_full_models_loss(titles):
    """mlm_loss runs the head on the masked positions only (e5's 250k-word vocabulary); on MiniLM it must
    give what transformers' BertForMaskedLM gives with the same mask over every position."""
    from core.cluster.deep import Encoder
    from core.cluster.dec_mlm import DEFAULTS

    texts = titles[0][:16]
    run = Encoder(texts, {**DEFAULTS, "max_length": 24}, seed=0, device="cpu")
    run.model.eval()  # no dropout: the two passes must see the same network
    b = run.batch(texts)
    torch.manual_seed(5)
    ours = run.mlm_loss(b)
    torch.manual_seed(5)  # the same draw of masked positions, as mlm_loss makes it
    ids = b["input_ids"].clone()
    special = (ids == run.tok.cls_token_id) | (ids == run.tok.sep_token_id) | (ids == run.tok.pad_token_id)
    pick = (torch.rand(ids.shape) < DEFAULTS["mask_ratio"]) & ~special
    labels = torch.where(pick, ids, torch.full_like(ids, -100))
    ids[pick] = run.tok.mask_token_id
    theirs = run.model(input_ids=ids, attention_mask=b["attention_mask"], labels=labels).loss
    assert pick.sum() > 5 and abs(ours.item() - theirs.item()) < 1e-4


@pytest.mark.slow  # fine-tunes MiniLM twice for an epoch: about half a minute
def test_dec_mlm_head_lr_trains_the_new_head_at_its_own_rate_and_the_encoder_at_lr(titles, tmp_path):
    from core import safeload
    from core.cluster.deep import Encoder
    from core.cluster.dec_mlm import DEFAULTS

    texts = titles[0][::4]  # 30 titles
    x = np.zeros((len(texts), 1), np.float32)
    p = dict(epochs=2, batch_size=10, max_length=24)
    start = Encoder(texts, {**DEFAULTS, **p}, seed=1, device="cpu").model.state_dict()

    def moved_after_one_epoch(head_lr, folder):
        def stop(step, total, info):
            if step == 1:
                raise Killed

        with pytest.raises(Killed):
            REGISTRY["dec_mlm"].fit(ClusterContext(x, texts, checkpoint=folder), 4, seed=1, progress=stop,
                                    head_lr=head_lr, **p)
        after = safeload.load(folder / "state.pt", "checkpoint")["mlm"]
        return {name: float((after[name] - start[name]).abs().max()) for name in
                ("cls.predictions.transform.dense.weight", "bert.encoder.layer.0.attention.self.query.weight")}

    same, own = moved_after_one_epoch(0.0, tmp_path / "a"), moved_after_one_epoch(1e-2, tmp_path / "b")
    head, enc = "cls.predictions.transform.dense.weight", "bert.encoder.layer.0.attention.self.query.weight"
    assert own[head] > 20 * same[head]  # Adam's steps are about the learning rate: 1e-2 against 2e-5
    assert 0 < own[enc] < 10 * DEFAULTS["lr"] * 3 and 0 < same[enc] < 10 * DEFAULTS["lr"] * 3  # 3 steps at lr


def test_dec_mlm_head_warm_up_trains_the_head_alone_and_leaves_the_encoder_and_its_words(titles):
    """head_epochs: the new head learns the corpus's words first, the encoder (word embeddings, i.e. the tied
    decoder, included) untouched; the warm-up's loss falls."""
    from core.cluster.deep import Encoder
    from core.cluster.dec_mlm import DEFAULTS, _warm_head, head_params

    texts = titles[0][:40]
    p = {**DEFAULTS, "max_length": 24, "head_epochs": 4}
    run = Encoder(texts, p, seed=0, device="cpu")
    run.model.train()
    head = head_params(run)
    before = {k: v.clone() for k, v in run.model.state_dict().items()}
    torch.manual_seed(0)
    passes = []
    _warm_head(run, head, texts, 10, p, 0, lambda done, info: passes.append((done, info)))
    after = run.model.state_dict()
    moved = {k for k in before if not torch.equal(before[k], after[k])}
    assert moved and all(k.startswith("cls.") and not k.endswith("decoder.weight") for k in moved), sorted(moved)
    assert "cls.predictions.transform.dense.weight" in moved
    assert run.encoder.embeddings.word_embeddings.weight.requires_grad  # given back to the main loop
    assert [done for done, _ in passes] == [1, 2, 3, 4] and all(i["phase"] == "head" for _, i in passes)
    assert passes[-1][1]["mlm"] < passes[0][1]["mlm"] - 1  # reported after each pass, and it learns
    # the fit reports the passes as units before its epochs (progress 1..2 of 2 + epochs) and keeps them in history
    seen = []
    x = np.zeros((len(texts), 1), np.float32)
    r = REGISTRY["dec_mlm"].fit(ClusterContext(x, texts), 4, seed=0, epochs=1, batch_size=20, max_length=24,
                                head_epochs=2, progress=lambda s, t, info: seen.append((s, t, info.get("phase"))))
    assert seen == [(1, 3, "head"), (2, 3, "head"), (3, 3, None)]
    assert [h.get("phase") for h in r.history] == ["head", "head", None, "final"]


@pytest.mark.slow  # fine-tunes multilingual-e5-small with a 250k-word MLM head: about a minute
def test_dec_mlm_adapts_multilingual_e5_with_a_head_tied_to_its_word_embeddings(titles):
    from core.cluster.deep import Encoder, adamw
    from core.cluster.dec_mlm import DEFAULTS

    texts = titles[0][::3]  # 40 titles
    # the head learns: a few steps of the MLM loss alone on these texts bring it well down
    run = Encoder(texts, {**DEFAULTS, "model": "multilingual-e5-small", "max_length": 24}, seed=0, device="cpu")
    assert run.model.cls.words.weight is run.encoder.embeddings.word_embeddings.weight  # tied, not a copy
    assert run.tok.mask == 250001  # XLM-R's <mask>
    opt = adamw(run.model.parameters(), lr=1e-4)  # the methods' optimiser
    b = run.batch(texts)
    torch.manual_seed(0)
    losses = []
    for _ in range(8):
        loss = run.mlm_loss(b)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert np.isfinite(losses).all() and np.mean(losses[-2:]) < 0.7 * np.mean(losses[:2])
    # and DEC-MLM end to end gives an adapted e5 set
    x = np.zeros((len(texts), 1), np.float32)
    r = REGISTRY["dec_mlm"].fit(ClusterContext(x, texts), 4, model="multilingual-e5-small", epochs=1, batch_size=20,
                                max_length=24)
    assert r.embeddings.shape == (len(texts), 384) and r.labels.max() < 4
    assert np.isfinite(r.history[0]["mlm"]) and r.history[0]["mlm"] > 0
    from core.embed import load_model

    agree = (load_model("multilingual-e5-small", "cpu").encode(texts) * r.embeddings).sum(1)
    assert 0.5 < agree.min() and agree.mean() < 0.99999
    assert (r.model_dir / "tokenizer.txt").exists()  # saved as an adapted e5 encoder (no head)


def test_bench_adapt_routes_parameters_and_tables_mean_and_sd():
    from bench.adapt import method_params, table

    pairs = [("epochs", 2), ("sccl:eta", 5.0), ("dec_crl:lambda_c", 3.0), ("mlm_weight", 0.0)]
    assert method_params(pairs, "sccl") == {"epochs": 2, "eta": 5.0}
    assert method_params(pairs, "dec_mlm") == {"epochs": 2, "mlm_weight": 0.0}
    rows = [dict(dataset="so", model="default", method="SCCL", nmi=n, acc=a, device="cpu", minutes_per_epoch_per_10k=m)
            for n, a, m in ((0.70, 0.60, 3.0), (0.74, 0.66, 5.0))]
    line = next(x for x in table(rows).splitlines() if "| SCCL |" in x)
    assert "| 2 | 72.0±2.8 | 63.0±4.2 | 4.00 | cpu |" in line


def test_bench_adapt_removes_each_fits_adapted_encoder_once_it_is_scored(tmp_path, monkeypatch):
    """A whole grid is 96 fits of 90-450 MB encoders that no figure reads: each is removed after its scores
    (they stayed in the system's temporary folder, two or three from every CI run)."""
    import argparse
    import dataclasses
    import tempfile

    from bench import adapt
    from core.cluster.base import Clustering

    made = []

    def fit(ctx, k, **kwargs):  # what a fit leaves: labels, embeddings and the encoder's folder
        folder = Path(tempfile.mkdtemp(prefix="sccl-"))
        (folder / "model.safetensors").write_bytes(b"0" * 1000)
        made.append(folder)
        x = np.eye(len(ctx.texts), 4, dtype=np.float32)
        if ctx.watch:  # each epoch's embeddings, the last one's too
            for done in range(1, kwargs["epochs"] + 1):
                ctx.watch(done, x)
        return Clustering(np.arange(len(ctx.texts)) % k, x[:k], "sccl", k, {}, [{"phase": "epoch"}], 0.1, 0, "cpu",
                          embeddings=x, model_dir=folder)

    monkeypatch.setitem(REGISTRY, "sccl", dataclasses.replace(REGISTRY["sccl"], fit=fit))
    scores = []
    texts, y = [f"text {i}" for i in range(8)], np.arange(8) % 2
    args = argparse.Namespace(param=[("epochs", 3)], save_embeddings=None, score_epochs=False)
    adapt._adapt(args, "sccl", "default", texts, y, 2, 0, "cpu", np.eye(8, 4, dtype=np.float32),
                 lambda **row: scores.append(row), {"dataset": "t"})
    assert made and not made[0].exists() and [r["method"] for r in scores][0] == REGISTRY["sccl"].label
    assert not list(Path(tempfile.gettempdir()).iterdir())
    assert [r["method"] for r in scores] == ["SCCL", "K-Means on SCCL's embeddings"]
    scores.clear()  # --score-epochs: K-Means after every epoch as well, with the fit's parameters
    adapt._adapt(argparse.Namespace(**{**vars(args), "score_epochs": True}), "sccl", "default", texts, y, 2, 0, "cpu",
                 np.eye(8, 4, dtype=np.float32), lambda **row: scores.append(row), {"dataset": "t"})
    assert [r["method"] for r in scores] == ["K-Means on SCCL's embeddings after epoch 1",
                                             "K-Means on SCCL's embeddings after epoch 2",
                                             "K-Means on SCCL's embeddings after epoch 3", "SCCL",
                                             "K-Means on SCCL's embeddings"]
    assert scores[0]["params"] == {"epochs": 3} and 0 <= scores[0]["nmi"] <= 1


def test_bench_adapt_merges_runs_once_per_seed_and_keeps_parameter_sets_apart(tmp_path):
    import json

    from bench.adapt import merge

    def run(name, lines):
        (tmp_path / name).mkdir()
        (tmp_path / name / "lines.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
        return tmp_path / name

    base = dict(kind="score", dataset="so", model="default", device="cpu", seed=0)
    config = dict(kind="config", dataset="so", rows=1000)
    a = run("a", [config, {**base, "method": "K-Means", "nmi": 0.7, "acc": 0.7},
                  {**base, "method": "SCCL", "params": {"eta": 1.0}, "nmi": 0.6, "acc": 0.6},
                  {**base, "method": "K-Means on SCCL's embeddings", "nmi": 0.65, "acc": 0.65}])
    b = run("b", [config, {**base, "method": "K-Means", "nmi": 0.7, "acc": 0.7},  # the same baseline again
                  {**base, "method": "SCCL", "params": {}, "nmi": 0.8, "acc": 0.8}])
    full = run("c", [{**config, "rows": 20000}, {**base, "method": "K-Means", "nmi": 0.6, "acc": 0.6}])
    out = merge([a, b, full])
    assert "| so (1000 texts) | default | K-Means | 1 | 70.0 | 70.0 |" in out
    assert "| so (20000 texts) | default | K-Means | 1 | 60.0 | 60.0 |" in out
    assert "| SCCL (eta=1.0) | 1 | 60.0 |" in out and "| SCCL | 1 | 80.0 |" in out
    assert "| K-Means on SCCL's embeddings (eta=1.0) | 1 | 65.0 |" in out


def test_bench_adapt_table_reads_a_carried_encoder_as_the_packaged_one(tmp_path, capsys):
    import json

    from bench.adapt import main

    for name, model, device, seed, nmi in [("cpu", "default", "cpu", 0, 0.5), ("gpu", "/tmp/minilm", "cuda", 1, 0.7)]:
        (tmp_path / name).mkdir()
        row = dict(kind="score", dataset="bio", model=model, device=device, seed=seed, method="DEC-CRL", nmi=nmi,
                   acc=nmi, minutes_per_epoch_per_10k=40.0 if device == "cpu" else 0.5)
        (tmp_path / name / "lines.jsonl").write_text(json.dumps(dict(kind="config", dataset="bio", rows=20)) + "\n"
                                                     + json.dumps(row) + "\n")
    main(["table", str(tmp_path / "cpu"), str(tmp_path / "gpu")])
    apart = capsys.readouterr().out
    assert "| /tmp/minilm | DEC-CRL | 1 | 70.0 | 70.0 | 0.50 | cuda |" in apart
    assert "| default | DEC-CRL | 1 | 50.0 | 50.0 | 40.00 | cpu |" in apart
    main(["table", str(tmp_path / "cpu"), str(tmp_path / "gpu"), "--same", "/tmp/minilm=default"])
    together = capsys.readouterr().out  # one line, each device's minutes apart
    line = "| bio (20 texts) | default | DEC-CRL | 2 | 60.0±14.1 | 60.0±14.1 | 40.00 (cpu), 0.50 (cuda) | cpu, cuda |"
    assert line in together
    with pytest.raises(SystemExit) as e:
        main(["table", str(tmp_path / "cpu"), "--same", "default"])
    assert e.value.code == 2 and "ENCODER=AS" in capsys.readouterr().err


def test_bench_adapt_table_names_a_folder_that_is_not_a_run(tmp_path, capsys):
    from bench.adapt import main

    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "lines.jsonl").write_text("")
    with pytest.raises(SystemExit) as e:
        main(["table", str(tmp_path / "run"), str(tmp_path / "typo")])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "no lines.jsonl in" in err and "typo" in err and str(tmp_path / "run") + "," not in err


def test_two_benchmark_runs_started_in_the_same_second_get_folders_of_their_own(tmp_path, monkeypatch):
    from testbed import common

    monkeypatch.setenv("SEMANNO_BENCH_RESULTS", str(tmp_path))
    monkeypatch.setattr(common, "_RUN_LOG", [], raising=False)
    first, second = common.run_folder("same", ["x"]), common.run_folder("same", ["y"])  # milliseconds apart
    assert first != second and (first / "run.json").exists() and (second / "run.json").exists()


def test_joined_sets_weigh_each_set_alike_and_a_missing_set_is_named(so_corpus, tmp_path):
    import shutil

    from bench.adapt import join_sets
    from core.corpus import load_corpus

    root = tmp_path / "d"
    shutil.copytree(so_corpus.folder, root / "so")
    corpus = load_corpus("so", root)
    own = np.asarray(corpus.embeddings, np.float32)
    embedsets.save(corpus, "twice", own * 2, {"method": "test"})  # a set of other scale: made unit first
    joined = embedsets.load_vectors(load_corpus("so", root), join_sets("so", ["import", "twice"], "both", root).name)
    assert joined.shape == (len(own), 2 * own.shape[1])
    np.testing.assert_allclose(np.linalg.norm(joined, axis=1), 1, atol=1e-4)
    # the cosine of two rows in the joined set is the mean of their cosines in the two sets
    a, b = own[0] / np.linalg.norm(own[0]), own[1] / np.linalg.norm(own[1])
    assert float(joined[0] @ joined[1]) == pytest.approx(float(a @ b), abs=1e-4)
    with pytest.raises(embedsets.EmbeddingSetError, match="no embedding set 'nope'"):
        join_sets("so", ["import", "nope"], "bad", root)
    with pytest.raises(ValueError, match="at least two"):
        join_sets("so", ["import"], "one", root)


def test_bench_adamw_times_both_kernels_in_one_run_to_the_same_embeddings(tmp_path, monkeypatch, capsys):
    """bench/adamw.py's figures (fused AdamW against the for-loop kernel): one fit of each, a line per fit, one
    median line that says how far their embeddings end apart, and a timed optimiser step of each kernel; DEC's and
    DAC's trainings likewise."""
    import json

    from bench import adamw
    from core.cluster import deep

    monkeypatch.setenv("SEMANNO_BENCH_RESULTS", str(tmp_path / "results"))
    assert adamw.main(["--data", str(shared_file("stackoverflow.csv")), "--texts", "16", "--repeats", "1",
                       "--dec-rows", "600", "--dac-steps", "3", "--method", "dec_mlm", "--model", "default"]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines() if x.startswith("{")]
    for method in ("dec_mlm", "dec", "dac"):
        fits = [x for x in lines if x["event"] == "fit" and x["method"] == method]
        assert sorted(x["fused"] for x in fits) == [False, True] and all(x["seconds"] > 0 for x in fits)
    (median,) = [x for x in lines if x["event"] == "median" and x["method"] == "dec_mlm"]
    assert median["largest_difference"] < 1e-4 and median["ratio"] > 0
    (dec,) = [x for x in lines if x["event"] == "median" and x["method"] == "dec"]
    assert dec["rows"] == 600 and dec["nmi_between"] > 0.9  # the same clusters, up to float rounding
    (dac,) = [x for x in lines if x["event"] == "median" and x["method"] == "dac"]
    # the switch reaches DAC's training (the kernels round apart), and both make the same model up to that rounding
    assert dac["steps"] == 3 and 0 < dac["largest_difference"] < 1e-4
    (step,) = [x for x in lines if x["event"] == "optimiser step"]
    assert step["parameters"] > 20_000_000 and step["fused_later_s"] > 0 and step["for_loop_later_s"] > 0
    assert deep.FUSED is True  # the switch put back for the app's fits
    assert not list(tmp_path.glob("system-tmp/dec_mlm-*"))  # every fit's adapted encoder removed
