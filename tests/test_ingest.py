"""knowledge/ingest.py: outside corpora (JSONL, YAML, Markdown, MedQuAD XML) as chunked Documents.

Every corpus is a small file written into tmp_path, except the last test, which reads the first
lines of the real MedQuAD answers (tests/data/shared/medquad).
"""

from __future__ import annotations

import json
import random
from itertools import islice
from pathlib import Path

import pytest

from knowledge.documents import Document
from knowledge.ingest import (
    MAX_PROBLEMS,
    IngestError,
    IngestReport,
    chunk_context,
    chunk_text,
    load_corpus,
)
from tests.support import SHARED_DATA


def write_jsonl(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def record(**fields: object) -> str:
    return json.dumps(fields, ensure_ascii=False)


def by_id(report: IngestReport) -> dict[str, Document]:
    docs = {doc.id: doc for doc in report.documents}
    assert len(docs) == len(report.documents), "document ids must be unique"
    return docs


def shared_prefix(a: str, b: str) -> int:
    """How many leading characters of `b` are also the last characters of `a` (the overlap)."""
    return max(k for k in range(len(b) + 1) if a.endswith(b[:k]))


# --- JSONL -----------------------------------------------------------------------------------


def test_jsonl_ids_become_document_ids_and_metadata_is_kept(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "corpus.jsonl",
        [
            record(
                id="lease-001",
                text="The landlord must return the deposit.",
                collection="leases",
                source="court",
                year=2024,
                score=0.5,
                binding=True,
                tags=["a", "b"],
                extra={"nested": 1},
                empty="  ",
                nothing=None,
            ),
            record(id=42, text="임대인은 보증금을 돌려주어야 합니다."),
            record(id="en-override", text="Korean label", lang="ko"),
        ],
    )
    report = load_corpus(path, collection="outside")
    assert (report.records, report.skipped, report.problems) == (3, 0, [])
    assert [doc.id for doc in report.documents] == ["lease-001", "42", "en-override"]
    first = report.documents[0]
    assert first.collection == "outside"
    assert first.text == "The landlord must return the deposit."
    assert first.metadata == {
        "source_collection": "leases",  # `collection` is the index collection, so it is renamed
        "source": "court",
        "year": 2024,
        "score": 0.5,
        "binding": True,
        "lang": "en",
        "source_format": "jsonl",
        "parent_id": "lease-001",
        "chunk": 0,
    }
    assert "collection" not in first.metadata
    assert report.documents[1].metadata["lang"] == "ko"  # detected from Hangul
    assert report.documents[2].metadata["lang"] == "ko"  # a record's own lang wins


def test_jsonl_text_field_order_headings_and_tidying(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "qa.jsonl",
        [
            record(id="a", text=7, answer="  The   answer\n\n\n\n  second   line  "),
            record(id="b", title="Deposit", question="When is it due?", body="Within a month."),
            record(id="c", text="", content="From content."),
        ],
    )
    docs = by_id(load_corpus(path, collection="qa"))
    assert docs["a"].text == "The answer\n\nsecond line"
    assert docs["b"].text == "Deposit\n\nWhen is it due?\n\nWithin a month."
    assert docs["b"].metadata["title"] == "Deposit"
    assert docs["b"].metadata["question"] == "When is it due?"
    assert docs["c"].text == "From content."


def test_jsonl_record_without_id_gets_a_stable_id_from_its_text(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "noid.jsonl",
        [record(text="same text"), record(text="other text"), record(text="same text")],
    )
    report = load_corpus(path, collection="c")
    again = load_corpus(path, collection="c")
    assert [d.id for d in report.documents] == [d.id for d in again.documents]
    assert len(report.documents) == 2
    assert report.documents[0].id != report.documents[1].id
    assert (report.records, report.skipped) == (3, 1)
    assert report.problems[0].startswith(f"{path}:3: duplicate id")


BAD_JSONL_LINES = [
    pytest.param("{not json", "not JSON", id="not-json"),
    pytest.param('["a", "list"]', "not a JSON object (got array)", id="array"),
    pytest.param('"just a string"', "not a JSON object (got string)", id="string"),
    pytest.param("null", "not a JSON object (got null)", id="null"),
    pytest.param("12", "not a JSON object (got number)", id="number"),
    pytest.param(record(id="x", title="no body"), "no text", id="missing-text"),
    pytest.param(record(id="x", text=12), "no text", id="text-is-number"),
    pytest.param(record(id="x", text=["a", "b"]), "no text", id="text-is-list"),
    pytest.param(record(id="x", text=" \n\t "), "no text", id="blank-text"),
    pytest.param(record(id=["x"], text="t"), "id is not a string or an integer", id="id-list"),
    pytest.param(record(id=True, text="t"), "id is not a string or an integer", id="id-bool"),
    pytest.param(record(id="good-1", text="again"), "duplicate id 'good-1'", id="duplicate-id"),
]


@pytest.mark.parametrize(("bad_line", "why"), BAD_JSONL_LINES)
def test_jsonl_malformed_line_is_skipped_counted_and_named(
    tmp_path: Path, bad_line: str, why: str
) -> None:
    path = write_jsonl(
        tmp_path / "mixed.jsonl",
        [record(id="good-1", text="first"), bad_line, record(id="good-2", text="last")],
    )
    report = load_corpus(path, collection="c")
    assert [d.id for d in report.documents] == ["good-1", "good-2"]
    assert [d.text for d in report.documents] == ["first", "last"]
    assert (report.records, report.skipped) == (3, 1)
    assert len(report.problems) == 1
    assert report.problems[0].startswith(f"{path}:2: ")
    assert why in report.problems[0]


def test_jsonl_every_kind_of_bad_line_in_one_file(tmp_path: Path) -> None:
    lines = [record(id="good-1", text="first")]
    lines += [param.values[0] for param in BAD_JSONL_LINES]
    lines += ["", "   ", record(id="good-2", text="last")]  # blank lines are not records
    path = write_jsonl(tmp_path / "all.jsonl", lines)
    report = load_corpus(path, collection="c")
    assert [d.id for d in report.documents] == ["good-1", "good-2"]
    assert report.skipped == len(BAD_JSONL_LINES)
    assert report.records == len(BAD_JSONL_LINES) + 2
    assert [p.split(": ", 1)[0] for p in report.problems] == [
        f"{path}:{n}" for n in range(2, 2 + len(BAD_JSONL_LINES))
    ]
    assert "first at " + f"{path}:1" in report.problems[-1]  # the duplicate names the original


def test_jsonl_bom_crlf_and_a_non_utf8_line(tmp_path: Path) -> None:
    path = tmp_path / "windows.jsonl"
    path.write_bytes(
        b"\xef\xbb\xbf"
        + record(id="a", text="with BOM").encode()
        + b"\r\n\xff\xfe latin junk\r\n"
        + record(id="b", text="after junk").encode()
        + b"\r\n"
    )
    report = load_corpus(path, collection="c")
    assert [d.id for d in report.documents] == ["a", "b"]
    assert (report.records, report.skipped) == (3, 1)
    assert report.problems[0].startswith(f"{path}:2: not UTF-8 text")


def test_problems_are_capped_but_every_skip_is_counted(tmp_path: Path) -> None:
    bad = MAX_PROBLEMS + 15
    path = write_jsonl(tmp_path / "noisy.jsonl", ["oops"] * bad + [record(id="ok", text="fine")])
    report = load_corpus(path, collection="c")
    assert [d.id for d in report.documents] == ["ok"]
    assert (report.records, report.skipped) == (bad + 1, bad)
    assert len(report.problems) == MAX_PROBLEMS
    assert report.problems[-1].startswith(f"{path}:{MAX_PROBLEMS}: ")


# --- YAML ------------------------------------------------------------------------------------

YAML_LIST = """\
- id: y-1
  text: 첫 번째 문서입니다.
  decided: 2024-01-31
  court: 서울중앙지방법원
- id: 7
  answer: Second document.
  tags: [a, b]
"""
YAML_DOCUMENTS = "documents:\n" + "".join(f"  {line}\n" for line in YAML_LIST.splitlines())


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("list.yaml", YAML_LIST),
        ("list.yml", YAML_LIST),
        ("mapping.yaml", YAML_DOCUMENTS),
        ("bom.yaml", "\ufeff" + YAML_LIST.replace("\n", "\r\n")),
    ],
)
def test_yaml_records(tmp_path: Path, name: str, content: str) -> None:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8", newline="")
    report = load_corpus(path, collection="c")
    assert (report.records, report.skipped, report.problems) == (2, 0, [])
    docs = by_id(report)
    assert list(docs) == ["y-1", "7"]
    assert docs["y-1"].text == "첫 번째 문서입니다."
    assert docs["y-1"].metadata["decided"] == "2024-01-31"  # a YAML date kept as ISO text
    assert docs["y-1"].metadata["court"] == "서울중앙지방법원"
    assert docs["y-1"].metadata["lang"] == "ko"
    assert docs["y-1"].metadata["source_format"] == "yaml"
    assert docs["7"].text == "Second document."
    assert "tags" not in docs["7"].metadata  # lists are not index metadata
    assert docs["7"].metadata["lang"] == "en"


@pytest.mark.parametrize(
    ("content", "records", "why"),
    [
        ("", 1, "empty file"),
        ("just a sentence\n", 1, "not YAML records"),
        ("title: x\ntext: y\n", 1, "not YAML records"),  # one mapping, not a list
        ("documents: nope\n", 1, "not YAML records"),
        ("- id: a\n  text: [unclosed\n", 1, "not valid YAML"),
        ("- id: a\n\ttext: tab\n", 1, "not valid YAML"),
        ("- 5\n- id: ok\n  text: fine\n", 2, "record 1: not a mapping (got int)"),
        ("- [a, b]\n- id: ok\n  text: fine\n", 2, "record 1: not a mapping (got list)"),
        ("- id: ok\n  text: fine\n- id: b\n  text: 2024-01-31\n", 2, "record 2: no text"),
    ],
)
def test_yaml_bad_shapes_are_skipped_and_counted(
    tmp_path: Path, content: str, records: int, why: str
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(content, encoding="utf-8")
    report = load_corpus(path, collection="c")
    assert (report.records, report.skipped) == (records, 1)
    assert report.problems[0].startswith(f"{path}")
    assert why in report.problems[0]
    assert [d.id for d in report.documents] == (["ok"] if records == 2 else [])


def test_yaml_is_parsed_safely(tmp_path: Path) -> None:
    path = tmp_path / "unsafe.yaml"
    path.write_text("- id: a\n  text: !!python/object/apply:os.system ['true']\n")
    report = load_corpus(path, collection="c")
    assert report.documents == []
    assert (report.records, report.skipped) == (1, 1)
    assert "not valid YAML" in report.problems[0]


# --- Markdown --------------------------------------------------------------------------------


def test_markdown_folder_ids_from_relative_paths_and_titles_from_headings(tmp_path: Path) -> None:
    root = tmp_path / "guides"
    (root / "housing").mkdir(parents=True)
    (root / ".drafts").mkdir()
    (root / "intro.md").write_text("# 안내\n\n법률 상담 전에 읽어 주세요.\n", encoding="utf-8")
    (root / "housing" / "deposit.markdown").write_text(
        "Some preface.\n\n```md\n# Not a title (in code)\n```\n\n## Sub\n\n# Deposit Rules #\n\nBody.\n"
    )
    (root / "housing" / "untitled.md").write_text("No heading at all, just text.\n")
    (root / "housing" / "blank.md").write_text(" \n\n \n")
    (root / ".drafts" / "secret.md").write_text("# Hidden folder\n")
    (root / ".hidden.md").write_text("# Hidden file\n")
    (root / "notes.txt").write_text("not a corpus file")

    report = load_corpus(root, collection="guides")
    docs = by_id(report)
    assert list(docs) == ["housing/deposit", "housing/untitled", "intro"]  # sorted by path
    assert docs["intro"].metadata["title"] == "안내"
    assert docs["intro"].text == "# 안내\n\n법률 상담 전에 읽어 주세요."
    assert docs["intro"].metadata["lang"] == "ko"
    assert docs["housing/deposit"].metadata["title"] == "Deposit Rules"
    assert "Not a title" in docs["housing/deposit"].text  # the whole file is the text
    assert "title" not in docs["housing/untitled"].metadata
    assert all(d.metadata["source_format"] == "markdown" for d in report.documents)
    assert (report.records, report.skipped) == (4, 1)
    assert report.problems == [f"{root / 'housing' / 'blank.md'}: empty file"]


def test_single_markdown_file_id_is_its_name(tmp_path: Path) -> None:
    path = tmp_path / "faq.v2.md"
    path.write_text("# FAQ\nShort.\n")
    report = load_corpus(path, collection="c")
    assert [(d.id, d.metadata["title"]) for d in report.documents] == [("faq.v2", "FAQ")]


# --- MedQuAD XML -----------------------------------------------------------------------------

MEDQUAD_XML = """\
<?xml version="1.0" encoding="UTF-8"?>
<Document id="{doc_id}" source="{source}" url="https://example.org/{doc_id}">
<Focus>{focus}</Focus>
<FocusAnnotations>
\t<UMLS><CUIs><CUI>C0032463</CUI></CUIs><SemanticGroup>Disorders</SemanticGroup></UMLS>
</FocusAnnotations>
<QAPairs>
\t<QAPair pid="1">
\t\t\t<Question qid="{doc_id}-1" qtype="information">What is (are) {focus} ?</Question>
\t\t\t<Answer>Key Points
                    - {focus} is a disease.    - It can be treated.
                \n                \n                    More about {focus}.</Answer>
\t</QAPair>
\t<QAPair pid="2">
\t\t\t<Question qid="{doc_id}-2" qtype="symptoms">What are the symptoms of {focus} ?</Question>
\t\t\t<Answer>   </Answer>
\t</QAPair>
\t<QAPair pid="3">
\t\t\t<Question qid="{doc_id}-3" qtype="treatment">What are the treatments for {focus} ?</Question>
\t\t\t<Answer>Treatment of {focus} may include <b>phlebotomy</b>.</Answer>
\t</QAPair>
</QAPairs>
</Document>
"""


def write_medquad(path: Path, doc_id: str, focus: str, source: str = "CancerGov") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(MEDQUAD_XML.format(doc_id=doc_id, focus=focus, source=source))
    return path


def test_medquad_xml_file(tmp_path: Path) -> None:
    path = write_medquad(tmp_path / "0000013_2_1.xml", "0000013_2", "Polycythemia Vera")
    report = load_corpus(path, collection="medquad")
    assert (report.records, report.skipped) == (3, 1)
    assert report.problems == [f"{path}: QAPair pid=2: no answer"]
    docs = by_id(report)
    assert list(docs) == ["0000013_2_1-1", "0000013_2_1-3"]
    first = docs["0000013_2_1-1"]
    # MedQuAD indents every line; runs of spaces and blank lines are collapsed. The chunk
    # starts with its context line: the focus and the question type.
    assert first.text == (
        "Polycythemia Vera (information)\n\n"
        "Key Points\n- Polycythemia Vera is a disease. - It can be treated.\n\n"
        "More about Polycythemia Vera."
    )
    assert "What is" not in first.text  # the question stays out of the text
    assert first.metadata == {
        "focus": "Polycythemia Vera",
        "source": "CancerGov",
        "url": "https://example.org/0000013_2",
        "qtype": "information",
        "qid": "0000013_2-1",
        "question": "What is (are) Polycythemia Vera ?",
        "lang": "en",
        "source_format": "medquad_xml",
        "parent_id": "0000013_2_1-1",
        "chunk": 0,
    }
    assert docs["0000013_2_1-3"].text == (
        "Polycythemia Vera (treatment)\n\nTreatment of Polycythemia Vera may include phlebotomy."
    )


def test_medquad_folder_keeps_documents_that_share_a_document_id(tmp_path: Path) -> None:
    """MedQuAD reuses <Document id> across collection folders and within one; no pair is lost."""
    root = tmp_path / "MedQuAD"
    write_medquad(root / "1_CancerGov_QA" / "0000013_2.xml", "0000013_2", "Myeloproliferative")
    write_medquad(root / "1_CancerGov_QA" / "0000013_2_1.xml", "0000013_2", "Polycythemia Vera")
    write_medquad(root / "2_GARD_QA" / "0000004.xml", "0000004", "Mucolipidosis", "GARD")
    write_medquad(root / "3_GHR_QA" / "0000004.xml", "0000004", "Aarskog", "GHR")
    (root / "readme.txt").write_text("MedQuAD readme")

    report = load_corpus(root, collection="medquad")
    assert (report.records, report.skipped) == (12, 4)  # only the four empty answers
    assert all(p.endswith("QAPair pid=2: no answer") for p in report.problems)
    assert [d.id for d in report.documents] == [
        "1_CancerGov_QA/0000013_2-1",
        "1_CancerGov_QA/0000013_2-3",
        "1_CancerGov_QA/0000013_2_1-1",
        "1_CancerGov_QA/0000013_2_1-3",
        "2_GARD_QA/0000004-1",
        "2_GARD_QA/0000004-3",
        "3_GHR_QA/0000004-1",
        "3_GHR_QA/0000004-3",
    ]
    focus = {d.id: d.metadata["focus"] for d in report.documents}
    assert focus["2_GARD_QA/0000004-1"] == "Mucolipidosis"
    assert focus["3_GHR_QA/0000004-1"] == "Aarskog"


@pytest.mark.parametrize(
    ("content", "why"),
    [
        ('<?xml version="1.0"?><Document id="1"><Focus>x</Focus></Document>', "without <QAPair>"),
        ("<Root><QAPair pid='1'><Answer>a</Answer></QAPair></Root>", "root element <Root>"),
        ("<Document id='1'><QAPairs><QAPair pid='1'><Answer>a</Answer>", "not well-formed XML"),
        ("", "not well-formed XML"),
    ],
)
def test_medquad_xml_without_pairs_is_skipped(tmp_path: Path, content: str, why: str) -> None:
    path = tmp_path / "doc.xml"
    path.write_text(content)
    report = load_corpus(path, collection="c")
    assert report.documents == []
    assert (report.records, report.skipped) == (1, 1)
    assert report.problems[0].startswith(f"{path}: ")
    assert why in report.problems[0]


def test_medquad_pair_without_pid_is_numbered_by_position(tmp_path: Path) -> None:
    path = tmp_path / "nopid.xml"
    path.write_text(
        "<Document id='9'><QAPairs>"
        "<QAPair><Answer>First.</Answer></QAPair><QAPair><Answer>Second.</Answer></QAPair>"
        "</QAPairs></Document>"
    )
    report = load_corpus(path, collection="c")
    assert [(d.id, d.text) for d in report.documents] == [
        ("nopid-1", "First."),
        ("nopid-2", "Second."),
    ]
    assert "qtype" not in report.documents[0].metadata


# --- files that are not what their extension says; paths that cannot be read ----------------

BILLION_LAUGHS = (
    '<?xml version="1.0"?>\n<!DOCTYPE lolz [\n <!ENTITY lol "lol">\n'
    ' <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">\n]>\n'
    '<Document id="1"><QAPairs><QAPair pid="1"><Answer>&lol2;</Answer></QAPair></QAPairs>'
    "</Document>\n"
)


@pytest.mark.parametrize(
    ("name", "content", "why"),
    [
        ("png.jsonl", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary content, not JSON Lines"),
        ("zip.yaml", b"PK\x03\x04\x14\x00\x00\x00", "binary content"),
        ("bin.md", b"\x00\x01\x02\x03", "binary content"),
        ("latin1.md", "Caf\u00e9 d\u00e9p\u00f4t".encode("latin-1"), "not UTF-8 text"),
        ("latin1.yaml", "- text: d\u00e9p\u00f4t\n".encode("latin-1"), "not UTF-8 text"),
        ("json.xml", json.dumps({"id": "a", "text": "hi"}).encode(), "not well-formed XML"),
        ("html.xml", b"<html><body><p>hi</p></body></html>", "root element <html>"),
        ("entity.xml", BILLION_LAUGHS.encode(), "<!ENTITY"),
        ("entity16.xml", BILLION_LAUGHS.encode("utf-16"), "<!ENTITY"),
        ("pretty.jsonl", b'{\n  "id": "a",\n  "text": "hi"\n}\n', "not JSON"),
    ],
)
def test_file_that_is_not_what_its_extension_says_is_skipped(
    tmp_path: Path, name: str, content: bytes, why: str
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    report = load_corpus(path, collection="c")
    assert report.documents == []
    assert report.skipped == report.records >= 1
    assert report.problems[0].startswith(f"{path}")
    assert why in report.problems[0]


def test_a_bad_file_in_a_folder_does_not_cost_the_others(tmp_path: Path) -> None:
    root = tmp_path / "corpus"
    root.mkdir()
    write_jsonl(root / "a.jsonl", [record(id="j1", text="json record")])
    (root / "b.jsonl").write_bytes(b"\x00\x00 binary")
    (root / "c.xml").write_text(BILLION_LAUGHS)
    (root / "d.yaml").write_text("- id: y1\n  text: yaml record\n")
    (root / "e.md").write_text("# E\n\nmarkdown record\n")
    write_medquad(root / "f.xml", "0000001", "Focus")
    report = load_corpus(root, collection="mixed")
    formats = {d.id: d.metadata["source_format"] for d in report.documents}
    assert formats == {
        "j1": "jsonl",
        "y1": "yaml",
        "e": "markdown",
        "f-1": "medquad_xml",
        "f-3": "medquad_xml",
    }
    assert all(d.collection == "mixed" for d in report.documents)
    assert report.skipped == 3  # the binary file, the entity file, the empty answer
    assert report.records == 8
    assert [p.split(":")[0] for p in report.problems] == [
        str(root / "b.jsonl"),
        str(root / "c.xml"),
        str(root / "f.xml"),
    ]


def test_unreadable_paths_raise_ingest_error(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("plain text")
    (tmp_path / "empty").mkdir()
    (tmp_path / "only_other").mkdir()
    (tmp_path / "only_other" / "data.csv").write_text("id,text\n1,a\n")
    (tmp_path / "only_other" / ".hidden.jsonl").write_text(record(id="h", text="hidden"))
    cases = {
        tmp_path / "missing.jsonl": "no such file or folder",
        tmp_path / "missing": "no such file or folder",
        tmp_path / "notes.txt": "unsupported extension '.txt'",
        tmp_path / "empty": "folder holds no corpus files",
        tmp_path / "only_other": "folder holds no corpus files",
    }
    for path, why in cases.items():
        with pytest.raises(IngestError, match=why) as caught:
            load_corpus(path, collection="c")
        assert str(caught.value).startswith(str(path))


@pytest.mark.parametrize(
    ("kwargs", "why"),
    [
        ({"collection": ""}, "collection"),
        ({"collection": "c", "max_chars": 0}, "max_chars"),
        ({"collection": "c", "max_chars": 100, "overlap": 100}, "overlap"),
        ({"collection": "c", "overlap": -1}, "overlap"),
    ],
)
def test_bad_arguments_raise_ingest_error(tmp_path: Path, kwargs: dict, why: str) -> None:
    path = write_jsonl(tmp_path / "ok.jsonl", [record(id="a", text="t")])
    with pytest.raises(IngestError, match=why):
        load_corpus(path, **kwargs)


# --- chunking --------------------------------------------------------------------------------


def test_chunk_text_short_and_blank() -> None:
    assert chunk_text("  짧은 글입니다.  \n") == ["짧은 글입니다."]
    assert chunk_text("x" * 1200) == ["x" * 1200]
    assert chunk_text("") == []
    assert chunk_text(" \n\t \n") == []
    with pytest.raises(ValueError):
        chunk_text("text", max_chars=10, overlap=10)


def test_chunk_text_korean_without_space_after_the_period() -> None:
    sentences = [f"임차인은 {n}월에 보증금 반환을 요구했습니다." for n in range(1, 41)]
    text = "".join(sentences)  # no space between sentences: "했습니다.임차인은"
    chunks = chunk_text(text, max_chars=120, overlap=40)
    assert len(chunks) > 5
    for chunk in chunks:
        assert 0 < len(chunk) <= 120
        assert chunk.startswith("임차인은 ")  # every chunk starts at a sentence...
        assert chunk.endswith("요구했습니다.")  # ...and ends at one
    for a, b in zip(chunks, chunks[1:], strict=False):
        assert 0 < shared_prefix(a, b) <= 40
    for sentence in sentences:  # nothing lost
        assert any(sentence in chunk for chunk in chunks)


def test_chunk_text_english_sentences_with_overlap() -> None:
    sentences = [f"Sentence {n} says the tenant asked for the deposit back." for n in range(60)]
    text = " ".join(sentences)
    chunks = chunk_text(text, max_chars=300, overlap=80)
    assert len(chunks) > 5
    assert chunks[0].startswith("Sentence 0 ")
    assert chunks[-1].endswith("Sentence 59 says the tenant asked for the deposit back.")
    for chunk in chunks:
        assert 0 < len(chunk) <= 300
        assert chunk == chunk.strip()
        assert chunk.endswith("back.")
    for a, b in zip(chunks, chunks[1:], strict=False):
        assert 0 < shared_prefix(a, b) <= 80
        assert b.startswith("Sentence ")  # the overlap begins at a sentence
    for sentence in sentences:
        assert any(sentence in chunk for chunk in chunks)


def test_chunk_text_prefers_paragraph_breaks() -> None:
    paragraphs = [f"Paragraph {n}. " + "Words go here. " * 12 for n in range(10)]
    text = "\n\n".join(p.strip() for p in paragraphs)
    chunks = chunk_text(text, max_chars=500, overlap=0)
    assert len(chunks) > 2
    for chunk in chunks:
        assert len(chunk) <= 500
        assert chunk.startswith("Paragraph ")
        end = text.index(chunk) + len(chunk)
        assert end == len(text) or text.startswith("\n\n", end)
    assert "\n\n".join(chunks) == text  # without overlap, paragraphs are just regrouped


def test_chunk_text_without_any_break_cuts_hard_with_full_overlap() -> None:
    text = "".join(chr(0xAC00 + n % 400) for n in range(1000))  # Hangul, no space at all
    chunks = chunk_text(text, max_chars=100, overlap=10)
    assert all(len(c) == 100 for c in chunks[:-1])
    assert chunks[0] + "".join(c[10:] for c in chunks[1:]) == text


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_chunk_text_invariants_on_random_text(seed: int) -> None:
    rng = random.Random(seed)
    pieces = [
        "임대차",
        "계약서를",
        "작성했습니다.",
        "반환됩니다.그리고",
        "deposit",
        "back.",
        "Yes!",
    ]
    pieces += ["\n\n", "\n", "   ", "x" * 90, "가" * 50]
    for _ in range(200):
        words = (rng.choice(pieces) + rng.choice(["", " "]) for _ in range(rng.randint(0, 120)))
        text = "".join(words)
        max_chars = rng.randint(1, 200)
        overlap = rng.randint(0, max_chars - 1)
        chunks = chunk_text(text, max_chars=max_chars, overlap=overlap)
        assert all(c and c == c.strip() and len(c) <= max_chars for c in chunks)
        if not text.strip():
            assert chunks == []
        elif len(text.strip()) <= max_chars:
            assert chunks == [text.strip()]
        else:
            assert chunks[0] == text.strip()[: len(chunks[0])]
            assert text.rstrip().endswith(chunks[-1])
            assert all(c in text for c in chunks)


def test_long_record_is_chunked_with_parent_id_and_distinct_ids(tmp_path: Path) -> None:
    long_ko = " ".join(
        f"{n}번째 문단입니다. 임대인은 보증금을 돌려주지 않았습니다." for n in range(80)
    )
    path = write_jsonl(
        tmp_path / "long.jsonl",
        [
            record(id="long-ko", text=long_ko, court="서울"),
            record(id="short", text="짧다."),
        ],
    )
    report = load_corpus(path, collection="c", max_chars=300, overlap=50)
    chunks = [d for d in report.documents if d.metadata["parent_id"] == "long-ko"]
    assert len(chunks) > 5
    assert [d.id for d in chunks] == [f"long-ko#{n}" for n in range(len(chunks))]
    assert [d.metadata["chunk"] for d in chunks] == list(range(len(chunks)))
    assert all(len(d.text) <= 300 for d in chunks)
    assert all(d.metadata["court"] == "서울" and d.metadata["lang"] == "ko" for d in chunks)
    assert [d.text for d in chunks] == chunk_text(long_ko, max_chars=300, overlap=50)
    short = [d for d in report.documents if d.metadata["parent_id"] == "short"]
    assert [(d.id, d.metadata["chunk"]) for d in short] == [("short", 0)]
    assert len({d.id for d in report.documents}) == len(report.documents)


def test_chunk_ids_never_clash_with_a_record_id(tmp_path: Path) -> None:
    """A corpus that already uses "x#1" (MedQuAD does) keeps it; x's chunks move to "x##n"."""
    long_text = " ".join(f"Sentence {n} of the long record." for n in range(40))
    path = write_jsonl(
        tmp_path / "clash.jsonl",
        [
            record(id="x", text=long_text),
            record(id="x#1", text="Its own record, not a chunk of x."),
            record(id="y", text=long_text + " y"),
            record(id="y#0", text="Another record."),
            record(id="y##1", text="And one more."),
        ],
    )
    report = load_corpus(path, collection="c", max_chars=200, overlap=20)
    docs = by_id(report)
    assert docs["x#1"].text == "Its own record, not a chunk of x."
    assert docs["x#1"].metadata["parent_id"] == "x#1"
    x_ids = [d.id for d in report.documents if d.metadata["parent_id"] == "x"]
    assert len(x_ids) > 2
    assert x_ids == [f"x##{n}" for n in range(len(x_ids))]
    y_ids = [d.id for d in report.documents if d.metadata["parent_id"] == "y"]
    assert y_ids == [f"y###{n}" for n in range(len(y_ids))]
    assert (docs["y#0"].text, docs["y##1"].text) == ("Another record.", "And one more.")


# --- the real MedQuAD answers ----------------------------------------------------------------


def test_real_medquad_answers(tmp_path: Path) -> None:
    source = SHARED_DATA / "medquad" / "answers.jsonl"
    if not source.is_file():
        pytest.skip(f"shared data missing: {source}")
    path = tmp_path / "answers.jsonl"
    with source.open(encoding="utf-8") as src:
        lines = list(islice(src, 300))
    path.write_text("".join(lines), encoding="utf-8")
    originals = [json.loads(line) for line in lines]
    assert len(originals) == 300

    report = load_corpus(path, collection="medquad")
    assert (report.records, report.skipped, report.problems) == (300, 0, [])
    assert len({d.id for d in report.documents}) == len(report.documents)

    by_parent: dict[str, list[Document]] = {}
    for doc in report.documents:
        by_parent.setdefault(str(doc.metadata["parent_id"]), []).append(doc)
    assert list(by_parent) == [o["id"] for o in originals]  # every record, in order, by its id

    chunked = 0
    for original in originals:
        docs = by_parent[original["id"]]
        assert [d.metadata["chunk"] for d in docs] == list(range(len(docs)))
        for doc in docs:
            assert doc.collection == "medquad"
            assert doc.metadata["lang"] == "en"
            assert doc.metadata["source_collection"] == original["collection"]
            assert doc.metadata["focus"] == original["focus"]
            assert doc.metadata["qtype"] == original["qtype"]
            assert len(doc.text) <= 1200
        if len(docs) == 1:
            assert docs[0].id == original["id"]
        else:
            chunked += 1
            assert all(d.id.startswith(original["id"] + "#") for d in docs)
    assert chunked > 10  # MedQuAD answers are often longer than one chunk
    assert any(len(o["answer"]) > 1200 for o in originals)
    plain = next(o for o in originals if len(by_parent[o["id"]]) > 1 and "#" not in o["id"])
    assert [d.id for d in by_parent[plain["id"]]] == [
        f"{plain['id']}#{n}" for n in range(len(by_parent[plain["id"]]))
    ]


@pytest.mark.parametrize(
    ("metadata", "context"),
    [
        ({"title": "  전세  보증금 안내 "}, "전세 보증금 안내"),
        ({"title": "Deposit", "focus": "Leases", "qtype": "x"}, "Deposit"),  # the title wins
        ({"focus": "Gout", "qtype": "symptoms"}, "Gout (symptoms)"),
        ({"focus": "Gout"}, "Gout"),
        ({"qtype": "symptoms"}, ""),
        ({"question": "What is gout?"}, ""),  # MedQuAD questions are the benchmark's queries
        ({}, ""),
    ],
)
def test_chunk_context(metadata: dict, context: str) -> None:
    assert chunk_context(metadata) == context


def test_every_chunk_of_a_long_record_says_what_it_is_about(tmp_path: Path) -> None:
    sentences = " ".join(f"Sentence {n} says something about the lease." for n in range(120))
    path = tmp_path / "c.jsonl"
    path.write_text(
        json.dumps({"id": "lease", "title": "Deposit guide", "text": sentences}) + "\n",
        encoding="utf-8",
    )
    docs = load_corpus(path, collection="guides", max_chars=400, overlap=60).documents
    assert len(docs) > 5
    assert docs[0].text.startswith("Deposit guide\n\n")  # the heading itself, not twice
    assert docs[0].text.count("Deposit guide") == 1
    for doc in docs:
        assert doc.text.startswith("Deposit guide\n\n"), doc.id
        assert len(doc.text) <= 400, doc.id
