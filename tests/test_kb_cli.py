"""`intake-bot kb build | search | ingest` end to end, as real processes on temporary data dirs.

A full index build embeds every knowledge document, so builds are few: one module-wide data
directory is built once and shared by the read-only tests (and the corpus ingested into it), and
one more directory starts empty (the index is missing) and is then corrupted and rebuilt.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from knowledge.documents import K_COLLECTIONS
from knowledge.kb import PACKAGED_COLLECTIONS
from tests.support import BUILD_WAIT

pytestmark = pytest.mark.slow

INTAKE_BOT = Path(sys.executable).parent / "intake-bot"
BUILD_LINE = re.compile(
    r"^(?P<name>[\w.-]+): (?P<count>\d+) documents"
    r"(?: \((?P<added>\d+) added, (?P<updated>\d+) updated, (?P<removed>\d+) removed, "
    r"(?P<unchanged>\d+) unchanged\))?$"
)
INGEST_LINE = re.compile(
    r"^(?P<name>[\w.-]+): (?P<records>\d+) records read, (?P<skipped>\d+) skipped, "
    r"(?P<chunks>\d+) chunks \((?P<added>\d+) added, (?P<updated>\d+) updated, "
    r"(?P<unchanged>\d+) unchanged\)$"
)
LONG_TEXT = " ".join(
    f"Sentence number {i} is about tenancy deposits and landlords who return the money late."
    for i in range(60)
)  # about 5,000 characters: several chunks of at most 1,200


def kb(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run `intake-bot kb ...` in its own working directory (so no .env is read)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INTAKE_", "TELEGRAM_"))}
    env["INTAKE_DATA_DIR"] = str(data_dir)
    cwd = data_dir.parent / "cwd"
    cwd.mkdir(parents=True, exist_ok=True)
    return subprocess.run(
        [str(INTAKE_BOT), "kb", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=BUILD_WAIT,
    )


def search_json(data_dir: Path, *args: str) -> list[dict]:
    proc = kb(data_dir, "search", *args, "--json")
    assert proc.returncode == 0, proc.stderr
    hits = json.loads(proc.stdout)
    assert isinstance(hits, list)
    return hits


def parse_lines(pattern: re.Pattern[str], stdout: str) -> dict[str, dict[str, str | None]]:
    rows: dict[str, dict[str, str | None]] = {}
    for line in stdout.splitlines():
        m = pattern.match(line)
        assert m, f"unexpected output line {line!r}"
        rows[m["name"]] = m.groupdict()
    return rows


def no_traceback(proc: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in proc.stderr, proc.stderr


def write_corpus(path: Path) -> Path:
    """A JSONL corpus: two good short records, one malformed line, one long record."""
    lines = [
        json.dumps(
            {
                "id": "rec-short",
                "title": "Deposit",
                "text": "The landlord kept the jeonse deposit after the lease ended.",
                "source": "unit-test",
            }
        ),
        "{not json",
        json.dumps({"id": "rec-long", "text": LONG_TEXT, "source": "unit-test"}),
        json.dumps(
            {"id": "rec-ko", "text": "전세 계약이 끝났는데 집주인이 보증금을 돌려주지 않아요."},
            ensure_ascii=False,
        ),
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


# --- one built index shared by the read-only tests ---------------------------------------------


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess]:
    data_dir = tmp_path_factory.mktemp("kb_built") / "data"
    proc = kb(data_dir, "build")
    assert proc.returncode == 0, proc.stderr
    return data_dir, proc


@pytest.fixture(scope="module")
def data_dir(built: tuple[Path, subprocess.CompletedProcess]) -> Path:
    return built[0]


@pytest.fixture(scope="module")
def ingested(data_dir: Path) -> subprocess.CompletedProcess[str]:
    """The JSONL corpus ingested into collection `corpus` of the shared index."""
    corpus = write_corpus(data_dir.parent / "corpus.jsonl")
    return kb(data_dir, "ingest", str(corpus), "--collection", "corpus")


def test_build_prints_one_line_per_collection_with_counts(
    built: tuple[Path, subprocess.CompletedProcess],
) -> None:
    data_dir, proc = built
    rows = parse_lines(BUILD_LINE, proc.stdout)
    assert list(rows) == sorted(PACKAGED_COLLECTIONS)  # the medical corpus among them
    for name, row in rows.items():
        count = int(row["count"] or 0)
        assert count > 0, name
        # A first build embeds everything.
        assert (row["added"], row["updated"], row["removed"], row["unchanged"]) == (
            str(count),
            "0",
            "0",
            "0",
        ), name
    assert (data_dir / "index" / "chroma").is_dir()
    for name in PACKAGED_COLLECTIONS:  # each with its progress, the medical corpus too
        assert f"embedding {name}" in proc.stderr, name
    assert "DEBUG" not in proc.stderr  # CLI logs at WARNING: no library debug chatter
    no_traceback(proc)


def test_search_json_hits_have_ids_scores_ranks_and_metadata(data_dir: Path) -> None:
    hits = search_json(data_dir, "전세 보증금 못 돌려받음", "--collection", "k1_case_types")
    assert hits
    for hit in hits:
        assert {"id", "collection", "score", "ranks", "scores", "parent_id", "metadata"} <= set(hit)
        assert hit["collection"] == "k1_case_types"
        assert set(hit["ranks"]) == {"vector", "bm25"}
        assert set(hit["scores"]) == {"vector", "bm25"}
        assert any(isinstance(r, int) and r >= 1 for r in hit["ranks"].values())
        assert hit["score"] > 0
        assert hit["metadata"]["kind"] == "case_type"
        assert "content_hash" not in hit["metadata"]  # internal bookkeeping stays internal
        assert hit["parent_id"] == hit["id"]  # knowledge documents are not chunked
    assert [h["score"] for h in hits] == sorted((h["score"] for h in hits), reverse=True)
    # The lease-deposit case type is what this describes.
    top = [h["id"] for h in hits[:3]]
    assert "k1:LEASE_DEPOSIT" in top, top
    lease = next(h for h in hits if h["id"] == "k1:LEASE_DEPOSIT")
    assert lease["metadata"]["sub_type"] == "LEASE_DEPOSIT"
    assert lease["ranks"]["bm25"] is not None and lease["ranks"]["vector"] is not None


def test_search_k_limits_the_number_of_hits(data_dir: Path) -> None:
    assert len(search_json(data_dir, "보증금", "--k", "1")) == 1
    five = search_json(data_dir, "deposit landlord lease", "--k", "5")
    assert len(five) == 5
    assert [h["score"] for h in five] == sorted((h["score"] for h in five), reverse=True)
    # Without --k the number of hits follows the query's complexity (3 for a short one).
    assert len(search_json(data_dir, "보증금")) == 3


def test_search_human_output_shows_fused_and_per_method_scores(data_dir: Path) -> None:
    proc = kb(data_dir, "search", "전세 보증금", "--k", "3", "--collection", "k1_case_types")
    assert proc.returncode == 0, proc.stderr
    ranked = [line for line in proc.stdout.splitlines() if re.match(r"^\s*\d+\. ", line)]
    assert len(ranked) == 3, proc.stdout
    for line in ranked:
        assert re.search(r"\[k1_case_types\] fused \d\.\d{4}", line), line
        assert re.search(r"vector (#\d+ \(-?\d+\.\d{3}\)|-)", line), line
        assert re.search(r"bm25 (#\d+ \(-?\d+\.\d{3}\)|-)", line), line
    assert "k1:LEASE_DEPOSIT" in proc.stdout


@pytest.mark.parametrize("query", ["", "   ", "?!… ・ — !!"])
def test_search_without_words_exits_2_with_a_message(data_dir: Path, query: str) -> None:
    proc = kb(data_dir, "search", query)
    assert proc.returncode == 2
    assert "Nothing to search for" in proc.stderr
    assert proc.stdout == ""
    no_traceback(proc)


def test_search_unknown_collection_lists_the_available_ones(data_dir: Path) -> None:
    proc = kb(data_dir, "search", "보증금", "--collection", "no_such_collection")
    assert proc.returncode == 2
    assert "no_such_collection" in proc.stderr
    for name in K_COLLECTIONS:
        assert name in proc.stderr
    no_traceback(proc)


def test_search_with_a_10000_character_query_succeeds(data_dir: Path) -> None:
    query = ("전세 보증금 돌려받지 못함 " * 800)[:10_000]
    assert len(query) == 10_000
    hits = search_json(data_dir, query, "--k", "3", "--collection", "k1_case_types")
    assert 1 <= len(hits) <= 3
    assert hits[0]["id"] == "k1:LEASE_DEPOSIT"


# --- ingesting a corpus into the shared index --------------------------------------------------


def test_ingest_jsonl_counts_records_skipped_and_chunks(
    ingested: subprocess.CompletedProcess[str],
) -> None:
    assert ingested.returncode == 0, ingested.stderr
    row = parse_lines(INGEST_LINE, ingested.stdout)["corpus"]
    assert row["records"] == "4"  # the malformed line counts as a record read...
    assert row["skipped"] == "1"  # ...and as skipped
    chunks = int(row["chunks"] or 0)
    assert chunks >= 2 + 3  # two short records whole, the long one in several chunks
    assert row["added"] == str(chunks) and row["updated"] == "0" and row["unchanged"] == "0"
    assert "skipped" in ingested.stderr and "corpus.jsonl:2" in ingested.stderr
    no_traceback(ingested)


def test_ingested_hits_report_the_record_id_as_parent(
    data_dir: Path, ingested: subprocess.CompletedProcess[str]
) -> None:
    assert ingested.returncode == 0, ingested.stderr
    hits = search_json(
        data_dir, "landlords return the money late", "--collection", "corpus", "--k", "10"
    )
    assert hits and all(h["collection"] == "corpus" for h in hits)
    assert {h["parent_id"] for h in hits} <= {"rec-short", "rec-long", "rec-ko"}
    chunked = [h for h in hits if h["parent_id"] == "rec-long"]
    assert len(chunked) >= 2
    for hit in chunked:
        assert hit["id"] != "rec-long" and hit["id"].startswith("rec-long#")
        assert hit["metadata"]["parent_id"] == "rec-long"
        assert hit["metadata"]["source"] == "unit-test"
        assert isinstance(hit["metadata"]["chunk"], int)
    whole = search_json(data_dir, "jeonse deposit kept", "--collection", "corpus", "--k", "1")
    assert whole[0]["id"] == whole[0]["parent_id"] == "rec-short"
    assert whole[0]["metadata"]["title"] == "Deposit"


def test_ingest_again_embeds_nothing(
    data_dir: Path, ingested: subprocess.CompletedProcess[str]
) -> None:
    assert ingested.returncode == 0, ingested.stderr
    first = parse_lines(INGEST_LINE, ingested.stdout)["corpus"]
    again = kb(data_dir, "ingest", str(data_dir.parent / "corpus.jsonl"), "--collection", "corpus")
    assert again.returncode == 0, again.stderr
    row = parse_lines(INGEST_LINE, again.stdout)["corpus"]
    assert (row["added"], row["updated"], row["unchanged"]) == ("0", "0", first["chunks"])


def test_second_build_embeds_nothing_and_keeps_the_corpus(
    built: tuple[Path, subprocess.CompletedProcess], ingested: subprocess.CompletedProcess[str]
) -> None:
    data_dir, first = built
    assert ingested.returncode == 0, ingested.stderr
    chunks = parse_lines(INGEST_LINE, ingested.stdout)["corpus"]["chunks"]
    before = parse_lines(BUILD_LINE, first.stdout)
    proc = kb(data_dir, "build")
    assert proc.returncode == 0, proc.stderr
    rows = parse_lines(BUILD_LINE, proc.stdout)
    assert {*PACKAGED_COLLECTIONS, "corpus"} <= set(rows)
    for name in PACKAGED_COLLECTIONS:
        row = rows[name]
        assert row["count"] == before[name]["count"]
        assert (row["added"], row["updated"], row["removed"]) == ("0", "0", "0"), name
        assert row["unchanged"] == row["count"], name
    assert rows["corpus"]["count"] == chunks  # a build leaves outside corpora alone
    assert "embedding" not in proc.stderr  # no progress bar: nothing was embedded


def test_ingest_folder_of_markdown_yaml_and_medquad_xml(data_dir: Path, tmp_path: Path) -> None:
    folder = tmp_path / "mixed"
    (folder / "guides").mkdir(parents=True)
    (folder / "guides" / "deposit.md").write_text(
        "# Getting a deposit back\n\nSend the landlord a certified letter demanding the "
        "deposit, then apply for a lease registration order.\n",
        encoding="utf-8",
    )
    (folder / "faq.yaml").write_text(
        "documents:\n"
        "  - id: faq-1\n"
        "    question: What is a payment order?\n"
        "    answer: A fast court procedure to collect a money claim without a hearing.\n"
        "  - just a string, not a record\n",
        encoding="utf-8",
    )
    (folder / "qa.xml").write_text(
        '<Document id="0001" source="test"><Focus>Tinnitus</Focus><QAPairs>'
        '<QAPair pid="1"><Question qid="0001-1" qtype="information">What is tinnitus?'
        "</Question><Answer>Tinnitus is a ringing or buzzing noise in the ears.</Answer>"
        "</QAPair></QAPairs></Document>",
        encoding="utf-8",
    )
    proc = kb(data_dir, "ingest", str(folder), "--collection", "mixed_corpus")
    assert proc.returncode == 0, proc.stderr
    row = parse_lines(INGEST_LINE, proc.stdout)["mixed_corpus"]
    assert (row["records"], row["skipped"], row["chunks"]) == ("4", "1", "3")
    hits = search_json(data_dir, "ringing in the ears", "--collection", "mixed_corpus", "--k", "1")
    assert hits[0]["id"] == "qa-1" and hits[0]["metadata"]["focus"] == "Tinnitus"
    hits = search_json(
        data_dir, "certified letter to the landlord", "--collection", "mixed_corpus", "--k", "1"
    )
    assert hits[0]["id"] == "guides/deposit"
    assert hits[0]["metadata"]["title"] == "Getting a deposit back"


def test_ingest_binary_file_named_jsonl_is_refused_without_creating_a_collection(
    data_dir: Path, tmp_path: Path
) -> None:
    fake = tmp_path / "data.jsonl"
    fake.write_bytes(bytes(range(256)) * 40)
    proc = kb(data_dir, "ingest", str(fake), "--collection", "binary_corpus")
    no_traceback(proc)
    assert proc.returncode == 2
    assert "binary" in proc.stderr
    assert "1 skipped" in proc.stderr
    # Nothing was indexed, so there is no empty collection left behind.
    look = kb(data_dir, "search", "anything", "--collection", "binary_corpus")
    assert look.returncode == 2 and "no collection 'binary_corpus'" in look.stderr


def test_ingest_missing_path_exits_2(data_dir: Path, tmp_path: Path) -> None:
    proc = kb(data_dir, "ingest", str(tmp_path / "nope.jsonl"), "--collection", "corpus")
    assert proc.returncode == 2
    assert "no such file or folder" in proc.stderr
    assert proc.stdout == ""
    no_traceback(proc)


def test_ingest_unsupported_extension_exits_2(data_dir: Path, tmp_path: Path) -> None:
    other = tmp_path / "corpus.csv"
    other.write_text("id,text\n1,hello\n", encoding="utf-8")
    proc = kb(data_dir, "ingest", str(other), "--collection", "corpus")
    assert proc.returncode == 2
    assert "unsupported extension" in proc.stderr
    no_traceback(proc)


@pytest.mark.parametrize("name", ["x", "bad name!"])
def test_ingest_invalid_collection_name_exits_2(data_dir: Path, tmp_path: Path, name: str) -> None:
    proc = kb(data_dir, "ingest", str(write_corpus(tmp_path / "c.jsonl")), "--collection", name)
    no_traceback(proc)
    assert proc.returncode == 2
    assert "collection name" in proc.stderr


def test_ingest_into_a_knowledge_collection_is_refused(data_dir: Path, tmp_path: Path) -> None:
    """K collections are rebuilt from the YAML by `kb build`, which would drop corpus records."""
    proc = kb(
        data_dir,
        "ingest",
        str(write_corpus(tmp_path / "c.jsonl")),
        "--collection",
        "k1_case_types",
    )
    no_traceback(proc)
    assert proc.returncode == 2
    assert "k1_case_types" in proc.stderr
    hits = search_json(data_dir, "landlords return the money late", "--collection", "k1_case_types")
    assert all(h["id"].startswith("k1:") for h in hits)


# --- a missing index, then a corrupt one ---------------------------------------------------------


@pytest.fixture(scope="module")
def corrupted(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """Ingest into a data dir with no index yet, corrupt Chroma's SQLite, then search."""
    data_dir = tmp_path_factory.mktemp("kb_corrupt") / "data"
    corpus = write_corpus(data_dir.parent / "corpus.jsonl")
    first = kb(data_dir, "ingest", str(corpus), "--collection", "corpus")
    before = kb(data_dir, "search", "landlord deposit", "--collection", "corpus", "--json")
    gone = write_corpus(data_dir.parent / "gone.jsonl")
    assert kb(data_dir, "ingest", str(gone), "--collection", "gone").returncode == 0
    gone.unlink()  # its source disappears before the index breaks: it cannot be restored
    sqlite = data_dir / "index" / "chroma" / "chroma.sqlite3"
    assert sqlite.is_file()
    sqlite.write_bytes(b"this is not a database\0" * 4096)
    after = kb(data_dir, "search", "전세 보증금 못 돌려받음", "--json")
    corpus_after = kb(data_dir, "search", "landlord deposit", "--collection", "corpus", "--json")
    return {
        "data_dir": data_dir,
        "first": first,
        "before": before,
        "after": after,
        "corpus_after": corpus_after,
    }


def test_ingest_into_a_missing_index_builds_it_first(corrupted: dict[str, object]) -> None:
    first = corrupted["first"]
    before = corrupted["before"]
    assert isinstance(first, subprocess.CompletedProcess)
    assert isinstance(before, subprocess.CompletedProcess)
    assert first.returncode == 0, first.stderr
    assert "corpus: 4 records read, 1 skipped" in first.stdout
    for name in K_COLLECTIONS:  # the knowledge was indexed on the way
        assert f"embedding {name}" in first.stderr
    assert before.returncode == 0, before.stderr
    assert {h["parent_id"] for h in json.loads(before.stdout)} <= {
        "rec-short",
        "rec-long",
        "rec-ko",
    }


def test_corrupt_index_is_rebuilt_with_a_message(corrupted: dict[str, object]) -> None:
    after = corrupted["after"]
    assert isinstance(after, subprocess.CompletedProcess)
    assert after.returncode == 0, after.stderr
    assert "could not be read" in after.stderr and "rebuilding" in after.stderr
    no_traceback(after)
    hits = json.loads(after.stdout)
    assert hits
    assert "LEASE_DEPOSIT" in {h["metadata"].get("sub_type") for h in hits}
    data_dir = corrupted["data_dir"]
    assert isinstance(data_dir, Path)
    assert (data_dir / "index" / "chroma" / "chroma.sqlite3").read_bytes()[:16] == (
        b"SQLite format 3\0"
    )


def test_rebuild_after_corruption_keeps_the_ingested_corpus(corrupted: dict[str, object]) -> None:
    corpus_after = corrupted["corpus_after"]
    assert isinstance(corpus_after, subprocess.CompletedProcess)
    assert corpus_after.returncode == 0, corpus_after.stderr
    assert {h["parent_id"] for h in json.loads(corpus_after.stdout)} <= {
        "rec-short",
        "rec-long",
        "rec-ko",
    }
    after = corrupted["after"]
    assert isinstance(after, subprocess.CompletedProcess)
    assert "Restored collection 'corpus' from" in after.stderr
    assert "Collection 'gone' could not be restored" in after.stderr
    assert "ingest it again" in after.stderr


@pytest.mark.parametrize("k", ["0", "-3"])
def test_search_with_k_below_one_is_a_usage_error(data_dir: Path, k: str) -> None:
    proc = kb(data_dir, "search", "보증금", "--k", k)
    assert proc.returncode == 2
    assert "--k must be 1 or more" in proc.stderr
