"""The medical assistant through the real engine: two domains, the profile over turns with a
real checkpointer and a restart, reconfirmation, the cache, red flags over turns, /profile,
/summary, /forget (every table scanned) and the export's medical keys."""

from __future__ import annotations

import json
import sqlite3
from datetime import timedelta

import pytest
from sqlmodel import SQLModel

from bot.engine import Engine, Inbound
from db import medical_repo, repo
from db.engine import checkpoints_path, records_path
from knowledge.medical_corpus import load_medical_corpus
from tests.support import NOW

CHAT = 4242
STAFF = 777


def said(value: str, *, hours: float = 0, input_id: str | None = None) -> Inbound:
    return Inbound(
        chat_id=CHAT,
        kind="text",
        text=value,
        user_id=5,
        input_id=input_id,
        at=NOW + timedelta(hours=hours),
    )


def pressed(data: str, *, hours: float = 0) -> Inbound:
    return Inbound(
        chat_id=CHAT, kind="choice", data=data, user_id=5, at=NOW + timedelta(hours=hours)
    )


def command(name: str, *args: str, user_id: int = 5, hours: float = 0) -> Inbound:
    return Inbound(
        chat_id=CHAT,
        kind="command",
        command=name,
        args=tuple(args),
        user_id=user_id,
        at=NOW + timedelta(hours=hours),
    )


def texts(reply) -> str:
    return "\n".join(m["text"] for m in reply.messages)


def buttons(reply) -> list[str]:
    return [c["data"] for m in reply.messages for c in m["choices"]]


async def test_start_offers_both_domains_and_a_button_chooses(engine: Engine) -> None:
    offer = await engine.handle(command("start"))
    assert buttons(offer) == ["domain:legal", "domain:medical"]
    chosen = await engine.handle(pressed("domain:medical"))
    assert chosen.state == "MEDICAL" and "건강 상담" in texts(chosen)
    answer = await engine.handle(said("두통이 자주 있어요"))
    assert "두통" in texts(answer) and "출처:" in texts(answer)


async def test_a_clearly_medical_first_message_goes_to_the_medical_assistant(
    engine: Engine,
) -> None:
    reply = await engine.handle(said("혈압약 먹는데 혈압이 150에 95 나왔어요"))
    assert reply.state == "MEDICAL"
    assert "혈압 150/95" in texts(reply)
    legal = await engine.handle(
        Inbound(
            chat_id=CHAT + 1,
            kind="text",
            text="친구한테 300만원 빌려줬는데 안 갚아요",
            user_id=6,
            at=NOW,
        )
    )
    assert legal.state != "MEDICAL"


async def test_an_answer_is_grounded_personal_and_ends_with_its_sources(engine: Engine) -> None:
    await engine.handle(command("start", "medical"))
    first = await engine.handle(said("67세 남자고 당뇨 있어요. 메트포르민 먹고 있어요"))
    assert "기록해 둘게요: 67세, 남성, 당뇨병, 메트포르민" in texts(first)
    answer = await engine.handle(said("운동은 어떤 게 안전한가요?", hours=0.1))
    body = answer.messages[-1]["text"]
    assert body.splitlines()[-1].startswith("출처:")
    assert "진단" in body  # the not-a-diagnosis note
    assert "당뇨" in body  # read in the light of the person's diabetes


def source_of(entry_id: str) -> str:
    return load_medical_corpus().by_id(entry_id).source.url


async def test_what_a_question_asks_about_comes_before_what_it_names(engine: Engine) -> None:
    """ "I'm on metformin; what exercise is safe?" is a question on exercise (with diabetes),
    not on metformin; a follow-up on walking stays on it."""
    await engine.handle(command("start", "medical"))
    reply = await engine.handle(said("I'm 67, diabetic, on metformin. what exercise is safe?"))
    body = reply.messages[-1]["text"]
    assert source_of("lifestyle-exercise-with-diabetes") in body.splitlines()[-1]
    assert source_of("medicine-metformin") not in body
    follow = await engine.handle(said("그럼 걷기는 하루에 얼마나 해야돼요?", hours=0.1))
    assert source_of("lifestyle-exercise-with-diabetes") in follow.messages[-1]["text"]


async def test_a_question_naming_nothing_is_read_with_the_one_before(engine: Engine) -> None:
    await engine.handle(command("start", "medical"))
    first = await engine.handle(said("I also take lisinopril 10mg once a day"))
    assert source_of("medicine-ace-inhibitors") in texts(first)  # its class's entry
    after = await engine.handle(said("what are the side effects of it?", hours=0.2))
    assert source_of("medicine-ace-inhibitors") in after.messages[-1]["text"]
    # hours later "it" is still the person's only medicine
    later = await engine.handle(said("what are the side effects of it?", hours=5))
    assert source_of("medicine-ace-inhibitors") in later.messages[-1]["text"]


async def test_that_refers_to_the_question_just_before_and_not_to_one_hours_ago(
    engine: Engine,
) -> None:
    await engine.handle(command("start", "medical"))
    await engine.handle(said("my blood pressure was 150/95 this morning"))
    soon = await engine.handle(said("is that normal?", hours=0.1))
    assert source_of("test-blood-pressure-categories") in soon.messages[-1]["text"]
    later = await engine.handle(said("is that normal?", hours=5))
    assert source_of("test-blood-pressure-categories") not in texts(later)


async def test_a_korean_follow_up_that_drops_its_subject_is_read_with_the_one_before(
    engine: Engine,
) -> None:
    await engine.handle(command("start", "medical"))
    first = await engine.handle(said("남편이 45살인데 새우 알레르기가 있어요"))
    assert source_of("emergency-anaphylaxis") in texts(first)  # a food allergy is an allergy
    follow = await engine.handle(
        said("회식 때 실수로 먹을까 봐 걱정돼요. 미리 준비해 둘 만한 게 있나요?", hours=0.1)
    )
    assert follow.messages[0]["text"] == "걱정되시죠. 함께 차근차근 살펴볼게요."
    assert source_of("emergency-anaphylaxis") in follow.messages[-1]["text"]
    meds = await engine.handle(
        said("남편이 로사르탄 먹어요. 같이 먹으면 안 되는 약이 있을까요?", hours=0.2)
    )
    body = meds.messages[-1]["text"]
    assert source_of("medicine-losartan-arbs") in body  # medicines, not a diet
    assert source_of("lifestyle-dash-diet-blood-pressure") not in body


async def test_the_medicine_a_question_means_is_asked_when_it_is_unclear(engine: Engine) -> None:
    await engine.handle(command("start", "medical"))
    none_yet = await engine.handle(said("부작용은요?"))
    assert texts(none_yet) == "어떤 약에 대해 물어보시는 건지 약 이름을 알려 주시겠어요?"
    await engine.handle(said("메트포르민이랑 로사르탄 먹어요", hours=0.1))
    which = await engine.handle(said("부작용은요?", hours=0.2))
    assert texts(which).endswith("지금 기억하고 있는 약: 메트포르민, 로사르탄")
    assert "출처:" not in texts(which)
    named = await engine.handle(said("로사르탄 부작용이요", hours=0.3))
    assert source_of("medicine-losartan-arbs") in named.messages[-1]["text"]
    # the medicine just asked about is what "the medicine" means next
    then = await engine.handle(said("그 약 언제 먹어요?", hours=0.4))
    assert source_of("medicine-losartan-arbs") in then.messages[-1]["text"]
    summary = texts(await engine.handle(command("summary", hours=0.5)))
    assert "부작용은요?" not in summary  # a "which one?" is not a question answered


async def test_no_wrong_fact_from_a_permission_question_or_a_corrected_reading(
    engine: Engine,
) -> None:
    await engine.handle(command("start", "medical"))
    await engine.handle(said("My dad is 80 and he takes warfarin. Can he take ibuprofen?"))
    await engine.handle(said("his bp was 140/90, sorry I mean 130/85", hours=0.1))
    export = await engine.handle(command("export", "json", user_id=STAFF, hours=0.2))
    rows = json.loads(export.documents[0].content)
    profile = next(r for r in rows if r["domain"] == "medical")["profile"]
    assert [m["name"] for m in profile["medications"]] == ["warfarin"]
    assert profile["vitals"]["bp_sys"] == 130 and profile["vitals"]["bp_dia"] == 85


async def test_another_persons_words_are_not_mixed_into_the_profile(engine: Engine) -> None:
    await engine.handle(command("start", "medical"))
    await engine.handle(said("BP 150/95인데 괜찮아요?"))
    baby = await engine.handle(said("아기가 생후 2개월인데 열이 38도예요", hours=0.1))
    assert [a.code for a in baby.alerts] == ["INFANT_FEVER"]  # safety first, as ever
    assert "섞이지 않도록 기록하지 않았어요" in texts(baby)
    assert "답해 드릴게요" not in texts(baby)  # an urgent message gets no general answer
    summary = texts(await engine.handle(command("summary", hours=0.2)))
    assert "혈압 150/95" in summary and "체온" not in summary and "상담 대상" not in summary


@pytest.mark.parametrize(
    ("carer", "kept"),
    [
        ("내가 혈압이랑 당뇨가있어서 메트포르민도 먹거든요 그것도 세어봐야되나요", False),
        ("I have asthma myself, is that why he wheezes?", False),
        # near-misses: the carer acting for the child, or the child's own
        ("제가 아까 챔프 5ml 먹였어요", True),
        ("애가 기침을 해요", True),
    ],
)
async def test_a_carers_own_health_is_not_put_in_the_childs_profile(
    engine: Engine, carer: str, kept: bool
) -> None:
    await engine.handle(command("start", "medical"))
    await engine.handle(said("20개월 아들이에요 어제부터 열이 나요"))
    reply = await engine.handle(said(carer, hours=0.1))
    assert ("본인의 건강 정보는" in texts(reply) or "about yourself" in texts(reply)) is not kept
    export = await engine.handle(command("export", "json", user_id=STAFF, hours=0.2))
    rows = json.loads(export.documents[0].content)
    profile = next(r for r in rows if r["domain"] == "medical")["profile"]
    names = {i["name"] for part in ("conditions", "medications") for i in profile[part]}
    assert not names & {"diabetes", "hypertension", "metformin", "asthma"}


async def test_numbers_without_what_they_measure_are_asked_about(engine: Engine) -> None:
    await engine.handle(command("start", "medical"))
    first = await engine.handle(said("ㅋㅋㅋ"))
    assert "건강 상담 도우미" in texts(first)
    again = await engine.handle(said("😭😭", hours=0.1))
    assert "건강 상담 도우미" not in texts(again)  # the introduction once, a short prompt after
    bare = await engine.handle(said("150 나왔어요", hours=0.2))
    assert texts(bare).startswith("어떤 수치인지 알려 주시겠어요?")
    en = await engine.handle(said("it was 180 this morning", hours=0.3))
    assert texts(en).startswith("Which reading is that?")
    impossible = await engine.handle(said("체온 60도예요", hours=0.4))
    assert "나올 수 없는 값" in texts(impossible) and "찾지 못했어요" not in texts(impossible)
    dated = await engine.handle(said("2026년 3월에 수술했어요", hours=0.5))
    assert "어떤 수치인지" not in texts(dated)  # a date is no reading


async def test_a_question_about_the_bot_and_a_worried_one_get_a_human_word(
    engine: Engine,
) -> None:
    await engine.handle(command("start", "medical"))
    who = await engine.handle(said("당신 진짜 의사 맞아요? 대답이 왜 이래요"))
    assert "의사가 아니에요" in texts(who) and "출처:" not in texts(who)
    worried = await engine.handle(said("혈압이 170에 100 나왔어요 너무 무서워요", hours=0.1))
    assert worried.messages[0]["text"] == "걱정되시죠. 함께 차근차근 살펴볼게요."
    assert worried.messages[-1]["text"].splitlines()[-1].startswith("출처:")
    en = await engine.handle(said("are you a real doctor?", hours=0.2))
    assert "not a doctor" in texts(en)


async def test_a_personal_line_comes_only_from_a_passage_on_the_question(engine: Engine) -> None:
    await engine.handle(command("start", "medical"))
    await engine.handle(said("I have type 2 diabetes"))
    reply = await engine.handle(said("is it ok to drink a glass of wine?", hours=0.1))
    body = reply.messages[-1]["text"]
    assert source_of("lifestyle-alcohol") in body
    assert "mg/dL" not in body  # no glucose thresholds from an entry on something else


async def test_a_greeting_with_a_question_is_a_question(engine: Engine) -> None:
    await engine.handle(command("start", "medical"))
    reply = await engine.handle(said("hi, what food should I avoid with diabetes?"))
    assert reply.messages[-1]["text"].splitlines()[-1].startswith("Sources:")


async def test_the_language_a_person_writes_in_is_kept_for_commands(engine: Engine) -> None:
    await engine.handle(command("start", "medical"))  # the chat starts in Korean
    await engine.handle(said("My head really hurts and I take metformin"))
    summary = await engine.handle(command("summary", hours=0.1))
    assert "Pre-visit summary" in texts(summary) and "headache" in texts(summary)
    profile = await engine.handle(command("profile", hours=0.1))
    assert "metformin" in texts(profile) and "메트포르민" not in texts(profile)


async def test_a_reading_is_placed_in_its_band_with_the_bands_source(engine: Engine) -> None:
    await engine.handle(command("start", "medical"))
    reply = await engine.handle(said("저 당뇨 있어요. 공복혈당이 180 나왔어요"))
    body = reply.messages[-1]["text"]
    assert "혈당 180: 공복혈당 기준으로 '당뇨병' 범위에 해당해요." in body
    assert "진단하지는 않으니" in body  # a band, not a diagnosis
    assert "https://diabetes.org/about-diabetes/diagnosis" in body.splitlines()[-1]
    en = await engine.handle(said("BP 150/95 this morning", hours=0.1))
    assert "is in the 'stage 1 hypertension' range" in en.messages[-1]["text"]
    # a reading still to be confirmed is not placed until it is
    unsure = await engine.handle(said("A1c 7.1 괜찮은 건가요?", hours=0.2))
    assert "범위에 해당해요" not in texts(unsure)


async def test_english_question_is_answered_in_english(engine: Engine) -> None:
    await engine.handle(command("start", "medical"))
    answer = await engine.handle(said("What does an HbA1c of 8.2 mean?"))
    body = answer.messages[-2]["text"]
    # A reading in a question is probably the person's: asked about before it is recorded.
    assert answer.messages[-1]["text"] == "Shall I record your HbA1c as 8.2?"
    assert "HbA1c" in body and body.splitlines()[-1].startswith("Sources:")


async def test_nonsense_gets_no_made_up_answer(engine: Engine) -> None:
    await engine.handle(command("start", "medical"))
    reply = await engine.handle(said("블라블라 크르르 뭔가요?"))
    assert "찾지 못했어요" in texts(reply) and "출처:" not in texts(reply)


async def test_impossible_readings_are_refused_politely_and_nothing_is_lost(engine: Engine) -> None:
    await engine.handle(command("start", "medical"))
    await engine.handle(said("당뇨가 있어요"))
    reply = await engine.handle(said("혈압 400/20 나왔어요"))
    assert "나올 수 없는 값" in texts(reply)
    profile = await engine.handle(command("profile"))
    assert "당뇨병" in texts(profile) and "400" not in texts(profile)


async def test_consolidation_keeps_one_item_and_the_latest_value(engine: Engine) -> None:
    await engine.handle(command("start", "medical"))
    await engine.handle(said("혈압이 140에 90이에요"))
    await engine.handle(said("오늘 다시 재니 혈압 120/80 나왔어요", hours=1))
    await engine.handle(said("두통이 있어요", hours=1.1))
    await engine.handle(said("머리가 아파요", hours=1.2))
    shown = texts(await engine.handle(command("profile", hours=1.3)))
    assert "혈압 120/80" in shown and "140/90" not in shown
    assert shown.count("두통") == 1


async def test_the_profile_survives_a_restart(settings, knowledge, brain, kb) -> None:
    first = await Engine.open(settings, knowledge=knowledge, brain=brain, kb=kb)
    await first.handle(command("start", "medical"))
    await first.handle(said("고혈압이 있고 암로디핀 먹어요"))
    await first.close()
    second = await Engine.open(settings, knowledge=knowledge, brain=brain, kb=kb)
    try:
        shown = texts(await second.handle(command("profile")))
        assert "고혈압" in shown and "암로디핀" in shown
    finally:
        await second.close()


async def test_a_stale_medicine_is_reconfirmed_once_before_it_is_used(engine: Engine) -> None:
    await engine.handle(command("start", "medical"))
    await engine.handle(said("당뇨가 있고 메트포르민 먹고 있어요"))
    weeks = 24 * 21
    asked = await engine.handle(said("요즘 발이 저려요. 왜 그럴까요?", hours=weeks))
    assert "메트포르민" in texts(asked) and "아직" in texts(asked)
    assert buttons(asked) == ["m:yes", "m:no"]
    answered = await engine.handle(pressed("m:no", hours=weeks + 0.1))
    assert "지난 기록" in texts(answered)
    assert "출처:" in texts(answered)  # the question that waited is answered now
    shown = texts(await engine.handle(command("profile", hours=weeks + 0.2)))
    assert "메트포르민" in shown and "과거" in shown
    again = await engine.handle(said("발 관리는 어떻게 해요?", hours=weeks + 10))
    assert "아직 메트포르민" not in texts(again)


async def test_a_repeated_question_is_answered_from_the_cache_until_the_profile_changes(
    engine: Engine,
) -> None:
    await engine.handle(command("start", "medical"))
    first = await engine.handle(said("두통이 자주 있어요"))
    assert "전에 물어보셔서" not in texts(first)
    again = await engine.handle(said("두통이 자주 있어요", hours=0.1))
    assert "전에 물어보셔서" in texts(again)
    await engine.handle(said("참 저 고혈압이 있어요", hours=0.2))
    changed = await engine.handle(said("두통이 자주 있어요", hours=0.3))
    assert "전에 물어보셔서" not in texts(changed)  # a new diagnosis: answered afresh


async def test_a_red_flag_builds_up_over_two_messages(engine: Engine) -> None:
    await engine.handle(command("start", "medical"))
    first = await engine.handle(said("가슴이 아파요"))
    assert not first.alerts
    second = await engine.handle(said("식은땀도 나요", hours=0.1))
    assert [a.code for a in second.alerts] == ["CHEST_PAIN"]
    assert "119" in second.messages[0]["text"]
    # what to do now and while the ambulance comes, not a general answer
    cited = [line for line in texts(second).splitlines() if line.startswith("출처:")]
    assert cited == ["출처: NHS: Heart attack (https://www.nhs.uk/conditions/heart-attack/)"]
    third = await engine.handle(said("식은땀이 계속 나요", hours=0.2))
    assert not third.alerts  # raised once
    summary = texts(await engine.handle(command("summary", hours=0.3)))
    assert "CHEST_PAIN" in summary


async def test_a_tight_chest_then_a_numb_left_arm_raises_the_alert(engine: Engine) -> None:
    """A carer's words, a tightness rather than a pain, and the sign a message later."""
    await engine.handle(command("start", "medical"))
    first = await engine.handle(said("엄마가 75세신데 가슴이 좀 답답하시대요"))
    assert not first.alerts
    second = await engine.handle(said("왼팔도 저리다고 하세요", hours=0.1))
    assert [a.code for a in second.alerts] == ["CHEST_PAIN"]
    assert "119" in second.messages[0]["text"]


async def test_near_misses_do_not_alert(engine: Engine) -> None:
    await engine.handle(command("start", "medical"))
    for i, text in enumerate(
        [
            "가슴이 답답해요 스트레스 때문에",
            "my grandmother had a stroke years ago",
            "예전에 흑변 본 적 있는데 괜찮아졌어요",
        ]
    ):
        assert not (await engine.handle(said(text, hours=i))).alerts


async def test_an_unsure_reading_is_confirmed_with_a_button(engine: Engine) -> None:
    await engine.handle(command("start", "medical"))
    reply = await engine.handle(said("혈압이 한 150에 95 정도였던 것 같아요"))
    if "m:yes" not in buttons(reply):  # the extractor read it as sure: nothing to confirm
        assert "혈압 150/95" in texts(reply)
        return
    confirmed = await engine.handle(pressed("m:yes", hours=0.1))
    assert "기록해 둘게요" in texts(confirmed) or "확인했어요" in texts(confirmed)
    assert "150/95" in texts(await engine.handle(command("profile", hours=0.2)))


async def test_summary_on_an_empty_profile_is_polite(engine: Engine) -> None:
    await engine.handle(command("start", "medical"))
    assert "아직" in texts(await engine.handle(command("summary")))
    assert "아직" in texts(await engine.handle(command("profile")))


async def test_a_profile_item_can_be_deleted(engine: Engine) -> None:
    await engine.handle(command("start", "medical"))
    await engine.handle(said("당뇨가 있고 메트포르민 먹어요"))
    shown = await engine.handle(command("profile"))
    assert "m:del:medications:metformin" in buttons(shown)
    gone = await engine.handle(pressed("m:del:medications:metformin"))
    assert "메트포르민" in texts(gone)
    assert "메트포르민" not in texts(await engine.handle(command("profile")))


async def test_a_legal_matter_in_the_medical_domain_goes_to_the_legal_intake(
    engine: Engine,
) -> None:
    await engine.handle(command("start", "medical"))
    await engine.handle(said("고혈압이 있어요"))
    reply = await engine.handle(said("전세 보증금 3천만원을 집주인이 안 돌려줘요", hours=0.1))
    assert "법률 상담으로 넘어갈게요" in texts(reply) and reply.state != "MEDICAL"
    assert reply.state == "FACT_COLLECTION" and reply.field  # the intake has begun on it
    back = await engine.handle(command("start", "medical", hours=0.2))
    assert back.state == "MEDICAL"
    profile = texts(await engine.handle(command("profile", hours=0.3)))
    assert "고혈압" in profile  # nothing of the health profile was lost


async def test_new_switches_domains_and_both_are_kept(engine: Engine) -> None:
    await engine.handle(command("start", "medical"))
    await engine.handle(said("고혈압이 있어요"))
    switch = await engine.handle(command("new"))
    assert buttons(switch) == ["domain:legal", "domain:medical"]
    legal = await engine.handle(pressed("domain:legal"))
    assert legal.state != "MEDICAL"
    await engine.handle(said("친구한테 300만원 빌려줬는데 안 갚아요", hours=0.1))
    back = await engine.handle(command("start", "medical", hours=0.2))
    assert back.state == "MEDICAL"
    assert "고혈압" in texts(await engine.handle(command("profile", hours=0.3)))


async def open_legal_then_medical_waiting_on_a_button(engine: Engine, knowledge) -> int:
    """A chat with a legal intake open at a question with buttons (a:evidence:...) that moved
    to the medical assistant, which now waits on a yes / no of its own; returns the hours."""
    await engine.handle(said("작년 3월에 친구 김철수한테 300만원 빌려줬는데 안 갚아요"))
    legal = await engine.handle(said("올해 6월", hours=0.1))
    assert "a:evidence:yes" in buttons(legal)
    assert knowledge.k2.field("LOAN", "evidence").question.ko in texts(legal)
    await engine.handle(command("start", "medical", hours=0.2))
    await engine.handle(said("당뇨가 있고 메트포르민 먹고 있어요", hours=0.3))
    weeks = 24 * 21
    asked = await engine.handle(said("요즘 발이 저려요. 왜 그럴까요?", hours=weeks))
    assert buttons(asked) == ["m:yes", "m:no"]
    return weeks


async def test_a_refused_press_in_a_medical_chat_shows_the_medical_question(
    engine: Engine, knowledge
) -> None:
    """A stale legal button pressed in a medical chat: refused, and the question shown again is
    the medical one with its buttons, never the open legal intake's; the medical button still
    counts and goes to the medical assistant."""
    weeks = await open_legal_then_medical_waiting_on_a_button(engine, knowledge)
    refused = await engine.handle(pressed("a:evidence:yes", hours=weeks + 0.1))
    assert refused.refused and refused.state == "MEDICAL"
    assert buttons(refused) == ["m:yes", "m:no"]
    assert "메트포르민" in texts(refused)
    assert knowledge.k2.field("LOAN", "evidence").question.ko not in texts(refused)
    answered = await engine.handle(pressed("m:no", hours=weeks + 0.2))
    assert answered.state == "MEDICAL" and "지난 기록" in texts(answered)
    assert "출처:" in texts(answered)  # the question that waited is answered now
    nothing = await engine.handle(pressed("m:yes", hours=weeks + 0.3))  # asked and answered
    assert nothing.refused and buttons(nothing) == []
    assert knowledge.message("med_prompt", "ko") in texts(nothing)


async def test_a_press_goes_to_the_domain_that_offered_it(engine: Engine, knowledge) -> None:
    """A legal answer button that counts in a chat now in the medical domain (offered by the
    legal intake, however it came to be the latest offer) answers the legal intake, which the
    chat follows from then on; the medical graph never sees it."""
    weeks = await open_legal_then_medical_waiting_on_a_button(engine, knowledge)
    await repo.set_offer(
        engine=engine.records, chat_id=CHAT, user_id=5, choices=["a:evidence:yes", "a:evidence:no"]
    )
    legal = await engine.handle(pressed("a:evidence:yes", hours=weeks + 0.1))
    assert not legal.refused and legal.state == "FACT_COLLECTION"
    assert legal.field == "evidence_type"
    assert knowledge.k2.field("LOAN", "evidence_type").question.ko in texts(legal)
    assert (await repo.chat_view(engine=engine.records, chat_id=CHAT)).domain == "legal"
    row = await medical_repo.profile_of(engine=engine.records, chat_id=CHAT)
    medical = await engine.medical_graph.aget_state({"configurable": {"thread_id": row.id}})
    assert medical.values["pending"]["kind"] == "reconfirm"  # the medical graph never saw it
    typed = await engine.handle(said("카톡 대화랑 차용증이 있어요", hours=weeks + 0.2))
    assert typed.state != "MEDICAL"  # the next words go on with the legal intake


async def test_export_has_the_medical_keys(engine: Engine) -> None:
    await engine.handle(command("start", "medical"))
    await engine.handle(said("저는 54세 여자고 당뇨가 있어요. 메트포르민 먹고 있어요"))
    await engine.handle(said("혈압 138/85, 당화혈색소 7.1 나왔어요", hours=0.1))
    await engine.handle(said("어머니가 고혈압이 있으세요", hours=0.2))
    await engine.handle(said("가슴이 너무 아프고 식은땀이 나요", hours=0.3, input_id="u9"))
    export = await engine.handle(command("export", "json", user_id=STAFF, hours=0.4))
    rows = json.loads(export.documents[0].content)
    row = next(r for r in rows if r["domain"] == "medical")
    profile = row["profile"]
    assert profile["age"] == 54 and profile["sex"] == "female"
    assert [c["name"] for c in profile["conditions"]] == ["diabetes"]
    med = profile["medications"][0]
    assert med["name"] == "metformin" and med["name_ko"] == "메트포르민" and med["current"] is True
    assert set(med) == {
        "name",
        "name_ko",
        "text",
        "first_said",
        "last_said",
        "importance",
        "current",
    }
    assert profile["vitals"] == {"bp_sys": 138, "bp_dia": 85}
    assert profile["labs"] == {"hba1c": 7.1}
    assert profile["family_history"] == ["hypertension"]
    assert [(a["code"], a["text"]) for a in row["alerts"]] == [
        ("CHEST_PAIN", "가슴이 너무 아프고 식은땀이 나요")
    ]
    assert all("가슴이 너무" not in q["question"] for q in row["questions"])
    assert row["summary_text"] and "CHEST_PAIN" in row["summary_text"]
    for fmt in ("csv", "md"):
        other = await engine.handle(command("export", fmt, user_id=STAFF, hours=0.5))
        content = other.documents[0].content.decode("utf-8")
        assert "metformin" in content and "medical" in content
    sessions = texts(await engine.handle(command("sessions", user_id=STAFF, hours=0.6)))
    assert str(CHAT) in sessions


async def test_forget_leaves_no_row_cache_entry_or_checkpoint(
    engine: Engine, settings, knowledge
) -> None:
    await engine.handle(command("start", "medical"))
    await engine.handle(said("당뇨가 있고 메트포르민 먹어요", input_id="u1"))
    await engine.handle(said("두통이 자주 있어요", input_id="u2"))
    await engine.handle(said("가슴이 너무 아프고 식은땀이 나요", input_id="u3"))
    await engine.handle(command("forget"))
    done = await engine.handle(pressed("cmd:forget"))
    assert "지웠어요" in texts(done)
    tables = [t for t in SQLModel.metadata.tables if t != "chatpreference"]
    with sqlite3.connect(records_path(settings.intake_data_dir)) as db:
        for table in tables:
            columns = [c[1] for c in db.execute(f"pragma table_info({table})")]
            for column in ("chat_id", "profile_id", "session_id"):
                if column in columns:
                    rows = db.execute(f"select count(*) from {table}").fetchone()[0]
                    assert rows == 0, f"{table} still has {rows} rows"
        # Only the chat's settings stay: its language and the assistant it talks to (its
        # safety memory cleared).
        kept = db.execute("select * from chatpreference").fetchall()
        assert kept == [(CHAT, "ko", "medical", None, 0)]  # (lang_chosen: never picked)
    with sqlite3.connect(checkpoints_path(settings.intake_data_dir)) as db:
        names = [r[0] for r in db.execute("select name from sqlite_master where type='table'")]
        for name in names:
            columns = [c[1] for c in db.execute(f"pragma table_info({name})")]
            if "thread_id" in columns:
                assert db.execute(f"select count(*) from {name}").fetchone()[0] == 0
    # The chat is still in the medical assistant: its commands work, on an empty profile.
    profile = await engine.handle(command("profile", hours=1))
    assert profile.state == "MEDICAL"
    assert texts(profile) == knowledge.message("med_profile_empty", "ko")
    assert texts(await engine.handle(command("summary", hours=1))) == knowledge.message(
        "med_summary_empty", "ko"
    )
    answer = await engine.handle(said("두통이 자주 있어요", hours=1.1))
    assert answer.state == "MEDICAL" and "출처:" in texts(answer)
