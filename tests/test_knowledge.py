"""Every knowledge file loads and validates; a broken file names the file and the field."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from graphs.legal.fields import next_field, progress, required_keys
from knowledge.loader import FILES, KNOWLEDGE_DIR, KnowledgeError, load_knowledge

SUB_TYPES = {
    "CIVIL": {
        "LOAN",
        "LEASE_DEPOSIT",
        "DAMAGES",
        "WAGE_ARREARS",
        "GOODS_PAYMENT",
        "INDUSTRIAL_ACCIDENT",
        "NEIGHBOR_DISPUTE",
        "CONSUMER_REFUND",
        "UNFAIR_DISMISSAL",
    },
    "CRIMINAL": {
        "FRAUD",
        "DEBT_COLLECTION",
        "ASSAULT",
        "DEFAMATION",
        "THEFT",
        "STALKING",
        "IMAGE_ABUSE",
        "SCHOOL_VIOLENCE",
    },
    "FAMILY": {"DIVORCE", "CUSTODY", "INHERITANCE"},
    "ADMINISTRATIVE": {"DRIVER_LICENSE", "BUSINESS_SUSPENSION", "TAX", "FINE"},
    "OTHER": {"OTHER"},
}


def test_every_file_loads_and_covers_every_sub_type(knowledge) -> None:
    assert set(FILES) == {p.name for p in KNOWLEDGE_DIR.glob("*.yaml")}
    found = {ct.code: {s.code for s in ct.sub_types} for ct in knowledge.k1.case_types}
    assert found == SUB_TYPES
    for codes in SUB_TYPES.values():
        for code in codes:
            assert code in knowledge.k2.sub_types and code in knowledge.k3.info
            for key in required_keys(knowledge.k2, code, {}):
                spec = knowledge.k2.field(code, key)
                assert spec.question.ko and spec.question.en and spec.why.ko and spec.why.en


def test_placeholders_match_in_both_languages(knowledge) -> None:
    import string

    for key, text in knowledge.k0.messages.items():
        names = [{n for _, n, _, _ in string.Formatter().parse(t) if n} for t in (text.ko, text.en)]
        assert names[0] == names[1], key


def test_no_text_holds_a_control_character() -> None:
    """A pattern written in YAML double quotes turns "\\b" into a backspace, which no message
    holds: "\\bgoing to\\b" never matched a plan, nor "\\bdon't fit" a declined type."""
    import yaml

    def strings(node: object) -> list[str]:
        if isinstance(node, str):
            return [node]
        if isinstance(node, dict):
            return [s for v in node.values() for s in strings(v)]
        if isinstance(node, list):
            return [s for v in node for s in strings(v)]
        return []

    for path in sorted(KNOWLEDGE_DIR.rglob("*.yaml")):
        for text in strings(yaml.safe_load(path.read_text(encoding="utf-8"))):
            bad = [c for c in text if ord(c) < 32 and c not in "\n\t"]
            assert not bad, f"{path.name}: {text[:60]!r}"


@pytest.mark.parametrize(
    ("name", "broken", "expected"),
    [
        (
            "k2_fields.yaml",
            "fields:\n  amount:\n    kind: money\n",
            "k2_fields.yaml: fields.amount.kind",
        ),
        (
            "k0_messages.yaml",
            "messages:\n  greeting: {ko: 안녕}\n",
            "k0_messages.yaml: messages.greeting.en",
        ),
        ("lexicon.yaml", "yes: [", "lexicon.yaml: not valid YAML"),
        (
            "k0_messages.yaml",
            "messages:\n  btn_done: {ko: 다 골랐어요, en: That's all}\n"
            "  btn_done: {ko: 완료, en: Done}\n",
            "k0_messages.yaml: not valid YAML: key 'btn_done' appears twice",
        ),
    ],
)
def test_broken_file_error_names_file_and_field(
    tmp_path: Path, name: str, broken: str, expected: str
) -> None:
    for file in FILES:
        shutil.copy(KNOWLEDGE_DIR / file, tmp_path / file)
    (tmp_path / name).write_text(broken, encoding="utf-8")
    with pytest.raises(KnowledgeError) as err:
        load_knowledge(tmp_path)
    assert expected in str(err.value)


def test_missing_sub_type_in_k3_is_reported(tmp_path: Path) -> None:
    import yaml

    for file in FILES:
        shutil.copy(KNOWLEDGE_DIR / file, tmp_path / file)
    data = yaml.safe_load((tmp_path / "k3_legal_info.yaml").read_text(encoding="utf-8"))
    del data["info"]["TAX"]
    (tmp_path / "k3_legal_info.yaml").write_text(
        yaml.safe_dump(data, allow_unicode=True), encoding="utf-8"
    )
    with pytest.raises(KnowledgeError, match="k3_legal_info.yaml: info: missing TAX"):
        load_knowledge(tmp_path)


def test_next_field_follows_priority_and_conditions(knowledge) -> None:
    k2 = knowledge.k2
    assert next_field(k2, "LOAN", {}, []) == "counterparty"
    facts = {"counterparty": "김철수", "counterparty_type": "acquaintance", "amount": 1}
    assert next_field(k2, "LOAN", facts, ["incident_date"]) == "repayment_date"
    assert "evidence_type" not in required_keys(k2, "LOAN", {"evidence": False})
    assert "evidence_type" in required_keys(k2, "LOAN", {"evidence": True})
    assert "monthly_rent" in required_keys(k2, "LEASE_DEPOSIT", {"lease_type": "monthly"})
    assert "monthly_rent" not in required_keys(k2, "LEASE_DEPOSIT", {"lease_type": "jeonse"})
    answered, total = progress(k2, "LOAN", {**facts, "evidence": False})
    assert (answered, total) == (4, 7)
    # what the person wants closes every sub-type, after its own fields, unless it is placed
    for code, spec in k2.sub_types.items():
        keys = [r.key for r in spec.required_fields()]
        assert keys.count("desired_outcome") == 1, code
    assert required_keys(k2, "LOAN", {"evidence": False})[-1] == "desired_outcome"
    placed = k2.sub_types["NEIGHBOR_DISPUTE"].required_fields()
    assert [r.key for r in placed][-3:] == ["desired_outcome", "evidence", "evidence_type"]


def test_what_is_derived_once_matches_the_fields_and_no_copy_carries_it_over(knowledge) -> None:
    k2 = knowledge.k2
    loan = k2.sub_types["LOAN"]
    assert [r.key for r in loan.required_fields()] == [
        r if isinstance(r, str) else r.key for r in loan.required
    ]
    assert loan.required_fields() is loan.required_fields()  # made once
    overridden = next((code, key) for code, spec in k2.sub_types.items() for key in spec.overrides)
    merged = k2.field(*overridden)
    assert merged is k2.field(*overridden)
    assert merged != k2.fields[overridden[1]]  # the sub-type's own wording
    # A changed copy derives from its own fields, not from what the original kept.
    shorter = loan.model_copy(update={"required": ["amount"]})
    assert [r.key for r in shorter.required_fields()] == ["amount"]
    renamed = k2.fields[overridden[1]].model_copy(update={"question": merged.question})
    other = k2.model_copy(update={"fields": {**k2.fields, overridden[1]: renamed}})
    assert other.field(*overridden).question == merged.question
    assert other.field(*overridden) is not merged


def test_conditions_of_the_new_sub_types(knowledge) -> None:
    k2 = knowledge.k2
    # A leak's cost is asked only when a leak is among the neighbour's problems.
    assert "amount" in required_keys(k2, "NEIGHBOR_DISPUTE", {"neighbor_issue": ["noise", "leak"]})
    assert "amount" not in required_keys(k2, "NEIGHBOR_DISPUTE", {"neighbor_issue": ["noise"]})
    # The free-form intake asks for more of the story only when the account is short, and
    # whether money is involved only when no amount was told.
    short = {"action_description": "상담 받고 싶어요"}
    told = {
        "action_description": "헬스장이 갑자기 문을 닫았는데 남은 회원권 10개월치를 환불해 주지 않아요"
    }
    assert next_field(k2, "OTHER", short, []) == "story_detail"
    assert next_field(k2, "OTHER", told, []) == "counterparty"
    assert "money_involved" in required_keys(k2, "OTHER", told)
    assert "amount" not in required_keys(k2, "OTHER", told)
    assert "money_involved" not in required_keys(k2, "OTHER", {**told, "amount": 900000})
    assert "amount" in required_keys(k2, "OTHER", {**told, "money_involved": True})
    assert "amount" not in required_keys(k2, "OTHER", {**told, "money_involved": False})


def test_every_deadline_condition_names_known_fields(knowledge) -> None:
    for code, info in knowledge.k3.info.items():
        for rule in info.deadlines:
            for key in [*rule.start, *rule.when, *rule.unless]:
                assert key in knowledge.k2.fields, (code, rule.key, key)
