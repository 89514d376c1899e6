"""Keyword search for the knowledge index: a Korean-aware tokenizer and a BM25 index (bm25s)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import bm25s
import numpy as np

from knowledge.korean import get_kiwi

MAX_TOKENIZE_CHARS = 20_000  # longer text is cut: chunked documents and queries stay well below

# Kiwi tags kept as search terms: nouns (incl. bound nouns such as 원, 개월), verb and adjective
# stems, roots, Latin words, numbers, hanja and numeral nouns (만, 억: "300만원" -> 300, 만, 원).
# Irregular stems carry a suffix ("VV-R"), stripped before the check.
_KEPT_TAGS = frozenset({"NNG", "NNP", "NNB", "NR", "VV", "VA", "XR", "SL", "SN", "SH"})
_HANGUL = re.compile(r"[\uac00-\ud7a3\u1100-\u11ff\u3131-\u318e]")
_WORD = re.compile(r"[^\W_]+")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
# Pieces Kiwi tokenizes in one batch call: sentences and lines, so long text stays fast.
_PIECE_END = re.compile(r"(?<=[.!?。\n])")
ENGLISH_STOPWORDS = frozenset(
    """a an the and or but if then so of to in on at by for with from as into about over
    is are was were be been being am do does did done have has had having i me my mine we our
    you your he him his she her it its they them their this that these those there here
    what which who whom when where why how not no yes can could would should will shall may
    might must just very too also than s t d ll m re ve didn doesn don isn wasn weren aren
    haven hasn hadn wouldn couldn shouldn can't""".split()
)


class BM25IndexError(ValueError):
    """A saved BM25 index is missing files or cannot be read."""


def _kept(tag: str) -> bool:
    return tag.split("-", 1)[0] in _KEPT_TAGS


def _latin_ok(word: str) -> bool:
    """Keep numbers and words of two letters or more that are not stopwords."""
    return word.isdigit() or (len(word) > 1 and word not in ENGLISH_STOPWORDS)


def _plain_tokens(text: str) -> list[str]:
    """Lower-cased words and numbers split on anything else, without English stopwords."""
    return [w for w in _WORD.findall(text.lower()) if _latin_ok(w)]


def _prepare(text: str) -> str:
    return _THOUSANDS.sub("", text[:MAX_TOKENIZE_CHARS])


def _pieces(text: str) -> list[str]:
    return [piece for piece in _PIECE_END.split(text) if piece.strip()]


def _morphemes(tokens: Iterable[Any]) -> list[str]:
    out: list[str] = []
    for token in tokens:
        if not _kept(token.tag):
            continue
        if token.tag == "SL":
            out.extend(w for w in _plain_tokens(token.form))
        else:
            out.append(token.form.lower())
    return out


def tokenize_many(texts: Sequence[str]) -> list[list[str]]:
    """`tokenize` for many texts, with the Korean ones analysed in one Kiwi batch (faster)."""
    result: list[list[str]] = [[] for _ in texts]
    pieces: list[str] = []
    owners: list[int] = []
    for i, raw in enumerate(texts):
        text = _prepare(raw)
        if _HANGUL.search(text):
            for piece in _pieces(text):
                pieces.append(piece)
                owners.append(i)
        else:
            result[i] = _plain_tokens(text)
    if pieces:
        for owner, tokens in zip(owners, get_kiwi().tokenize(pieces), strict=True):
            result[owner].extend(_morphemes(tokens))
    return result


def tokenize(text: str) -> list[str]:
    """Search terms of `text`: Korean content morphemes (Kiwi) or lower-cased words and numbers.

    Text with any Hangul goes through Kiwi (nouns, stems, roots, numbers, Latin words kept;
    particles, endings and punctuation dropped); other text is split on non-alphanumerics.
    "300만원" gives ["300", "만", "원"]; "3,000,000" stays one number.
    """
    return tokenize_many([text])[0]


class BM25Index:
    """BM25 over one collection's documents, with their ids, content hashes and metadata.

    The metadata is kept so search can apply the same filters as the vector side; the hashes
    tell whether the index matches a set of documents without reading it.
    """

    DOCS_FILE = "docs.json"

    def __init__(
        self,
        ids: Sequence[str],
        texts: Sequence[str],
        *,
        metadatas: Sequence[dict[str, Any]] | None = None,
        hashes: Sequence[str] | None = None,
    ) -> None:
        if len(texts) != len(ids):
            raise ValueError("ids and texts differ in length")
        self.ids = list(ids)
        self.metadatas = [dict(m) for m in metadatas] if metadatas else [{} for _ in ids]
        self.hashes = list(hashes) if hashes else ["" for _ in ids]
        self._retriever: bm25s.BM25 | None = None
        corpus = tokenize_many(texts)
        if any(corpus):  # bm25s cannot index an empty vocabulary
            self._retriever = bm25s.BM25()
            self._retriever.index(corpus, show_progress=False)

    def __len__(self) -> int:
        return len(self.ids)

    def search(
        self, query: str, k: int, *, keep: Callable[[dict[str, Any]], bool] | None = None
    ) -> list[tuple[str, float]]:
        """The `k` best documents for `query` as (id, score), best first; [] without terms."""
        return self.search_tokens(tokenize(query), k, keep=keep)

    def search_tokens(
        self, tokens: list[str], k: int, *, keep: Callable[[dict[str, Any]], bool] | None = None
    ) -> list[tuple[str, float]]:
        """`search` for an already tokenized query; `keep` filters documents by metadata."""
        if self._retriever is None or k <= 0:
            return []
        token_ids = self._retriever.get_tokens_ids(tokens)
        if not token_ids:
            return []
        scores = np.asarray(self._retriever.get_scores_from_ids(token_ids), dtype=np.float32)
        if keep is not None:
            mask = np.fromiter((keep(m) for m in self.metadatas), dtype=bool, count=len(self))
            scores = np.where(mask, scores, 0.0)
        candidates = np.flatnonzero(scores > 0)
        if len(candidates) > k:
            candidates = candidates[np.argpartition(-scores[candidates], k - 1)[:k]]
        order = candidates[np.argsort(-scores[candidates], kind="stable")]
        return [(self.ids[i], float(scores[i])) for i in order]

    def save(self, directory: Path) -> None:
        """Write the index (bm25s' own files) and the document list into `directory`."""
        directory.mkdir(parents=True, exist_ok=True)
        if self._retriever is not None:
            self._retriever.save(str(directory), show_progress=False)
        docs = {
            "ids": self.ids,
            "hashes": self.hashes,
            "metadatas": self.metadatas,
            "has_terms": self._retriever is not None,
        }
        (directory / self.DOCS_FILE).write_text(json.dumps(docs, ensure_ascii=False), "utf-8")

    @classmethod
    def load(cls, directory: Path) -> BM25Index:
        """Read an index written by `save`; BM25IndexError when files are missing or unreadable."""
        try:
            docs = json.loads((directory / cls.DOCS_FILE).read_text("utf-8"))
            ids, hashes, metadatas = docs["ids"], docs["hashes"], docs["metadatas"]
            if not len(ids) == len(hashes) == len(metadatas):
                raise ValueError("ids, hashes and metadata differ in length")
            retriever = None
            if docs["has_terms"]:
                retriever = bm25s.BM25.load(str(directory), show_progress=False)
                if retriever.scores["num_docs"] != len(ids):
                    raise ValueError("the BM25 matrix and the document list differ in size")
        except (OSError, EOFError, ValueError, KeyError, TypeError) as exc:
            raise BM25IndexError(f"BM25 index at {directory} is unreadable: {exc}") from exc
        index = cls.__new__(cls)
        index.ids, index.hashes, index.metadatas = list(ids), list(hashes), list(metadatas)
        index._retriever = retriever
        return index
