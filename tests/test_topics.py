"""The topic browser: key lemmas (Czech and English), hashtags, and the lemma filter."""

from __future__ import annotations

import numpy as np
import pandas as pd

from core.cluster.keyterms import Lemmatiser, key_terms, lemmas
from tests.conftest import shared_file








def test_czech_key_lemmas_collapse_inflections_and_drop_function_words():
    f = pd.read_csv(shared_file("czech_politicians_tweets_2021.csv"), dtype=str, keep_default_na=False).iloc[:3000]
    lem = Lemmatiser("cs")
    for forms in (("očkování", "očkováním"), ("volby", "voleb", "volbách"), ("vláda", "vlády", "vládou", "vládě")):
        assert len({lem(w) for w in forms}) == 1, forms
    assert lemmas("Viz https://t.co/x @babis 2021 Praha!", lem) == [lem("viz"), lem("praha")]
    text = f["text"].str.lower()
    labels = np.where(text.str.contains("očkov|vakcín"), 1, 0)
    kt = key_terms(f["text"].tolist(), labels, lang="auto", top=15, min_count=5)
    assert kt.lang == "cs"
    vaccine = kt.table.set_index("cluster").loc[1]
    assert {lem("vakcína"), lem("očkovat"), lem("očkování")} & set(vaccine["ctfidf_terms"][:5])
    function_words = {lem(w) for w in ("a", "se", "na", "je", "že", "v", "to")} | {"you", "really", "very", "the"}
    for col in ("rule_terms", "ctfidf_terms"):
        for terms in kt.table[col]:
            assert not function_words & set(terms), (col, terms)
    assert kt.table["size"].sum() == len(f)
    # the forms counted under a vaccine lemma are shown beside it, inflections included
    shown = {f.split(": ")[0]: f.split(": ")[1].split("/") for f in vaccine["forms"]}
    assert lem("očkovat") in shown and len(shown[lem("očkovat")]) >= 3, vaccine["forms"]
    assert all(lem(form) == lemma or len(form) > 3 for lemma, fs in shown.items() for form in fs)


def test_czech_function_words_are_no_key_lemmas_and_the_words_that_name_a_topic_stay():
    """The Czech corpus's own function words ("tam", "taky", "jenom") named clusters: the corpus's 300
    most frequent lemmas are too few to catch them. stopwords-iso's Czech list now keeps them out, less
    its words that name a topic here ("strana", and "ano" and "spolu", parties of 2021)."""
    from core.cluster.keyterms import function_words

    f = pd.read_csv(shared_file("czech_politicians_tweets_2021.csv"), dtype=str, keep_default_na=False).iloc[:3000]
    text = f["text"].str.lower()
    labels = np.select([text.str.contains("koalic|stran"), text.str.contains("očkov|vakcín")], [1, 2], 0)
    lem = Lemmatiser("cs")
    czech = {lem(w) for w in ("tam", "taky", "jenom", "asi", "ani", "nějaký", "kdyby", "někdo", "něco", "být", "že")}
    words = function_words("cs", lem)
    assert czech <= words and not {"strana", "ano", "spolu", "zpráva", "procento", "vakcína"} & words
    assert function_words("xx", lem) == frozenset()  # a language without a list gets none
    english = function_words("en", Lemmatiser("en"))  # English: scikit-learn's list less its topic words
    assert {"the", "more", "after", "will"} <= english and not {"fire", "bill", "system"} & english

    def terms(kt):
        return {w for col in ("rule_terms", "ctfidf_terms", "frequent_words") for t in kt.table[col] for w in t}

    without = key_terms(f["text"].tolist(), labels, lang="cs", top=10, min_count=5, stop_words=False)
    assert czech & terms(without)  # this slice has function words among its key lemmas without the list
    kt = key_terms(f["text"].tolist(), labels, lang="cs", top=10, min_count=5)
    assert not czech & terms(kt), czech & terms(kt)
    parties, vaccines = kt.table.set_index("cluster").loc[1], kt.table.set_index("cluster").loc[2]
    assert {"strana", "koalice"} <= set(parties["ctfidf_terms"][:5]), parties["ctfidf_terms"]
    assert {lem("očkovat"), lem("dávka")} <= set(vaccines["ctfidf_terms"][:5]), vaccines["ctfidf_terms"]


def test_lemma_filter_is_case_and_diacritics_insensitive_and_matches_prefixes():
    from core.cluster.topics import filter_clusters

    table = pd.DataFrame({"cluster": [0, 1, 2], "size": [5, 5, 5], "mean_len": [10.0] * 3,
                          "rule_terms": ["očkování, vakcína", "rozpočet", ""],
                          "ctfidf_terms": ["", "Babiš", "volby"]})
    for needle, expected in (("ockovani", [0]), ("OČKOVÁNÍ", [0]), ("vakc", [0]), ("babis", [1]),
                             ("vol", [2]), ("ánky", []), ("", [0, 1, 2])):
        assert filter_clusters(table, lemma=needle)["cluster"].tolist() == expected, needle


def test_unknown_czech_forms_join_the_known_lemma_with_their_stem():
    from collections import Counter

    from core.cluster.keyterms import Lemmatiser, merge_unknown

    lem = Lemmatiser("cs")
    counts = Counter({"vakcína": 5, "vakcíny": 3, "vakcín": 4, "volby": 6, "volbama": 1, "roušky": 2,
                      "rouška": 2, "tendru": 1, "polský": 2})
    merged = merge_unknown(counts, lem)
    assert merged["vakcín"] == "vakcína" and merged["volbama"] == lem("volby")
    assert "tendru" not in merged  # no known lemma with its stem in this corpus: left alone
    assert "polský" not in merged and "vakcína" not in merged  # known words are never remapped
    assert merge_unknown(counts, Lemmatiser("en")) == {}  # Czech endings only for Czech


def test_key_lemmas_join_the_forms_the_dictionary_lacks_as_suggests_words_do():
    """Key lemmas joined the Czech forms the dictionary lacks by a hand-written list of endings, Suggest's words by the
    dictionary's own changes of ending (core.wordforms.unlisted_forms): a verb's form ("vyrazíte", you set off)
    stayed a key lemma beside its "vyrazit", and an adverb ("společně", together) counted as its adjective. Both
    now join them the dictionary's way; a group of forms is named by the one the others are forms of, and a verbal
    noun is a lemma of its own."""
    from core.cluster.keyterms import Lemmatiser, merge_unknown

    counts = {"vyrazit": 5, "vyrazíte": 3, "twitter": 21, "twitteru": 25, "společně": 10, "společný": 4, "řádně": 6,
              "radních": 4, "babiš": 10, "babiše": 8, "babišovi": 3, "vzdělávání": 45, "vzděláváním": 2, "vzdělávat": 3}
    merged = merge_unknown(counts, Lemmatiser("cs"))
    assert merged["vyrazíte"] == "vyrazit"
    assert merged["twitteru"] == "twitter"  # though written more often: "twitteru" is a form of "twitter"
    assert merged["babiše"] == merged["babišovi"] == "babiš"
    assert "společně" not in merged  # an adverb is a lemma of its own
    assert "radních" not in merged  # the council members' is no form of "řádně" (duly), though it reads so unaccented
    # a verbal noun stays a lemma, as the lemmatiser keeps those it knows ("hlasování"): education, not to educate
    assert "vzdělávání" not in merged and merged["vzděláváním"] == "vzdělávání"


def test_english_function_words_are_no_key_lemmas_of_a_czech_corpus():
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    f = pd.read_csv(shared_file("czech_politicians_tweets_2021.csv"), dtype=str, keep_default_na=False)
    english = f["text"].str.contains(r"(?i)\b(?:you|the|really|very|we)\b")
    assert english.sum() >= 50  # Czech politicians quote and write English now and then
    kt = key_terms(f["text"].tolist(), english.to_numpy().astype(int), lang="cs", top=15, min_count=5)
    quoting = kt.table.set_index("cluster").loc[1]
    for col in ("rule_terms", "ctfidf_terms"):
        assert quoting[col] and not set(quoting[col]) & ENGLISH_STOP_WORDS, quoting[col]


def test_an_english_corpus_has_no_function_words_among_its_key_lemmas_and_fire_names_its_wildfire():
    """3,000 crisis tweets (mostly English: a wildfire, two earthquakes) clustered by event: "more", "after",
    "so" and "will" topped the c-TF-IDF of the English corpus's clusters (its 100 most frequent lemmas did not
    catch them), and "fire", on scikit-learn's list, was missing from the wildfire's most used words."""
    from core.cluster.keyterms import ENGLISH_FUNCTION

    f = pd.read_csv(shared_file("crisislex_t26.csv"), dtype=str, keep_default_na=False).iloc[:3000]
    events = sorted(f["label"].unique())
    labels = f["label"].map({e: i for i, e in enumerate(events)}).to_numpy()

    def function_in(kt, col):
        return {w for terms in kt.table[col] for w in terms} & ENGLISH_FUNCTION

    without = key_terms(f["text"].tolist(), labels, lang="en", top=15, min_count=5, stop_words=False)
    assert function_in(without, "ctfidf_terms"), "this slice has English function words among its key lemmas"
    kt = key_terms(f["text"].tolist(), labels, lang="en", top=15, min_count=5)
    for col in ("rule_terms", "ctfidf_terms", "frequent_words"):
        assert not function_in(kt, col), (col, function_in(kt, col))
    wildfire = kt.table.set_index("cluster").loc[events.index("2012_Colorado_wildfires")]
    assert "fire" in wildfire["frequent_words"][:5], wildfire["frequent_words"]


def test_the_lemma_filter_finds_the_demos_flood_events_by_the_word_flood():
    """issue 26: on the demo (16 crisis events, five of them floods) 'flood' found no cluster: it is the
    corpus's commonest word (no key lemma anywhere) and its clusters' key terms were hashtags
    (coflood, abflood). Hashtags now count for the word inside them, and the filter also searches a
    cluster's frequent words."""
    import pandas as pd

    from core.cluster.keyterms import hashtag_parts, key_terms
    from core.cluster.topics import cluster_table, filter_clusters
    from tests.conftest import ROOT

    demo = pd.read_csv(ROOT / "demo" / "crisislex_demo.csv.gz", dtype=str, keep_default_na=False)
    codes, events = pd.factorize(demo["event"])
    table = cluster_table(codes, demo["text"].to_numpy(), key_terms(demo["text"].tolist(), codes, lang="en").table)
    found = sorted(events[c] for c in filter_clusters(table, lemma="flood")["cluster"])
    assert found == sorted(e for e in events if "flood" in e.lower()), found
    fires = sorted(events[c] for c in filter_clusters(table, lemma="wildfire")["cluster"])
    assert fires and all("wildfire" in e.lower() for e in fires), fires  # no flood event named by 'wildfire'
    assert hashtag_parts("Help #COflood and #BoulderFlood") == ["oflood", "boulder", "flood"]


def test_cluster_table_without_key_lemmas_sizes_lengths_and_a_sample_text():
    """The table a clustering shows before its key lemmas exist: the same from a corpus's text column
    (what the page passes: only the sample rows are read) as from a plain array."""
    from core.cluster.topics import cluster_table

    texts = ["a", "bb", "ccc", "dddd", "eeeee", "ffffff"]
    labels = np.array([2, 0, 2, 0, 2, 0])  # cluster 1 is empty
    for given in (pd.Series(texts, dtype="str"), np.array(texts, dtype=object)):
        table = cluster_table(labels, given, None)
        assert table["size"].tolist() == [3, 0, 3]
        assert table["mean_len"].tolist() == [4.0, 0.0, 3.0]  # (2+4+6)/3 and (1+3+5)/3
        assert table["sample_text"].tolist() == ["bb", "", "a"]  # each cluster's first text


def test_a_finished_clustering_says_when_clusters_are_empty_or_dec_stopped_to_keep_them():
    from core.cluster.topics import outcome_note

    assert outcome_note({"k": 20, "sizes": {"min": 3, "max": 90, "empty": 0}, "history": [{"step": 3000}]}) == ""
    empty = outcome_note({"k": 100, "sizes": {"min": 0, "max": 2134, "empty": 31}, "history": []})
    assert empty == "31 of its 100 clusters hold no text"
    stopped = outcome_note({"k": 100, "sizes": {"min": 2, "max": 857, "empty": 0},
                            "history": [{"step": 400}, {"step": 500, "stopped": "a cluster would have been emptied"}]})
    assert "stopped sharpening after 500 steps" in stopped and "hold no text" not in stopped


def test_the_topics_caption_counts_each_method_s_training_in_its_own_units():
    from core.cluster.topics import run_summary

    kmeans = {"history": [{"iteration": i, "objective": 1.0, "changed": 0.1} for i in range(20)]
              + [{"assigned_rows": 300_000, "fitted_on": 100_000, "objective": 2.0}]}
    assert run_summary(kmeans) == "20 iterations"
    dec = {"history": [{"phase": "pretrain", "epoch": e} for e in range(1, 31)]
           + [{"phase": "cluster", "step": s} for s in range(0, 1800, 100)]
           + [{"phase": "cluster", "step": 1800, "stopped": "a cluster would have been emptied"}]}
    assert run_summary(dec) == "30 pretraining epochs, 18 sharpening rounds (1,800 steps)"
    clusterbert = {"history": [{"phase": "tsdae", "epoch": 1}, {"phase": "cluster", "round": 0, "epoch": 1},
                               {"phase": "cluster", "round": 1, "epoch": 1}, {"phase": "final", "clusters": 20}]}
    assert run_summary(clusterbert) == "1 tsdae epoch, 2 cluster epochs"
    assert run_summary({"history": [{"epoch": 1}, {"epoch": 2}]}) == "2 epochs"
    assert run_summary({}) == ""


def test_a_cluster_in_another_language_loses_that_languages_function_words_and_an_english_one_keeps_fire():
    """The crisis corpus is English with Spanish, Italian and Portuguese events: their key lemmas were "que",
    "il", "che", "non", "tras", "da", and their most used words "en", "el", "la", "di". A cluster's other
    language is now found by its function words, and they are left out there; an English cluster keeps "fire"
    (Danish's "four") and its own words."""
    import stopwordsiso

    from core.cluster.keyterms import NOT_FUNCTION

    f = pd.read_csv(shared_file("crisislex_t26.csv"), dtype=str, keep_default_na=False)
    events = ["2012_Venezuela_refinery", "2013_Sardinia_floods", "2013_Brazil_nightclub_fire",
              "2012_Colorado_wildfires", "2013_Boston_bombings"]
    f = pd.concat([f[f["label"] == e].iloc[:600] for e in events])
    labels = f["label"].map({e: i for i, e in enumerate(events)}).to_numpy()
    kt = key_terms(f["text"].tolist(), labels, lang="en", top=15, min_count=5)
    table = kt.table.set_index("cluster")
    for c, lang in enumerate(("es", "it", "pt")):
        assert table.loc[c, "languages"] == [lang], table.loc[c, "languages"]
        own = stopwordsiso.stopwords(lang) - NOT_FUNCTION.get(lang, frozenset())  # nouns such as "forza" stay
        for col in ("rule_terms", "ctfidf_terms", "frequent_words"):
            assert not set(table.loc[c, col]) & own, (events[c], col, set(table.loc[c, col]) & own)
    assert {"refinería", "venezuela"} <= set(table.loc[0, "frequent_words"])
    assert "alluvione" in table.loc[1, "frequent_words"] and "boate" in table.loc[2, "frequent_words"]
    for c in (3, 4):
        assert table.loc[c, "languages"] == [], (events[c], table.loc[c, "languages"])
    assert "fire" in table.loc[3, "frequent_words"][:5] and "marathon" in table.loc[4, "frequent_words"][:5]
    without = key_terms(f["text"].tolist(), labels, lang="en", top=15, min_count=5, stop_words=False)
    assert set(without.table.loc[0, "frequent_words"]) & stopwordsiso.stopwords("es"), "the slice shows the fault"


def test_a_key_lemma_is_written_in_several_of_its_clusters_texts():
    """c-TF-IDF scored a word of one text highest of all in a cluster of short texts (its corpus frequency is 1):
    the Czech politicians' links-and-emoji cluster was named "favourite · book · observer", each word in one of
    its texts. A key lemma is now written in at least MIN_TEXTS of its cluster's texts, and a topic keeps its
    words."""
    from core.cluster.keyterms import MIN_TEXTS, lemmatised

    f = pd.read_csv(shared_file("czech_politicians_tweets_2021.csv"), dtype=str, keep_default_na=False).iloc[:4000]
    text = f["text"].str.lower()
    words = text.str.replace(r"https?://\S+|@\w+", " ", regex=True).str.count(r"\w{3,}")
    labels = np.select([words <= 1, text.str.contains("očkov|vakcín")], [1, 2], 0)  # one word or none; vaccines
    lem = Lemmatiser("cs")
    held = [set(d) for d in lemmatised(f["text"].tolist(), lem)[0]]

    def written_in(kt):
        return {(c, w): sum(w in held[i] for i in np.flatnonzero(labels == c))
                for c, terms in zip(kt.table["cluster"], kt.table["ctfidf_terms"]) for w in terms}

    before = written_in(key_terms(f["text"].tolist(), labels, lang="cs", top=10, min_count=5, min_texts=1))
    assert [w for (c, w), n in before.items() if c == 1 and n == 1], before  # the slice shows the fault
    kt = key_terms(f["text"].tolist(), labels, lang="cs", top=10, min_count=5)
    after = written_in(kt)
    assert all(n >= MIN_TEXTS for n in after.values()), {k: n for k, n in after.items() if n < MIN_TEXTS}
    vaccines = kt.table.set_index("cluster").loc[2, "ctfidf_terms"]
    # at places 3-7: the words the slice was cut by ("očkování", "vakcína") come first, and "očkovací" with the forms
    # the dictionary lacks ("očkovacího") joined to it
    assert len(vaccines) == 10 and {lem("očkovat"), lem("dávka"), "očkovací"} <= set(vaccines[:7]), vaccines


def test_czech_names_and_words_the_dictionary_lacks_are_one_lemma_in_all_their_forms():
    """A cluster of the Czech politicians' tweets was named "babiš, babiše, babišovi": forms the dictionary does not
    know were joined only to a known lemma, never to one another. They now count as one lemma, under the form the
    others are forms of (a name's first case), and the forms are listed beside it."""
    from core.cluster.keyterms import lemmatised

    f = pd.read_csv(shared_file("czech_politicians_tweets_2021.csv"), dtype=str, keep_default_na=False).iloc[:6000]
    docs, forms = lemmatised(f["text"].tolist(), Lemmatiser("cs"))
    used = {w for d in docs for w in d}
    assert "babiš" in used and not {"babiše", "babišovi", "babišem", "okamury", "okamurou"} & used
    assert {"babiše", "babišovi"} <= set(forms["babiš"]) and {"okamura", "okamury"} <= set(forms["okamura"])
    text = f["text"].str.lower()
    labels = text.str.contains("babiš").to_numpy().astype(int)
    kt = key_terms(f["text"].tolist(), labels, lang="cs", top=10, min_count=5)
    babis = kt.table.set_index("cluster").loc[1, "ctfidf_terms"]
    assert babis[0] == "babiš" and not {"babiše", "babišovi", "babišem", "babiši"} & set(babis), babis


def test_czech_typed_without_diacritics_counts_with_the_words_written_with_them():
    """Some politicians write Czech without diacritics: their cluster was named "diky, dekujeme, souhlas" and
    "treba, mame", function words the lists hold only as "díky", "třeba", "máme". A form without diacritics now
    counts under the lemma of the corpus's form with them, where that form is the more written one, and not for an
    English word, a word of two letters or a form with diacritics of its own."""
    from core.cluster.keyterms import lemmatised, merge_unknown, tokens

    f = pd.read_csv(shared_file("czech_politicians_tweets_2021.csv"), dtype=str, keep_default_na=False).iloc[:8000]
    lem = Lemmatiser("cs")
    docs, _ = lemmatised(f["text"].tolist(), lem)
    used = {w for d in docs for w in d}
    assert {"díky", "mít", "zákon"} <= used and not {"diky", "dekujeme", "mame", "treba", "zakona"} & used
    assert {lem(w) for w in ("děkujeme", "máme", "zákona")} == {"děkovat", "mít", "zákon"}
    counts = {"diky": 5, "díky": 50, "prima": 40, "přímá": 3, "ct": 2, "čt": 30, "more": 2, "moře": 20,
              "praní": 4, "přání": 40}
    joined = merge_unknown(counts, lem)
    assert joined.get("diky") == lem("díky")  # written with them more often: one word
    assert not {"prima", "ct", "more", "praní"} & set(joined)  # TV Prima, ČT, English "more", laundering
    text = f["text"].str.lower()
    plain = text.str.contains(r"\b(?:diky|dekuji|dekujeme|mame|treba|neni)\b").to_numpy().astype(int)
    kt = key_terms(f["text"].tolist(), plain, lang="cs", top=10, min_count=5)
    named = kt.table.set_index("cluster").loc[1, "ctfidf_terms"]
    assert not {"diky", "dekujeme", "dekuji", "mame", "treba", "neni"} & set(named), named
    assert tokens("Díky!") == ["díky"]


def test_english_key_lemmas_are_whole_words_without_quotes_possessives_or_ordinal_endings():
    """On the troll tweets "th" of "4th" counted as a word, the gun-rights cluster held "nd" (of "2nd Amendment"), and the anthem protests' held "knee’" (of "‘Take a Knee’") beside "knee", as "mueller’s" and
    "mccain's" stood beside "mueller" and "mccain". Words are now read whole: a word starts after no digit, ends
    with a letter, and an English possessive or contraction counts as the word before it."""
    from core.cluster.keyterms import tokens

    assert tokens("‘Take a Knee’ on the 4th, 2nd Amendment, Mueller’s probe, McCain's vote, you're, COVID-19") == [
        "take", "knee", "on", "the", "amendment", "mueller", "probe", "mccain", "vote", "you", "covid"]
    f = pd.read_csv(shared_file("russian_troll_tweets_recent300k.csv"), usecols=["text"], dtype=str,
                    keep_default_na=False, nrows=60_000)
    text = f["text"].str.lower()
    labels = np.select([text.str.contains("knee"), text.str.contains("mueller"), text.str.contains("2nd amendment")],
                       [1, 2, 3], 0)
    kt = key_terms(f["text"].tolist(), labels, lang="en", top=10).table.set_index("cluster")["ctfidf_terms"]
    every = [w for terms in kt for w in terms]
    # ("th" stays a word of its own there: some accounts mark their tweets "#th")
    assert not [w for w in every if w[-1] in "'’-" or "'s" in w or "’s" in w or w in {"nd", "rd"}], every
    assert "knee" in kt[1] and "amendment" in kt[3], kt.to_dict()


def test_english_verbs_are_named_by_todays_lemma_not_an_old_spelling():
    """simplemma's English dictionary gave "playing" the Middle English lemma "playe" ("thinking" "thinke",
    "growing" "growe", "fixed" "fixe"): the troll tweets' music topic was named "love · playe · lose". Those verbs
    now get their stem; verbs whose lemma does end in -e keep it ("staring" is no "star", "dining" no "din")."""
    from core.cluster.keyterms import Lemmatiser

    en = Lemmatiser("en")
    words = "playing thinking growing developed fixed mixing thanked singing Playing".split()
    assert [en(w) for w in words] == "play think grow develop fix mix thank sing play".split()
    kept = "staring making dining hiring hoping browsing posing citing voted used".split()
    assert [en(w) for w in kept] == "stare make dine hire hope browse pose cite vote use".split()
    f = pd.read_csv(shared_file("russian_troll_tweets_recent300k.csv"), usecols=["text"], dtype=str,
                    keep_default_na=False, nrows=60_000)
    text = f["text"].str.lower()
    labels = np.select([text.str.contains("playing"), text.str.contains("thinking"), text.str.contains("growing")],
                       [1, 2, 3], 0)
    kt = key_terms(f["text"].tolist(), labels, lang="en", top=10).table.set_index("cluster")
    every = {w for terms in kt["ctfidf_terms"] for w in terms} | {w for terms in kt["rule_terms"] for w in terms}
    assert not every & {"playe", "thinke", "growe"}, kt.to_dict()
    assert {"play", "think", "grow"} <= every, kt.to_dict()


def test_a_frequent_word_that_a_few_clusters_hold_names_them():
    """The corpus's 100 most frequent lemmas were left out of every cluster's c-TF-IDF lemmas, to keep function words
    of any language out: on StackOverflow that left out its tags ("haskell", "matlab", "linq"), and 4% of K-Means's
    clusters were named by a word of their class. A frequent lemma that a few clusters hold most of now names them;
    one used across the clusters stays out."""
    f = pd.read_csv(shared_file("stackoverflow.csv"), dtype=str, keep_default_na=False)
    f = f.groupby("label").head(300).reset_index(drop=True)  # 20 tags x 300 titles
    code = pd.factorize(f["label"])[0]
    labels = code * 5 + np.arange(len(f)) % 5  # each tag split in 5 clusters, as K-Means at k = 100 splits them

    def named(**kw) -> float:
        t = key_terms(f["text"].tolist(), labels, lang="en", **kw).table
        tags = [set(f["label_name"][labels == c].iloc[0].split("-")) for c in t["cluster"]]
        return float(np.mean([bool(tag & set(terms[:5])) for tag, terms in zip(tags, t["ctfidf_terms"])]))

    before, after = named(concentrated=0), named()
    assert before < 0.3 and after >= 0.6, (before, after)
