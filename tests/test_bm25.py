"""The keyword side of the knowledge index: the Korean-aware tokenizer and the BM25 index."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from knowledge.bm25 import (
    ENGLISH_STOPWORDS,
    MAX_TOKENIZE_CHARS,
    BM25Index,
    BM25IndexError,
    tokenize,
    tokenize_many,
)

# --- tokenize ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        # Korean numerals stay: the number, the numeral noun and the unit are separate terms.
        ("300만원", ["300", "만", "원"]),
        ("1억 5천만원", ["1", "억", "5", "천만", "원"]),
        # Thousands separators are dropped, so the amount stays one number.
        ("3,000,000원", ["3000000", "원"]),
        ("보증금 3,000,000원", ["보증금", "3000000", "원"]),
        # Particles (이, 을), the adverb 안 and the ending 어요 are dropped; stems are kept.
        ("집주인이 전세 보증금을 안 돌려줘요", ["집주인", "전세", "보증금", "돌려주"]),
        ("보증금 300만원을 돌려받지 못했어요", ["보증금", "300", "만", "원", "돌려받", "하"]),
        ("2024년 3월 5일", ["2024", "년", "3", "월", "5", "일"]),
        # English: lower-cased, stopwords and single letters dropped, numbers kept.
        ("The Landlord didn't return my DEPOSIT", ["landlord", "return", "deposit"]),
        ("Paid 3,000,000 in 2024", ["paid", "3000000", "2024"]),
        ("x y z", []),
        ("snake_case-words", ["snake", "case", "words"]),
        # Mixed Korean and English: Latin words inside Korean text go through the same rules.
        ("전세 deposit 300만원 landlord", ["전세", "deposit", "300", "만", "원", "landlord"]),
        ("The 전세 보증금 is overdue", ["전세", "보증금", "overdue"]),
        # Nothing to search for.
        ("", []),
        ("   \n\t ", []),
        ("?!...,;:()[]", []),
        ("。？！…", []),
    ],
)
def test_tokenize(text: str, tokens: list[str]) -> None:
    assert tokenize(text) == tokens


def test_english_stopwords_never_come_out() -> None:
    text = "What is the deposit and why was it not returned to me by the landlord?"
    tokens = tokenize(text)
    assert tokens == ["deposit", "returned", "landlord"]
    assert not set(tokens) & ENGLISH_STOPWORDS


def test_tokenize_many_equals_tokenize_per_text() -> None:
    texts = [
        "전세 계약이 끝났는데 집주인이 보증금을 안 돌려줘요. 이사는 다음 달이에요!\n연락도 안 돼요",
        "",
        "The landlord kept my deposit.",
        "300만원",
        "!!!",
        "3,000,000원 and 전세 deposit",
        "   ",
        "남편과 이혼하고 싶어요",
    ]
    assert tokenize_many(texts) == [tokenize(t) for t in texts]
    assert tokenize_many([]) == []


def test_a_very_long_text_is_tokenized_up_to_the_limit() -> None:
    sentence = "보증금 300만원을 돌려받지 못했어요. "  # 6 terms
    tokens = tokenize(sentence * 2_000)  # about 46,000 characters
    assert tokens[:6] == ["보증금", "300", "만", "원", "돌려받", "하"]
    # Only the first MAX_TOKENIZE_CHARS characters are analysed.
    whole_sentences = MAX_TOKENIZE_CHARS // len(sentence)
    assert whole_sentences * 6 <= len(tokens) <= (whole_sentences + 1) * 6


# --- BM25Index ---------------------------------------------------------------------------------

IDS = ["lease", "assault", "lease_en", "wage", "loan"]
TEXTS = [
    "전세 계약이 끝났는데 집주인이 보증금 300만원을 돌려주지 않아요",
    "길에서 모르는 사람에게 폭행을 당해서 다쳤어요",
    "The landlord has not returned my deposit after the lease ended",
    "회사에서 월급을 석 달째 못 받았어요",
    "친구에게 빌려준 돈 500만원을 못 받았어요",
]
METAS = [
    {"lang": "ko", "sub_type": "LEASE_DEPOSIT"},
    {"lang": "ko", "sub_type": "ASSAULT"},
    {"lang": "en", "sub_type": "LEASE_DEPOSIT"},
    {"lang": "ko", "sub_type": "WAGE_ARREARS"},
    {"lang": "ko", "sub_type": "LOAN"},
]
HASHES = ["h-lease", "h-assault", "h-lease-en", "h-wage", "h-loan"]


@pytest.fixture(scope="module")
def index() -> BM25Index:
    return BM25Index(IDS, TEXTS, metadatas=METAS, hashes=HASHES)


def ids(results: list[tuple[str, float]]) -> list[str]:
    return [doc_id for doc_id, _ in results]


def test_search_ranks_by_shared_terms(index: BM25Index) -> None:
    results = index.search("보증금 300만원", 10)
    # "lease" shares 보증금, 300, 만 and 원; "loan" only 만 and 원; no other document any term.
    assert ids(results) == ["lease", "loan"]
    scores = [score for _, score in results]
    assert scores[0] > scores[1] > 0


def test_search_respects_k_and_scores_descend(index: BM25Index) -> None:
    everything = index.search("못 받았어요 월급 보증금 deposit", 10)
    assert len(everything) >= 3
    assert [s for _, s in everything] == sorted((s for _, s in everything), reverse=True)
    assert index.search("못 받았어요 월급 보증금 deposit", 2) == everything[:2]
    assert index.search("보증금", 0) == []


def test_english_query_finds_english_document(index: BM25Index) -> None:
    assert ids(index.search("Deposit returned by the LANDLORD?", 5)) == ["lease_en"]


def test_query_without_known_terms_finds_nothing(index: BM25Index) -> None:
    assert index.search("", 5) == []
    assert index.search("?!", 5) == []
    assert index.search("교통사고 보험금", 5) == []  # terms not in the vocabulary


def test_keep_filters_by_metadata(index: BM25Index) -> None:
    query = "보증금 deposit 500만원"
    assert set(ids(index.search(query, 10))) == {"lease", "lease_en", "loan"}
    english = index.search(query, 10, keep=lambda m: m["lang"] == "en")
    assert ids(english) == ["lease_en"]
    not_lease = index.search(query, 10, keep=lambda m: m["sub_type"] != "LEASE_DEPOSIT")
    assert ids(not_lease) == ["loan"]
    assert index.search(query, 10, keep=lambda m: False) == []
    # The filter is applied before cutting to k: the best kept document still comes back.
    assert ids(index.search(query, 1, keep=lambda m: m["sub_type"] == "LOAN")) == ["loan"]


def test_search_tokens_equals_search(index: BM25Index) -> None:
    query = "집주인이 보증금을 안 돌려줘요"
    assert index.search_tokens(tokenize(query), 5) == index.search(query, 5)


def test_empty_vocabulary_corpus(tmp_path: Path) -> None:
    index = BM25Index(["a", "b"], ["!!!", ""], hashes=["1", "2"])
    assert len(index) == 2
    assert index.search("보증금", 5) == []
    index.save(tmp_path / "bm25")
    loaded = BM25Index.load(tmp_path / "bm25")
    assert loaded.ids == ["a", "b"]
    assert loaded.hashes == ["1", "2"]
    assert loaded.metadatas == [{}, {}]
    assert loaded.search("보증금", 5) == []


def test_empty_corpus(tmp_path: Path) -> None:
    index = BM25Index([], [])
    assert len(index) == 0
    assert index.search("보증금", 5) == []
    index.save(tmp_path / "bm25")
    assert len(BM25Index.load(tmp_path / "bm25")) == 0


def test_ids_and_texts_must_match() -> None:
    with pytest.raises(ValueError, match="differ in length"):
        BM25Index(["a", "b"], ["one text"])


def test_save_and_load_round_trip(index: BM25Index, tmp_path: Path) -> None:
    index.save(tmp_path / "bm25")
    loaded = BM25Index.load(tmp_path / "bm25")
    assert loaded.ids == IDS
    assert loaded.hashes == HASHES
    assert loaded.metadatas == METAS
    for query in ("보증금 300만원", "landlord deposit", "폭행 다쳤어요", "못 받았어요"):
        got, want = loaded.search(query, 5), index.search(query, 5)
        assert ids(got) == ids(want)
        assert [s for _, s in got] == pytest.approx([s for _, s in want])
    # The document list is readable JSON with Korean kept as is.
    saved = json.loads((tmp_path / "bm25" / BM25Index.DOCS_FILE).read_text("utf-8"))
    assert saved["ids"] == IDS
    assert "LEASE_DEPOSIT" in (tmp_path / "bm25" / BM25Index.DOCS_FILE).read_text("utf-8")


def test_load_of_a_missing_folder_raises(tmp_path: Path) -> None:
    with pytest.raises(BM25IndexError, match="unreadable"):
        BM25Index.load(tmp_path / "nowhere")


def _saved(index: BM25Index, tmp_path: Path) -> Path:
    directory = tmp_path / "bm25"
    shutil.rmtree(directory, ignore_errors=True)
    index.save(directory)
    return directory


@pytest.mark.parametrize(
    "file",
    [
        "docs.json",
        "params.index.json",
        "vocab.index.json",
        "data.csc.index.npy",
        "indices.csc.index.npy",
        "indptr.csc.index.npy",
    ],
)
@pytest.mark.parametrize("damage", ["delete", "garbage", "truncate", "empty"])
def test_load_of_a_damaged_file_raises(
    index: BM25Index, tmp_path: Path, file: str, damage: str
) -> None:
    directory = _saved(index, tmp_path)
    path = directory / file
    assert path.exists(), f"bm25s no longer writes {file}"
    if damage == "delete":
        path.unlink()
    elif damage == "garbage":
        path.write_bytes(b"\x00\xffnot what was saved {[")
    elif damage == "truncate":
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    else:
        path.write_bytes(b"")
    with pytest.raises(BM25IndexError):
        BM25Index.load(directory)


@pytest.mark.parametrize(
    "edit",
    [
        lambda docs: docs.update(ids=docs["ids"][:-1], hashes=docs["hashes"][:-1]),
        lambda docs: docs.update(hashes=docs["hashes"][:-1]),
        lambda docs: docs.pop("metadatas"),
        lambda docs: docs.update(ids=None),
    ],
    ids=["fewer-ids-than-matrix", "hashes-short", "no-metadatas", "ids-null"],
)
def test_load_of_an_inconsistent_document_list_raises(
    index: BM25Index, tmp_path: Path, edit
) -> None:
    directory = _saved(index, tmp_path)
    docs_file = directory / BM25Index.DOCS_FILE
    docs = json.loads(docs_file.read_text("utf-8"))
    edit(docs)
    docs_file.write_text(json.dumps(docs), "utf-8")
    with pytest.raises(BM25IndexError):
        BM25Index.load(directory)
