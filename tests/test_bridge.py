"""The lexicon bridge from Korean questions to English documents."""

from __future__ import annotations

import pytest

from graphs.medical.bridge import bridge_query, english_terms
from graphs.medical.slots import SlotExtractor


@pytest.fixture(scope="module")
def extractor() -> SlotExtractor:
    return SlotExtractor()


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("당뇨병 초기 증상이 뭐예요?", ["diabetes"]),
        ("녹내장 안약 부작용이 있나요", ["glaucoma"]),
        ("메트포르민 먹으면 설사하나요", ["metformin", "diarrhea"]),
        ("고혈압인데 두통이 자주 와요", ["hypertension", "headache"]),
        ("당뇨는 없는데 어머니가 당뇨예요 저도 위험한가요", ["diabetes"]),
    ],
)
def test_korean_terms_are_named_in_english(
    extractor: SlotExtractor, query: str, expected: list[str]
) -> None:
    assert english_terms(query, extractor) == expected


def test_a_korean_query_gets_the_english_names_appended(extractor: SlotExtractor) -> None:
    assert bridge_query("녹내장 안약 부작용", extractor) == "녹내장 안약 부작용 glaucoma"


@pytest.mark.parametrize(
    "query",
    ["What are the symptoms of glaucoma?", "이혼하고 싶어요", "안녕하세요", ""],
)
def test_other_queries_are_left_as_they_are(extractor: SlotExtractor, query: str) -> None:
    assert bridge_query(query, extractor) == query
