"""Knowledge as retrievable documents: one collection per kind (K0-K4, lexicon) and corpora."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from knowledge.loader import Knowledge

Scalar = str | int | float | bool

K_COLLECTIONS = (
    "k0_messages",
    "k1_case_types",
    "k2_fields",
    "k3_legal_info",
    "k4_summary_formats",
    "lexicon",
)


@dataclass(frozen=True)
class Document:
    """A piece of knowledge to index: its id, the text embedded and searched, flat metadata.

    Metadata keys used by filters: `case_type`, `sub_type`, `lang` ("ko" | "en" | "mixed"),
    `kind`, and for chunks of a longer document `parent_id`.
    """

    id: str
    text: str
    collection: str
    metadata: dict[str, Scalar] = field(default_factory=dict)

    @property
    def content_hash(self) -> str:
        """Hash of what gets indexed (text and metadata): an unchanged document is not re-embedded."""
        raw = json.dumps([self.text, self.metadata], ensure_ascii=False, sort_keys=True)
        return hashlib.sha256(raw.encode("utf-8")).hexdigest()[:16]


def _bilingual(*parts: Any) -> str:
    """Join Korean and English texts into one searchable text."""
    return "\n".join(str(p) for p in parts if p)


def knowledge_documents(kn: Knowledge) -> dict[str, list[Document]]:
    """Every knowledge file as documents, by collection."""
    docs: dict[str, list[Document]] = {name: [] for name in K_COLLECTIONS}
    for key, text in kn.k0.messages.items():
        docs["k0_messages"].append(
            Document(
                f"k0:{key}",
                _bilingual(text.ko, text.en),
                "k0_messages",
                {"kind": "message", "key": key, "lang": "mixed"},
            )
        )
    for case_type, sub in kn.k1.all_sub_types():
        meta: dict[str, Scalar] = {
            "kind": "case_type",
            "case_type": case_type.code,
            "sub_type": sub.code,
            "lang": "mixed",
        }
        text = _bilingual(
            f"{case_type.label.ko} {sub.label.ko} / {case_type.label.en} {sub.label.en}",
            sub.description.ko,
            sub.description.en,
            " ".join(sub.examples),
            " ".join(sub.phrases.get("ko", []) + sub.phrases.get("en", [])),
        )
        docs["k1_case_types"].append(Document(f"k1:{sub.code}", text, "k1_case_types", meta))
    for code, spec in kn.k2.sub_types.items():
        case_type = kn.k1.sub_type(code)[0].code
        for req in spec.required_fields():
            f = kn.k2.field(code, req.key)
            meta = {
                "kind": "field",
                "case_type": case_type,
                "sub_type": code,
                "field": req.key,
                "lang": "mixed",
            }
            text = _bilingual(
                f.label.ko, f.question.ko, f.why.ko, f.label.en, f.question.en, f.why.en
            )
            docs["k2_fields"].append(Document(f"k2:{code}:{req.key}", text, "k2_fields", meta))
    for code, info in kn.k3.info.items():
        case_type = kn.k1.sub_type(code)[0].code
        _, sub = kn.k1.sub_type(code)
        for lang in ("ko", "en"):
            text = _bilingual(
                sub.label.get(lang),
                info.limitation.get(lang),
                info.venue.get(lang),
                *(t.get(lang) for t in info.first_steps),
                *(t.get(lang) for t in info.typical_evidence),
                *(t.get(lang) for t in info.notes),
            )
            meta = {"kind": "legal_info", "case_type": case_type, "sub_type": code, "lang": lang}
            docs["k3_legal_info"].append(Document(f"k3:{code}:{lang}", text, "k3_legal_info", meta))
    for code, fmt in kn.k4.formats.items():
        meta = {"kind": "summary_format", "sub_type": code, "lang": "mixed"}
        if code != "default":
            meta["case_type"] = kn.k1.sub_type(code)[0].code
        text = _bilingual(
            fmt.title.ko,
            fmt.title.en,
            *(f"{s.title.ko} / {s.title.en}: {', '.join(s.fields)}" for s in fmt.sections),
        )
        docs["k4_summary_formats"].append(Document(f"k4:{code}", text, "k4_summary_formats", meta))
    lex = kn.lexicon
    groups: dict[str, dict[str, list[str]]] = {
        "yes": lex.yes,
        "no": lex.no,
        "unknown": lex.unknown,
        "greetings": lex.greetings,
        "correction_markers": lex.correction_markers,
        "ongoing": lex.ongoing,
        **{f"emotion_{kind}": words for kind, words in lex.emotions.items()},
    }
    for name, by_lang in groups.items():
        for lang, words in by_lang.items():
            if words:
                meta = {"kind": "lexicon", "group": name, "lang": lang}
                docs["lexicon"].append(
                    Document(f"lexicon:{name}:{lang}", ", ".join(words), "lexicon", meta)
                )
    return docs


MEDICAL_COLLECTION = "medical"  # the shipped medical corpus, indexed with K0-K4


def medical_documents(corpus: Any) -> list[Document]:
    """The medical corpus (knowledge/medical/corpus.yaml) as documents: one per entry and
    language, so a Korean question can find an English entry and be answered from its Korean
    text (the entry id is in the metadata)."""
    docs: list[Document] = []
    for entry in corpus.entries:
        for lang in ("ko", "en"):
            text = "\n".join(
                [
                    entry.title.get(lang),
                    entry.text.get(lang),
                    ", ".join(getattr(entry.keywords, lang)),
                    ", ".join(entry.concepts),
                ]
            )
            meta: dict[str, Scalar] = {
                "kind": "medical",
                "entry": entry.id,
                "topic": entry.topic,
                "lang": lang,
                "source": entry.source.name,
            }
            docs.append(Document(f"med:{entry.id}:{lang}", text, MEDICAL_COLLECTION, meta))
    return docs
