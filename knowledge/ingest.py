"""Outside corpora (JSONL, YAML, Markdown folders, MedQuAD XML) as chunked Documents.

Pure: files in, documents and a report of what was skipped and why out; indexing is the caller's
job. A malformed record or a file that is not what its extension says is skipped and reported,
never raised, so one bad line does not cost a whole corpus.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import math
import os
import re
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path, PurePosixPath
from typing import Any

import yaml
from tqdm import tqdm

from knowledge.documents import Document, Scalar

MAX_PROBLEMS = 20  # problem messages kept in a report; `skipped` still counts every one
TEXT_FIELDS = ("text", "answer", "content", "body")  # the first non-blank one is the text
HEADING_FIELDS = ("title", "question")  # put above the text when present
RENAMED_FIELDS = {"collection": "source_collection"}  # `collection` is the index collection
SUFFIX_FORMATS = {
    ".jsonl": "jsonl",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".md": "markdown",
    ".markdown": "markdown",
    ".xml": "medquad_xml",
}
SNIFF_BYTES = 8192  # a NUL byte in the first 8 KiB means binary, not text

# Entity declarations are refused outright: xml.etree has no defence against entity expansion
# ("billion laughs") and defusedxml is not installed. Checked in UTF-8 and both UTF-16 orders.
_ENTITY_MARKERS = tuple("<!ENTITY".encode(enc) for enc in ("utf-8", "utf-16-le", "utf-16-be"))
_HANGUL = re.compile(r"[\u1100-\u11ff\u3130-\u318f\uac00-\ud7a3]")
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n\s*")
# A sentence ends at . ! ? (ASCII or full width) or an ellipsis, maybe followed by a closing quote
# or bracket, then whitespace; Korean text often omits the space ("했습니다.그리고"), so a
# following Hangul syllable also counts. A line break is a sentence break too (lists, verse).
_SENTENCE_BREAK = re.compile(r"[.!?。！？…]+[\"'”’」』)\]]*(?:\s+|(?=[\uac00-\ud7a3]))|\n\s*")
_WORD_BREAK = re.compile(r"\s+")
_MD_HEADING = re.compile(r"#[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*")
_MD_FENCE = re.compile(r"(```|~~~)")


class IngestError(ValueError):
    """The corpus cannot be read at all: no such path, or not a format this module knows."""


@dataclass
class IngestReport:
    """What a load produced and what it had to leave out."""

    documents: list[Document]  # chunks ready to index
    records: int  # records read (a file that could not be parsed at all counts as one)
    skipped: int  # malformed, empty or duplicate records left out
    problems: list[str]  # the first MAX_PROBLEMS reasons, each naming the file and line/record


@dataclass(frozen=True)
class _Record:
    """One record as a format reader understood it, before ids, chunking and common metadata."""

    id: str | None  # None: derive a stable id from the text
    text: str
    metadata: dict[str, Scalar]


# A reader yields, for every record it meets, where it was and either the record or why not.
_Outcome = tuple[str, _Record | str]
_Reader = Callable[[Path, PurePosixPath], Iterator[_Outcome]]


def load_corpus(
    path: Path | str,
    *,
    collection: str,
    progress: bool = False,
    max_chars: int = 1200,
    overlap: int = 150,
) -> IngestReport:
    """Read a corpus file or folder into chunked Documents of `collection`.

    A file is read by its extension (.jsonl, .yaml/.yml, .md, .xml); a folder by its contents:
    every such file beneath it (hidden ones aside), each by its own extension. Raises IngestError
    only when the path is missing, unsupported, or a folder with nothing readable in it.
    """
    if not collection or not isinstance(collection, str):
        raise IngestError("collection must be a non-empty string")
    if max_chars < 1 or not 0 <= overlap < max_chars:
        raise IngestError(
            f"need max_chars >= 1 and 0 <= overlap < max_chars, got {max_chars}, {overlap}"
        )
    root = Path(path)
    build = _ReportBuilder(collection, max_chars, overlap)
    with tqdm(
        desc=f"ingest {root.name}", unit=" records", disable=not progress, file=sys.stderr
    ) as bar:
        for file, rel in _corpus_files(root):
            source_format = SUFFIX_FORMATS[file.suffix.lower()]
            for where, outcome in _READERS[source_format](file, rel):
                bar.update()
                build.add(where, outcome, source_format)
    return build.report()


@dataclass
class _Chunked:
    """A kept record, chunked; its chunk ids are assigned once every record id is known."""

    record_id: str
    chunks: list[str]
    metadata: dict[str, Scalar]  # the record's own fields plus lang and source_format


@dataclass
class _ReportBuilder:
    """Counts records, drops duplicates, chunks texts and adds the common metadata."""

    collection: str
    max_chars: int
    overlap: int
    kept: list[_Chunked] = field(default_factory=list)
    records: int = 0
    skipped: int = 0
    problems: list[str] = field(default_factory=list)
    first_seen: dict[str, str] = field(default_factory=dict)  # record id -> where

    def add(self, where: str, outcome: _Record | str, source_format: str) -> None:
        """Take one record (or the reason a reader could not make one)."""
        self.records += 1
        if isinstance(outcome, str):
            self._skip(where, outcome)
            return
        record_id = outcome.id or _text_id(outcome.text)
        if record_id in self.first_seen:
            self._skip(where, f"duplicate id {record_id!r} (first at {self.first_seen[record_id]})")
            return
        # Every chunk starts with the record's context line and stays within max_chars.
        context = chunk_context(outcome.metadata)[: self.max_chars // 4]
        budget = self.max_chars - len(context) - 2 if context else self.max_chars
        overlap = min(self.overlap, budget // 2)
        chunks = chunk_text(outcome.text, max_chars=budget, overlap=overlap)
        if not chunks:
            self._skip(where, "no text")
            return
        if context:
            chunks = [c if context in c.split("\n", 1)[0] else f"{context}\n\n{c}" for c in chunks]
        self.first_seen[record_id] = where
        lang = outcome.metadata.get("lang")
        if not isinstance(lang, str) or not lang:
            lang = "ko" if _HANGUL.search(outcome.text) else "en"
        metadata = {**outcome.metadata, "lang": lang, "source_format": source_format}
        self.kept.append(_Chunked(record_id, chunks, metadata))

    def _skip(self, where: str, why: str) -> None:
        self.skipped += 1
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(f"{where}: {why}")

    def report(self) -> IngestReport:
        """Name the chunks and build the documents.

        A chunk is `{id}#{n}`, unless that names another record or chunk: real corpora use such
        ids themselves (MedQuAD has "…_2-2" and "…_2-2#2"), so the separator grows to `##`, `###`
        until the names are free, instead of losing a record to a clash of our own making.
        """
        used = set(self.first_seen)
        documents: list[Document] = []
        for record in self.kept:
            ids = [record.record_id]
            if len(record.chunks) > 1:
                sep = "#"
                while any(f"{record.record_id}{sep}{n}" in used for n in range(len(record.chunks))):
                    sep += "#"
                ids = [f"{record.record_id}{sep}{n}" for n in range(len(record.chunks))]
                used.update(ids)
            for n, (doc_id, chunk) in enumerate(zip(ids, record.chunks, strict=True)):
                metadata: dict[str, Scalar] = {
                    **record.metadata,
                    "parent_id": record.record_id,
                    "chunk": n,
                }
                documents.append(Document(doc_id, chunk, self.collection, metadata))
        return IngestReport(documents, self.records, self.skipped, self.problems)


def chunk_text(text: str, *, max_chars: int = 1200, overlap: int = 150) -> list[str]:
    """Split text into chunks of at most `max_chars`, each sharing up to `overlap` with the last.

    Cuts at a paragraph break if one leaves a reasonable chunk, else at a sentence end (Korean
    or English), else between words, else anywhere. Chunks are stripped and never empty; a
    text that fits is returned whole (stripped); a blank text gives [].
    """
    if max_chars < 1 or not 0 <= overlap < max_chars:
        raise ValueError(
            f"need max_chars >= 1 and 0 <= overlap < max_chars, got {max_chars}, {overlap}"
        )
    return [text[a:b] for a, b in _chunk_spans(text, max_chars, overlap)]


def _chunk_spans(text: str, max_chars: int, overlap: int) -> list[tuple[int, int]]:
    """The chunks as (start, end) positions in `text`, each span stripped of whitespace."""
    start = len(text) - len(text.lstrip())
    end = len(text.rstrip())
    if start >= end:
        return []
    # Positions where a new piece starts, by strength.
    paragraphs = [m.end() for m in _PARAGRAPH_BREAK.finditer(text)]
    sentences = sorted({*paragraphs, *(m.end() for m in _SENTENCE_BREAK.finditer(text))})
    words = [m.end() for m in _WORD_BREAK.finditer(text)]
    # Prefer a strong break that leaves a chunk of at least a third; a cut must pass
    # start + overlap so that the next chunk, starting inside the overlap, still moves on.
    big = max(max_chars // 3, overlap)
    preferences = [(paragraphs, big), (sentences, big), (sentences, overlap), (words, overlap)]
    spans: list[tuple[int, int]] = []
    while end - start > max_chars:
        limit = start + max_chars
        cut, hard = limit, True  # a hard cut when there is no usable break
        for breaks, min_len in preferences:
            i = bisect.bisect_right(breaks, limit) - 1
            if i >= 0 and breaks[i] > start + min_len:
                cut, hard = breaks[i], False
                break
        stop = cut
        while text[stop - 1].isspace():  # start is not whitespace, so this stops there
            stop -= 1
        if not spans or stop > spans[-1][1]:  # else it adds nothing to the chunk before
            spans.append((start, stop))
        start = _overlap_start(text, cut, hard, overlap, sentences, words)
    spans.append((start, end))
    return spans


def _overlap_start(
    text: str, cut: int, hard: bool, overlap: int, sentences: list[int], words: list[int]
) -> int:
    """Where the chunk after `cut` begins: the earliest sentence, else word, in the overlap.

    With no break in the overlap, a clean cut gets no overlap (rather than half a word) and a
    hard cut, which split a word anyway, gets the full overlap.
    """
    begin = cut
    if overlap:
        low = cut - overlap
        for breaks in (sentences, words):
            i = bisect.bisect_left(breaks, low)
            if i < len(breaks) and breaks[i] < cut:
                begin = breaks[i]
                break
        else:
            begin = low if hard else cut
    while begin < len(text) and text[begin].isspace():
        begin += 1
    return begin


# --- finding the files -----------------------------------------------------------------------


def _corpus_files(root: Path) -> list[tuple[Path, PurePosixPath]]:
    """The files to read, each with its path relative to the corpus (the name for one file)."""
    if not root.exists():
        raise IngestError(f"{root}: no such file or folder")
    known = ", ".join(sorted(SUFFIX_FORMATS))
    if root.is_file():
        if root.suffix.lower() not in SUFFIX_FORMATS:
            raise IngestError(f"{root}: unsupported extension {root.suffix!r} (expected {known})")
        return [(root, PurePosixPath(root.name))]
    if not root.is_dir():
        raise IngestError(f"{root}: neither a regular file nor a folder")
    files: list[tuple[Path, PurePosixPath]] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for name in filenames:
            file = Path(dirpath) / name
            if not name.startswith(".") and file.suffix.lower() in SUFFIX_FORMATS:
                files.append((file, PurePosixPath(file.relative_to(root).as_posix())))
    if not files:
        raise IngestError(f"{root}: folder holds no corpus files ({known})")
    return sorted(files, key=lambda pair: pair[1])


# --- format readers --------------------------------------------------------------------------


def _read_jsonl(file: Path, rel: PurePosixPath) -> Iterator[_Outcome]:
    """One JSON object a line; blank lines are not records."""
    try:
        with file.open("rb") as fh:
            if b"\0" in fh.read(SNIFF_BYTES):
                yield str(file), "binary content, not JSON Lines"
                return
            fh.seek(0)
            for lineno, raw in enumerate(fh, 1):
                where = f"{file}:{lineno}"
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as err:
                    yield where, f"not UTF-8 text ({err.reason} at byte {err.start})"
                    continue
                line = line.lstrip("\ufeff") if lineno == 1 else line
                if not line.strip():
                    continue
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError as err:
                    yield where, f"not JSON ({err.msg} at column {err.colno})"
                    continue
                if not isinstance(obj, dict):
                    yield where, f"not a JSON object (got {_json_type(obj)})"
                    continue
                yield where, _record_from_mapping(obj)
    except OSError as err:
        yield str(file), f"cannot read ({err.strerror or err})"


def _read_yaml(file: Path, rel: PurePosixPath) -> Iterator[_Outcome]:
    """A list of records, or a mapping whose `documents:` is that list."""
    where = str(file)
    text = _read_text(file)
    if isinstance(text, _Unreadable):
        yield where, text.why
        return
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as err:
        yield where, f"not valid YAML ({_yaml_problem(err)})"
        return
    if data is None:
        yield where, "empty file"
        return
    items = data.get("documents") if isinstance(data, dict) else data
    if not isinstance(items, list):
        yield where, "not YAML records: expected a list or a mapping with a `documents:` list"
        return
    for n, item in enumerate(items, 1):
        if isinstance(item, dict):
            yield f"{where}: record {n}", _record_from_mapping(item)
        else:
            yield f"{where}: record {n}", f"not a mapping (got {type(item).__name__})"


def _read_markdown(file: Path, rel: PurePosixPath) -> Iterator[_Outcome]:
    """The whole file is one record; its id is its path without extension."""
    where = str(file)
    text = _read_text(file)
    if isinstance(text, _Unreadable):
        yield where, text.why
        return
    if not text.strip():
        yield where, "empty file"
        return
    title = _markdown_title(text)
    metadata: dict[str, Scalar] = {"title": title} if title else {}
    yield where, _Record(rel.with_suffix("").as_posix(), text.strip(), metadata)


def _read_medquad_xml(file: Path, rel: PurePosixPath) -> Iterator[_Outcome]:
    """A MedQuAD <Document>: one record per <QAPair> that has an answer.

    A pair's id is the file's path in the corpus without `.xml`, then `-{pid}`
    ("1_CancerGov_QA/0000001_1-1", as in answers.jsonl). The <Document id> is no key: MedQuAD
    reuses it across its collection folders (2_GARD_QA/0000004.xml, 3_GHR_QA/0000004.xml) and
    within one (0000013_2.xml, 0000013_2_1.xml), and ids made from it dropped those pairs as
    duplicates.
    """
    where = str(file)
    try:
        data = file.read_bytes()
    except OSError as err:
        yield where, f"cannot read ({err.strerror or err})"
        return
    if any(marker in data for marker in _ENTITY_MARKERS):
        yield where, "declares XML entities (<!ENTITY); refused to guard against entity expansion"
        return
    try:
        root = ET.fromstring(data)
    except ET.ParseError as err:
        yield where, f"not well-formed XML ({err})"
        return
    if root.tag != "Document":
        yield where, f"not a MedQuAD document (root element <{root.tag}>, expected <Document>)"
        return
    common = _scalars(
        {
            "focus": _element_text(root.find("Focus")),
            "source": root.get("source"),
            "url": root.get("url"),
        }
    )
    pairs = list(root.iter("QAPair"))
    if not pairs:
        yield where, "MedQuAD document without <QAPair> elements"
        return
    for n, pair in enumerate(pairs, 1):
        pid = (pair.get("pid") or "").strip() or str(n)
        pair_where = f"{where}: QAPair pid={pid}"
        answer = _tidy(_element_text(pair.find("Answer")))
        if not answer:
            yield pair_where, "no answer"
            continue
        question = pair.find("Question")
        metadata = {
            **common,
            **_scalars(
                {
                    "qtype": question.get("qtype") if question is not None else None,
                    "qid": question.get("qid") if question is not None else None,
                    "question": _tidy(_element_text(question)),
                }
            ),
        }
        # The question stays out of the text: MedQuAD questions are the retrieval benchmark's
        # queries, and answers.jsonl likewise holds answers only.
        yield pair_where, _Record(f"{rel.with_suffix('').as_posix()}-{pid}", answer, metadata)


_READERS: dict[str, _Reader] = {
    "jsonl": _read_jsonl,
    "yaml": _read_yaml,
    "markdown": _read_markdown,
    "medquad_xml": _read_medquad_xml,
}


def chunk_context(metadata: dict[str, Scalar]) -> str:
    """The line every chunk of a record starts with: its title, else its focus and question type.

    A chunk cut from the middle of a long answer rarely names its subject; with this line each
    chunk says what it is about, for BM25 and the embedding alike (on MedQuAD it lifted
    Recall@10 of both; see bench/retrieval.py). The question of a MedQuAD pair is not used: the
    benchmark's queries are those questions.
    """
    title = metadata.get("title")
    if isinstance(title, str) and title.strip():
        return " ".join(title.split())
    focus = metadata.get("focus")
    if not isinstance(focus, str) or not focus.strip():
        return ""
    qtype = metadata.get("qtype")
    focus = " ".join(focus.split())
    return f"{focus} ({qtype.strip()})" if isinstance(qtype, str) and qtype.strip() else focus


# --- helpers -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Unreadable:
    why: str


def _read_text(file: Path) -> str | _Unreadable:
    """A text file's content with newlines normalised, or why it is not text."""
    try:
        data = file.read_bytes()
    except OSError as err:
        return _Unreadable(f"cannot read ({err.strerror or err})")
    if b"\0" in data[:SNIFF_BYTES]:
        return _Unreadable(f"binary content, not a {file.suffix.lstrip('.')} text file")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        return _Unreadable(f"not UTF-8 text ({err.reason} at byte {err.start})")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _record_from_mapping(obj: dict[Any, Any]) -> _Record | str:
    """A JSON/YAML object as a record, or why it is not one."""
    body = next((obj[k] for k in TEXT_FIELDS if _is_text(obj.get(k))), None)
    if body is None:
        return f"no text (none of {', '.join(TEXT_FIELDS)} is a non-empty string)"
    raw_id = obj.get("id")
    if raw_id is None:
        record_id = None
    elif isinstance(raw_id, str | int) and not isinstance(raw_id, bool):
        record_id = str(raw_id).strip() or None
    else:
        return f"id is not a string or an integer (got {type(raw_id).__name__})"
    headings = [_tidy(obj[k]) for k in HEADING_FIELDS if _is_text(obj.get(k))]
    text = "\n\n".join([*headings, _tidy(body)])
    rest = {
        RENAMED_FIELDS.get(str(k), str(k)): v
        for k, v in obj.items()
        if k != "id" and k not in TEXT_FIELDS
    }
    return _Record(record_id, text, _scalars(rest))


def _scalars(values: dict[str, Any]) -> dict[str, Scalar]:
    """The values an index can hold as metadata; None, blanks, lists and mappings are dropped."""
    out: dict[str, Scalar] = {}
    for key, value in values.items():
        if isinstance(value, date):  # YAML reads 2024-01-31 as a date
            out[key] = value.isoformat()
        elif isinstance(value, str):
            if value.strip():
                out[key] = value.strip()
        elif isinstance(value, bool | int) or (isinstance(value, float) and math.isfinite(value)):
            out[key] = value
    return out


def _tidy(text: str) -> str:
    """Collapse runs of spaces within lines and of blank lines (MedQuAD indents every line)."""
    lines: list[str] = []
    for line in text.splitlines():
        line = " ".join(line.split())
        if line or (lines and lines[-1]):
            lines.append(line)
    return "\n".join(lines).strip()


def _markdown_title(text: str) -> str | None:
    """The first level-1 `# heading` outside fenced code."""
    fence: str | None = None
    for line in text.splitlines():
        stripped = line.strip()
        opener = _MD_FENCE.match(stripped)
        if opener:
            fence = None if fence == opener.group(1) else fence or opener.group(1)
            continue
        if fence is None and (heading := _MD_HEADING.fullmatch(stripped)):
            return heading.group(1).strip()
    return None


def _element_text(element: ET.Element | None) -> str:
    return "".join(element.itertext()) if element is not None else ""


def _is_text(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _text_id(text: str) -> str:
    """A stable id for a record that has none: the same text always gets the same id."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _json_type(value: Any) -> str:
    names = {list: "array", str: "string", bool: "boolean", type(None): "null"}
    return names.get(type(value), "number")


def _yaml_problem(err: yaml.YAMLError) -> str:
    """PyYAML's message in one line: what is wrong and where."""
    if isinstance(err, yaml.MarkedYAMLError) and err.problem_mark is not None:
        mark = err.problem_mark
        return f"{err.problem} at line {mark.line + 1}, column {mark.column + 1}"
    return str(err).splitlines()[0] if str(err) else type(err).__name__
