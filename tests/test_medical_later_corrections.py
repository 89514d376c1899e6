"""Over several messages through the real engine: a reading corrected in a later message
replaces the latest one in /profile and /summary; a deleted item is never brought back by a
question, only by a new statement; one child named two ways is one person; a home reading is
placed by the home thresholds; durations and a pregnancy's week reach the summary."""

from __future__ import annotations

import json

import pytest

from bot.engine import Engine
from tests.test_medical import STAFF, buttons, command, pressed, said, texts


async def summary(engine: Engine, hours: float) -> str:
    return texts(await engine.handle(command("summary", hours=hours)))


async def test_a_reading_corrected_in_a_later_message_replaces_it(engine: Engine) -> None:
    await engine.handle(command("start", "medical"))
    await engine.handle(said("혈압 재보니까 158/100 나왔어요"))
    await engine.handle(said("아 잘못 말했어요 138/88이에요", hours=0.1))
    shown = await summary(engine, 0.2)
    measured = [line for line in shown.splitlines() if line.startswith("측정값")]
    assert measured == ["측정값: 혈압 138/88"]
    profile = texts(await engine.handle(command("profile", hours=0.2)))
    assert "138/88" in profile and "158/100" not in profile


async def test_an_english_correction_names_the_wrong_value_too(engine: Engine) -> None:
    await engine.handle(command("start", "medical"))
    await engine.handle(said("my blood pressure was 150/95 this morning"))
    await engine.handle(said("sorry, it was 130/85 not 150/95", hours=0.1))
    export = await engine.handle(command("export", "json", user_id=STAFF, hours=0.2))
    rows = json.loads(export.documents[0].content)
    vitals = next(r for r in rows if r["domain"] == "medical")["profile"]["vitals"]
    assert (vitals["bp_sys"], vitals["bp_dia"]) == (130, 85)


@pytest.mark.parametrize(
    ("first", "fix", "key", "value"),
    [
        (
            "요즘 집에서 혈압 재는데 오늘아침 168에 94 나왔어요 이거 높은건가요??",
            "아 잘못봤어요 168이 아니라 148이요 148에 94.",
            "bp_sys",
            148,
        ),
        (
            "My last blood test said my eGFR was 38.",
            "Oh dear, I misread the letter - it was 48, not 38.",
            "egfr",
            48,
        ),
    ],
)
async def test_a_correction_as_people_write_it_replaces_the_reading(
    engine: Engine, first: str, fix: str, key: str, value: float
) -> None:
    await engine.handle(command("start", "medical"))
    await engine.handle(said(first))
    await engine.handle(said(fix, hours=0.1))
    export = await engine.handle(command("export", "json", user_id=STAFF, hours=0.2))
    rows = json.loads(export.documents[0].content)
    profile = next(r for r in rows if r["domain"] == "medical")["profile"]
    readings = {**profile["vitals"], **profile.get("labs", {})}
    assert readings.get(key) == value, readings


async def test_a_reading_said_wrong_without_a_new_value_is_not_used(engine: Engine) -> None:
    await engine.handle(command("start", "medical"))
    await engine.handle(said("혈압이 158/100 나왔어요"))
    reply = await engine.handle(said("아까 혈압 잘못 말했어요", hours=0.1))
    assert "맞는 값을 알려 주시면" in texts(reply)
    assert not [line for line in (await summary(engine, 0.2)).splitlines() if "측정값" in line]


async def test_a_deleted_item_comes_back_only_from_a_new_statement(engine: Engine) -> None:
    await engine.handle(command("start", "medical"))
    await engine.handle(said("메트포르민 먹어요"))
    await engine.handle(command("profile", hours=0.05))
    gone = await engine.handle(pressed("m:del:medications:metformin", hours=0.1))
    assert "메트포르민" in texts(gone)
    await engine.handle(said("can I drink alcohol with my metformin?", hours=0.2))
    await engine.handle(said("메트포르민 먹어도 돼요?", hours=0.3))
    shown = await engine.handle(command("profile", hours=0.4))
    assert "m:del:medications:metformin" not in buttons(shown)
    await engine.handle(said("메트포르민 다시 먹고 있어요", hours=0.5))
    again = await engine.handle(command("profile", hours=0.6))
    assert "m:del:medications:metformin" in buttons(again)


async def test_a_statin_asked_about_is_never_stored(engine: Engine) -> None:
    await engine.handle(command("start", "medical"))
    await engine.handle(said("I have high cholesterol. Do I need to go on a statin?"))
    lines = (await summary(engine, 0.1)).splitlines()
    assert "Conditions: dyslipidemia" in lines
    assert not [line for line in lines if line.startswith("Medicines")]


async def test_one_child_named_two_ways_is_one_person(engine: Engine) -> None:
    await engine.handle(command("start", "medical"))
    await engine.handle(said("우리 애가 5살인데 열이 38.5도예요"))
    second = await engine.handle(said("아들이 기침도 2주째 해요", hours=0.1))
    assert "섞이지 않도록" not in texts(second)
    shown = await summary(engine, 0.2)
    assert "기침 (2주째)" in shown and "체온 38.5" in shown


async def test_a_home_reading_is_placed_by_the_home_thresholds(engine: Engine) -> None:
    await engine.handle(command("start", "medical"))
    reply = await engine.handle(said("집에서 잰 혈압이 138/86이에요"))
    assert "가정혈압 기준" in texts(reply) and "'고혈압'" in texts(reply)
    assert "혈압 138/86 (집에서)" in await summary(engine, 0.1)


async def test_a_pregnancy_week_reaches_the_summary(engine: Engine) -> None:
    await engine.handle(command("start", "medical"))
    await engine.handle(said("I'm 32 weeks pregnant and I fell yesterday"))
    shown = await engine.handle(command("summary", hours=0.1))
    assert "pregnancy (32 weeks)" in texts(shown) or "임신 (32 weeks)" in texts(shown)
    assert "fall" in texts(shown) or "넘어짐" in texts(shown)
