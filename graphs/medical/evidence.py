"""What the retrieved passages are worth: the question's concepts, complexity, passages from
hits, cross-document consistency, uncertainty, quality, and the duplicate guard.

Everything here is offline arithmetic over the hits the knowledge layer returns; the nodes
(`graphs/medical/nodes.py`) decide what to do with the figures.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass
from typing import Any

from knowledge.bm25 import tokenize as _tokenize
from knowledge.index import Hit, query_complexity
from knowledge.medical_corpus import MedicalCorpus, MedicalEntry

# classify_intent: retrieval depth and the quality an answer must reach, by complexity (seed).
K_BY_INTENT = {"simple": 3, "moderate": 8, "complex": 15}
QUALITY_THRESHOLD = {"simple": 0.4, "moderate": 0.55, "complex": 0.7}
FIXED_THRESHOLD = 0.7  # the seed's baseline: one threshold for every question
MAX_EXTRA_RETRIEVALS = 2
DUPLICATE_JACCARD = 0.8  # a passage this like one already taken adds nothing
NO_PROGRESS = 0.05  # a retry that improves quality by less than this stops the loop
CONSISTENCY_FLOOR = 0.5  # mean passage similarity below this: retrieve again, rewritten
UNCERTAIN = 0.3  # above this the answer says plainly to confirm with a clinician
PASSAGES_USED = 3
# A top passage whose vector similarity is below this answers nothing: say so instead.
RELEVANCE_FLOOR = 0.25


@functools.lru_cache(maxsize=16384)
def terms(text: str) -> tuple[str, ...]:
    """The search terms of a text (Kiwi morphemes or words), kept per process: the corpus's
    passages and sentences come back turn after turn, and analysing them is the costly part
    of the answer loop."""
    return tuple(_tokenize(text))


def tokenize(text: str) -> list[str]:
    return list(terms(text))


_SENTENCE = re.compile(r"(?<=[.!?。])\s+|(?<=요\.)\s*|(?<=다\.)\s*")


@dataclass(frozen=True)
class Passage:
    """One retrieved document, in the person's language when the corpus has it."""

    id: str  # "med:<entry>" for the shipped corpus, the hit id for an ingested corpus
    title: str
    text: str
    source: str
    url: str
    concepts: tuple[str, ...]
    lang: str
    relevance: float  # the hit's vector similarity to the question (0 when unknown)
    fused: float  # the hit's fused rank score
    collection: str = "medical"
    doc_id: str = ""  # the indexed document whose stored vector stands for this passage

    def rescored(self, relevance: float) -> Passage:
        return Passage(**{**self.as_state(), "concepts": self.concepts, "relevance": relevance})

    def as_state(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "text": self.text,
            "source": self.source,
            "url": self.url,
            "concepts": list(self.concepts),
            "lang": self.lang,
            "relevance": self.relevance,
            "fused": self.fused,
            "collection": self.collection,
            "doc_id": self.doc_id,
        }

    @classmethod
    def from_state(cls, data: dict[str, Any]) -> Passage:
        return cls(**{**data, "concepts": tuple(data["concepts"])})


def complexity(text: str, concepts: list[str]) -> str:
    """simple / moderate / complex by the medical concepts a question names, raised by how
    broad it is (`query_complexity`: clauses, sentences, numbers)."""
    broad = query_complexity(text)
    if len(concepts) >= 3 or broad == "complex":
        return "complex"
    if len(concepts) <= 1 and broad == "simple":
        return "simple"
    return "moderate"


CONCEPT_RELEVANCE = 0.65  # a passage about a concept the question names is relevant
FOCUS_RELEVANCE = 0.7  # a passage about what the question asks about (exercise, diet)
SHARED_BONUS = 0.02  # for each concept (at most two) a relevant passage shares with the person


def relevance_of(
    similarity: float,
    concepts: tuple[str, ...] | list[str],
    asked: list[str],
    focus: list[str] | tuple[str, ...] = (),
    context: list[str] | tuple[str, ...] = (),
) -> float:
    """How relevant a passage is by any evidence: its vector similarity to the person's
    question, or, when it is about one of the medical concepts the question names,
    CONCEPT_RELEVANCE (the packaged embedding scores "HbA1c 8.2" against the HbA1c entry at
    only 0.22). A passage about what the question asks about (its focus: exercise, diet)
    ranks above one about a concept merely named ("I'm on metformin; what exercise is safe?").
    Each concept it shares with the question or the person's own conditions adds a little,
    so that exercise *with diabetes* comes before exercise in general."""
    own = set(concepts)
    if focus and own & set(focus):
        floor = FOCUS_RELEVANCE
    elif own & set(asked):
        floor = CONCEPT_RELEVANCE
    else:
        floor = 0.0
    shared = len(own & (set(asked) | set(context)) - set(focus))
    bonus = SHARED_BONUS * min(shared, 2) if floor else 0.0
    return round(min(max(similarity, floor) + bonus, 1.0), 4)


def passage_of(entry: MedicalEntry, lang: str, relevance: float, fused: float) -> Passage:
    """A shipped corpus entry as a passage in the person's language."""
    return Passage(
        f"med:{entry.id}",
        entry.title.get(lang),
        entry.text.get(lang),
        entry.source.name,
        entry.source.url,
        tuple(entry.concepts),
        lang,
        relevance,
        fused,
        "medical",
        f"med:{entry.id}:{lang}",
    )


def passages_from(
    hits: list[Hit],
    corpus: MedicalCorpus,
    lang: str,
    asked: list[str] | None = None,
    focus: list[str] | tuple[str, ...] = (),
    context: list[str] | tuple[str, ...] = (),
) -> list[Passage]:
    """Hits as passages, most relevant first: an entry of the shipped corpus once, in the
    person's language whichever language matched; an ingested corpus's chunk as it is."""
    seen: set[str] = set()
    out: list[Passage] = []
    asked = asked or []
    for hit in hits:
        relevance = float(hit.scores.get("vector") or 0.0)
        entry_id = hit.metadata.get("entry")
        if hit.collection == "medical" and entry_id:
            pid = f"med:{entry_id}"
            if pid in seen:
                continue
            seen.add(pid)
            try:
                entry = corpus.by_id(str(entry_id))
            except KeyError:
                continue
            relevance = relevance_of(relevance, tuple(entry.concepts), asked, focus, context)
            out.append(passage_of(entry, lang, relevance, hit.score))
        else:
            if hit.parent_id in seen:
                continue
            seen.add(hit.parent_id)
            meta = hit.metadata
            out.append(
                Passage(
                    hit.parent_id,
                    str(meta.get("title") or meta.get("focus") or hit.collection),
                    hit.text,
                    str(meta.get("source") or hit.collection),
                    str(meta.get("url") or ""),
                    tuple(str(meta.get("focus") or "").lower().split(","))
                    if meta.get("focus")
                    else (),
                    str(meta.get("lang") or "en"),
                    relevance,
                    hit.score,
                    hit.collection,
                    hit.id,
                )
            )
    return sorted(out, key=lambda p: (-p.relevance, -p.fused))


def _bag(text: str) -> dict[str, int]:
    bag: dict[str, int] = {}
    for token in tokenize(text):
        bag[token] = bag.get(token, 0) + 1
    return bag


def cosine(a: list[float] | dict[str, int], b: list[float] | dict[str, int]) -> float:
    if isinstance(a, dict) and isinstance(b, dict):
        dot = sum(v * b.get(k, 0) for k, v in a.items())
        na = math.sqrt(sum(v * v for v in a.values()))
        nb = math.sqrt(sum(v * v for v in b.values()))
    else:
        dot = sum(x * y for x, y in zip(a, b, strict=False))  # type: ignore[arg-type]
        na = math.sqrt(sum(x * x for x in a))  # type: ignore[union-attr]
        nb = math.sqrt(sum(y * y for y in b))  # type: ignore[union-attr]
    return dot / (na * nb) if na and nb else 0.0


def jaccard(a: str, b: str) -> float:
    sa, sb = set(tokenize(a)), set(tokenize(b))
    return len(sa & sb) / len(sa | sb) if sa | sb else 1.0


def consistency(passages: list[Passage], vectors: dict[str, list[float]]) -> float:
    """Cross-document consistency: the mean pairwise similarity of the passages used (their
    embeddings when known, else shared concepts and words); 1.0 for a single passage."""
    used = passages[:PASSAGES_USED]
    if len(used) < 2:
        return 1.0
    sims = []
    for i, a in enumerate(used):
        for b in used[i + 1 :]:
            if a.id in vectors and b.id in vectors:
                sim = cosine(vectors[a.id], vectors[b.id])
            else:
                sim = cosine(_bag(a.text), _bag(b.text))
            if set(a.concepts) & set(b.concepts):
                sim = max(sim, 0.6)  # entries on one concept agree by construction
            sims.append(sim)
    return sum(sims) / len(sims)


def strength(relevance: float) -> float:
    """How far the best passage's relevance clears the floor of evidence (the margin):
    0.15 or less → 0, 0.5 or more → 1."""
    return min(max((relevance - 0.15) / 0.35, 0.0), 1.0)


def uncertainty(passages: list[Passage], agreement: float) -> float:
    """0 (sure) .. 1 (unsure), offline, from the retrieved evidence: the margin by which the
    best passage clears the floor of relevance (`strength`) and the agreement of the passages
    used (cross-document consistency):  uncertainty = 1 − (0.6·strength + 0.4·agreement).
    The LLM mode will add the spread of several samples.
    """
    if not passages:
        return 1.0
    score = 1.0 - (0.6 * strength(passages[0].relevance) + 0.4 * min(max(agreement, 0.0), 1.0))
    return round(min(max(score, 0.0), 1.0), 3)


def coverage(question_concepts: list[str], question: str, passages: list[Passage]) -> float:
    """How much of the question the passages speak to: its medical concepts named by them
    (or, for a question naming none, its content words found in them)."""
    if not passages:
        return 0.0
    body = " ".join(p.text.lower() + " " + " ".join(p.concepts) for p in passages)
    if question_concepts:
        named = sum(1 for c in question_concepts if c.lower() in body)
        return named / len(question_concepts)
    words = [w for w in set(tokenize(question)) if len(w) > 1]
    if not words:
        return 1.0
    bag = set(tokenize(body))
    return sum(1 for w in words if w in bag) / len(words)


# Share of a sentence's words that must come from the passages for it to count as grounded.
GROUNDED_SHARE = 0.6


def grounded(sentence: str, passages: list[Passage]) -> bool:
    """Whether at least GROUNDED_SHARE of the sentence's words are words of the passages."""
    words = set(tokenize(sentence))
    if not words:
        return False
    bag: set[str] = set()
    for p in passages:
        bag |= set(tokenize(p.text))
    return len(words & bag) / len(words) >= GROUNDED_SHARE


def grounding(answer_sentences: list[str], passages: list[Passage]) -> float:
    """The share of the answer's sentences whose words come from the passages (an extractive
    offline answer is grounded by construction; the LLM mode is checked by this)."""
    if not answer_sentences:
        return 0.0
    return sum(grounded(s, passages) for s in answer_sentences) / len(answer_sentences)


def quality(cover: float, grounded: float, relevance: float) -> float:
    """The refine step's score: coverage, grounding and the best passage's relevance."""
    return round(0.4 * cover + 0.3 * grounded + 0.3 * strength(relevance), 3)


def new_only(taken: list[Passage], found: list[Passage]) -> list[Passage]:
    """The duplicate guard: passages of `found` not already taken and not near-copies
    (word Jaccard ≥ 0.8) of one taken."""
    out = []
    for p in found:
        if any(p.id == t.id or jaccard(p.text, t.text) >= DUPLICATE_JACCARD for t in taken + out):
            continue
        out.append(p)
    return out


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text) if s and s.strip()]


def best_sentences(text: str, query_terms: set[str], limit: int) -> list[str]:
    """The `limit` sentences of a passage that share most words with the question, in the
    passage's order (the first sentence, which says what the topic is, always leads)."""
    parts = sentences(text)
    if len(parts) <= limit:
        return parts
    scored = [(len(set(tokenize(s)) & query_terms), -i) for i, s in enumerate(parts[1:], start=1)]
    chosen = {0} | {-neg for _, neg in sorted(scored, reverse=True)[: limit - 1]}
    return [parts[i] for i in sorted(chosen)]
