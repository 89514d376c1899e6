"""Hybrid retrieval over the knowledge collections: Chroma vectors and BM25, fused by RRF.

On disk under `<data dir>/index`: `chroma/` (one Chroma collection per knowledge collection,
cosine space, our embedding function recorded in its configuration) and `bm25/<collection>/`
(bm25s' files plus `docs.json` with ids, content hashes and metadata). Everything is offline.
"""

from __future__ import annotations

import re
import shutil
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

import chromadb
from chromadb.api import ClientAPI
from chromadb.api.models.Collection import Collection
from chromadb.api.types import Documents, EmbeddingFunction
from chromadb.config import Settings
from chromadb.errors import ChromaError
from tqdm import tqdm

from knowledge.bm25 import BM25Index, BM25IndexError, tokenize
from knowledge.documents import Document
from knowledge.embedding import default_embedding

K_BY_COMPLEXITY = {"simple": 3, "moderate": 8, "complex": 15}
RRF_K = 60
# Candidates each method hands to the fusion (at least; 4 × k when more are asked for). Every
# collection's documents compete for them, so the knowledge's UI texts (K0) can crowd a case
# type's entry out of a short vector list: 30 did, once the research and LLM-mode texts came.
CANDIDATE_POOL = 60
METHODS = ("vector", "bm25")
MAX_QUERY_CHARS = 2_000  # a longer query is cut: embedding cost grows with length
EMBED_BATCH = 256
HASH_KEY = "content_hash"  # Chroma metadata key holding Document.content_hash

Complexity = Literal["simple", "moderate", "complex"]
Key = tuple[str, str]  # (collection, document id)

# Clause linkers that join several facts into one query (Korean connectives and conjunctions,
# English conjunctions). "했는데" is counted through "는데".
_CLAUSE_MARKERS = re.compile(
    r"그리고|그런데|근데|하지만|그러나|그래서|인데|는데|지만|면서|때문에"
    r"|\b(?:and|but|because|although|though|while|also|then)\b",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"[.!?。？！\n]+")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


class KnowledgeIndexError(RuntimeError):
    """The index on disk is missing, corrupt or built differently; delete it and rebuild."""


@dataclass(frozen=True)
class Hit:
    """One retrieved document with its fused score and what each method thought of it."""

    id: str
    collection: str
    score: float  # fused RRF score: sum of 1 / (RRF_K + rank) over methods
    ranks: dict[str, int | None]  # method -> 1-based rank across the searched collections
    scores: dict[str, float | None]  # "vector": cosine similarity, "bm25": BM25 score
    text: str
    metadata: dict[str, Any]
    parent_id: str  # the document a chunk came from; the id itself for whole documents


@dataclass
class SyncStats:
    """What a sync or upsert did to one collection."""

    added: int = 0
    updated: int = 0
    removed: int = 0
    unchanged: int = 0

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or self.removed)


def query_complexity(query: str) -> Complexity:
    """How broad a query is, which sets how many hits to return (K_BY_COMPLEXITY).

    terms = search terms (`tokenize`); signals = clause linkers (그리고, 인데, 는데/했는데, 지만,
    and, but, because, ...) + extra sentences + 1 for two or more question marks + 1 for two or
    more numbers. complex: terms >= 15, signals >= 3, or terms >= 10 with a signal; simple:
    terms <= 4, no signal and at most one number; moderate otherwise.
    """
    text = query[:MAX_QUERY_CHARS]
    terms = len(tokenize(text))
    numbers = len(_NUMBER.findall(text))
    sentences = [s for s in _SENTENCE_END.split(text) if any(ch.isalnum() for ch in s)]
    signals = (
        len(_CLAUSE_MARKERS.findall(text))
        + max(len(sentences) - 1, 0)
        + (text.count("?") + text.count("？") >= 2)
        + (numbers >= 2)
    )
    if terms >= 15 or signals >= 3 or (terms >= 10 and signals >= 1):
        return "complex"
    if terms <= 4 and signals == 0 and numbers <= 1:
        return "simple"
    return "moderate"


def chroma_settings() -> Settings:
    """Chroma settings for the index (a fresh object: PersistentClient mutates it)."""
    return Settings(anonymized_telemetry=False, allow_reset=True)


def _forget_chroma_system(identifier: str) -> None:
    """Drop Chroma's per-process cached system for a path.

    Chroma keeps one system per directory for the whole process, even one whose start failed;
    without this, reopening the path after deleting a corrupt index reuses the broken one.
    """
    from chromadb.api.shared_system_client import SharedSystemClient

    system = SharedSystemClient._identifier_to_system.pop(identifier, None)
    SharedSystemClient._identifier_to_refcount.pop(identifier, None)
    if system is not None:
        try:
            system.stop()
        except Exception:  # a half-started system may fail to stop; it is dropped anyway
            pass


Filter = dict[str, list[Any]]


def _normalise_where(where: dict[str, Any] | None) -> Filter:
    """A metadata filter as key -> allowed values; lang "ko"/"en" also admits "mixed"."""
    allowed: Filter = {}
    for key, cond in (where or {}).items():
        if isinstance(cond, dict):
            if set(cond) == {"$eq"}:
                values = [cond["$eq"]]
            elif set(cond) == {"$in"} and isinstance(cond["$in"], list | tuple | set):
                values = list(cond["$in"])
            else:
                raise ValueError(f"filter on {key!r}: only a value, $eq or $in is supported")
        elif isinstance(cond, str | int | float | bool):
            values = [cond]
        else:
            raise ValueError(f"filter on {key!r}: {cond!r} is not a value, $eq or $in")
        if key == "lang" and {"ko", "en"} & set(values) and "mixed" not in values:
            values.append("mixed")
        allowed[key] = values
    return allowed


def _chroma_where(allowed: Filter) -> dict[str, Any] | None:
    clauses = [
        {key: values[0]} if len(values) == 1 else {key: {"$in": values}}
        for key, values in allowed.items()
    ]
    if not clauses:
        return None
    return clauses[0] if len(clauses) == 1 else {"$and": clauses}


def _keeper(allowed: Filter) -> Callable[[dict[str, Any]], bool] | None:
    if not allowed:
        return None
    return lambda meta: all(meta.get(key) in values for key, values in allowed.items())


def _public_metadata(meta: dict[str, Any] | None) -> dict[str, Any]:
    return {k: v for k, v in (meta or {}).items() if k != HASH_KEY}


class KnowledgeIndex:
    """Knowledge collections in Chroma (vectors) and BM25 (keywords) under one directory."""

    def __init__(self, path: Path, embedding: EmbeddingFunction[Documents] | None = None) -> None:
        self.path = Path(path).resolve()
        self._embedding = embedding if embedding is not None else default_embedding()
        self._lock = threading.RLock()
        self._client: ClientAPI | None = None
        self._collections: dict[str, Collection] = {}
        self._bm25: dict[str, BM25Index] = {}
        self._open()

    # --- opening and closing ------------------------------------------------------------------

    @property
    def _chroma_dir(self) -> Path:
        return self.path / "chroma"

    def _bm25_dir(self, collection: str) -> Path:
        return self.path / "bm25" / collection

    def _open(self) -> None:
        """Open Chroma and every collection's BM25; KnowledgeIndexError if anything is unreadable."""
        self._chroma_dir.mkdir(parents=True, exist_ok=True)
        try:
            self._client = chromadb.PersistentClient(
                path=str(self._chroma_dir), settings=chroma_settings()
            )
            for model in self._client.list_collections():
                self._check_embedding(model.name, model.configuration_json)
                self._collections[model.name] = self._client.get_collection(
                    model.name, embedding_function=self._embedding
                )
            for name in self._collections:
                self._bm25[name] = self._load_bm25(name)
        except Exception as exc:
            self.close()
            if isinstance(exc, KnowledgeIndexError):
                raise
            raise KnowledgeIndexError(
                f"cannot open the knowledge index at {self.path}: {type(exc).__name__}: {exc}"
            ) from exc

    def _check_embedding(self, name: str, configuration: dict[str, Any] | None) -> None:
        """KnowledgeIndexError when the collection was embedded by another function or config.

        Vectors of another model (or of the same function with another model or server) cannot
        be searched with ours; raising here makes `build_index` rebuild the index.
        """
        stored = (configuration or {}).get("embedding_function") or {}
        ours = self._embedding.name()
        if not stored.get("name") or ours is NotImplemented:
            return
        if stored["name"] != ours:
            raise KnowledgeIndexError(
                f"collection {name!r} was embedded with {stored['name']!r}, not {ours!r}"
            )
        config = self._embedding.get_config()
        if config is NotImplemented:
            return
        old = stored.get("config") or {}
        changed = sorted(key for key, value in config.items() if key in old and old[key] != value)
        if changed:
            raise KnowledgeIndexError(
                f"collection {name!r} was embedded with another {ours!r} configuration "
                f"({', '.join(changed)} changed)"
            )

    def _load_bm25(self, name: str) -> BM25Index:
        """The saved BM25 index; rebuilt from Chroma's documents when its folder is absent."""
        directory = self._bm25_dir(name)
        if not directory.exists():
            rebuilt = self._rebuild_bm25_from_chroma(name)
            self._save_bm25(name, rebuilt)
            return rebuilt
        try:
            return BM25Index.load(directory)
        except BM25IndexError as exc:
            raise KnowledgeIndexError(
                f"the BM25 index of collection {name!r} is corrupt ({exc}); rebuild the index"
            ) from exc

    def close(self) -> None:
        """Release Chroma's files (the index cannot be used afterwards)."""
        with self._lock:
            if self._client is not None:
                try:
                    self._client.close()
                finally:
                    self._client = None
            _forget_chroma_system(str(self._chroma_dir))
            self._collections.clear()
            self._bm25.clear()

    def __enter__(self) -> KnowledgeIndex:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def reset(self) -> None:
        """Delete the whole index from disk and start empty (to rebuild a corrupt index)."""
        with self._lock:
            self.close()
            shutil.rmtree(self.path, ignore_errors=True)
            self._open()

    # --- reading ------------------------------------------------------------------------------

    def collections(self) -> list[str]:
        """Names of the collections in the index."""
        return sorted(self._collections)

    def _collection(self, name: str) -> Collection:
        try:
            return self._collections[name]
        except KeyError:
            raise KnowledgeIndexError(
                f"no collection {name!r} in the knowledge index; "
                f"available: {', '.join(self.collections()) or '(none)'}"
            ) from None

    def count(self, collection: str) -> int:
        """Number of documents in a collection."""
        return self._collection(collection).count()

    def _stored_hashes(self, name: str) -> dict[str, str]:
        got = self._collection(name).get(include=["metadatas"])
        metadatas = got["metadatas"] or [{} for _ in got["ids"]]
        return {
            i: str((m or {}).get(HASH_KEY, "")) for i, m in zip(got["ids"], metadatas, strict=True)
        }

    def stale(self, expected: dict[str, list[Document]]) -> list[str]:
        """Collections whose stored ids or content hashes (vector or BM25) differ from `expected`."""
        out: list[str] = []
        for name, docs in expected.items():
            want = {d.id: d.content_hash for d in docs}
            bm25 = self._bm25.get(name)
            if (
                name not in self._collections
                or bm25 is None
                or dict(zip(bm25.ids, bm25.hashes, strict=True)) != want
                or self._stored_hashes(name) != want
            ):
                out.append(name)
        return out

    # --- writing ------------------------------------------------------------------------------

    def sync(self, collection: str, docs: list[Document], *, progress: bool = False) -> SyncStats:
        """Make the collection hold exactly `docs`, embedding only new or changed ones."""
        return self._write(collection, docs, remove_missing=True, progress=progress)

    def upsert(self, collection: str, docs: list[Document], *, progress: bool = False) -> SyncStats:
        """Add or update `docs`, keeping the collection's other documents."""
        return self._write(collection, docs, remove_missing=False, progress=progress)

    def _write(
        self, name: str, docs: list[Document], *, remove_missing: bool, progress: bool
    ) -> SyncStats:
        by_id = {d.id: d for d in docs}
        if len(by_id) != len(docs):
            raise ValueError(f"duplicate document ids in the documents for {name!r}")
        with self._lock:
            collection = self._get_or_create(name)
            stored = self._stored_hashes(name)
            changed = [d for d in docs if stored.get(d.id) != d.content_hash]
            removed = [i for i in stored if i not in by_id] if remove_missing else []
            stats = SyncStats(
                added=sum(d.id not in stored for d in changed),
                updated=sum(d.id in stored for d in changed),
                removed=len(removed),
                unchanged=len(docs) - len(changed),
            )
            self._embed_into(collection, changed, progress=progress)
            for start in range(0, len(removed), 1000):
                collection.delete(ids=removed[start : start + 1000])
            wanted = {d.id: d.content_hash for d in docs}
            if not remove_missing:
                wanted = {**stored, **wanted}
            bm25 = self._bm25.get(name)
            if bm25 is None or dict(zip(bm25.ids, bm25.hashes, strict=True)) != wanted:
                rebuilt = (
                    self._bm25_from_docs(docs)
                    if remove_missing
                    else self._rebuild_bm25_from_chroma(name)
                )
                self._save_bm25(name, rebuilt)
            return stats

    def _get_or_create(self, name: str) -> Collection:
        if name not in self._collections:
            if self._client is None:
                raise KnowledgeIndexError("the knowledge index is closed")
            self._collections[name] = self._client.get_or_create_collection(
                name,
                embedding_function=self._embedding,
                configuration={"hnsw": {"space": "cosine"}},
            )
        return self._collections[name]

    def _embed_into(self, collection: Collection, docs: list[Document], *, progress: bool) -> None:
        """Embed `docs` in batches and write them to Chroma, with a progress bar on stderr."""
        with tqdm(
            total=len(docs),
            desc=f"embedding {collection.name}",
            unit="doc",
            file=sys.stderr,
            disable=not progress or not docs,
        ) as bar:
            for start in range(0, len(docs), EMBED_BATCH):
                batch = docs[start : start + EMBED_BATCH]
                collection.upsert(
                    ids=[d.id for d in batch],
                    embeddings=self._embedding([d.text for d in batch]),
                    documents=[d.text for d in batch],
                    metadatas=[{**d.metadata, HASH_KEY: d.content_hash} for d in batch],
                )
                bar.update(len(batch))

    @staticmethod
    def _bm25_from_docs(docs: Sequence[Document]) -> BM25Index:
        return BM25Index(
            [d.id for d in docs],
            [d.text for d in docs],
            metadatas=[dict(d.metadata) for d in docs],
            hashes=[d.content_hash for d in docs],
        )

    def _rebuild_bm25_from_chroma(self, name: str) -> BM25Index:
        got = self._collection(name).get(include=["documents", "metadatas"])
        metadatas = [m or {} for m in (got["metadatas"] or [{} for _ in got["ids"]])]
        return BM25Index(
            got["ids"],
            [t or "" for t in (got["documents"] or ["" for _ in got["ids"]])],
            metadatas=[_public_metadata(m) for m in metadatas],
            hashes=[str(m.get(HASH_KEY, "")) for m in metadatas],
        )

    def _save_bm25(self, name: str, index: BM25Index) -> None:
        """Save beside the old index, then swap, so a crash never leaves half a folder."""
        target = self._bm25_dir(name)
        scratch = target.with_name(target.name + ".tmp")
        shutil.rmtree(scratch, ignore_errors=True)
        index.save(scratch)
        shutil.rmtree(target, ignore_errors=True)
        scratch.rename(target)
        self._bm25[name] = index

    # --- search -------------------------------------------------------------------------------

    def stored_vectors(self, collection: str, ids: list[str]) -> dict[str, list[float]]:
        """The vectors stored for these documents (no embedding is computed); absent ids are
        left out."""
        if not ids:
            return {}
        try:
            with self._lock:
                got = self._collection(collection).get(ids=list(ids), include=["embeddings"])
        except (ChromaError, OSError) as exc:
            raise KnowledgeIndexError(f"reading stored vectors failed: {exc}") from exc
        vectors = got.get("embeddings")
        if vectors is None:
            return {}
        return {i: [float(x) for x in v] for i, v in zip(got["ids"], vectors, strict=True)}

    def embed_query(self, texts: list[str]) -> Any:
        """The vectors this index searches with, for `texts`."""
        return self._embedding.embed_query(list(texts))

    def search(
        self,
        query: str,
        *,
        k: int | None = None,
        collections: list[str] | None = None,
        where: dict[str, Any] | None = None,
        methods: tuple[str, ...] = METHODS,
    ) -> list[Hit]:
        """The `k` best documents for `query` by reciprocal rank fusion of the chosen methods.

        `k` None picks K_BY_COMPLEXITY[query_complexity(query)]; `where` filters on metadata
        (a value or {"$in": [...]} per key; lang "ko"/"en" also matches "mixed"). A query with no
        letters or digits gives []; an unknown collection raises KnowledgeIndexError.
        """
        methods = tuple(methods)
        if not methods or set(methods) - set(METHODS):
            raise ValueError(f"methods must be a non-empty subset of {METHODS}, not {methods}")
        names = [self._collection(n).name for n in collections] if collections else None
        names = names if names is not None else self.collections()
        text = query[:MAX_QUERY_CHARS].strip()
        if not any(ch.isalnum() for ch in text):
            return []
        if k is None:
            k = K_BY_COMPLEXITY[query_complexity(text)]
        if k <= 0:
            return []
        allowed = _normalise_where(where)
        if any(not values for values in allowed.values()):
            return []
        pool = max(k * 4, CANDIDATE_POOL)
        found: dict[Key, tuple[str, dict[str, Any]]] = {}
        ranked: dict[str, list[tuple[Key, float]]] = {}
        try:
            if "vector" in methods:
                ranked["vector"] = self._vector_candidates(text, names, allowed, pool, found)
            if "bm25" in methods:
                ranked["bm25"] = self._bm25_candidates(text, names, allowed, pool)
            return self._fuse(ranked, k, found)
        except KnowledgeIndexError:
            raise
        except (ChromaError, OSError) as exc:
            raise KnowledgeIndexError(f"knowledge index search failed: {exc}") from exc

    def _vector_candidates(
        self,
        text: str,
        names: list[str],
        allowed: Filter,
        pool: int,
        found: dict[Key, tuple[str, dict[str, Any]]],
    ) -> list[tuple[Key, float]]:
        """Nearest documents by cosine similarity, best first, across the collections."""
        vector = self._embedding.embed_query([text])[0]
        where = _chroma_where(allowed)
        candidates: list[tuple[Key, float]] = []
        for name in names:
            size = len(self._bm25[name]) if name in self._bm25 else self.count(name)
            if size == 0:
                continue
            got = self._collections[name].query(
                query_embeddings=[vector],
                n_results=min(pool, size),
                where=where,
                include=["documents", "metadatas", "distances"],
            )
            rows = zip(
                got["ids"][0],
                (got["documents"] or [[]])[0],
                (got["metadatas"] or [[]])[0],
                (got["distances"] or [[]])[0],
                strict=True,
            )
            for doc_id, doc, meta, distance in rows:
                found[(name, doc_id)] = (doc or "", _public_metadata(dict(meta or {})))
                candidates.append(((name, doc_id), 1.0 - float(distance)))
        candidates.sort(key=lambda c: -c[1])
        return candidates[:pool]

    def _bm25_candidates(
        self, text: str, names: list[str], allowed: Filter, pool: int
    ) -> list[tuple[Key, float]]:
        """Documents sharing terms with the query by BM25 score, best first."""
        tokens = tokenize(text)
        if not tokens:
            return []
        keep = _keeper(allowed)
        candidates = [
            ((name, doc_id), score)
            for name in names
            if name in self._bm25
            for doc_id, score in self._bm25[name].search_tokens(tokens, pool, keep=keep)
        ]
        candidates.sort(key=lambda c: -c[1])
        return candidates[:pool]

    def _fuse(
        self,
        ranked: dict[str, list[tuple[Key, float]]],
        k: int,
        found: dict[Key, tuple[str, dict[str, Any]]],
    ) -> list[Hit]:
        """Reciprocal rank fusion: score = sum over methods of 1 / (RRF_K + rank)."""
        ranks: dict[Key, dict[str, int | None]] = {}
        scores: dict[Key, dict[str, float | None]] = {}
        for method, candidates in ranked.items():
            for rank, (key, score) in enumerate(candidates, start=1):
                ranks.setdefault(key, dict.fromkeys(ranked, None))[method] = rank
                scores.setdefault(key, dict.fromkeys(ranked, None))[method] = score
        fused = {
            key: sum(1.0 / (RRF_K + r) for r in by_method.values() if r is not None)
            for key, by_method in ranks.items()
        }
        best = sorted(
            fused,
            key=lambda key: (
                -fused[key],
                min(r for r in ranks[key].values() if r is not None),
                key,
            ),
        )[:k]
        self._fill_texts([key for key in best if key not in found], found)
        hits: list[Hit] = []
        for key in best:
            text, meta = found.get(key, ("", {}))
            hits.append(
                Hit(
                    id=key[1],
                    collection=key[0],
                    score=fused[key],
                    ranks=ranks[key],
                    scores=scores[key],
                    text=text,
                    metadata=meta,
                    parent_id=str(meta.get("parent_id", key[1])),
                )
            )
        return hits

    def _fill_texts(self, keys: list[Key], found: dict[Key, tuple[str, dict[str, Any]]]) -> None:
        """Read text and metadata of hits that only BM25 found."""
        by_collection: dict[str, list[str]] = {}
        for name, doc_id in keys:
            by_collection.setdefault(name, []).append(doc_id)
        for name, ids in by_collection.items():
            got = self._collections[name].get(ids=ids, include=["documents", "metadatas"])
            documents = got["documents"] or ["" for _ in got["ids"]]
            metadatas = got["metadatas"] or [{} for _ in got["ids"]]
            for doc_id, doc, meta in zip(got["ids"], documents, metadatas, strict=True):
                found[(name, doc_id)] = (doc or "", _public_metadata(dict(meta or {})))
