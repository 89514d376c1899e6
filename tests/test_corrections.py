"""A recorded value changes only through a correction the person confirms, shown old → new, in
every state: a name taken back or the field named with another name, during the intake and
after the summary; a typed yes or no counts like the buttons; a request is no name. The memo
reaches the export. Through the real engine, graph and records."""

from __future__ import annotations

import json
from datetime import datetime

from bot.engine import Engine
from bot.export import collect, render
from graphs.legal.changes import (
    Sorted,
    beside_paired,
    kept_as_said,
    name_corrections,
    paired_corrections,
    removed_options,
)
from tests.test_hardening import choice, graph_values, joined, offered, text

LOAN = (
    "작년 3월에 친구 김민수한테 500만원 빌려줬는데 5월에 100만원 갚고 나머지는 안 갚아요. "
    "돌려받고 싶어요"
)


async def finished(engine: Engine) -> None:
    """A loan intake up to its summary."""
    await engine.handle(text(LOAN))
    await engine.handle(text("올해 12월까지 갚기로 했어요"))
    done = await engine.handle(choice("a:evidence:no"))
    assert done.state == "COMPLETED"


async def test_a_name_taken_back_after_the_summary_is_shown_and_a_typed_yes_applies_it(
    engine: Engine,
) -> None:
    await finished(engine)
    shown = await engine.handle(text("상대방은 김민수가 아니고 김민호예요", minutes=2))
    assert "김민수 → 김민호" in joined(shown)
    applied = await engine.handle(text("네", minutes=3))
    values = await graph_values(engine)
    assert values["facts"]["counterparty"] == "김민호"
    assert values["provenance"]["counterparty"]["confirmed"] is True
    assert "김민호" in joined(applied)
    # the key field and the memo's party item, both
    assert {(a["field"].split(":")[0], a["new"]) for a in values["amendments"]} == {
        ("counterparty", "김민호"),
        ("memo", "김민호"),
    }


async def test_the_field_named_with_another_name_and_a_typed_no_keeps_it(engine: Engine) -> None:
    await finished(engine)
    before = (await graph_values(engine))["facts"]["counterparty"]
    shown = await engine.handle(text("빌려 간 사람은 박영수예요", minutes=2))
    assert f"{before} → 박영수" in joined(shown)
    await engine.handle(text("아니요", minutes=3))
    values = await graph_values(engine)
    assert values["facts"]["counterparty"] == before
    assert not values.get("asides")  # refused: no second name for the lawyer to weigh
    assert any("박영수예요" in a["text"] for a in values["addenda"])  # their words, kept


async def test_a_request_is_no_name_and_changes_nothing(engine: Engine) -> None:
    await finished(engine)
    before = (await graph_values(engine))["facts"]["counterparty"]
    reply = await engine.handle(text("경찰 오면 접근금지 해달라고 말하면 되는거에요?", minutes=2))
    assert "→" not in joined(reply)
    reply = await engine.handle(text("이름 안바꿨어요 김민수 맞아요", minutes=3))
    assert "→" not in joined(reply)
    assert (await graph_values(engine))["facts"]["counterparty"] == before


async def test_another_person_named_beside_a_role_word_replaces_no_other_party(
    engine: Engine,
) -> None:
    """A witness, an adjuster, an app named later are other parties, kept in the memo, not a
    correction of the recorded one (legal_set14 A3, A1, R1, R6 were each asked to replace the
    other party with one of them)."""
    await finished(engine)
    before = (await graph_values(engine))["facts"]["counterparty"]
    for n, said in enumerate(
        [
            "그날 옆에서 본 정우라는 친구도 있구요",
            "보험사에서 손해사정사 정민호 과장이라는 사람이 와서 보고 갔어요",
            "나중에 코인웨이브라는 앱을 깔았어요",
            "경찰서에서 받은 스마트워치도 차고있어요",
        ]
    ):
        reply = await engine.handle(text(said, minutes=2 + n))
        assert "→" not in joined(reply), said
    values = await graph_values(engine)
    assert values["facts"]["counterparty"] == before
    named = {i.get("name") for i in values["memo"] if i["section"] == "parties"}
    assert "정우" in {str(n).split()[0] for n in named if n}
    assert not any("스마트" in str(n) for n in named)


async def test_a_name_corrected_during_the_intake_waits_for_the_yes(engine: Engine) -> None:
    await engine.handle(text(LOAN))
    shown = await engine.handle(text("아 김민수 말고 김민호예요", minutes=1))
    assert "김민수 → 김민호" in joined(shown)
    await engine.handle(choice("a:changes:confirm"))
    assert (await graph_values(engine))["facts"]["counterparty"] == "김민호"


def test_name_corrections_need_the_old_name_taken_back_or_the_field_named() -> None:
    facts = {"counterparty": "친구 김민수"}
    labels = {"counterparty": ["상대방", "빌려 간 사람", "Other party"]}
    assert name_corrections(facts, labels, [("김민호", 8)], "김민수 아니고 김민호요") == [
        {"field": "counterparty", "old": "친구 김민수", "new": "김민호"}
    ]
    # the new name before the taken-back one
    assert name_corrections(facts, labels, [("김민호", 0)], "김민호예요 김민수 아니고")[0][
        "new"
    ] == ("김민호")
    # a name told of someone else, the field not named: no correction
    assert name_corrections(facts, labels, [("박영희", 0)], "박영희가 증인이에요") == []
    text_en = "The other party is not Kim Minsu, it is Lee Jiho"
    assert name_corrections(
        {"counterparty": "Kim Minsu"}, labels, [("Kim Minsu", 20), ("Lee Jiho", 36)], text_en
    )[0]["new"] == ("Lee Jiho")


async def test_the_export_carries_the_memo_with_roles_and_quotes(engine: Engine) -> None:
    await finished(engine)
    (row,) = await collect(
        engine=engine.records, include_open=True, intake_state=engine.intake_state
    )
    money = {(i["amount"], i["role"]) for i in row["memo"] if i["section"] == "money"}
    assert money == {(5_000_000, "lent"), (1_000_000, "repaid")}
    assert row["facts"]["amount"] == 5_000_000  # the lent amount, not the last one said
    lent = next(i for i in row["memo"] if i.get("role") == "lent")
    assert row["structured"]["facts_detail"]["amount"]["item"] == lent["id"]
    assert "[금전 내역]" in row["summary_text"]
    assert json.dumps(row, ensure_ascii=False)  # plain JSON all through


async def test_a_conversation_with_a_safety_alert_is_exported_as_urgent(engine: Engine) -> None:
    reply = await engine.handle(text("남편이 지금 칼을 들고 위협하고 있어요 이혼하고 싶어요"))
    assert reply.alerts
    rows = await collect(engine=engine.records, include_open=True, intake_state=engine.intake_state)
    (row,) = rows
    assert row["alerts"] and row["urgent"] is True
    assert "⏰" not in render(rows, "md")  # urgent for its alert, not for a deadline


async def test_a_threatened_photo_is_no_evidence_and_its_day_no_incident_date(
    engine: Engine,
) -> None:
    await engine.handle(
        text("전남친이 월요일에 회사로 찾아가서 사진 뿌린다고 했어요. 돈 안 보내면 다 올린대요")
    )
    values = await graph_values(engine)
    assert "evidence" not in values["facts"] and "evidence_type" not in values["facts"]
    assert "incident_date" not in values["facts"]
    (when,) = [i for i in values["memo"] if i["section"] == "chronology"]
    assert when["planned"] is True and when["date"] == "2026-11-23"  # the coming Monday


async def test_a_yes_in_either_language_and_a_no_that_opens_a_sentence_settle_the_changes(
    engine: Engine,
) -> None:
    await engine.handle(text("작년 3월에 친구 김민수한테 500만원 빌려줬는데 안 갚아요"))
    shown = await engine.handle(text("아 500 아니고 600이에요", minutes=1))
    assert "→" in joined(shown)
    before = (await graph_values(engine))["asking"]
    await engine.handle(text("아니요 500 맞아요 제가 헷갈렸어요", minutes=2))
    values = await graph_values(engine)
    assert values["facts"]["amount"] == 5_000_000  # kept: the "아니요" was the verdict
    assert values["asking"] == before  # and answered nothing else
    assert "제가 헷갈렸어요" in values["facts"]["action_description"]


async def test_a_count_taken_back_as_the_bot_suggests_it_is_shown_and_applied(
    engine: Engine,
) -> None:
    """Tester set 5 (tQ3): "5명이 아니라 2명이에요" and then "5 아니고 2요" (the very form the
    bot suggested) changed nothing; a count is corrected like an amount."""
    await engine.handle(text("남편과 이혼하려고 해요. 결혼한 지 10년 됐고 아이는 3명이에요"))
    assert (await graph_values(engine))["facts"]["children_count"] == 3
    shown = await engine.handle(text("아 자녀 수가 틀렸어요. 3명이 아니라 2명이에요", minutes=1))
    assert "3 → 2" in joined(shown)
    await engine.handle(text("네", minutes=2))
    assert (await graph_values(engine))["facts"]["children_count"] == 2
    again = await engine.handle(text("2 아니고 1이요", minutes=3))
    assert "2 → 1" in joined(again)


async def test_a_korean_yes_in_an_english_intake_applies_the_change(engine: Engine) -> None:
    first = await engine.handle(
        text("I lent 5 million won to my friend Minsu last March and he never paid me back")
    )
    picked = [d for d in offered(first) if d.endswith("LOAN")]
    if picked:  # the case type asked with buttons first
        await engine.handle(choice(picked[0]))
    shown = await engine.handle(text("sorry, not 5 million, it was 6 million", minutes=1))
    assert "→" in joined(shown)
    await engine.handle(text("네", minutes=2))
    assert (await graph_values(engine))["facts"]["amount"] == 6_000_000


async def test_a_pair_of_values_says_which_recorded_value_changes(engine: Engine) -> None:
    """ "not A but B" and "B, not A" after the summary (legal_set6 tV2): the recorded value A
    changes to B, whichever field the words of B alone would have placed it in."""
    await finished(engine)
    values = await graph_values(engine)
    lent, due = values["facts"]["incident_date"], values["facts"]["repayment_date"]
    assert (lent, due) == ("2025-03", "2026-12")
    told = (
        "date lent is still wrong. not 2025-03 but 2025-02-03, that is first time. "
        "and he must pay back end of january 2027, not 2026-12"
    )
    shown = await engine.handle(text(told, minutes=2))
    assert f"{lent} → 2025-02-03" in joined(shown)
    assert f"{due} → 2027-01" in joined(shown)
    await engine.handle(choice("a:changes:confirm"))
    values = await graph_values(engine)
    assert values["facts"]["incident_date"] == "2025-02-03"
    assert values["facts"]["repayment_date"] == "2027-01"


def test_paired_corrections_read_where_the_values_stand() -> None:
    facts = {"incident_date": "2026-09-20", "amount": 5_000_000}
    kinds = {"incident_date": "date", "amount": "amount"}
    now = datetime(2026, 11, 28, 10)
    read = lambda words: paired_corrections(facts, kinds, words, now=now)  # noqa: E731
    assert read("i lend 4,500,000 not 5,000,000") == [
        {"field": "amount", "old": 5_000_000, "new": 4_500_000}
    ]
    assert read("500만원이 아니라 450만원이에요")[0]["new"] == 4_500_000
    assert read("9월 20일 아니고 6월 3일이에요")[0]["new"] == "2026-06-03"  # the year kept
    assert read("9월20일이 아니라 2025년 6월 3일")[0]["new"] == "2025-06-03"
    assert read("9월 20일에 빌려줬고 6월 3일에 갚았어요") == []  # two events, nothing taken back


def test_a_value_said_to_be_right_is_not_changed_by_the_other_beside_it() -> None:
    now = datetime(2026, 11, 28, 10)
    monthly = [{"field": "monthly_support", "old": 800_000, "new": 9_600_000}]
    said = "월 양육비 80만원 맞아요 960만원은 12달 밀린 전체 금액이에요"  # legal_set7 tW3
    assert kept_as_said(monthly, said, now=now) == []
    posted = [{"field": "incident_date", "old": "2026-10-03", "new": "2026-10-05"}]
    said = "게시 날짜는 10월 3일이 맞습니다. 10월 5일은 삭제 요청한 날입니다."  # tW4
    assert kept_as_said(posted, said, now=now) == []
    assert kept_as_said(posted, "10월 3일 아니고 10월 5일이에요", now=now) == posted


def test_a_pair_of_amounts_corrects_the_memo_item_that_holds_it() -> None:
    memo = [
        {"id": "m3", "section": "money", "amount": 15_000_000, "role": "paid", "quote": "q"},
        {"id": "m4", "section": "money", "amount": 9_000_000, "role": "paid", "quote": "q"},
    ]
    said = "중도금 1,500만원 아니고 1,800만원입니다. 통장 다시 보니까 1,800 보냈어요."  # tW6
    found = paired_corrections(
        {"amount": 9_000_000}, {"amount": "amount"}, said, now=datetime(2026, 11, 28), memo=memo
    )
    assert found == [{"field": "memo:m3", "old": 15_000_000, "new": 18_000_000}]


def test_a_pairs_new_value_corrects_only_what_the_pair_took_back() -> None:
    """legal_set12 S4: "the late penalty is 470,000 not 290,000" put the 290,000 item right and
    was also offered as the tax assessed (3,200,000 → 470,000), its cue word read for it."""
    memo = [{"id": "m5", "section": "money", "amount": 290_000, "role": "unclear", "quote": "q"}]
    facts, kinds = {"amount": 3_200_000}, {"amount": "amount"}
    said = "the late penalty is 470,000 not 290,000"
    paired = paired_corrections(facts, kinds, said, now=datetime(2026, 11, 28), memo=memo)
    assert paired == [{"field": "memo:m5", "old": 290_000, "new": 470_000}]
    read = Sorted(proposed=[{"field": "amount", "old": 3_200_000, "new": 470_000}])
    read.settle_pairs(paired)
    assert read.proposed == []
    other = Sorted(proposed=[{"field": "incident_date", "old": "2026-03-01", "new": "2026-04-01"}])
    other.settle_pairs(paired)
    assert other.proposed != []  # a correction of something else stands


def test_a_key_field_put_right_by_a_pair_leaves_the_item_of_the_old_value() -> None:
    # "과태료 금액이 16만원이 아니고 20만원이에요 16만원은 빨리내면 깎아준다는거구요" (tX2)
    paired = [{"field": "amount", "old": 160_000, "new": 200_000}]
    item = {"field": "memo:m2", "old": 160_000, "new": 200_000}
    assert beside_paired([*paired, item], paired) == paired


def test_an_item_told_in_the_fields_own_words_changes_with_the_field() -> None:
    """legal_set10 Q4: "돌아가신 날 6월 3일 아니고 6월 5일이에요" put the date of death right and
    left «올해 6월 3일에 돌아가셨어요» in the chronology; an item of another event that held the
    old value («작년3월부터 사귀다가» beside the start of the threats) stays."""
    memo = [
        {
            "id": "m1",
            "section": "chronology",
            "date": "2026-06-03",
            "quote": "올해 6월 3일에 돌아가셨어요",
        },
        {"id": "m2", "section": "chronology", "date": "2025-03", "quote": "작년3월부터 사귀다가"},
    ]
    cues = {"death_date": ["돌아가신", "돌아가셨", "사망"], "threat_start": ["협박", "촬영"]}
    paired = [{"field": "death_date", "old": "2026-06-03", "new": "2026-06-05"}]
    item = {"field": "memo:m1", "old": "2026-06-03", "new": "2026-06-05"}
    assert beside_paired([*paired, item], paired, memo=memo, cues=cues) == [*paired, item]
    paired = [{"field": "threat_start", "old": "2025-03", "new": "2026-10"}]
    item = {"field": "memo:m2", "old": "2025-03", "new": "2026-10"}
    assert beside_paired([*paired, item], paired, memo=memo, cues=cues) == paired
    # a wage told in the field's words is a rate, not the unpaid total corrected (legal_set14
    # B1: "unpaid wages not 230만. 230 is one month salary" rewrote the salary to 5,900,000);
    # a deposit item is the deposit field's own
    money = [
        {"id": "m3", "section": "money", "amount": 2_300_000, "role": "wage", "quote": "salary"},
        {
            "id": "m4",
            "section": "money",
            "amount": 50_000_000,
            "role": "deposit",
            "quote": "보증금",
        },
    ]
    cues = {"amount": ["salary", "wage"], "deposit": ["보증금"]}
    paired = [{"field": "amount", "old": 2_300_000, "new": 5_900_000}]
    item = {"field": "memo:m3", "old": 2_300_000, "new": 5_900_000}
    assert beside_paired([*paired, item], paired, memo=money, cues=cues) == paired
    paired = [{"field": "deposit", "old": 50_000_000, "new": 55_000_000}]
    item = {"field": "memo:m4", "old": 50_000_000, "new": 55_000_000}
    assert beside_paired([*paired, item], paired, memo=money, cues=cues) == [*paired, item]


async def test_a_no_to_the_changes_shown_with_the_right_value_shows_that_change(
    engine: Engine,
) -> None:
    """legal_set9 T1: "아니요 … 800,000원 아니고 500,000원이요" to a change shown got "I'll keep
    what I have", and the correction in it was lost. The no refuses what was shown; what
    follows is read as any message, so its correction is shown old → new in turn."""
    await engine.handle(text("친구한테 돈을 빌려줬는데 안 갚아요"))
    await engine.handle(text("김민수요", minutes=1))
    await engine.handle(text("800,000원이요", minutes=2))
    shown = await engine.handle(text("아 80만원 아니고 90만원이에요", minutes=3))
    assert "800,000원 → 900,000원" in joined(shown)
    again = await engine.handle(text("아니요 죄송해요 800,000원 아니고 500,000원이요", minutes=4))
    assert "800,000원 → 500,000원" in joined(again)
    assert "900,000" not in joined(again)
    assert (await graph_values(engine))["facts"]["amount"] == 800_000  # not before the yes
    await engine.handle(text("네", minutes=5))
    assert (await graph_values(engine))["facts"]["amount"] == 500_000
    # a plain no with no value after it still only keeps what was recorded
    await engine.handle(text("아 50만원 아니고 60만원이에요", minutes=6))
    kept = await engine.handle(text("아니요 그대로 두세요", minutes=7))
    assert "→" not in joined(kept)
    assert (await graph_values(engine))["facts"]["amount"] == 500_000


async def test_the_wish_asked_keeps_the_sentences_that_say_one(engine: Engine) -> None:
    """legal_set10 Z1, X1, X2: the answer to "how would you like this resolved?" kept the whole
    message, repayments and family trouble included; the wish is the sentence that says one,
    and the rest is read as the story (a repayment item in the memo)."""
    await engine.handle(text("친구 김민수한테 500만원 빌려줬는데 안 갚아요"))
    await engine.handle(text("작년 3월이요", minutes=1))
    await engine.handle(text("모름", minutes=2))
    asked = await engine.handle(choice("a:evidence:no"))
    assert asked.field == "desired_outcome"
    await engine.handle(
        text(
            "남은돈 400만원 돌려받고 싶어요. 올해 1월 15일에 100만원 갚았거든요. 근데 "
            "시어머니가 가족끼리 돈얘기 하지 말라고 난리세요",
            minutes=3,
        )
    )
    values = await graph_values(engine)
    assert values["facts"]["desired_outcome"] == "남은돈 400만원 돌려받고 싶어요."
    repaid = [i for i in values["memo"] if i["section"] == "money" and i["role"] == "repaid"]
    assert [i["amount"] for i in repaid] == [1_000_000]


async def test_what_a_message_after_the_summary_adds_to_the_memo_is_named(engine: Engine) -> None:
    """legal_set10: a repayment told after the summary got "the recorded details are
    unchanged", read as if nothing was kept; the items it added are named."""
    await finished(engine)
    reply = await engine.handle(text("그리고 10월 2일에 50만원 더 갚았어요", minutes=2))
    said = joined(reply)
    assert "갚은 돈 500,000원" in said
    values = await graph_values(engine)
    assert any(i.get("amount") == 500_000 for i in values["memo"])


async def test_a_wish_told_with_a_question_after_the_summary_keeps_both(engine: Engine) -> None:
    # legal_set12 B4: the wish was dropped and the person told to start a new intake
    await finished(engine)
    reply = await engine.handle(
        text("그리고 이자까지 다 받고 싶어요. 지급명령 신청하면 얼마나 걸려요?", minutes=2)
    )
    values = await graph_values(engine)
    assert "이자까지 다 받고 싶어요" in values["facts"]["desired_outcome"]
    assert any("지급명령" in q["text"] for q in values["questions"])
    assert "/new" not in joined(reply)  # no "this intake is complete, start a new one"
    # a question alone is listed and kept, changing nothing else
    before = values["facts"]
    await engine.handle(text("소송비용은 누가 내요?", minutes=3))
    values = await graph_values(engine)
    assert values["facts"] == before
    assert any("소송비용" in q["text"] for q in values["questions"])


async def test_a_correction_of_an_amount_changes_no_choice_it_does_not_name(
    engine: Engine,
) -> None:
    """legal_set16 B4: "my wife just checked … 1.5 million, not 1 million" offered "Type of
    other party → Family" beside the amount; a message naming the recorded type may change it."""
    await finished(engine)
    assert (await graph_values(engine))["facts"]["counterparty_type"] == "acquaintance"
    shown = await engine.handle(
        text("정정할게요 아내가 확인해보니 5월에 갚은 건 100만원 아니고 150만원이에요", minutes=2)
    )
    assert "가족" not in joined(shown)
    assert "1,500,000" in joined(shown)
    await engine.handle(text("아니요", minutes=3))
    shown = await engine.handle(text("상대방은 친구가 아니라 사촌이에요", minutes=4))
    assert "가족" in joined(shown)


IMAGES = "전남친이 사귈때 찍은 사진을 뿌리겠다고 협박하고 이미 친구들한테 사진을 보냈대요"


async def test_a_kind_taken_out_is_removed_and_the_list_shown_is_the_one_kept(
    engine: Engine,
) -> None:
    """legal_set16 A4: "피해 내용에 이미 퍼뜨림 빼주세요" was offered the kind named alone, and a
    confirmed change of kinds kept the old ones beside the new (the kinds told add up)."""
    await engine.handle(text(IMAGES))
    assert (await graph_values(engine))["facts"]["image_acts"] == ["threatened", "shared"]
    shown = await engine.handle(
        text("피해 내용에 이미 퍼뜨림은 빼주세요 아직 안퍼졌어요", minutes=2)
    )
    assert "이미 퍼뜨림(올리거나 보냄) → 퍼뜨리겠다는 협박" in joined(shown)
    await engine.handle(text("네", minutes=3))
    assert (await graph_values(engine))["facts"]["image_acts"] == ["threatened"]


async def test_after_the_summary_a_kind_taken_out_is_removed_once_confirmed(
    engine: Engine,
) -> None:
    await finished(engine)
    assert (await graph_values(engine))["facts"]["evidence"] is False
    await engine.handle(text("증거는 카톡이랑 차용증 있어요", minutes=2))
    await engine.handle(choice("a:changes:confirm"))
    kinds = (await graph_values(engine))["facts"]["evidence_type"]
    assert len(kinds) == 2 and "messages" in kinds
    shown = await engine.handle(text("증거 종류에서 카톡은 지워주세요", minutes=4))
    assert "→" in joined(shown)
    await engine.handle(choice("a:changes:confirm"))
    assert (await graph_values(engine))["facts"]["evidence_type"] == [
        k for k in kinds if k != "messages"
    ]


def test_a_text_to_112_is_no_image_shared() -> None:
    """legal_set16 A4, both modes: "112에 문자 보냈어요" (she texted the police) became "already
    shared" in what was done with her images."""
    from knowledge.loader import default_knowledge

    options = default_knowledge().k2.field("IMAGE_ABUSE", "image_acts").option_words
    shared = [w for v, ws in options if v == "shared" for w in ws]
    assert not any(w in "112에 문자 보냈어요 경찰 온대요" for w in shared)
    assert any(w in "걔가 제 사진을 친구들한테 보냈대요" for w in shared)


def test_the_kind_named_to_take_out_goes_and_the_kind_named_beside_it_stays() -> None:
    """legal_set19 R3: "시댁갈등은 빼주세요 성격차이만요" (and "시댁갈등으로 돼있는데 그거
    아니에요 … 성격차이랑") only added the personality clash; R1: "담배는 문제가 아니에요"
    after the summary left the smoke in."""
    from knowledge.loader import default_knowledge

    kn = default_knowledge()

    def taken_out(key: str, old: list[str], found: list[str], said: str) -> list:
        kept, proposed = removed_options(kn, {key: old}, {key: found}, said)
        assert key not in kept or not proposed
        return [p["new"] for p in proposed]

    both = ["family_conflict", "incompatibility"]
    said = "시댁갈등은 빼주세요 성격차이만요"
    assert taken_out("divorce_grounds", ["family_conflict"], both, said) == [["incompatibility"]]
    assert taken_out("divorce_grounds", both, both, said) == [["incompatibility"]]
    said = "이혼사유가 시댁갈등으로 돼있는데 그거 아니에요 그냥 성격차이랑 남편이 애를 데려간거요"
    assert taken_out("divorce_grounds", ["family_conflict"], both, said) == [["incompatibility"]]
    said = "담배는 문제가 아니에요 윗집이 보복으로 저를 담배핀다고 민원넣은거고요"
    noise = ["noise", "smoke_smell"]
    assert taken_out("neighbor_issue", noise, ["smoke_smell"], said) == [["noise"]]
    # near-miss: a kind said beside no word of taking out is no removal
    assert taken_out("divorce_grounds", ["family_conflict"], both, "성격차이도 있어요") == []


def test_only_an_item_named_where_a_removal_is_asked_is_offered_for_removal() -> None:
    from graphs.legal.memo import removals
    from knowledge.loader import default_knowledge

    kn = default_knowledge()
    memo = [{"id": "m1", "section": "parties", "name": "박성호", "role": None, "quote": "박성호"}]
    said = "시댁갈등으로 돼있는데 그거 아니에요. 남편 이름은 박성호에요."
    assert removals(kn, memo, said, "ko") == []
    assert [r["field"] for r in removals(kn, memo, "박성호는 지워주세요", "ko")] == ["memo:m1"]
