"""The medical corpus loads and validates, is bilingual and spread over its topics, keeps the key
numbers of mainstream guidance, and a broken copy is refused with an error naming the problem."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from urllib.parse import urlparse

import pytest

import knowledge.medical_corpus as medical_corpus
from knowledge.loader import KnowledgeError
from knowledge.medical_corpus import (
    CORPUS_PATH,
    TOPICS,
    MedicalCorpus,
    MedicalCorpusError,
    by_id,
    load_medical_corpus,
    load_medical_corpus_file,
    parse_medical_corpus,
)
from knowledge.medical_lexicon import load_medical_lexicon

# The brief's rough target per topic; the test asks for at least half of each.
TARGET_PER_TOPIC = {
    "condition": 35,
    "symptom": 30,
    "medicine": 30,
    "test": 15,
    "lifestyle": 15,
    "pregnancy_children": 12,
    "emergency": 13,
}
# Each named source must point at that organisation's own site.
SOURCE_DOMAINS = {
    "KDCA": "kdca.go.kr",
    "NHIS": "nhis.or.kr",
    "Ministry of Health and Welfare": "mohw.go.kr",
    "National Emergency Medical Center": "e-gen.or.kr",
    "Korea Health Promotion Institute": "khepi.or.kr",
    "Korean Diabetes Association": "diabetes.or.kr",
    "Korean Society of Hypertension": "koreanhypertension.org",
    "Korean Society of Lipid and Atherosclerosis": "lipid.or.kr",
    "Korean Society for the Study of Obesity": "kosso.or.kr",
    "MedlinePlus": "medlineplus.gov",
    "NHS": "nhs.uk",
    "CDC": "cdc.gov",
    "FDA": "fda.gov",
    "WHO": "who.int",
    "NIDDK": "niddk.nih.gov",
    "NIMH": "nimh.nih.gov",
    "NIA": "nia.nih.gov",
    "NHLBI": "nhlbi.nih.gov",
    "AHA": "heart.org",
    "ADA": "diabetes.org",
    "AAP": "healthychildren.org",
}
HANGUL = re.compile(r"[\uac00-\ud7a3]")
SENTENCE_END = re.compile(r"[.!?](?=\s|$)")
# Where to turn for help: every entry names a doctor, pharmacist, hospital or 119.
HELP_KO = re.compile(r"의사|약사|119|병원|진료|의료진|응급실|상담|보건소|소아과|내과")
HELP_EN = re.compile(
    r"doctor|pharmacist|119|hospital|emergency|medical|care team|clinic|paediatrician"
    r"|specialist|rheumatologist|professional|midwife|dietitian"
)
# A dose is a number with a mass unit; "70 mg/dL" is a lab value, not a dose.
DOSE = re.compile(r"\d\s?(?:mg|mcg|µg|g|micrograms?|milligrams?|밀리그램|마이크로그램)\b(?!/)")


@pytest.fixture(scope="module")
def corpus() -> MedicalCorpus:
    return load_medical_corpus()


def test_the_shipped_corpus_loads_once_with_at_least_150_entries(corpus: MedicalCorpus) -> None:
    assert CORPUS_PATH == Path(medical_corpus.__file__).resolve().parent / "medical/corpus.yaml"
    assert len(corpus.entries) >= 150
    assert load_medical_corpus() is corpus


@pytest.mark.parametrize("topic", sorted(TARGET_PER_TOPIC))
def test_every_topic_has_at_least_half_its_target(corpus: MedicalCorpus, topic: str) -> None:
    assert set(TARGET_PER_TOPIC) == set(TOPICS)
    assert 2 * len(corpus.by_topic(topic)) >= TARGET_PER_TOPIC[topic]


def test_ids_are_unique_kebab_case(corpus: MedicalCorpus) -> None:
    counts = Counter(entry.id for entry in corpus.entries)
    assert [entry_id for entry_id, n in counts.items() if n > 1] == []
    assert all(re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", entry_id) for entry_id in counts)


def test_korean_is_korean_and_english_has_no_hangul(corpus: MedicalCorpus) -> None:
    for entry in corpus.entries:
        for pair in (entry.title, entry.text):
            assert HANGUL.search(pair.ko), entry.id
            assert not HANGUL.search(pair.en), entry.id
        lists = [entry.keywords, *([entry.red_flags] if entry.red_flags else [])]
        for terms in lists:
            assert any(HANGUL.search(term) for term in terms.ko), entry.id
            assert not any(HANGUL.search(term) for term in terms.en), entry.id


def test_texts_run_three_to_eight_sentences(corpus: MedicalCorpus) -> None:
    wrong = {
        (entry.id, lang): n
        for entry in corpus.entries
        for lang in ("ko", "en")
        if not 3 <= (n := len(SENTENCE_END.findall(entry.text.get(lang)))) <= 8
    }
    assert wrong == {}


def test_every_entry_says_where_to_get_help(corpus: MedicalCorpus) -> None:
    silent = [
        entry.id
        for entry in corpus.entries
        if not (HELP_KO.search(entry.text.ko) and HELP_EN.search(entry.text.en))
    ]
    assert silent == []


def test_sources_are_named_bodies_on_their_own_https_sites(corpus: MedicalCorpus) -> None:
    for entry in corpus.entries:
        domain = SOURCE_DOMAINS.get(entry.source.name)
        assert domain, f"{entry.id}: unknown source {entry.source.name!r}"
        url = urlparse(entry.source.url)
        assert url.scheme == "https", entry.id
        assert url.hostname == domain or url.hostname.endswith("." + domain), entry.id


def test_medicine_entries_give_no_doses(corpus: MedicalCorpus) -> None:
    dosed = [
        (entry.id, lang)
        for entry in corpus.by_topic("medicine")
        for lang in ("ko", "en")
        if DOSE.search(entry.text.get(lang))
    ]
    assert dosed == []


def test_emergency_entries_tell_people_to_call_119(corpus: MedicalCorpus) -> None:
    emergencies = corpus.by_topic("emergency")
    assert [e.id for e in emergencies if "119" not in e.text.ko or "119" not in e.text.en] == []


def test_the_infant_fever_entry_says_under_3_months() -> None:
    entry = by_id("fever-infant-under-3-months")
    assert "3개월 미만" in entry.text.ko and "38°C" in entry.text.ko
    assert "under 3 months" in entry.text.en and "38°C" in entry.text.en
    assert "119" in entry.text.ko and "119" in entry.text.en


@pytest.mark.parametrize(
    ("entry_id", "ko", "en"),
    [
        ("test-hba1c", "6.5% 이상은 당뇨병", "6.5% or above is in the diabetes range"),
        ("test-hba1c", "5.7~6.4%는 당뇨병 전단계", "5.7 to 6.4% is prediabetes"),
        (
            "test-fasting-glucose",
            "126 mg/dL 이상은 당뇨병",
            "126 mg/dL or above is in the diabetes",
        ),
        ("test-fasting-glucose", "100~125", "100 to 125 mg/dL is impaired fasting glucose"),
        ("prediabetes", "100~125 mg/dL", "100 to 125 mg/dL"),
        ("test-post-meal-glucose-and-ogtt", "200 mg/dL 이상은", "200 mg/dL or above"),
        ("emergency-hypoglycaemia", "70 mg/dL 미만이면 저혈당", "below 70 mg/dL is hypoglycaemia"),
        (
            "test-blood-pressure-categories",
            "140/90 이상은 고혈압",
            "140/90 or above is hypertension",
        ),
        ("test-blood-pressure-categories", "130~139 또는 80~89", "130-139 or 80-89"),
        ("hypertension-overview", "140/90 mmHg 이상", "140/90 mmHg or above"),
        ("test-creatinine-egfr", "60 미만이 3개월", "below 60 for more than three months"),
        ("test-ldl-cholesterol", "190 이상은 매우 높음", "190 or above is very high"),
        ("test-tsh", "0.4~4.0 mIU/L", "0.4 to 4.0 mIU/L"),
        ("emergency-suicide-crisis", "109", "109"),
        ("depression-overview", "109", "109"),
    ],
)
def test_key_numbers_say_the_same_in_both_languages(entry_id: str, ko: str, en: str) -> None:
    entry = by_id(entry_id)
    assert ko in entry.text.ko
    assert en in entry.text.en


def test_the_kdca_call_centre_1339_is_given(corpus: MedicalCorpus) -> None:
    assert [e.id for e in corpus.entries if "1339" in e.text.ko and "1339" in e.text.en]


def test_the_lexicons_topics_and_aliases_name_concepts_the_corpus_has(
    corpus: MedicalCorpus,
) -> None:
    """A question's focus and a medicine's class find passages only through the corpus's own
    concept tags: a topic or alias the corpus does not tag would never raise a passage."""
    lexicon = load_medical_lexicon()
    tags = {c for entry in corpus.entries for c in entry.concepts}
    assert {t.name for t in lexicon.topics} <= tags
    assert set(lexicon.concept_aliases.values()) <= tags


def test_every_entry_says_whom_it_applies_to() -> None:
    """Written out in the file for every entry (`everyone` at least), and the populations the
    person writing is not by default (pregnancy, infants, children) are the entries on them."""
    raw = CORPUS_PATH.read_text(encoding="utf-8")
    entries = load_medical_corpus().entries
    assert len(re.findall(r"\n  applies_to:", raw)) == len(entries)
    restricted = {e.id for e in entries if e.applies_to.restricted}
    pregnancy = {e.id for e in entries if e.applies_to.pregnancy is True}
    assert {"pregnancy-medicines-ask-first", "gestational-diabetes"} <= pregnancy
    assert all(by_id(i).applies_to.sex == "female" for i in pregnancy)
    assert {"fever-infant-under-3-months", "child-febrile-seizure"} <= restricted
    assert "adult" not in by_id("child-febrile-seizure").applies_to.ages
    assert "child" not in by_id("lifestyle-weight-management").applies_to.ages
    assert "seizure" in by_id("child-febrile-seizure").applies_to.asked
    # `everyone` only for a text as right for a baby as for a pregnant woman or an older man.
    everyone = {e.id for e in entries if e.applies_to == type(e.applies_to)()}
    assert {"emergency-choking", "emergency-when-to-call-119", "symptom-cough"} <= everyone
    assert not {"symptom-nausea-vomiting", "lifestyle-sleep-habits", "symptom-dizziness"} & everyone


def test_by_id_finds_an_entry_and_refuses_an_unknown_one() -> None:
    assert by_id("test-hba1c").topic == "test"
    with pytest.raises(KeyError):
        by_id("no-such-entry")


SAMPLE = """\
- id: sample-entry
  topic: condition
  title: {ko: "예시", en: "Sample"}
  text:
    ko: "첫 문장이에요. 둘째 문장이에요. 의사와 상의하세요."
    en: "First sentence. Second sentence. Ask your doctor."
  keywords: {ko: [예시], en: [sample]}
  concepts: [sample]
  applies_to: everyone
  source: {name: NHS, url: "https://www.nhs.uk/"}
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "corpus.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_sample_entry_itself_is_valid(tmp_path: Path) -> None:
    corpus = load_medical_corpus_file(write(tmp_path, SAMPLE))
    assert corpus.by_id("sample-entry").text.get("en").startswith("First")
    assert parse_medical_corpus(SAMPLE) == corpus


@pytest.mark.parametrize(
    ("broken", "expected"),
    [
        pytest.param(SAMPLE + SAMPLE, "duplicate id 'sample-entry'", id="duplicate-id"),
        pytest.param(
            SAMPLE.replace('    en: "First sentence. Second sentence. Ask your doctor."\n', ""),
            "entry 0 (sample-entry): text.en: Field required",
            id="missing-en",
        ),
        pytest.param(
            SAMPLE.replace("topic: condition", "topic: medication"),
            "entry 0 (sample-entry): topic: Input should be 'condition'",
            id="unknown-topic",
        ),
        pytest.param(
            SAMPLE.replace("https://www.nhs.uk/", "http://www.nhs.uk/"),
            "entry 0 (sample-entry): source.url: must be an https:// address",
            id="http-url",
        ),
        pytest.param(
            SAMPLE.replace("en: [sample]", "en: []"),
            "entry 0 (sample-entry): keywords.en: List should have at least 1 item",
            id="empty-keywords",
        ),
        pytest.param(
            SAMPLE.replace('ko: "예시"', 'ko: "Sample"'),
            "entry 0 (sample-entry): title: ko has no Korean (Hangul) in it",
            id="untranslated-korean",
        ),
        pytest.param(
            SAMPLE.replace("  concepts: [sample]\n", "  concepts: [sample]\n  concepts: [x]\n"),
            "not valid YAML: key 'concepts' appears twice",
            id="repeated-key",
        ),
        pytest.param(
            SAMPLE.replace("  concepts: [sample]\n", "  concepts: [sample]\n  note: extra\n"),
            "entry 0 (sample-entry): note: Extra inputs are not permitted",
            id="unknown-key",
        ),
        pytest.param(
            SAMPLE.replace("  applies_to: everyone\n", ""),
            "entry 0 (sample-entry): applies_to: Field required",
            id="no-applies-to",
        ),
        pytest.param(
            SAMPLE.replace("applies_to: everyone", "applies_to: {ages: [teen]}"),
            "entry 0 (sample-entry): applies_to.ages.0: Input should be 'infant'",
            id="unknown-age-group",
        ),
        pytest.param(
            SAMPLE.replace("applies_to: everyone", "applies_to: {sex: male, pregnancy: true}"),
            "a pregnancy entry cannot be for men or older adults",
            id="pregnant-men",
        ),
        pytest.param(
            SAMPLE.replace("applies_to: everyone", "applies_to: {conditions: [COPD]}"),
            "must be lowercase English concept names",
            id="uncanonical-condition",
        ),
        pytest.param("entries: []\n", "the top level must be a list of entries", id="not-a-list"),
    ],
)
def test_a_broken_copy_is_refused_naming_the_problem(
    tmp_path: Path, broken: str, expected: str
) -> None:
    with pytest.raises(MedicalCorpusError) as caught:
        load_medical_corpus_file(write(tmp_path, broken))
    assert str(caught.value).startswith("corpus.yaml: ")
    assert expected in str(caught.value)
    assert isinstance(caught.value, KnowledgeError)


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(MedicalCorpusError, match=r"^absent\.yaml: file not found$"):
        load_medical_corpus_file(tmp_path / "absent.yaml")
