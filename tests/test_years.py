"""A date told without its year in a story told in earlier years is asked about, a button a
year, before it is recorded; the memo marks the year it assumed (graphs/legal/years.py). Unit
checks on the readers, then the real engine and graph (rules mode)."""

from __future__ import annotations

from datetime import datetime

from bot.engine import Engine
from graphs.common.normalize import find_dates
from graphs.common.reading import Reading, Role, Value
from graphs.legal.summary import memo_lines
from graphs.legal.years import told_years, with_years_asked
from knowledge.loader import Knowledge
from tests.test_hardening import choice, offered, session_of, text

NOW = datetime(2026, 11, 22, 12, 0)


def test_a_date_knows_whether_its_year_was_written() -> None:
    found = find_dates("2024년 3월에 입사해서 7월에 그만뒀고 12월 20일에 연락했어요", now=NOW)
    assert [(m.value, m.yearless) for m in found] == [
        ("2024-03", False),
        ("2024-07", False),  # carried from its sentence: said
        ("2024-12-20", False),
    ]
    assert [m.yearless for m in find_dates("3월 12일. 작년 5월. 어제. in July", now=NOW)] == [
        True,
        False,
        False,
        True,
    ]


def _date(said: str, value: str, role: Role = Role.ANSWER, field: str = "x") -> Value:
    return Value(kind="date", value=value, span=(0, len(said)), field=field, role=role, said=said)


def test_only_a_yearless_day_not_recent_gets_the_earlier_years_told() -> None:
    memo = [
        {"section": "chronology", "date": "2024-02-03"},
        {"section": "chronology", "date": "2025-05", "yearless": True},  # not the person's year
    ]
    years = told_years(memo, "2023년에 계약했어요", now=NOW)
    assert years == {2024, 2023}
    reading = Reading(
        text="",
        values=(
            _date("3월 12일", "2026-03-12"),
            _date("2025년 3월 12일", "2025-03-12", Role.FACT, "y"),
            _date("11월 2일", "2026-11-02", Role.FACT, "z"),  # within three months: this year's
            # two months back is within them too (45 days were used: a shadowed constant)
            _date("9월 25일", "2026-09-25", Role.FACT, "v"),
            _date("3월 12일", "2026-03-12", Role.OTHER_EVENT, "w"),  # in no field
        ),
    )
    asked = with_years_asked(reading, years, now=NOW)
    assert [v.alternatives for v in asked.values] == [
        ("2024-03-12", "2023-03-12"),
        (),
        (),
        (),
        (),
    ]
    assert asked.answer is None and "x" in asked.choices  # nothing recorded before a choice
    recorded = with_years_asked(reading, years, now=NOW, recorded={"x"})
    assert recorded.values[0].alternatives == ()  # said again of a recorded date: compared as is
    assert with_years_asked(reading, set(), now=NOW) is reading
    assert with_years_asked(reading, {2027}, now=NOW).values[0].alternatives == ()


def test_a_29_february_is_offered_only_in_a_leap_year() -> None:
    reading = Reading(text="", values=(_date("2월 29일", "2024-02-29"),))
    assert with_years_asked(reading, {2023, 2020}, now=NOW).values[0].alternatives == (
        "2020-02-29",
    )


async def test_the_person_chooses_the_year_and_the_memo_takes_it(
    engine: Engine, knowledge: Knowledge
) -> None:
    reply = await engine.handle(text("2024년 3월 4일에 식당에 입사했는데 사장이 월급을 안 줘요"))
    state = await engine.intake_state((await session_of(engine)).id)
    assert state["facts"].get("employment_start") == "2024-03-04"
    for _ in range(11):  # "I don't know" until the bot asks when the work ended
        if reply.field == "employment_end":
            break
        reply = await engine.handle(choice(f"a:{reply.field}:unknown"))
    assert reply.field == "employment_end"
    reply = await engine.handle(text("12월 20일에 그만뒀어요", minutes=1))
    days = [c for c in offered(reply) if c.startswith("a:employment_end:on:")]
    assert days == ["a:employment_end:on:2025-12-20", "a:employment_end:on:2024-12-20"]
    state = await engine.intake_state((await session_of(engine)).id)
    assert "employment_end" not in state["facts"]  # nothing recorded before the choice
    lines = "\n".join(memo_lines(knowledge, state, "ko"))
    assert "2025-12-20 (연도 추정)" in lines  # the memo says whose year it is
    await engine.handle(choice("a:employment_end:on:2024-12-20"))
    state = await engine.intake_state((await session_of(engine)).id)
    assert state["facts"]["employment_end"] == "2024-12-20"
    dated = [i for i in state["memo"] if i["section"] == "chronology"]
    assert "2024-12-20" in [i["date"] for i in dated]
    assert "2025-12-20" not in [i["date"] for i in dated]
    assert not any(i.get("yearless") for i in dated if i["date"] == "2024-12-20")


def test_a_correction_of_a_date_keeps_the_recorded_year() -> None:
    # "3월 아니고 4월 5일": the taken-back date's year stays (test_graph), nothing is asked
    reading = Reading(
        text="",
        values=(_date("3월", "2026-03", Role.TAKEN_BACK, "w"), _date("4월 5일", "2026-04-05")),
    )
    assert with_years_asked(reading, {2025}, now=NOW) is reading


def test_a_month_or_a_year_offered_reads_as_one(knowledge: Knowledge) -> None:
    # "8월" in one year or another: a button "2026년 8월" (it raised ValueError: legal_set2 tF3)
    from graphs.legal.prompts import day_label

    assert day_label(knowledge, "2026-08", "ko") == "2026년 8월"
    assert day_label(knowledge, "2024-08", "en") == "Aug 2024"
    assert day_label(knowledge, "2024", "ko") == "2024년"
