"""The hybrid knowledge index: sync by content hash, RRF, filters, active retrieval, bad input.

Real Chroma on temp directories and the real offline embedding (USE). The only double is
`CountingEmbedding`, the USE embedding that also records what it was asked to embed, so a test
can prove that an unchanged document is not embedded again.
"""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import chromadb
import numpy as np
import pytest
from chromadb.api.types import Documents, EmbeddingFunction, Embeddings
from chromadb.utils.embedding_functions import register_embedding_function

from knowledge.bm25 import BM25Index
from knowledge.documents import Document, knowledge_documents
from knowledge.embedding import USEEmbedding
from knowledge.embedding_openai import ENV_MODEL, ENV_URL
from knowledge.index import (
    K_BY_COMPLEXITY,
    RRF_K,
    Hit,
    KnowledgeIndex,
    KnowledgeIndexError,
    SyncStats,
    _forget_chroma_system,
    chroma_settings,
    query_complexity,
)
from knowledge.kb import PACKAGED_COLLECTIONS, KnowledgeBase, build_index, packaged_documents
from knowledge.loader import Knowledge
from knowledge.models import Text
from tests.fakes.openai_api import FakeOpenAI


class CountingEmbedding(USEEmbedding):
    """The USE embedding, recording every text it embeds (documents and queries)."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    def __call__(self, input: Documents) -> Embeddings:
        self.texts.extend(input)
        return super().__call__(input)


@register_embedding_function
class TinyEmbedding(EmbeddingFunction[Documents]):
    """A registered 8-dimensional embedding: letter counts, for the embedding-change checks."""

    def __init__(self) -> None:
        pass

    def __call__(self, input: Documents) -> Embeddings:
        vectors = []
        for text in input:
            v = np.zeros(8, dtype=np.float32)
            for ch in text:
                v[ord(ch) % 8] += 1.0
            vectors.append(v / (np.linalg.norm(v) or 1.0))
        return vectors

    @staticmethod
    def name() -> str:
        return "intake_test_tiny"

    def get_config(self) -> dict[str, Any]:
        return {}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> TinyEmbedding:
        return TinyEmbedding()


CASES = "cases"
NOTES = "notes"
DOCS = [
    Document(
        "lease:ko",
        "전세 계약이 끝났는데 집주인이 보증금 300만원을 돌려주지 않아요",
        CASES,
        {"case_type": "CIVIL", "sub_type": "LEASE_DEPOSIT", "lang": "ko"},
    ),
    Document(
        "lease:en",
        "The landlord has not returned my jeonse deposit after the lease ended",
        CASES,
        {"case_type": "CIVIL", "sub_type": "LEASE_DEPOSIT", "lang": "en"},
    ),
    Document(
        "assault:ko",
        "길에서 모르는 사람에게 폭행을 당해서 다쳤어요",
        CASES,
        {"case_type": "CRIMINAL", "sub_type": "ASSAULT", "lang": "ko"},
    ),
    Document(
        "divorce:ko",
        "남편과 이혼하고 아이 양육권을 가져오고 싶어요",
        CASES,
        {"case_type": "FAMILY", "sub_type": "DIVORCE", "lang": "ko"},
    ),
    Document(
        "wage:mixed",
        "회사에서 월급을 석 달째 못 받았어요 / My employer has not paid my wages for months",
        CASES,
        {"case_type": "CIVIL", "sub_type": "WAGE_ARREARS", "lang": "mixed"},
    ),
    Document(
        "fine:en",
        "I received a parking fine from the city and want to appeal it",
        CASES,
        {"case_type": "ADMINISTRATIVE", "sub_type": "FINE", "lang": "en"},
    ),
]
NOTE_DOCS = [
    Document("note:deposit", "보증금 반환은 내용증명부터 보내세요", NOTES, {"lang": "ko"}),
    Document("note:evidence", "Keep every receipt and message as evidence", NOTES, {"lang": "en"}),
]


def replaced(doc: Document, **changes: Any) -> Document:
    return dataclasses.replace(doc, **changes)


def ids(hits: list[Hit]) -> list[str]:
    return [h.id for h in hits]


@pytest.fixture
def counting() -> CountingEmbedding:
    return CountingEmbedding()


@pytest.fixture
def index(tmp_path: Path, counting: CountingEmbedding) -> Iterator[KnowledgeIndex]:
    """A small index with two collections, built from scratch; `counting` is reset after."""
    index = KnowledgeIndex(tmp_path / "index", counting)
    index.sync(CASES, DOCS)
    index.sync(NOTES, NOTE_DOCS)
    counting.texts.clear()
    yield index
    index.close()


# --- sync by content hash ----------------------------------------------------------------------


def test_first_sync_adds_everything(tmp_path: Path, counting: CountingEmbedding) -> None:
    with KnowledgeIndex(tmp_path / "index", counting) as index:
        assert index.collections() == []
        stats = index.sync(CASES, DOCS)
        assert stats == SyncStats(added=len(DOCS))
        assert stats.changed
        assert sorted(counting.texts) == sorted(d.text for d in DOCS)
        assert index.collections() == [CASES]
        assert index.count(CASES) == len(DOCS)
        assert index.stale({CASES: DOCS}) == []
    assert (tmp_path / "index" / "bm25" / CASES / BM25Index.DOCS_FILE).exists()


def test_rebuild_with_nothing_changed_embeds_nothing(
    index: KnowledgeIndex, counting: CountingEmbedding
) -> None:
    stats = index.sync(CASES, DOCS)
    assert stats == SyncStats(unchanged=len(DOCS))
    assert not stats.changed
    assert counting.texts == []
    # Same documents in another order are still unchanged.
    assert index.sync(CASES, DOCS[::-1]) == SyncStats(unchanged=len(DOCS))
    assert counting.texts == []


def test_one_changed_document_is_the_only_one_embedded(
    index: KnowledgeIndex, counting: CountingEmbedding
) -> None:
    new_text = "전세 계약 만료 후 집주인이 보증금 5천만원을 돌려주지 않고 연락도 안 돼요"
    docs = [replaced(d, text=new_text) if d.id == "lease:ko" else d for d in DOCS]
    assert index.stale({CASES: docs}) == [CASES]
    stats = index.sync(CASES, docs)
    assert stats == SyncStats(updated=1, unchanged=len(DOCS) - 1)
    assert counting.texts == [new_text]
    assert index.stale({CASES: docs}) == []
    hits = index.search("보증금 5천만원 연락", k=3, collections=[CASES], methods=("bm25",))
    assert hits[0].id == "lease:ko"
    assert hits[0].text == new_text
    # The old wording ("300만원") is gone from the keyword index.
    assert "lease:ko" not in ids(index.search("300", k=10, methods=("bm25",)))


def test_a_metadata_change_is_an_update(index: KnowledgeIndex, counting: CountingEmbedding) -> None:
    moved = {"case_type": "CIVIL", "sub_type": "LOAN", "lang": "ko"}
    docs = [replaced(d, metadata=moved) if d.id == "lease:ko" else d for d in DOCS]
    assert index.sync(CASES, docs) == SyncStats(updated=1, unchanged=len(DOCS) - 1)
    assert len(counting.texts) == 1
    for methods in (("vector",), ("bm25",)):
        hits = index.search("보증금", k=10, where={"sub_type": "LOAN"}, methods=methods)
        assert ids(hits) == ["lease:ko"], methods
        assert hits[0].metadata == moved


def test_a_deleted_document_leaves_chroma_and_bm25(
    index: KnowledgeIndex, counting: CountingEmbedding
) -> None:
    docs = [d for d in DOCS if d.id != "assault:ko"]
    stats = index.sync(CASES, docs)
    assert stats == SyncStats(removed=1, unchanged=len(docs))
    assert counting.texts == []
    assert index.count(CASES) == len(docs)
    for methods in (("vector",), ("bm25",), ("vector", "bm25")):
        hits = index.search("폭행을 당해서 다쳤어요", k=20, methods=methods)
        assert "assault:ko" not in ids(hits), methods
    # Read back from disk too: a new BM25 load and a fresh Chroma read agree.
    assert "assault:ko" not in BM25Index.load(index.path / "bm25" / CASES).ids
    assert index.stale({CASES: docs}) == []


def test_upsert_keeps_the_other_documents(
    index: KnowledgeIndex, counting: CountingEmbedding
) -> None:
    extra = Document(
        "theft:ko",
        "지하철에서 지갑을 도난당했어요",
        CASES,
        {"case_type": "CRIMINAL", "sub_type": "THEFT", "lang": "ko"},
    )
    stats = index.upsert(CASES, [extra, DOCS[0]])
    assert stats == SyncStats(added=1, unchanged=1)
    assert counting.texts == [extra.text]
    assert index.count(CASES) == len(DOCS) + 1
    assert ids(index.search("지갑 도난", k=1, methods=("bm25",))) == ["theft:ko"]
    assert "assault:ko" in ids(index.search("폭행", k=5, methods=("bm25",)))
    # The collection now holds DOCS plus the extra one: a sync to that is a no-op.
    assert index.sync(CASES, [*DOCS, extra]) == SyncStats(unchanged=len(DOCS) + 1)


def test_duplicate_ids_are_refused(index: KnowledgeIndex) -> None:
    with pytest.raises(ValueError, match="duplicate"):
        index.sync(CASES, [DOCS[0], DOCS[0]])


def test_reopened_index_searches_without_embedding_again(
    index: KnowledgeIndex, tmp_path: Path
) -> None:
    before = index.search("집주인이 보증금을 안 돌려줘요", k=4)
    index.close()
    again = CountingEmbedding()
    with KnowledgeIndex(tmp_path / "index", again) as reopened:
        assert reopened.collections() == [CASES, NOTES]
        assert reopened.count(CASES) == len(DOCS)
        after = reopened.search("집주인이 보증금을 안 돌려줘요", k=4)
        assert again.texts == ["집주인이 보증금을 안 돌려줘요"]  # only the query
        assert [(h.id, h.ranks) for h in after] == [(h.id, h.ranks) for h in before]
        assert after[0].id == "lease:ko"
        config = reopened._collection(CASES).configuration_json
        assert config["embedding_function"]["name"] == "intake_use_m3"


def test_a_plain_chroma_client_finds_the_registered_embedding(
    index: KnowledgeIndex, tmp_path: Path
) -> None:
    index.close()
    path = str(tmp_path / "index" / "chroma")
    client = chromadb.PersistentClient(path=path, settings=chroma_settings())
    try:
        collection = client.get_collection(CASES)  # no embedding function given
        assert isinstance(collection.configuration["embedding_function"], USEEmbedding)
        # Query texts are embedded by USE, offline (the network is off in tests).
        got = collection.query(query_texts=["폭행을 당했어요"], n_results=1)
        assert got["ids"] == [["assault:ko"]]
    finally:
        client.close()
        _forget_chroma_system(str((tmp_path / "index" / "chroma").resolve()))


# --- reciprocal rank fusion --------------------------------------------------------------------


def test_rrf_score_is_the_sum_over_reported_ranks(index: KnowledgeIndex) -> None:
    hits = index.search("집주인이 보증금 300만원을 안 돌려줘요 deposit", k=8)
    assert hits
    assert any(None not in h.ranks.values() for h in hits)  # some found by both methods
    for hit in hits:
        assert set(hit.ranks) == {"vector", "bm25"}
        expected = sum(1.0 / (RRF_K + r) for r in hit.ranks.values() if r is not None)
        assert hit.score == pytest.approx(expected)
        for method, rank in hit.ranks.items():
            assert (rank is None) == (hit.scores[method] is None)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert len({(h.collection, h.id) for h in hits}) == len(hits)
    assert hits[0].id == "lease:ko"
    assert hits[0].ranks == {"vector": 1, "bm25": 1}
    assert hits[0].score == pytest.approx(2 / (RRF_K + 1))


def test_single_method_ranks_agree_with_the_fused_ones(index: KnowledgeIndex) -> None:
    query = "집주인이 보증금 300만원을 안 돌려줘요 deposit"
    fused = index.search(query, k=8)
    vector = index.search(query, k=8, methods=("vector",))
    bm25 = index.search(query, k=8, methods=("bm25",))
    for single, method in ((vector, "vector"), (bm25, "bm25")):
        assert single
        for position, hit in enumerate(single, start=1):
            assert hit.ranks == {method: position}
            assert set(hit.scores) == {method}
            assert hit.score == pytest.approx(1.0 / (RRF_K + position))
        method_scores = [h.scores[method] for h in single]
        assert method_scores == sorted(method_scores, reverse=True)
    for hit in fused:
        if hit.ranks["vector"] is not None:
            assert vector[hit.ranks["vector"] - 1].id == hit.id
        if hit.ranks["bm25"] is not None:
            assert bm25[hit.ranks["bm25"] - 1].id == hit.id
    # BM25 only finds documents sharing a term; vectors rank every document.
    assert set(ids(bm25)) <= {"lease:ko", "note:deposit", "lease:en"}
    assert len(vector) == 8


def test_bm25_only_hits_carry_text_and_metadata(index: KnowledgeIndex) -> None:
    hits = index.search("내용증명", k=3, methods=("bm25",))
    assert ids(hits) == ["note:deposit"]
    assert hits[0].collection == NOTES
    assert hits[0].text == NOTE_DOCS[0].text
    assert hits[0].metadata == {"lang": "ko"}  # the content hash is not exposed
    assert hits[0].parent_id == "note:deposit"


def test_methods_must_be_known(index: KnowledgeIndex) -> None:
    for methods in ((), ("keyword",), ("vector", "sparse")):
        with pytest.raises(ValueError, match="methods"):
            index.search("보증금", methods=methods)


def test_collections_narrow_the_search(index: KnowledgeIndex) -> None:
    hits = index.search("보증금 반환", k=10, collections=[NOTES])
    assert {h.collection for h in hits} == {NOTES}
    both = index.search("보증금 반환", k=10)
    assert {h.collection for h in both} == {CASES, NOTES}


def test_unknown_collection_names_the_available_ones(index: KnowledgeIndex) -> None:
    with pytest.raises(KnowledgeIndexError, match="no collection 'k9'.*cases, notes"):
        index.search("보증금", collections=["k9"])
    with pytest.raises(KnowledgeIndexError, match="available"):
        index.count("k9")


# --- filters (the K0-K4 index of the `kb` fixture) -----------------------------------------------

QUERY = "보증금 반환 소송 deposit"


@pytest.mark.parametrize("methods", [("vector", "bm25"), ("vector",), ("bm25",)])
@pytest.mark.parametrize(
    ("where", "key", "allowed"),
    [
        ({"case_type": "CIVIL"}, "case_type", {"CIVIL"}),
        ({"case_type": {"$in": ["FAMILY", "CRIMINAL"]}}, "case_type", {"FAMILY", "CRIMINAL"}),
        ({"sub_type": "LEASE_DEPOSIT"}, "sub_type", {"LEASE_DEPOSIT"}),
        ({"sub_type": {"$eq": "DIVORCE"}}, "sub_type", {"DIVORCE"}),
        ({"lang": "ko"}, "lang", {"ko", "mixed"}),
        ({"lang": "en"}, "lang", {"en", "mixed"}),
        ({"lang": "mixed"}, "lang", {"mixed"}),
    ],
)
def test_filters(
    kb: KnowledgeBase, where: dict, key: str, allowed: set[str], methods: tuple[str, ...]
) -> None:
    hits = kb.index.search(QUERY, k=15, where=where, methods=methods)
    assert hits
    assert {h.metadata[key] for h in hits} <= allowed


def test_language_filter_admits_mixed_and_excludes_the_other(kb: KnowledgeBase) -> None:
    ko = kb.index.search(QUERY, k=15, where={"lang": "ko"})
    assert {h.metadata["lang"] for h in ko} == {"ko", "mixed"}
    en = kb.index.search(QUERY, k=15, where={"lang": "en"}, collections=["k3_legal_info"])
    assert {h.metadata["lang"] for h in en} == {"en"}
    assert {h.id for h in en} == {h.id for h in en if h.id.endswith(":en")}


def test_filters_combine(kb: KnowledgeBase) -> None:
    where = {"case_type": "CIVIL", "lang": "en"}
    hits = kb.index.search(QUERY, k=15, where=where, collections=["k3_legal_info"])
    assert hits
    assert all(h.metadata["case_type"] == "CIVIL" and h.metadata["lang"] == "en" for h in hits)
    assert ids(hits)[0] == "k3:LEASE_DEPOSIT:en"


def test_a_filter_nothing_matches_gives_nothing(kb: KnowledgeBase) -> None:
    assert kb.index.search(QUERY, k=5, where={"case_type": "MARITIME"}) == []
    assert kb.index.search(QUERY, k=5, where={"case_type": {"$in": []}}) == []


def test_unsupported_filter_is_refused(kb: KnowledgeBase) -> None:
    with pytest.raises(ValueError, match="case_type"):
        kb.index.search(QUERY, where={"case_type": {"$ne": "CIVIL"}})


# --- active retrieval --------------------------------------------------------------------------

SIMPLE = ["보증금", "전세 보증금 반환", "폭행", "deposit refund", "landlord deposit"]
MODERATE = [
    "집주인이 보증금 300만원을 안 돌려줘요",
    "전세 계약이 끝났는데 보증금을 못 받았어요",
    "My landlord kept my deposit and I moved out last month",
    "The landlord kept my deposit but I moved out",
    "2024년 3월에 500만원",
]
COMPLEX = [
    "전세 계약이 끝났는데 집주인이 보증금을 안 돌려주고 연락도 안 되고 그래서 이사도 못 가고 "
    "있어요. 내용증명을 보내야 하나요? 소송은 얼마나 걸리나요?",
    "My lease ended in March and the landlord still has not returned my 10 million won deposit, "
    "he does not answer calls, and I need the money to move. Should I send a certified letter? "
    "How long would a lawsuit take?",
    "남편이 바람을 피웠고 그리고 생활비도 안 줘요 그런데 아이는 제가 키우고 싶어요 그래서 고민이에요",
]


@pytest.mark.parametrize(
    ("query", "complexity"),
    [(q, "simple") for q in SIMPLE]
    + [(q, "moderate") for q in MODERATE]
    + [(q, "complex") for q in COMPLEX],
)
def test_query_complexity(query: str, complexity: str) -> None:
    assert query_complexity(query) == complexity


@pytest.mark.parametrize(
    ("query", "complexity"),
    [(SIMPLE[0], "simple"), (MODERATE[0], "moderate"), (COMPLEX[0], "complex")],
)
def test_hit_count_follows_complexity(kb: KnowledgeBase, query: str, complexity: str) -> None:
    hits = kb.index.search(query)
    assert len(hits) == K_BY_COMPLEXITY[complexity]
    assert len(kb.index.search(query, k=5)) == 5  # an explicit k wins


def test_hit_count_is_bounded_by_the_documents(index: KnowledgeIndex) -> None:
    hits = index.search(COMPLEX[0])  # complex asks for 15; the small index holds 8
    assert len(hits) == len(DOCS) + len(NOTE_DOCS)


# --- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize("query", ["", "   ", "\n\t", "?!", "...,;", "。？！", "💥💥", "—–…"])
def test_query_without_letters_or_digits_gives_nothing(kb: KnowledgeBase, query: str) -> None:
    assert kb.index.search(query) == []
    assert kb.search(query) == []
    assert kb.case_candidates(query) == []


def test_zero_k_gives_nothing(kb: KnowledgeBase) -> None:
    assert kb.index.search("보증금", k=0) == []


def test_a_10000_character_query_returns_hits(kb: KnowledgeBase) -> None:
    query = ("집주인이 전세 보증금 300만원을 안 돌려줘요. The landlord kept my deposit. " * 200)[
        :10_000
    ]
    assert len(query) == 10_000
    hits = kb.index.search(query)
    assert len(hits) == K_BY_COMPLEXITY["complex"]
    assert any(h.metadata.get("sub_type") == "LEASE_DEPOSIT" for h in hits[:3])
    assert "LEASE_DEPOSIT" in kb.case_candidates(query)


def test_a_query_of_one_character_repeated_returns_hits(kb: KnowledgeBase) -> None:
    assert kb.index.search("가" * 10_000, k=3)


# --- the knowledge base ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "sub_type"),
    [
        ("전세 보증금을 집주인이 안 돌려줘요", "LEASE_DEPOSIT"),
        ("회사에서 석 달째 월급을 못 받고 있어요", "WAGE_ARREARS"),
        ("남편과 이혼하고 싶어요", "DIVORCE"),
        ("술집에서 모르는 사람한테 맞아서 다쳤어요", "ASSAULT"),
        ("친구에게 빌려준 돈 500만원을 안 갚아요", "LOAN"),
        ("My employer has not paid my wages for three months", "WAGE_ARREARS"),
    ],
)
def test_case_candidates(kb: KnowledgeBase, text: str, sub_type: str) -> None:
    candidates = kb.case_candidates(text)
    assert candidates[0] == sub_type
    assert len(candidates) <= 3


@pytest.mark.parametrize("text", ["음식이 맛있다", "ㅋㅋㅋ"])
def test_unrelated_text_gives_no_candidates(kb: KnowledgeBase, text: str) -> None:
    assert kb.case_candidates(text) == []


def test_a_knowledge_base_without_index_searches_nothing(knowledge: Knowledge) -> None:
    kb = KnowledgeBase(knowledge)
    assert kb.search("보증금") == []
    assert kb.case_candidates("전세 보증금을 집주인이 안 돌려줘요") == []


# --- build_index: up to date, stale, missing, corrupt, another embedding -------------------------


@pytest.fixture
def kb_copy(kb: KnowledgeBase, tmp_path: Path) -> Path:
    """A data directory holding a copy of the `kb` fixture's index (built with USE)."""
    data = tmp_path / "data"
    shutil.copytree(kb.index.path, data / "index")
    return data


def with_message(knowledge: Knowledge, key: str, text: Text | None) -> Knowledge:
    messages = dict(knowledge.k0.messages)
    if text is None:
        del messages[key]
    else:
        messages[key] = text
    return dataclasses.replace(knowledge, k0=knowledge.k0.model_copy(update={"messages": messages}))


def test_an_up_to_date_index_is_not_embedded_again(
    kb_copy: Path, knowledge: Knowledge, capsys: pytest.CaptureFixture[str]
) -> None:
    index, report = build_index(kb_copy, knowledge)
    try:
        assert report == {}
        assert index.stale(packaged_documents(knowledge)) == []
        assert ids(index.search("전세 보증금", k=1, collections=["k1_case_types"])) == [
            "k1:LEASE_DEPOSIT"
        ]
    finally:
        index.close()
    assert capsys.readouterr().err == ""


def test_a_changed_and_a_deleted_message_are_all_that_is_redone(
    kb_copy: Path, knowledge: Knowledge
) -> None:
    key, gone = sorted(knowledge.k0.messages)[:2]
    changed = with_message(knowledge, key, Text(ko="완전히 새로운 안내 문구", en="A new notice"))
    changed = with_message(changed, gone, None)
    index, report = build_index(kb_copy, changed)
    try:
        total = len(knowledge.k0.messages)
        assert report == {"k0_messages": SyncStats(updated=1, removed=1, unchanged=total - 2)}
        hits = index.search("완전히 새로운 안내 문구", k=1, methods=("bm25",))
        assert ids(hits) == [f"k0:{key}"]
        assert index.count("k0_messages") == total - 1
    finally:
        index.close()


def test_a_missing_index_is_built(
    tmp_path: Path, knowledge: Knowledge, fake_env: dict[str, str]
) -> None:
    index, report = build_index(tmp_path / "data", knowledge, env=fake_env)
    try:
        expected = packaged_documents(knowledge)
        assert set(report) == set(PACKAGED_COLLECTIONS)  # the medical corpus with the rest
        for name in PACKAGED_COLLECTIONS:
            assert report[name] == SyncStats(added=len(expected[name])), name
        assert index.stale(expected) == []
    finally:
        index.close()


@pytest.fixture(scope="module")
def fake_server() -> Iterator[FakeOpenAI]:
    """An OpenAI-compatible embedding server on 127.0.0.1 (cheap vectors for rebuild tests)."""
    with FakeOpenAI().run_in_thread() as server:
        yield server


@pytest.fixture
def fake_env(fake_server: FakeOpenAI) -> dict[str, str]:
    return {ENV_URL: fake_server.url, ENV_MODEL: "fake-model-a"}


@pytest.fixture
def fake_built(tmp_path: Path, knowledge: Knowledge, fake_env: dict[str, str]) -> Path:
    """A data directory with the K0-K4 index built by the fake server's embedding, closed."""
    data = tmp_path / "data"
    index, _ = build_index(data, knowledge, env=fake_env)
    index.close()
    return data


def assert_rebuilt(
    data: Path, knowledge: Knowledge, env: dict[str, str] | None, capsys: pytest.CaptureFixture
) -> str:
    """build_index says it rebuilds, re-embeds every collection, and the result searches."""
    index, report = build_index(data, knowledge, env=env)
    try:
        err = capsys.readouterr().err
        assert f"The knowledge index at {data / 'index'} could not be read" in err
        assert "rebuilding it" in err
        expected = packaged_documents(knowledge)
        assert report == {
            name: SyncStats(added=len(expected[name])) for name in PACKAGED_COLLECTIONS
        }
        hits = index.search("전세 보증금 반환", k=3)
        assert len(hits) == 3
        assert all(set(h.ranks) == {"vector", "bm25"} for h in hits)
        assert any(h.ranks["bm25"] is not None for h in hits)
    finally:
        index.close()
    # Rebuilt for good: the next start finds it up to date and says nothing.
    index, report = build_index(data, knowledge, env=env)
    index.close()
    assert report == {}
    assert capsys.readouterr().err == ""
    return err


def test_garbage_over_the_chroma_database_is_rebuilt(
    fake_built: Path, knowledge: Knowledge, fake_env: dict[str, str], capsys
) -> None:
    (fake_built / "index" / "chroma" / "chroma.sqlite3").write_bytes(b"not a database " * 500)
    err = assert_rebuilt(fake_built, knowledge, fake_env, capsys)
    assert "file is not a database" in err


@pytest.mark.slow  # rebuilds the whole index with the real embedding (about 40 s of CPU)
def test_garbage_over_the_use_index_is_rebuilt_with_use(
    kb_copy: Path, knowledge: Knowledge, capsys
) -> None:
    (kb_copy / "index" / "chroma" / "chroma.sqlite3").write_bytes(b"\x00garbage" * 1000)
    assert_rebuilt(kb_copy, knowledge, None, capsys)


@pytest.mark.parametrize(
    ("file", "damage"),
    [
        (BM25Index.DOCS_FILE, b"{not json"),
        (BM25Index.DOCS_FILE, None),
        ("vocab.index.json", None),
        ("data.csc.index.npy", b""),
    ],
)
def test_a_corrupt_bm25_folder_is_rebuilt(
    fake_built: Path,
    knowledge: Knowledge,
    fake_env: dict[str, str],
    capsys,
    file: str,
    damage: bytes | None,
) -> None:
    path = fake_built / "index" / "bm25" / "k1_case_types" / file
    if damage is None:
        path.unlink()
    else:
        path.write_bytes(damage)
    err = assert_rebuilt(fake_built, knowledge, fake_env, capsys)
    assert "BM25 index of collection 'k1_case_types' is corrupt" in err


def test_a_missing_bm25_folder_is_rebuilt_from_chroma(
    index: KnowledgeIndex, tmp_path: Path
) -> None:
    expected = ids(index.search("보증금 300만원", k=5, methods=("bm25",)))
    index.close()
    shutil.rmtree(tmp_path / "index" / "bm25" / CASES)
    again = CountingEmbedding()
    with KnowledgeIndex(tmp_path / "index", again) as reopened:
        assert ids(reopened.search("보증금 300만원", k=5, methods=("bm25",))) == expected
        assert again.texts == []  # nothing embedded: documents and hashes came from Chroma
        assert reopened.stale({CASES: DOCS, NOTES: NOTE_DOCS}) == []
        assert reopened.sync(CASES, DOCS) == SyncStats(unchanged=len(DOCS))
    # Saved again, so the next open reads it instead of rebuilding.
    saved = BM25Index.load(tmp_path / "index" / "bm25" / CASES)
    assert sorted(saved.ids) == sorted(d.id for d in DOCS)
    assert dict(zip(saved.ids, saved.hashes, strict=True)) == {d.id: d.content_hash for d in DOCS}


def test_a_missing_bm25_folder_needs_no_rebuild_in_build_index(
    fake_built: Path, knowledge: Knowledge, fake_env: dict[str, str], capsys
) -> None:
    shutil.rmtree(fake_built / "index" / "bm25")
    index, report = build_index(fake_built, knowledge, env=fake_env)
    try:
        assert report == {}
        assert capsys.readouterr().err == ""
        hits = index.search("전세 보증금", k=1, collections=["k1_case_types"], methods=("bm25",))
        assert ids(hits) == ["k1:LEASE_DEPOSIT"]
    finally:
        index.close()


# --- another embedding: "changing INTAKE_EMBEDDING_* rebuilds the index" ----------------------


def embedding_config(index: KnowledgeIndex) -> dict[str, Any]:
    return index._collection("k1_case_types").configuration_json["embedding_function"]


def test_opening_with_another_embedding_function_is_refused(kb_copy: Path) -> None:
    with pytest.raises(KnowledgeIndexError, match="'intake_use_m3', not 'intake_test_tiny'"):
        KnowledgeIndex(kb_copy / "index", TinyEmbedding())
    # Nothing was changed: USE still opens it.
    with KnowledgeIndex(kb_copy / "index") as index:
        assert embedding_config(index)["name"] == "intake_use_m3"


def test_switching_from_use_to_a_server_rebuilds(
    kb_copy: Path, knowledge: Knowledge, fake_env: dict[str, str], capsys
) -> None:
    err = assert_rebuilt(kb_copy, knowledge, fake_env, capsys)
    assert "'intake_use_m3', not 'intake_openai_compatible'" in err
    index, _ = build_index(kb_copy, knowledge, env=fake_env)
    try:
        config = embedding_config(index)
        assert config["name"] == "intake_openai_compatible"
        assert config["config"]["model"] == "fake-model-a"
    finally:
        index.close()


def test_switching_from_a_server_to_use_is_refused_then_rebuilt(fake_built: Path) -> None:
    # The full USE rebuild is covered by test_garbage_over_the_use_index_is_rebuilt_with_use.
    with pytest.raises(
        KnowledgeIndexError, match="'intake_openai_compatible', not 'intake_use_m3'"
    ):
        KnowledgeIndex(fake_built / "index", USEEmbedding())


def test_changing_the_server_model_rebuilds(
    fake_built: Path,
    knowledge: Knowledge,
    fake_env: dict[str, str],
    fake_server: FakeOpenAI,
    capsys,
) -> None:
    other = {**fake_env, ENV_MODEL: "fake-model-b"}
    dimensions = fake_server.dimensions
    fake_server.dimensions = dimensions // 2  # the new model's vectors have another size
    try:
        err = assert_rebuilt(fake_built, knowledge, other, capsys)
        assert "model changed" in err
        index, _ = build_index(fake_built, knowledge, env=other)
        try:
            assert embedding_config(index)["config"]["model"] == "fake-model-b"
            kb = KnowledgeBase(knowledge, index)
            assert kb.case_candidates("전세 보증금을 집주인이 안 돌려줘요")[0] == "LEASE_DEPOSIT"
        finally:
            index.close()
    finally:
        fake_server.dimensions = dimensions


def test_changing_the_server_url_rebuilds(
    fake_built: Path, knowledge: Knowledge, fake_env: dict[str, str], capsys
) -> None:
    other = {**fake_env, ENV_URL: fake_env[ENV_URL] + "/"}  # the same server, another URL
    err = assert_rebuilt(fake_built, knowledge, other, capsys)
    assert "base_url changed" in err


def test_a_broken_index_gives_no_candidates_instead_of_an_error(
    tmp_path: Path, knowledge: Knowledge, caplog: pytest.LogCaptureFixture
) -> None:
    index = KnowledgeIndex(tmp_path / "index", USEEmbedding())
    index.sync("k1_case_types", knowledge_documents(knowledge)["k1_case_types"])
    base = KnowledgeBase(knowledge, index)
    assert base.case_candidates("전세 보증금을 집주인이 안 돌려줘요")[0] == "LEASE_DEPOSIT"
    index.close()  # what a search sees when the index broke under the running bot
    with pytest.raises(KnowledgeIndexError):
        index.search("전세 보증금", collections=["k1_case_types"])
    with caplog.at_level("ERROR", logger="knowledge.kb"):
        assert base.case_candidates("전세 보증금을 집주인이 안 돌려줘요") == []
    assert "knowledge index search failed" in caplog.text
    assert "보증금" not in caplog.text  # the person's words stay out of the log
