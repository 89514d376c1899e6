"""The knowledge base the intakes use: validated YAML plus the hybrid index over it.

Graph nodes ask this layer for case-type candidates (K1, retrieved), question templates (K2),
legal information (K3) and summary formats (K4); staff and the CLI search it.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from chromadb.api.types import EmbeddingFunction

from knowledge.documents import (
    K_COLLECTIONS,
    MEDICAL_COLLECTION,
    Document,
    knowledge_documents,
    medical_documents,
)
from knowledge.embedding import default_embedding
from knowledge.embedding_openai import EmbeddingUnavailable, embedding_from_env
from knowledge.index import Hit, KnowledgeIndex, KnowledgeIndexError, SyncStats
from knowledge.ingest import IngestError, IngestReport, load_corpus
from knowledge.loader import Knowledge
from knowledge.medical_corpus import load_medical_corpus
from knowledge.models import FieldSpec, LegalInfo, SummaryFormat

log = logging.getLogger(__name__)

CANDIDATE_FLOOR = 0.02  # fused RRF score below which a retrieved case type is not offered
# Which sources each ingested collection came from. It lives beside `index/`, not in it, so a
# corrupt index that is deleted and rebuilt can ingest its corpora again from their sources.
CORPORA_FILE = "corpora.json"
# Chroma's rule for collection names, checked before a corpus is read rather than after.
COLLECTION_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{1,510}[A-Za-z0-9]")


class KnowledgeBase:
    """K0-K4 and corpora behind one object: exact lookups and hybrid search."""

    def __init__(self, knowledge: Knowledge, index: KnowledgeIndex | None = None) -> None:
        self.knowledge = knowledge
        self.index = index
        self._medical_ready = False
        self._medical_lock = threading.Lock()

    # --- exact lookups (the validated files) -------------------------------------------------

    def question(self, sub_type: str, key: str) -> FieldSpec:
        """K2: the field as the sub-type asks it."""
        return self.knowledge.k2.field(sub_type, key)

    def legal_info(self, sub_type: str) -> LegalInfo:
        """K3: what a person should know about the sub-type."""
        return self.knowledge.k3.info[sub_type]

    def summary_format(self, sub_type: str) -> SummaryFormat:
        """K4: the sub-type's summary layout."""
        return self.knowledge.k4.for_sub_type(sub_type)

    # --- retrieval ---------------------------------------------------------------------------

    def search(self, query: str, **options: Any) -> list[Hit]:
        """Hybrid search (vector + BM25, fused).

        Keyword only when the embedding server fails; nothing (logged) when the index fails.
        """
        if self.index is None:
            return []
        try:
            try:
                return self.index.search(query, **options)
            except EmbeddingUnavailable as exc:
                log.warning("embedding unavailable (%s); keyword search only", exc)
                return self.index.search(query, **{**options, "methods": ("bm25",)})
        except KnowledgeIndexError as exc:
            # An index broken while the bot runs must not break the conversation: the intake
            # works from the validated files alone; `intake-bot kb build` repairs the index.
            log.error("knowledge index search failed (%s); no retrieved results", exc)
            return []

    def medical_collections(self) -> list[str]:
        """The collections the medical assistant answers from: the shipped corpus and every
        corpus ingested with `kb ingest` (MedQuAD, ...); the legal K collections never."""
        if self.index is None:
            return []
        self.ensure_medical()
        extra = sorted(set(self.index.collections()) - set(K_COLLECTIONS) - {MEDICAL_COLLECTION})
        return [MEDICAL_COLLECTION, *extra]

    def ensure_medical(self) -> None:
        """Make sure the shipped medical corpus is indexed, once per process. `kb build` and
        start-up (`open_index`) index it with the rest, so this only checks; an index opened
        without them (a data directory built by an older version) is brought up to date here."""
        if self._medical_ready or self.index is None:
            return
        with self._medical_lock:
            if self._medical_ready:
                return
            docs = {MEDICAL_COLLECTION: medical_documents(load_medical_corpus())}
            try:
                if self.index.stale(docs):
                    log.info("knowledge index: indexing the medical corpus (not built at start-up)")
                    stats = self.index.sync(MEDICAL_COLLECTION, docs[MEDICAL_COLLECTION])
                    log.info("knowledge index %s: %s", MEDICAL_COLLECTION, stats)
            except KnowledgeIndexError as exc:
                log.error("medical corpus could not be indexed (%s)", exc)
                return
            self._medical_ready = True

    def stored_vectors(self, collection: str, ids: list[str]) -> dict[str, list[float]]:
        """The index's stored vectors of these documents ({} without an index or on failure)."""
        if self.index is None:
            return {}
        try:
            return self.index.stored_vectors(collection, ids)
        except KnowledgeIndexError as exc:
            log.warning("stored vectors unreadable (%s)", exc)
            return {}

    def embed(self, texts: list[str]) -> list[list[float]] | None:
        """The index's embedding of each text (None without an index, or when it fails)."""
        if self.index is None:
            return None
        try:
            return [list(map(float, v)) for v in self.index.embed_query(texts)]
        except Exception as exc:  # noqa: BLE001 - an embedding failure only costs the cache
            log.warning("embedding failed (%s); no vector for this text", type(exc).__name__)
            return None

    def case_candidates(self, text: str, *, k: int = 3) -> list[str]:
        """K1: sub-types whose criteria and examples are nearest to a description."""
        hits = self.search(text, k=k, collections=["k1_case_types"])
        return [str(h.metadata["sub_type"]) for h in hits if h.score >= CANDIDATE_FLOOR]


def choose_embedding(env: Mapping[str, str]) -> EmbeddingFunction:
    """The configured OpenAI-compatible embedding, else the packaged offline one."""
    return embedding_from_env(env) or default_embedding()


def open_index(
    data_dir: Path,
    knowledge: Knowledge,
    *,
    progress: bool = False,
    env: Mapping[str, str] | None = None,
) -> KnowledgeIndex:
    """Open the index under the data directory, building or refreshing what is missing or stale."""
    return build_index(data_dir, knowledge, progress=progress, env=env)[0]


PACKAGED_COLLECTIONS = (*K_COLLECTIONS, MEDICAL_COLLECTION)  # what `kb build` indexes


def packaged_documents(knowledge: Knowledge) -> dict[str, list[Document]]:
    """The documents of every packaged collection: K0-K4, the lexicon and the medical corpus."""
    return {
        **knowledge_documents(knowledge),
        MEDICAL_COLLECTION: medical_documents(load_medical_corpus()),
    }


def build_index(
    data_dir: Path,
    knowledge: Knowledge,
    *,
    progress: bool = False,
    refresh_all: bool = False,
    env: Mapping[str, str] | None = None,
) -> tuple[KnowledgeIndex, dict[str, SyncStats]]:
    """Bring the packaged collections up to date (only changed documents are embedded again):
    K0-K4, the lexicon and the medical corpus, so that no first question waits for an index.

    A corrupt index (or one embedded by another model) is deleted and rebuilt, with a message
    saying so, and the corpora once ingested into it are loaded again from their sources.
    """
    path = data_dir / "index"
    expected = packaged_documents(knowledge)
    try:
        embedding = choose_embedding(env or {})
        index = KnowledgeIndex(path, embedding)
        stale = index.stale(expected)
    except KnowledgeIndexError as exc:
        print(
            f"The knowledge index at {path} could not be read ({exc}); rebuilding it.",
            file=sys.stderr,
        )
        log.warning("knowledge index unreadable (%s); rebuilding", type(exc).__name__)
        shutil.rmtree(path, ignore_errors=True)
        index = KnowledgeIndex(path, embedding)
        stale = list(PACKAGED_COLLECTIONS)
        rebuilt = True
    else:
        rebuilt = False
    report: dict[str, SyncStats] = {}
    for name in PACKAGED_COLLECTIONS if refresh_all else stale:
        report[name] = index.sync(name, expected[name], progress=progress)
        log.info("knowledge index %s: %s", name, report[name])
    if rebuilt:
        report.update(_restore_corpora(index, data_dir, progress=progress))
    return index, report


# --- outside corpora -------------------------------------------------------------------------


def ingested_corpora(data_dir: Path) -> dict[str, list[str]]:
    """Collection -> the source paths it was ingested from (empty when none or unreadable)."""
    path = data_dir / CORPORA_FILE
    try:
        corpora = json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        log.warning("%s is unreadable (%s); ingested corpora are not tracked", path, exc)
        return {}
    if not isinstance(corpora, dict):
        return {}
    return {
        str(name): [str(p) for p in sources]
        for name, sources in corpora.items()
        if isinstance(sources, list)
    }


def _remember_corpus(data_dir: Path, collection: str, source: Path) -> None:
    corpora = ingested_corpora(data_dir)
    sources = corpora.setdefault(collection, [])
    if str(source) not in sources:
        sources.append(str(source))
    path = data_dir / CORPORA_FILE
    scratch = path.with_suffix(".tmp")
    scratch.write_text(json.dumps(corpora, ensure_ascii=False, indent=2), "utf-8")
    os.replace(scratch, path)  # atomic: a crash leaves the old list or the new one


def read_corpus(path: Path, *, collection: str, progress: bool = False) -> IngestReport:
    """Check the collection name and read a corpus into chunks; nothing is indexed yet.

    IngestError for an invalid or reserved collection name or an unreadable path.
    """
    if not COLLECTION_NAME.fullmatch(collection):
        raise IngestError(
            f"invalid collection name {collection!r}: use 3-512 letters, digits, '.', '_' or "
            "'-', starting and ending with a letter or digit"
        )
    if collection in (*K_COLLECTIONS, MEDICAL_COLLECTION):
        raise IngestError(
            f"{collection!r} holds the packaged knowledge (kb build rewrites it); "
            "ingest into another collection"
        )
    return load_corpus(path, collection=collection, progress=progress)


def add_corpus(
    index: KnowledgeIndex,
    data_dir: Path,
    report: IngestReport,
    source: Path,
    *,
    collection: str,
    progress: bool = False,
) -> SyncStats:
    """Index a read corpus and remember its source, so a rebuilt index can load it again."""
    stats = index.upsert(collection, report.documents, progress=progress)
    _remember_corpus(data_dir, collection, source.resolve())
    return stats


def _restore_corpora(
    index: KnowledgeIndex, data_dir: Path, *, progress: bool
) -> dict[str, SyncStats]:
    """Ingest every remembered corpus again (after a corrupt index was deleted)."""
    restored: dict[str, SyncStats] = {}
    for collection, sources in ingested_corpora(data_dir).items():
        for source in sources:
            try:
                report = load_corpus(Path(source), collection=collection, progress=progress)
            except IngestError as exc:
                print(
                    f"Collection {collection!r} could not be restored from {source} ({exc}); "
                    "ingest it again.",
                    file=sys.stderr,
                )
                continue
            restored[collection] = index.upsert(collection, report.documents, progress=progress)
            print(
                f"Restored collection {collection!r} from {source} "
                f"({len(report.documents)} chunks).",
                file=sys.stderr,
            )
    return restored
