"""Team work on one corpus: topics with written guidelines assigned to several annotators, each building
their own group for it; agreement between their groups; an adjudicated **gold** version.

- A topic's annotator works in the group ``"<topic> · <annotator>"``; saving marks progress, submitting
  says they are done, and the version submitted is the one that counts: a later save (made, say, after
  seeing the others' groups) counts only once submitted again. A *blind* topic (the default) shows nobody
  the others' labels until they submit.
- Agreement is measured on the texts at least two of them reviewed (labelled included or excluded):
  percent agreement, Cohen's kappa for two annotators (scikit-learn), Krippendorff's alpha for two or more
  (the ``krippendorff`` package, nominal level, missing values allowed).
- Only an adjudicator creates gold: a name in ``SEMANNO_ADJUDICATORS`` (comma-separated), or, when that
  is not set, the topic's creator.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

GROUP_SEPARATOR = " · "
GOLD = "gold"
ADJUDICATORS = "SEMANNO_ADJUDICATORS"


# names an annotator may not have: the gold group's word, and the columns the review's table and report use
THREAD = "in the thread of"  # the review's column of the text that opens a reply's conversation (core.threads)
QUOTING = "quoting"  # the review's column of the tweet a quote quotes (core.ingest.QUOTED)
RESERVED_NAMES = frozenset({GOLD, "id", "item_id", "text", "copies", "decided by", THREAD, QUOTING})
HOW_SUFFIX = ": how"  # the review's provenance column of each annotator: "<annotator>: how"


def check_annotator(name: str) -> str:
    """The annotator's name, stripped; ValueError naming the clash when it would be mistaken for the gold group
    (``gold``), a column of the review (``id``, ``text``, ``copies``, ``item_id``, ``decided by``, ``in the thread
    of``, ``quoting``, ``...: how``) or another topic's group (one holding `` · ``, which joins a topic and its
    annotator)."""
    name = str(name).strip()
    if not name:
        raise ValueError("an assignment needs the annotator's name")
    if name.casefold() in RESERVED_NAMES:
        what = "the topic's gold group" if name.casefold() == GOLD else "a column of the Review page's table"
        raise ValueError(f"an annotator cannot be named {name!r}: it would be taken for {what}; "
                         "add a letter or use the full name")
    if name.casefold().endswith(HOW_SUFFIX):
        raise ValueError(f"an annotator's name cannot end with {HOW_SUFFIX!r} ({name!r}): the Review page's "
                         "table names each annotator's provenance column so")
    if GROUP_SEPARATOR in name:
        raise ValueError(f"an annotator's name cannot hold {GROUP_SEPARATOR!r} ({name!r}): it joins a "
                         "topic and its annotator in the group's name, so the group could be another topic's")
    return name


def topic_group(topic: str, annotator: str) -> str:
    """The group an annotator builds for a topic."""
    return f"{topic}{GROUP_SEPARATOR}{annotator}"


def gold_group(topic: str) -> str:
    return f"{topic}{GROUP_SEPARATOR}{GOLD}"


@dataclass(frozen=True)
class Topic:
    name: str
    guidelines: str
    blind: bool
    created_by: str
    created_at: str


@dataclass(frozen=True)
class Assignment:
    topic: str
    annotator: str
    group: str
    submitted_at: str | None
    reviewed: int  # texts labelled in the latest saved version of their group
    included: int
    last_activity: str | None  # the group's last save
    submitted_version: int | None = None  # the version they submitted (before it was recorded: the latest then)
    latest_version: int = 0  # their group's latest version (0: none saved)
    submitted_lost: bool = False  # the version submitted is gone (not read back when a damaged file was put back)

    @property
    def counted(self) -> int | None:
        """The version the agreement and the gold use: the one submitted (a later save counts once submitted
        again)."""
        return (self.submitted_version or self.latest_version or None) if self.submitted_at else None

    @property
    def saved_since(self) -> bool:
        """A version saved after the submitted one (not counted until submitted again)."""
        return bool(self.submitted_at and self.submitted_version and self.latest_version > self.submitted_version)

    @property
    def counts(self) -> bool:
        """Submitted, and the version submitted is there to read: it counts in the agreement and the gold."""
        return bool(self.submitted_at) and not self.submitted_lost


def may_adjudicate(who: str, topic: Topic, adjudicators: str | None = None) -> bool:
    """Whether ``who`` may create the topic's gold: listed in SEMANNO_ADJUDICATORS, or, without that
    list, the topic's creator."""
    listed = adjudicators if adjudicators is not None else os.environ.get(ADJUDICATORS, "")
    names = {n.strip() for n in listed.split(",") if n.strip()}
    return who in names if names else who == topic.created_by


def may_see(viewer: str, owner: str, topic: Topic, submitted: set[str], adjudicator: bool) -> bool:
    """Whether ``viewer`` may see ``owner``'s group for the topic: their own; any once the topic is not
    blind; otherwise only after the viewer submitted (or as the adjudicator)."""
    return viewer == owner or not topic.blind or adjudicator or viewer in submitted


def hidden_groups(viewer: str, rows, adjudicators: str | None = None) -> set[str]:
    """The annotators' groups that ``viewer`` may not see (``may_see``): on a blind topic, another annotator's
    group until the viewer has submitted theirs, unless the viewer adjudicates it. ``rows``: the store's
    ``team_groups()``. Every page that lists or reads saved groups leaves these out."""
    submitted: dict[str, set[str]] = {}
    for topic, who, _group, at in rows:
        if at:
            submitted.setdefault(topic.name, set()).add(who)
    return {group for topic, who, group, _at in rows
            if not may_see(viewer, who, topic, submitted.get(topic.name, set()), may_adjudicate(viewer, topic,
                                                                                                adjudicators))}


@dataclass
class Agreement:
    annotators: list[str]
    items: int  # texts at least two annotators reviewed
    percent: float | None  # share of those texts on which all who reviewed it agree
    kappa: float | None  # Cohen's kappa, two annotators, on the texts both reviewed
    alpha: float | None  # Krippendorff's alpha (nominal), every annotator, missing values allowed
    per_annotator: dict[str, dict[str, int]]  # annotator -> reviewed, included, excluded
    disagreements: list[dict]  # item_id and each annotator's label (1, -1, or None: not reviewed)


def agreement(labels: dict[str, dict[str, int]]) -> Agreement:
    """Agreement between annotators' labels (annotator -> item id -> 1 included / -1 excluded) on the
    texts at least two of them reviewed."""
    names = sorted(labels)
    per = {a: {"reviewed": len(v), "included": sum(1 for x in v.values() if x == 1),
               "excluded": sum(1 for x in v.values() if x == -1)} for a, v in labels.items()}
    items = sorted({i for v in labels.values() for i in v})
    shared = [i for i in items if sum(i in labels[a] for a in names) >= 2]
    disagreements = [{"item_id": i, **{a: labels[a].get(i) for a in names}} for i in shared
                     if len({labels[a][i] for a in names if i in labels[a]}) > 1]
    percent = 1 - len(disagreements) / len(shared) if shared else None
    kappa = pairwise(labels)[0]["Cohen's kappa"] if len(names) == 2 else None
    alpha = None
    if len(names) >= 2 and shared:
        import krippendorff

        data = np.array([[labels[a].get(i, np.nan) for i in shared] for a in names], dtype=float)
        if len({x for x in data[~np.isnan(data)]}) > 1:
            alpha = float(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))
        else:
            alpha = 1.0  # every label the same: perfect agreement (alpha itself is undefined)
    return Agreement(names, len(shared), percent, kappa, alpha, per, disagreements)


def pairwise(labels: dict[str, dict[str, int]]) -> list[dict]:
    """Each pair of annotators on the texts both reviewed: how many, percent agreement and Cohen's kappa (None
    where undefined: no shared text), so that a team of three or more sees which pair parts ways."""
    from sklearn.metrics import cohen_kappa_score

    out = []
    names = sorted(labels)
    for n, a in enumerate(names):
        for b in names[n + 1:]:
            both = sorted(set(labels[a]) & set(labels[b]))
            x, y = [labels[a][i] for i in both], [labels[b][i] for i in both]
            same = sum(u == v for u, v in zip(x, y))
            kappa = None if not both else 1.0 if x == y else float(cohen_kappa_score(x, y))
            out.append({"pair": f"{a} · {b}", "texts both reviewed": len(both),
                        "percent agreement": same / len(both) if both else None, "Cohen's kappa": kappa})
    return out


def by_text(labels: dict[str, dict[str, int]], code_of: dict[str, int]) -> tuple[dict, dict[str, list[str]]]:
    """Each annotator's labels with a text and its copies as one item (core/copies.py: ``code_of`` maps an id to its
    text's code), keyed by the first of their ids, so that agreement counts texts, not how often one was shared:
    (the labels by text, each item's ids). A text whose copies one annotator labelled differently (a group saved
    before copies were known) stays as its ids; an id without a code (not in this import) stands alone."""
    ids = sorted({i for v in labels.values() for i in v})
    groups: dict[object, list[str]] = {}
    for i in ids:
        groups.setdefault(("code", code_of[i]) if i in code_of else ("id", i), []).append(i)
    members: dict[str, list[str]] = {}
    for same in groups.values():
        if len(same) > 1 and all(len({v[i] for i in same if i in v}) <= 1 for v in labels.values()):
            members[same[0]] = same
        else:
            members.update({i: [i] for i in same})
    first = {i: item for item, same in members.items() for i in same}
    folded = {who: {first[i]: label for i, label in v.items()} for who, v in labels.items()}
    return folded, members


def progress_by_text(labels: dict[str, int], code_of: dict[str, int]) -> tuple[int, int]:
    """One annotator's progress as texts: (reviewed, included), a text and the copies labelled with it counted
    once (``by_text``), as the Annotate page lists them."""
    folded = by_text({"": labels}, code_of)[0][""]
    return len(folded), sum(1 for v in folded.values() if v == 1)


def gold_labels(labels: dict[str, dict[str, int]], decisions: dict[str, int]) -> dict[str, int]:
    """The gold labels: where everyone who reviewed a text agrees, their label; where they disagree, the
    adjudicator's decision (1, -1, or 0: left out). A disagreement without a decision is an error."""
    out: dict[str, int] = {}
    for item in sorted({i for v in labels.values() for i in v}):
        given = {v[item] for v in labels.values() if item in v}
        if len(given) == 1:
            out[item] = given.pop()
        elif item in decisions:
            if decisions[item] not in (1, -1, 0):
                raise ValueError(f"a decision must be 1, -1 or 0, got {decisions[item]!r} for {item!r}")
            if decisions[item]:
                out[item] = decisions[item]
        else:
            raise ValueError(f"the annotators disagree on {item!r}: decide it before saving the gold version")
    return out


def majority(disagreements: list[dict], annotators: list[str]) -> dict[str, int]:
    """The label more of its reviewers gave, for each disagreement that has one (three who reviewed a text, two
    of them alike); a tie (two against two, or one against one) has none and is left to the adjudicator."""
    out = {}
    for d in disagreements:
        given = [d[a] for a in annotators if d.get(a) is not None]
        inc, exc = given.count(1), given.count(-1)
        if inc != exc:
            out[d["item_id"]] = 1 if inc > exc else -1
    return out


class NotAllowed(PermissionError):
    """The user may not do this (create a topic's gold)."""


def save_gold(store, topic: Topic, labels: dict[str, dict[str, int]], decisions: dict[str, int], who: str,
              report: str = "", texts: dict[str, dict[str, int]] | None = None) -> int:
    """Save the topic's gold version (``gold_labels``), as ``who``, who must be allowed to adjudicate
    (NotAllowed otherwise: nothing is written); returns its version number. Its notes give the agreement on
    ``texts`` (``by_text``'s labels) where given, otherwise on ``labels``."""
    if not may_adjudicate(who, topic):
        raise NotAllowed(f"{who} may not adjudicate {topic.name!r}: an adjudicator is named in {ADJUDICATORS} "
                         "(or, without it, is the topic's creator)")
    gold = gold_labels(labels, decisions)
    ag = agreement(texts if texts is not None else labels)
    return store.save(gold_group(topic.name), [i for i, v in gold.items() if v == 1],
                      [i for i, v in gold.items() if v == -1], annotator=who, saved_by=who, overwrite=True,
                      topic=topic.name, kind=GOLD, session_json=report or None,
                      notes=f"gold of {topic.name}: {ag.items} texts reviewed by two or more, kappa {ag.kappa}, "
                            f"alpha {ag.alpha}")
