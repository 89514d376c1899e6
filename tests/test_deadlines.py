"""Deadlines worked out from the collected dates by the K3 rules: the arithmetic, approximate
starts, rules that stop applying, and urgency shown first to staff in the summary, /sessions
and the export."""

from __future__ import annotations

import json
from datetime import date, timedelta

import pytest

import clock
from bot.engine import Engine, Inbound
from graphs.legal.deadlines import URGENT_DAYS, is_urgent, work_out
from graphs.legal.summary import build_summary
from knowledge.kb import KnowledgeBase
from knowledge.loader import Knowledge

TODAY = date(2026, 11, 24)
ADMIN = 777  # in the settings fixture's ADMIN_IDS


def dues(knowledge: Knowledge, sub_type: str, facts: dict) -> dict[str, str]:
    return {d.key: d.due for d in work_out(knowledge, sub_type, facts, "ko", TODAY)}


def test_every_rule_counts_from_a_field_of_its_sub_type(knowledge: Knowledge) -> None:
    for code, info in knowledge.k3.info.items():
        keys = {r.key for r in knowledge.k2.sub_types[code].required_fields()}
        for rule in info.deadlines:
            assert set(rule.start) <= keys, (code, rule.key)
            assert set(rule.unless) <= keys, (code, rule.key)
            assert set(rule.when) <= keys, (code, rule.key)


def test_licence_objection_and_appeal_windows(knowledge: Knowledge) -> None:
    assert dues(knowledge, "DRIVER_LICENSE", {"notice_date": "2026-11-10"}) == {
        "license_objection": "2027-01-09",  # 60 days
        "license_appeal": "2027-02-08",  # 90 days
    }


def test_months_end_on_the_last_day_of_a_shorter_month(knowledge: Knowledge) -> None:
    assert dues(knowledge, "INHERITANCE", {"death_date": "2026-11-30"}) == {
        "renounce_or_limit": "2027-02-28"
    }


def test_a_start_known_to_the_month_counts_from_its_first_day(knowledge: Knowledge) -> None:
    [found] = work_out(knowledge, "INHERITANCE", {"death_date": "2026-09"}, "ko", TODAY)
    assert found.due == "2026-12-01" and found.approximate
    assert found.days_left(TODAY) == 7 and found.due_soon(TODAY)


def test_no_date_no_deadline_and_a_later_start_field_as_fallback(knowledge: Knowledge) -> None:
    assert dues(knowledge, "DRIVER_LICENSE", {"disposition_type": "revocation"}) == {}
    assert dues(knowledge, "LOAN", {"incident_date": "2025-03-01"}) == {
        "loan_limitation": "2035-03-01"
    }
    assert dues(
        knowledge, "LOAN", {"incident_date": "2025-03-01", "repayment_date": "2026-06"}
    ) == {"loan_limitation": "2036-06-01"}
    assert dues(knowledge, "WAGE_ARREARS", {"employment_end": "ongoing"}) == {}


def test_a_rule_stops_applying_when_the_facts_say_so(knowledge: Knowledge) -> None:
    assert "tax_objection" in dues(knowledge, "TAX", {"notice_date": "2026-11-01"})
    assert dues(knowledge, "TAX", {"notice_date": "2026-11-01", "objection_filed": True}) == {}


def test_a_notice_that_can_no_longer_be_given_is_not_shown(knowledge: Knowledge) -> None:
    # The lease ends in 7 weeks: refusing renewal had to be said 2 months before.
    assert dues(knowledge, "LEASE_DEPOSIT", {"lease_end_date": "2027-01-15"}) == {}
    assert dues(knowledge, "LEASE_DEPOSIT", {"lease_end_date": "2027-03-15"}) == {
        "renewal_refusal": "2027-01-15"
    }


def test_workplace_accident_report_benefits_and_damages(knowledge: Knowledge) -> None:
    # The employer reports within a month; benefits and damages lapse after 3 years.
    assert dues(knowledge, "INDUSTRIAL_ACCIDENT", {"incident_date": "2026-11-03"}) == {
        "employer_accident_report": "2026-12-03",
        "compensation_benefits_limitation": "2029-11-03",
        "employer_damages_limitation": "2029-11-03",
    }
    [report, *_] = work_out(
        knowledge, "INDUSTRIAL_ACCIDENT", {"incident_date": "2026-11-03"}, "ko", TODAY
    )
    assert report.due_soon(TODAY)  # an employer's report still due heads the summary
    assert "산업재해조사표" in report.label and "제57조" in report.rule


def test_stalking_counts_from_when_it_started(knowledge: Knowledge) -> None:
    found = work_out(knowledge, "STALKING", {"incident_date": "2026-08"}, "ko", TODAY)
    assert {d.key: d.due for d in found} == {
        "stalking_damages_limitation": "2029-08-01",
        "stalking_prosecution": "2031-08-01",
    }
    assert all(d.approximate for d in found)  # known to the month: the earliest it can be


def test_neighbour_deadlines_only_for_a_leak(knowledge: Knowledge) -> None:
    noise = {"incident_date": "2026-05-10", "neighbor_issue": ["noise"]}
    assert dues(knowledge, "NEIGHBOR_DISPUTE", noise) == {}
    leak = {"incident_date": "2026-05-10", "neighbor_issue": ["noise", "leak"]}
    assert dues(knowledge, "NEIGHBOR_DISPUTE", leak) == {
        "neighbor_damages_3y": "2029-05-10",
        "neighbor_damages_10y": "2036-05-10",
    }
    assert dues(knowledge, "NEIGHBOR_DISPUTE", {"incident_date": "2026-05-10"}) == {}


def test_the_free_form_intake_has_no_worked_out_deadline(knowledge: Knowledge) -> None:
    assert dues(knowledge, "OTHER", {"incident_date": "2026-05-10"}) == {}


def test_urgency_is_due_within_thirty_days_and_not_passed(knowledge: Knowledge) -> None:
    def urgent(notice: date) -> bool:
        found = work_out(knowledge, "FINE", {"notice_date": notice.isoformat()}, "ko", TODAY)
        return is_urgent(found, TODAY)

    assert urgent(TODAY - timedelta(days=60 - URGENT_DAYS))  # due in exactly 30 days
    assert not urgent(TODAY - timedelta(days=60 - URGENT_DAYS - 1))  # in 31 days
    assert urgent(TODAY - timedelta(days=60))  # due today
    assert not urgent(TODAY - timedelta(days=61))  # passed: shown, not urgent


@pytest.mark.parametrize("lang", ["ko", "en"])
def test_the_summary_shows_each_deadline_with_its_rule(
    knowledge: Knowledge, kb: KnowledgeBase, lang: str
) -> None:
    state = {
        "sub_type": "FINE",
        "case_type": "ADMINISTRATIVE",
        "facts": {"fine_kind": "parking", "amount": 40000, "notice_date": "2026-11-04"},
    }
    summary = build_summary(kb, state, lang, today=TODAY)
    [deadline] = summary["structured"]["deadlines"]
    assert deadline["due"] == "2027-01-03" and deadline["days_left"] == 40
    assert summary["structured"]["urgent"] is False
    rule = knowledge.k3.info["FINE"].deadlines[0]
    assert rule.rule.get(lang) in summary["text"] and "2027-01-03" in summary["text"]
    assert not summary["text"].startswith("⏰")

    state["facts"]["notice_date"] = "2026-10-04"  # due 2026-12-03, in 9 days
    summary = build_summary(kb, state, lang, today=TODAY)
    assert summary["structured"]["urgent"] is True
    assert summary["text"].startswith("⏰") and "2026-12-03" in summary["text"].splitlines()[0]


def test_a_deadline_the_person_told_is_listed_in_their_words(
    knowledge: Knowledge, kb: KnowledgeBase
) -> None:
    said = "의견제출 기한이 12월 5일까지라고 적혀 있어요"
    chronology = [
        {"section": "chronology", "id": "m1", "date": "2026-12-05", "quote": said},
        # a day ahead told as no deadline, one passed, one known to the month: none listed
        {"section": "chronology", "id": "m2", "date": "2026-12-01", "quote": "12월 1일에 이사"},
        {"section": "chronology", "id": "m3", "date": "2026-11-20", "quote": "11월 20일까지 내라"},
        {"section": "chronology", "id": "m4", "date": "2026-12", "quote": "12월까지 내래요"},
    ]
    state = {
        "sub_type": "BUSINESS_SUSPENSION",
        "case_type": "ADMINISTRATIVE",
        "facts": {},
        "memo": chronology,
    }
    summary = build_summary(kb, state, "ko", today=TODAY)
    deadlines = summary["structured"]["deadlines"]
    assert [(d["key"], d["due"], d["start_field"]) for d in deadlines] == [
        ("told", "2026-12-05", "memo:m1")
    ]
    assert summary["structured"]["urgent"] is True  # 11 days off
    assert said in summary["text"] and knowledge.message("deadline_told", "ko") in summary["text"]


def now_text(value: str, chat: int) -> Inbound:
    """A message sent now: deadlines are worked out against today's date."""
    return Inbound(chat_id=chat, kind="text", text=value, user_id=5, at=clock.now())


async def test_sessions_and_export_put_a_close_deadline_first(engine: Engine) -> None:
    await engine.handle(now_text("주차 위반 과태료 4만원 고지서를 40일 전에 받았어요", chat=61))
    await engine.handle(now_text("작년 3월에 친구한테 300만원 빌려줬는데 안 갚아요", chat=62))

    listing = await engine.handle(
        Inbound(chat_id=ADMIN, kind="command", command="sessions", user_id=ADMIN, at=clock.now())
    )
    lines = "\n".join(m["text"] for m in listing.messages).splitlines()
    fine = next(i for i, line in enumerate(lines) if "FINE" in line)
    loan = next(i for i, line in enumerate(lines) if "LOAN" in line)
    assert fine < loan  # the fine was started first, but its 60-day window closes in 20 days
    assert "⏰" in lines[fine] and "⏰" not in lines[loan]

    reply = await engine.handle(
        Inbound(
            chat_id=ADMIN,
            kind="command",
            command="export",
            args=("json", "all"),
            user_id=ADMIN,
            at=clock.now(),
        )
    )
    rows = json.loads(reply.documents[0].content)
    assert [r["sub_case_type"] for r in rows][:1] == ["FINE"]
    assert rows[0]["urgent"] is True
    assert rows[0]["deadlines"][0]["key"] == "fine_objection"
    loan_row = next(r for r in rows if r["sub_case_type"] == "LOAN")
    assert loan_row["urgent"] is False and loan_row["deadlines"][0]["key"] == "loan_limitation"


async def test_the_export_lists_a_deadline_the_person_told(engine: Engine) -> None:
    due = clock.now() + timedelta(days=12)
    said = f"영업정지 사전통지서를 받았는데 의견제출 기한이 {due.month}월 {due.day}일까지래요"
    await engine.handle(now_text(said, chat=63))
    reply = await engine.handle(
        Inbound(
            chat_id=ADMIN,
            kind="command",
            command="export",
            args=("json", "all"),
            user_id=ADMIN,
            at=clock.now(),
        )
    )
    [row] = [r for r in json.loads(reply.documents[0].content) if r["chat_id"] == 63]
    told = [d for d in row["deadlines"] if d["key"] == "told"]
    assert [d["due"][5:] for d in told] == [f"{due.month:02d}-{due.day:02d}"]
    assert row["urgent"] is True and "의견제출 기한" in told[0]["label"]


def test_a_dismissal_counts_its_claim_and_benefits_from_the_last_day(knowledge: Knowledge) -> None:
    """Unfair dismissal (legal_set16-18 brought three): the 3-month claim to the Labour
    Relations Commission, gone once filed; the 12 months benefits can be drawn in."""
    assert dues(knowledge, "UNFAIR_DISMISSAL", {"employment_end": "2026-11-20"}) == {
        "dismissal_relief": "2027-02-20",
        "jobless_benefit": "2027-11-20",
    }
    filed = {"employment_end": "2026-11-20", "relief_filed": True}
    assert dues(knowledge, "UNFAIR_DISMISSAL", filed) == {"jobless_benefit": "2027-11-20"}


def test_a_refund_claim_counts_from_the_payment(knowledge: Knowledge) -> None:
    assert dues(knowledge, "CONSUMER_REFUND", {"incident_date": "2026-09-01"}) == {
        "refund_limitation": "2031-09-01"
    }
