"""Korean questions to English documents: the medical terms a query names, said in English.

The packaged embedding barely crosses languages and BM25 shares no terms between them, so a
Korean question ("녹내장 안약 부작용") reaches an English corpus (MedQuAD) only when the
product's own lexicon adds the English names of what it names ("glaucoma").
"""

from __future__ import annotations

import re

from graphs.medical.slots import SlotExtractor

_HANGUL = re.compile(r"[가-힣]")
BRIDGED_SLOTS = ("conditions", "symptoms", "medications")


def english_terms(query: str, extractor: SlotExtractor) -> list[str]:
    """The canonical English names of the conditions, symptoms and medicines a query names,
    in the order it names them, once each (negated ones too: they are still the topic)."""
    names = [item.name for item in extractor.extract(query).items if item.slot in BRIDGED_SLOTS]
    return list(dict.fromkeys(names))


def bridge_query(query: str, extractor: SlotExtractor) -> str:
    """A Korean query with the English names of its medical terms appended; any other query
    as it is."""
    if not _HANGUL.search(query):
        return query
    terms = [t for t in english_terms(query, extractor) if t.lower() not in query.lower()]
    return f"{query} {' '.join(terms)}" if terms else query
