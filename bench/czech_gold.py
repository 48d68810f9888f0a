"""Czech recall against three topics judged by hand, from czech_politicians_tweets_2021.csv.

    python -m bench.czech_gold [--out /tmp/czech_gold.csv]
    python -m bench.annotator --data /tmp/czech_gold.csv --word-forms cs --methods cos,lda,nn1,nn2,suggest

bench.czech_topics measures Czech on proxies (a topic's defining words removed from every text). Here the topics are
real: bench/data/czech_topics_gold.tsv holds 2,888 judgments by one reader of three topics of 2021 (Afghanistan,
the Vrbetice affair, nuclear power), 355 tweets on topic. How they were judged (TREC-style pooling): every tweet a
broad pattern of the topic's words finds and its 200 nearest tweets (multilingual-e5-small, cosine to their
centroid); then every tweet the simulated annotator reviewed with cos, lda, nn1, nn2 or suggest at a budget of 2x in
every setting bench/RESULTS.md compares (the first keyword in every form or as typed; Suggest's words by lemma or
as written, the forms the dictionary lacks joined or not; context seeds 0-2), and every other tweet of a
conversation (the file's conversation_id) that holds a tweet on topic, repeated, judging what came new, until nothing
came. Those rounds added 82 of the 355 tweets on topic: 60 through the methods' reviews, 17 through the
conversations, 5 through the other settings. Once Suggest counted conversations (core/threads.py), the 46 tweets it
reviewed that no one had judged (weights 0.5-4, context seeds 0-2) were judged too: none on topic. A tweet no one
judged counts as off topic, so recall is against that pool. The runs on MiniLM embeddings are not pooled: they
reviewed 1,340 tweets no one had judged, and a random 100 of those held none on topic.

It also prints what each topic's first keyword finds alone, every hit reviewed (as typed and in every form).
This writes the labelled corpus (every tweet, its ``label`` the topic it was judged on or empty, ``label_name``
the annotator's first keyword) for bench/annotator.py, which imports it with the model the app picks (e5 for Czech)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from testbed.common import SHARED, emit, run_folder
from testbed.czech_gold import GOLD, build, keyword_alone, read_gold


def main(argv=None) -> None:
    p = argparse.ArgumentParser(prog="python -m bench.czech_gold", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--source", type=Path, default=SHARED / "czech_politicians_tweets_2021.csv")
    p.add_argument("--gold", type=Path, default=GOLD)
    p.add_argument("--out", type=Path, default=Path("/tmp/czech_gold.csv"))
    p.add_argument("--shuffle-conversations", type=int, metavar="SEED", default=None,
                   help="put the tweets' conversation_id values in a random order (the same thread sizes, members at "
                        "random): threads that say nothing of the topics, for Suggest's conversation features")
    p.add_argument("--shuffle-dates", type=int, metavar="SEED", default=None,
                   help="put the tweets' dates in a random order (the same days' sizes, members at random): days "
                        "that say nothing of the topics, for Suggest's day features")
    a = p.parse_args(argv)
    run_folder("czech_gold", sys.argv if argv is None else ["bench/czech_gold.py", *argv])
    try:
        frame, info = build(a.source, read_gold(a.gold))
    except (ValueError, OSError) as exc:
        raise SystemExit(str(exc))
    for column, seed in (("conversation_id", a.shuffle_conversations), ("date", a.shuffle_dates)):
        if seed is not None:
            import numpy as np

            frame[column] = frame[column].to_numpy()[np.random.default_rng(seed).permutation(len(frame))]
    frame.to_csv(a.out, index=False)
    emit(op="czech_gold", out=str(a.out), **info)
    emit(op="keyword_alone", topics=keyword_alone(frame))


if __name__ == "__main__":
    main()
