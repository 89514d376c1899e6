"""A date told without its year, in a story told in earlier years: the person chooses the year.

"3월 12일에 이체했어요" is read as the last 12 March before the message (`find_dates`), which is
right for most of what people tell. But where the record already holds dates written with an
earlier year ("2024년 2월에 알게 됐어요"), the same words may as well be that year's: a wrong
year drives a wrong deadline, so the day is offered in each year (the reader's first) and
nothing is recorded before the person chooses (`Reading.choices`). A date within the last few
months is this year's beyond doubt and is not asked about.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import replace
from datetime import date, datetime, timedelta
from typing import Any

from graphs.common.normalize import find_dates, is_future
from graphs.common.reading import Reading, Role

RECENT = timedelta(days=92)  # a day this near the message is not asked about
MAX_YEARS = 2  # earlier years offered beside the reader's


def years_asked(
    reading: Reading,
    memo: list[dict[str, Any]],
    text: str,
    *,
    now: datetime,
    recorded: Collection[str] = (),
) -> Reading:
    """`with_years_asked` with the years told in the record's chronology and in `text`."""
    return with_years_asked(reading, told_years(memo, text, now=now), now=now, recorded=recorded)


def assumed_years(memo: list[dict[str, Any]]) -> set[str]:
    """The ids of chronology items whose year is ours: told without one, and later than the
    earliest year the person wrote (that earlier year may be theirs)."""
    written = [int(i["date"][:4]) for i in memo if _dated(i) and not i.get("yearless")]
    if not written:
        return set()
    return {
        i["id"]
        for i in memo
        if _dated(i) and i.get("yearless") and int(i["date"][:4]) > min(written)
    }


def _dated(item: dict[str, Any]) -> bool:
    """Whether a chronology item holds a calendar date (a model's item may hold "ongoing": a
    live-in worker's LLM chat crashed on it every turn after, legal_set11 A2)."""
    return item.get("section") == "chronology" and bool(_ISO.match(str(item.get("date", ""))))


_ISO = re.compile(r"\d{4}(?:-\d{2}){0,2}$")


def told_years(memo: list[dict[str, Any]], text: str, *, now: datetime) -> set[int]:
    """The years the person wrote (or said as 작년, last year) in the record's chronology and in
    this message."""
    years = {int(item["date"][:4]) for item in memo if _dated(item) and not item.get("yearless")}
    years |= {int(str(m.value)[:4]) for m in find_dates(text, now=now) if not m.yearless}
    return years


def with_years_asked(
    reading: Reading, years: set[int], *, now: datetime, recorded: Collection[str] = ()
) -> Reading:
    """`reading` with each date written without a year, placed in a field with no value yet,
    offered also in the earlier years the person told (see the module). A recorded field's
    date is left as read: a day said again for it keeps the recorded year when it is compared
    or proposed as a correction."""
    if not years or any(v.role is Role.TAKEN_BACK and v.kind == "date" for v in reading.values):
        return reading  # "3월 아니고 4월 5일": a correction keeps the recorded year
    values = []
    for value in reading.values:
        if (
            value.kind == "date"
            and value.role in (Role.FACT, Role.ANSWER)
            and value.field not in recorded
        ):
            others = _other_years(value.value, value.said, years, now=now)
            if others and not value.alternatives:
                value = replace(value, alternatives=others)
        values.append(value)
    return replace(reading, values=tuple(values))


def _other_years(value: Any, said: str, years: set[int], *, now: datetime) -> tuple[str, ...]:
    """The same month (and day) in the told years before `value`'s, latest first, for a date
    whose words carry no year; () otherwise."""
    if not isinstance(value, str) or len(value) < 7 or not said:
        return ()
    match = next((m for m in find_dates(said, now=now) if m.value == value), None)
    if match is None or not match.yearless:
        return ()
    if now.date() - date.fromisoformat(value if len(value) == 10 else f"{value}-01") <= RECENT:
        return ()
    year = int(value[:4])
    out = []
    for earlier in sorted((y for y in years if y < year), reverse=True)[:MAX_YEARS]:
        other = f"{earlier}{value[4:]}"
        if other.endswith("02-29") and not _leap(earlier):
            continue
        if not is_future(other, now=now):
            out.append(other)
    return tuple(out)


def _leap(year: int) -> bool:
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


STORY_SPAN = timedelta(days=183)  # how long after a dated event its story's next days may fall
# A day told without its year that, read as this year's, lies this close before the message is
# this year's, whatever the story: "lodged it on 24 November" five days ago (legal_set12 B1: a
# 14-month job begun in September 2025 had its November moved to 2025). (Named apart from
# `RECENT`, which it shadowed: the years asked about used 45 days instead of their 92.)
STORY_RECENT = timedelta(days=45)
# How far back the record's last dated event may lie for a later message's yearless day to
# follow it: older, it is background (a wedding, a purchase years ago), not the story's last step.
STORY_AGE = timedelta(days=3 * 365)


def story_years(
    items: list[dict[str, Any]], record: list[dict[str, Any]], *, now: datetime
) -> list[dict[str, Any]]:
    """A message's chronology items told without their year, in the year of the story they
    follow: "24년 5월10일에 … 통지 받았고 배당요구종기가 7월22일이라 6월3일에 배당요구 신청했어요"
    is 2024's July and June, not this year's (legal_set10: every pair play had to correct such
    years). The event a day follows is the latest one told with its year and day, earlier in
    the message or else in the record; the day is that year's when it falls within half a year
    after that event (and is past), unless this year's is a recent day (`STORY_RECENT`). The item stays
    marked yearless (our guess, shown so)."""
    anchor = _anchor(record, now=now)
    out = []
    for item in items:
        if item.get("section") == "steps" and item.get("date"):
            # a step's day told without its year ("노동청 간건 9월10일"): the same story's
            said = find_dates(" ".join(item.get("quote", "").lower().split()), now=now)
            bare = any(m.value == item["date"] and m.yearless for m in said)
            moved = _in_story(item["date"], anchor, now=now) if bare else None
            out.append(item | {"date": moved} if moved else item)
            continue
        if item.get("section") != "chronology":
            out.append(item)
            continue
        if not item.get("yearless"):
            if _dated(item) and len(item["date"]) >= 7 and not item.get("planned"):
                anchor = item["date"]
            out.append(item)
            continue
        moved = _in_story(item["date"], anchor, now=now) if not item.get("planned") else None
        out.append(item | {"date": moved} if moved else item)
    return out


def _anchor(record: list[dict[str, Any]], *, now: datetime) -> str | None:
    """The latest told event of the record written with its year and at least its month; None
    when the record already holds an event more than `STORY_SPAN` after it (the story has
    moved on: "작년 3월에 빌려줬다고" told after a death this June does not pull "7월1일" back a
    year, legal_set15 A1 in both modes), or when it lies more than `STORY_AGE` back: that is
    the background, not the story's last step ("2013년 5월에 결혼했어요 … 6월3일에 혼인신고"
    pulled "10월1일부터 … 나와있어요" and "9월14일에 … 알았어요", told in later messages, back to
    2013: legal_set18 S4)."""
    dated = [
        i["date"]
        for i in record
        if _dated(i)
        and not i.get("yearless")
        and not i.get("planned")
        and len(str(i.get("date", ""))) >= 7
    ]
    if not dated:
        return None
    anchor = dated[-1]
    start = date.fromisoformat(anchor if len(anchor) == 10 else f"{anchor}-01")
    if now.date() - start > STORY_AGE:
        return None
    later = [
        i["date"] for i in record if _dated(i) and not i.get("planned") and len(str(i["date"])) >= 7
    ]
    for value in later:
        day = date.fromisoformat(value if len(value) == 10 else f"{value}-01")
        if day > start + STORY_SPAN:
            return None
    return anchor


def _in_story(value: Any, anchor: str | None, *, now: datetime) -> str | None:
    if anchor is None or not isinstance(value, str) or not _ISO.match(value) or len(value) < 7:
        return None
    own = date.fromisoformat(value if len(value) == 10 else f"{value}-01")
    if timedelta(0) <= now.date() - own <= STORY_RECENT:
        return None
    moved = f"{anchor[:4]}{value[4:]}"
    if moved == value or (moved.endswith("02-29") and not _leap(int(anchor[:4]))):
        return None
    start = date.fromisoformat(anchor if len(anchor) == 10 else f"{anchor}-01")
    day = date.fromisoformat(moved if len(moved) == 10 else f"{moved}-01")
    if not (start <= day <= start + STORY_SPAN) or is_future(moved, now=now):
        return None
    return moved
