"""Relative dates mean one thing (the rule in graphs/common/normalize/dates.py and the README),
on any day, at any hour, in the chat's time zone; where the words fit two days the intake asks
which, with a button for each.

The readers are checked on each day of a week against the rule's table; the engine is checked at
14 instants (each weekday, 23:50 and 00:10 in Seoul) with the installation's zone Asia/Seoul and
UTC, the clock set as tests set it (clock/).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

import clock
from bot.config import Settings
from bot.engine import Engine
from bot.messages import Inbound
from graphs.common.normalize import find_dates, parse_date
from graphs.legal.rules_brain import RulesBrain
from knowledge.kb import KnowledgeBase
from knowledge.loader import Knowledge
from tests.test_engine import facts_of

SEOUL = ZoneInfo("Asia/Seoul")
WEEK = [date(2026, 11, 23) + timedelta(days=n) for n in range(7)]  # Monday 23 ... Sunday 29
SAT, SUN, MON = 5, 6, 0
# Each weekday just before and just after midnight in Seoul (the day before's 23:50, 00:10).
INSTANTS = [
    at
    for day in WEEK
    for at in (
        datetime(day.year, day.month, day.day, 0, 10, tzinfo=SEOUL) - timedelta(minutes=20),
        datetime(day.year, day.month, day.day, 0, 10, tzinfo=SEOUL),
    )
]


def readings(text: str, day: date, *, ahead: bool = False) -> list[list[str]]:
    """Each date found in `text` said at noon on `day`: its reading and alternatives."""
    now = datetime.combine(day, datetime.min.time().replace(hour=12), SEOUL)
    return [[m.value, *m.alternatives] for m in find_dates(text, now=now, allow_future=ahead)]


def monday(day: date, weeks: int = 0) -> date:
    return day - timedelta(days=day.weekday()) + timedelta(weeks=weeks)


# --- the rule, day by day ------------------------------------------------------------------


def test_the_issue_case_last_saturday_said_on_a_sunday_fits_two_days() -> None:
    sunday = WEEK[SUN]
    assert readings("A guy punched me last Saturday", sunday) == [["2026-11-28", "2026-11-21"]]
    assert readings("지난 토요일에 맞았어요", sunday) == [["2026-11-28", "2026-11-21"]]
    # the week named: one day, whatever the day it is said
    assert readings("지난주 토요일에 맞았어요", sunday) == [["2026-11-21"]]
    assert readings("저번 주 토요일", sunday) == [["2026-11-21"]]


@pytest.mark.parametrize("today", WEEK, ids=lambda d: d.strftime("%a"))
@pytest.mark.parametrize("weekday", range(7), ids=lambda w: "MTWTFSS"[w])
def test_last_weekday_is_the_nearest_before_today_and_asks_only_within_this_week(
    today: date, weekday: int
) -> None:
    en = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")[weekday]
    ko = "월화수목금토일"[weekday]
    last_weeks = monday(today, -1) + timedelta(days=weekday)
    for text in (f"last {en}", f"지난 {ko}요일", f"저번 {ko}요일"):
        [found] = readings(text, today)
        assert all(date.fromisoformat(d).weekday() == weekday for d in found), text
        assert all(date.fromisoformat(d) < today for d in found), text
        assert last_weeks.isoformat() in found  # the Monday-Sunday reading is always offered
        # two readings exactly when the nearest one lies in this week (earlier than today)
        assert (len(found) == 2) == (weekday < today.weekday()), text
        assert date.fromisoformat(found[0]) == max(date.fromisoformat(d) for d in found)
    assert readings(f"지난주 {ko}요일", today) == [[last_weeks.isoformat()]]
    assert readings(f"지지난주 {ko}요일", today) == [
        [(last_weeks - timedelta(weeks=1)).isoformat()]
    ]


@pytest.mark.parametrize("today", WEEK, ids=lambda d: d.strftime("%a"))
def test_this_and_next_weekday_and_weekends(today: date) -> None:
    this_friday = monday(today) + timedelta(days=4)
    for text in ("this Friday", "이번 주 금요일", "이번 금요일"):
        assert readings(text, today, ahead=True) == [[this_friday.isoformat()]], text
    # a Friday ahead cannot be the date of something that happened: refused by the field
    assert parse_date("this Friday", now=datetime.combine(today, datetime.min.time(), SEOUL)) == (
        this_friday.isoformat()
    )
    [nxt] = readings("next Friday", today, ahead=True)
    assert all(date.fromisoformat(d) > today for d in nxt)
    assert (monday(today, 1) + timedelta(days=4)).isoformat() in nxt
    assert (len(nxt) == 2) == (today.weekday() < 4)
    last_weekend = [(monday(today, -1) + timedelta(days=d)).isoformat() for d in (SAT, SUN)]
    for text in ("지난 주말에요", "저번 주말", "저번주말에", "지난주 주말", "last weekend"):
        assert readings(text, today) == [last_weekend], text
    this_weekend = [monday(today) + timedelta(days=d) for d in (SAT, SUN)]
    said = readings("이번 주말에 통보받았어요", today)
    # a day of this weekend that is still ahead is no reading of a past event
    assert said == [
        [d.isoformat() for d in this_weekend if d <= today] or [this_weekend[0].isoformat()]
    ]


def test_a_bare_weekday_and_other_relative_dates_have_one_reading() -> None:
    sunday = WEEK[SUN]
    assert readings("토요일에 맞았어요", sunday) == [["2026-11-28"]]
    # today's own weekday: today is "오늘", so most often last week's, today the other reading
    # ("일요일이었어요" said on a Sunday: legal_set8 S4)
    assert readings("on Sunday", sunday) == [["2026-11-22", "2026-11-29"]]
    assert readings("일요일이었어요", sunday) == [["2026-11-22", "2026-11-29"]]
    assert readings("on Sunday", sunday, ahead=True) == [["2026-11-29"]]
    assert readings("어제 맞았어요", sunday) == [["2026-11-28"]]
    assert readings("지난주에 맞았어요", sunday) == [["2026-11-22"]]
    assert readings("주말에 술을 마셨어요", sunday) == []  # no week named: no date


def test_a_time_limit_without_its_year_lies_ahead_when_near() -> None:
    """'12월5일까지 의견제출' said in late November is this December, not last (legal_set8 R6,
    S6); a limit told as over, a day of no limit, or one far ahead stays in the past."""
    sunday = WEEK[SUN]
    assert readings("12월5일까지 의견제출기간이래요", sunday) == [["2026-12-05"]]
    assert readings("12월 5일까지 내라고 했어요", sunday) == [["2026-12-05"]]
    assert readings("The fine is due by 10 December.", sunday) == [["2026-12-10"]]
    assert readings("1월 15일까지 내야 돼요", sunday) == [["2027-01-15"]]
    assert readings("8월 31일까지 일했어요", sunday) == [["2026-08-31"]]
    assert readings("12월까지 일했어요", sunday) == [["2025-12"]]
    assert readings("12월 5일에 만났어요", sunday) == [["2025-12-05"]]
    assert readings("6월 30일까지 갚기로 했어요", sunday) == [["2026-06-30"]]
    # a period starting next week to a day of next year; a limit told with 전에 (legal_set9 W6,
    # W3); a start told alone stays in the past
    assert readings("12월 7일부터 내년 2월 4일까지요", sunday) == [["2026-12-07"], ["2027-02-04"]]
    assert readings("1월4일 전에 이의신청만 하면 되는겁니까?", sunday) == [["2027-01-04"]]
    assert readings("12월 1일부터요", sunday) == [["2025-12-01"]]
    # an offer standing until a day (legal_set14 B4 dated it last year); a past "until" stays
    assert readings("the offer stands until the 11th of December", sunday) == [["2026-12-11"]]
    assert readings("i worked there until october 10", sunday) == [["2026-10-10"]]


def test_a_month_with_this_year_is_not_yearless_nor_given_an_earlier_year() -> None:
    """'quit end of august this year' after 'started in march 2024' is 2026-08 (legal_set8
    P3 recorded 2024-08 in both modes)."""
    sunday = WEEK[SUN]
    said = "he started in march 2024 and quit end of august this year, on 31 august"
    assert readings(said, sunday) == [["2024-03"], ["2026-08"], ["2026-08-31"]]
    now = datetime.combine(sunday, datetime.min.time().replace(hour=12), SEOUL)
    assert [m.yearless for m in find_dates("until august this year", now=now)] == [False]
    assert [m.yearless for m in find_dates("until august", now=now)] == [True]


# --- the engine, at 14 instants and in two zones -------------------------------------------


@pytest.fixture(params=["Asia/Seoul", "UTC"])
async def zoned(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    knowledge: Knowledge,
    brain: RulesBrain,
    kb: KnowledgeBase,
) -> AsyncIterator[tuple[Engine, ZoneInfo]]:
    settings = Settings(
        intake_data_dir=tmp_path / "data",
        admin_ids="777",
        intake_timezone=request.param,
        _env_file=None,
    )
    engine = await Engine.open(settings, knowledge=knowledge, brain=brain, kb=kb)
    yield engine, settings.zone
    await engine.close()


async def incident_date(engine: Engine, chat: int) -> str | None:
    """The incident date in the chat's records, as staff receive it."""
    return (await facts_of(engine, chat)).get("incident_date")


@pytest.mark.parametrize("instant", INSTANTS, ids=lambda i: i.strftime("%a%H%M"))
async def test_the_intake_reads_last_saturday_on_the_chats_calendar_or_asks(
    zoned: tuple[Engine, ZoneInfo], instant: datetime, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine, zone = zoned
    monkeypatch.setenv(clock.ENV, clock.setting(instant))
    today = clock.now(zone).date()  # the chat's calendar day, not Seoul's nor UTC's
    week_reading = (monday(today, -1) + timedelta(days=SAT)).isoformat()
    chat = 100
    reply = await engine.handle(
        Inbound(
            chat_id=chat,
            kind="text",
            text="A guy at my gym punched me and broke my nose last Saturday",
        )
    )
    days = [c["data"] for m in reply.messages for c in m.get("choices", []) if ":on:" in c["data"]]
    if today.weekday() == SUN:  # yesterday, or the Saturday of last week: the person chooses
        yesterday = (today - timedelta(days=1)).isoformat()
        assert days == [f"a:incident_date:on:{yesterday}", f"a:incident_date:on:{week_reading}"]
        assert reply.field == "incident_date" and await incident_date(engine, chat) is None
        chosen = await engine.handle(
            Inbound(chat_id=chat, kind="choice", data=f"a:incident_date:on:{week_reading}")
        )
        assert chosen.field != "incident_date"
    else:
        assert days == []
    assert await incident_date(engine, chat) == week_reading

    ko = await engine.handle(
        Inbound(chat_id=chat + 1, kind="text", text="지난주 토요일에 남편한테 맞았어요")
    )
    assert not [c for m in ko.messages for c in m.get("choices", []) if ":on:" in c["data"]]
    assert await incident_date(engine, chat + 1) == week_reading


async def test_a_typed_date_answers_the_which_day_question(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(clock.ENV, clock.setting(datetime(2026, 11, 29, 10, 0, tzinfo=SEOUL)))
    first = await engine.handle(
        Inbound(
            chat_id=7,
            kind="text",
            text="지난 토요일에 술집에서 모르는 사람한테 맞아서 코뼈가 부러졌어요",
        )
    )
    assert any(":on:2026-11-28" in c["data"] for m in first.messages for c in m.get("choices", []))
    await engine.handle(Inbound(chat_id=7, kind="text", text="어제요"))
    assert await incident_date(engine, 7) == "2026-11-28"


async def test_something_else_said_to_the_which_day_question_records_no_day(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(clock.ENV, clock.setting(datetime(2026, 11, 29, 10, 0, tzinfo=SEOUL)))
    await engine.handle(Inbound(chat_id=8, kind="text", text="I was punched at a bar last weekend"))
    reply = await engine.handle(Inbound(chat_id=8, kind="text", text="I'm the victim"))
    assert await incident_date(engine, 8) is None  # neither day taken on its own
    # a press of a day not offered (a stale or forged button) records nothing either
    await engine.handle(Inbound(chat_id=8, kind="choice", data="a:incident_date:on:2026-11-01"))
    assert await incident_date(engine, 8) is None
    assert reply.messages


async def test_a_stale_press_while_a_day_is_being_chosen_shows_the_days_again(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A press of a button no longer offered is refused with the question the intake waits on:
    while the person chooses between two days, that is the days (legal_set7 tV2 crashed here)."""
    monkeypatch.setenv(clock.ENV, clock.setting(datetime(2026, 11, 29, 10, 0, tzinfo=SEOUL)))
    first = await engine.handle(
        Inbound(chat_id=9, kind="text", text="지난 토요일에 술집에서 모르는 사람한테 맞았어요")
    )
    offered = [c["data"] for m in first.messages for c in m.get("choices", [])]
    assert "a:incident_date:on:2026-11-28" in offered
    stale = await engine.handle(Inbound(chat_id=9, kind="choice", data="a:desired_outcome:confirm"))
    again = [c["data"] for m in stale.messages for c in m.get("choices", [])]
    assert "a:incident_date:on:2026-11-28" in again
