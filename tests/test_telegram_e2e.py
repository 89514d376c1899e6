"""The real python-telegram-bot Application (the product's `run_bot`) against a fake Bot API.

Everything runs for real: the durable poller, the inbox, the engine, the graph on SQLite files,
HTTP to a fake Telegram server on 127.0.0.1. One test kills the bot process with SIGKILL.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from bot.config import Settings
from bot.telegram_app import run_bot, split_text
from knowledge.kb import KnowledgeBase
from tests.fakes.bot_api import FakeBotApi
from tests.support import SHARED_DATA, WAIT

CHAT = 5001
ADMIN = 9001
INTAKE_BOT = Path(sys.executable).parent / "intake-bot"
TELEGRAM_DATA = SHARED_DATA / "telegram" / "illemius"


@pytest.fixture(autouse=True)
def no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    """httpx honours proxy variables even for loopback; the fake is local."""
    for name in (
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")


@pytest.fixture(autouse=True)
def built_index(kb: KnowledgeBase, tmp_path: Path) -> None:
    """Each bot here starts on a copy of the session's index, as a deployment that ran
    `intake-bot kb build` does: start-up only checks it. (Start-up builds every packaged
    collection, the medical corpus too, which takes a minute on a busy machine; building is
    tested in test_index.py and test_kb_cli.py.)"""
    shutil.copytree(kb.index.path, tmp_path / "data" / "index")


@pytest.fixture
async def fake():
    async with FakeBotApi() as server:
        yield server


class Bot:
    """The product's bot running in this process, restartable."""

    def __init__(self, fake: FakeBotApi, data_dir: Path) -> None:
        self.settings = Settings(
            intake_data_dir=data_dir,
            telegram_bot_token=fake.token,
            telegram_api_url=f"{fake.url}/bot",
            admin_ids=str(ADMIN),
            intake_typing_delay=0,  # typing shown at once, however quick the turn
            _env_file=None,
        )
        self.task: asyncio.Task | None = None

    async def start(self) -> None:
        self.stop_event = asyncio.Event()
        self.task = asyncio.create_task(run_bot(self.settings, self.stop_event))

    async def stop(self) -> None:
        self.stop_event.set()
        await asyncio.wait_for(self.task, WAIT)


def texts(fake: FakeBotApi, chat: int) -> list[str]:
    return [m.get("text") or m.get("caption") or "" for m in fake.messages(chat)]


async def wait_text(fake: FakeBotApi, chat: int, needle: str, *, after: int = 0) -> dict:
    """Wait for a bot message (the index-th onwards) containing `needle`; return it."""
    await fake.wait_for(lambda: any(needle in t for t in texts(fake, chat)[after:]), what=needle)
    return next(m for m in fake.messages(chat)[after:] if needle in (m.get("text") or ""))


def buttons(message: dict) -> list[str]:
    return [
        b["callback_data"]
        for row in message.get("reply_markup", {}).get("inline_keyboard", [])
        for b in row
    ]


@pytest.mark.slow
async def test_full_intake_with_buttons_photo_restart_duplicates_and_export(
    fake: FakeBotApi, tmp_path: Path, knowledge
) -> None:
    bot = Bot(fake, tmp_path / "data")
    await bot.start()
    fake.push_command(CHAT, "start")
    choose = await wait_text(fake, CHAT, knowledge.message("choose_domain", "ko"))
    assert buttons(choose) == ["domain:legal", "domain:medical"]
    fake.push_callback(CHAT, "domain:legal", message_id=choose["message_id"])
    welcome = await wait_text(fake, CHAT, knowledge.message("ask_description", "ko"))
    # The greeting, the privacy notice and the first question carry no buttons: one message.
    assert welcome["text"] == "\n\n".join(
        knowledge.message(key, "ko") for key in ("greeting", "privacy_notice", "ask_description")
    )
    assert "typing" in fake.chat_actions(CHAT)

    seen = len(fake.messages(CHAT))
    fake.push_text(CHAT, "작년 3월에 친구 김철수한테 300만원 빌려줬는데 안 갚아요. 돌려받고 싶어요")
    question = knowledge.k2.field("LOAN", "repayment_date").question.ko
    await wait_text(fake, CHAT, question, after=seen)

    # Restart the bot between two answers: the intake continues at the same question.
    await bot.stop()
    await bot.start()
    seen = len(fake.messages(CHAT))
    fake.push_text(CHAT, "올해 6월")
    evidence_q = await wait_text(
        fake, CHAT, knowledge.k2.field("LOAN", "evidence").question.ko, after=seen
    )
    assert buttons(evidence_q)[:2] == ["a:evidence:yes", "a:evidence:no"]

    # A button press: answered, the pressed message marked, the next question asked.
    seen = len(fake.messages(CHAT))
    press = fake.push_callback(CHAT, "a:evidence:yes", message_id=evidence_q["message_id"])
    type_q = await wait_text(
        fake, CHAT, knowledge.k2.field("LOAN", "evidence_type").question.ko, after=seen
    )
    assert fake.callback_answer(press) is not None

    def pressed_message() -> dict:
        return next(m for m in fake.messages(CHAT) if m["message_id"] == evidence_q["message_id"])

    await fake.wait_for(lambda: "✔" in pressed_message()["text"], what="the press marked")
    assert not buttons(pressed_message())
    assert "a:evidence_type:messages" in buttons(type_q)

    # The same button pressed again on the old message: a polite reply, nothing changes.
    seen = len(fake.messages(CHAT))
    fake.push_callback(
        CHAT, "a:evidence:yes", message_id=evidence_q["message_id"], check_button=False
    )
    await wait_text(fake, CHAT, knowledge.message("already_answered", "ko"), after=seen)

    # A sticker where text is asked.
    seen = len(fake.messages(CHAT))
    fake.push_sticker(CHAT)
    await wait_text(fake, CHAT, knowledge.message("not_text", "ko"), after=seen)
    seen = len(fake.messages(CHAT))
    fake.push_voice(CHAT)
    fake.push_location(CHAT)
    await fake.wait_for(
        lambda: (
            sum(knowledge.message("not_text", "ko") in t for t in texts(fake, CHAT)[seen:]) == 2
        ),
        what="voice and location answered",
    )

    # The evidence photo completes the intake; the same update delivered twice counts once.
    seen = len(fake.messages(CHAT))
    photo_id = fake.push_photo(CHAT, caption="카톡 캡처")
    await wait_text(fake, CHAT, knowledge.message("completed", "ko"), after=seen)
    await fake.wait_for(lambda: fake.confirmed_up_to >= photo_id, what="photo confirmed")
    count = len(fake.messages(CHAT))
    await bot.stop()

    conn = sqlite3.connect(tmp_path / "data" / "records.db")
    evidence = conn.execute("select kind, caption from caseevidence").fetchall()
    assert evidence == [("photo", "카톡 캡처")]
    status = conn.execute("select status, completion_rate from chatsession").fetchall()
    assert status == [("completed", 1.0)]
    conn.close()

    # Admin export as a file; a non-admin learns nothing.
    await bot.start()
    fake.push_command(CHAT, "export", "json")
    await wait_text(fake, CHAT, knowledge.message("admin_only", "ko"), after=count)
    fake.push_command(ADMIN, "export", "json", user_id=ADMIN)
    await fake.wait_for(lambda: fake.documents(ADMIN), what="export document")
    rows = json.loads(fake.documents(ADMIN)[0]["content"])
    assert [(r["sub_case_type"], r["status"]) for r in rows] == [("LOAN", "completed")]
    assert rows[0]["facts"]["evidence_type"] == ["photo"]
    await bot.stop()


@pytest.mark.slow
async def test_duplicate_update_is_processed_once_and_bursts_are_answered_in_order(
    fake: FakeBotApi, tmp_path: Path, knowledge
) -> None:
    bot = Bot(fake, tmp_path / "data")
    await bot.start()
    fake.push_text(CHAT, "안녕하세요")
    await wait_text(fake, CHAT, knowledge.message("ask_description", "ko"))
    await bot.stop()

    # Telegram delivers the same update twice (same update_id): it is processed once.
    update_id = fake.confirmed_up_to + 50
    user = {"id": CHAT, "is_bot": False, "first_name": "Test", "language_code": "ko"}
    update = {
        "update_id": update_id,
        "message": {
            "message_id": 900,
            "date": 1_790_000_000,
            "from": user,
            "chat": {"id": CHAT, "type": "private", "first_name": "Test"},
            "text": "친구한테 돈을 빌려줬는데 안 갚아요",
        },
    }
    seen = len(fake.messages(CHAT))
    fake.push_update(update)
    fake.push_update(update)
    await bot.start()
    await fake.wait_for(
        lambda: len(fake.messages(CHAT)) > seen, what="reply to the duplicated update"
    )
    await fake.wait_for(lambda: fake.confirmed_up_to >= update_id, what="confirmation")
    await wait_processed(fake, tmp_path / "data", update_id)  # its turn is written to the end
    records = tmp_path / "data" / "records.db"
    conn = sqlite3.connect(records)
    assert conn.execute(
        "select count(*) from inboxupdate where update_id = ?", (update_id,)
    ).fetchone() == (1,)
    assert conn.execute(
        "select count(*) from chatturn where user_text like '친구한테%'"
    ).fetchone() == (1,)
    conn.close()
    count = len(fake.messages(CHAT))

    # Three messages sent at once in another chat are answered in order.
    other = CHAT + 1
    fake.push_command(other, "lang", "en")
    fake.push_command(other, "help")
    fake.push_command(other, "status")
    await fake.wait_for(lambda: len(fake.messages(other)) >= 3, what="three replies")
    replies = texts(fake, other)
    assert replies[0] == knowledge.message("lang_set", "en")
    assert replies[1] == knowledge.message("help", "en")
    assert replies[2] == knowledge.message("status_none", "en")
    assert len(fake.messages(CHAT)) == count

    # Real recorded payloads: an edited message is not applied; a document before any case.
    third = CHAT + 2
    fake.push_raw(json.loads((TELEGRAM_DATA / "edited_message.json").read_text()), chat_id=third)
    await wait_text(fake, third, knowledge.message("edit_not_applied", "ko"))
    fake.push_raw(
        json.loads((TELEGRAM_DATA / "message_with_document.json").read_text()), chat_id=third
    )
    await wait_text(fake, third, knowledge.message("evidence_before_case", "ko"))
    await bot.stop()
    conn = sqlite3.connect(records)
    assert conn.execute(
        "select count(*) from inboxupdate where processed_at is null"
    ).fetchone() == (0,)
    conn.close()


@pytest.mark.slow
async def test_a_reply_slower_than_5_s_is_sent_again_and_its_turn_runs_once(
    fake: FakeBotApi, tmp_path: Path, knowledge
) -> None:
    data = tmp_path / "data"
    bot = Bot(fake, data)
    await bot.start()
    fake.push_text(CHAT, "안녕하세요")
    await wait_text(fake, CHAT, knowledge.message("ask_description", "ko"))

    # Telegram is slow: the first sendMessage of the next reply takes longer than
    # python-telegram-bot's 5 s. The turn has changed the intake by then.
    fake.slow_down("sendMessage", 6.0)
    described = fake.push_text(
        CHAT, "작년 3월에 친구 김철수한테 300만원 빌려줬는데 안 갚아요. 돌려받고 싶어요"
    )
    question = knowledge.k2.field("LOAN", "repayment_date").question.ko
    await wait_text(fake, CHAT, question)
    _, failure = await wait_processed(fake, data, described)

    assert failure is None  # handled, not set aside
    assert [method for method, _ in fake.abandoned] == ["sendMessage"]  # the one given up
    replies = texts(fake, CHAT)
    assert knowledge.message("error", "ko") not in replies  # nobody is asked to try again
    assert sum(question in text for text in replies) == 1
    # The intake goes on from where that turn left it.
    seen = len(fake.messages(CHAT))
    fake.push_text(CHAT, "올해 6월")
    await wait_text(fake, CHAT, knowledge.k2.field("LOAN", "evidence").question.ko, after=seen)
    await bot.stop()
    with sqlite3.connect(data / "records.db") as conn:
        turns = conn.execute(
            "select count(*) from chatturn where input_id = ?", (str(described),)
        ).fetchone()
        moves = conn.execute("select from_state, to_state from statetransition").fetchall()
        amount = conn.execute("select value_json from casefact where key = 'amount'").fetchall()
    assert turns == (1,)  # the turn ran once
    assert len(moves) == len(set(moves))  # no state change applied twice
    assert amount == [("3000000",)]


def test_split_text_keeps_every_character_and_the_limit() -> None:
    paragraph = "가나다라 마바사 " * 300
    text = "\n\n".join([paragraph] * 4)
    parts = split_text(text, limit=4096)
    assert all(len(p) <= 4096 for p in parts)
    assert "".join(parts).replace("\n", "").replace(" ", "") == text.replace("\n", "").replace(
        " ", ""
    )
    assert split_text("짧은 글") == ["짧은 글"]


def launch_bot_process(fake: FakeBotApi, data_dir: Path, **extra: str) -> subprocess.Popen:
    """`intake-bot run` as a real process against the fake, with extra environment (failpoints)."""
    env = {
        **os.environ,
        "INTAKE_DATA_DIR": str(data_dir),
        "TELEGRAM_BOT_TOKEN": fake.token,
        "TELEGRAM_API_URL": f"{fake.url}/bot",
        "ADMIN_IDS": str(ADMIN),
        "NO_PROXY": "127.0.0.1,localhost",
        **extra,
    }
    with (data_dir.parent / "bot.log").open("ab") as log:  # kept beside the data, for a failure
        return subprocess.Popen(
            [str(INTAKE_BOT), "run"], env=env, stdout=subprocess.DEVNULL, stderr=log
        )


async def stop_bot_process(proc: subprocess.Popen) -> None:
    """SIGTERM, then wait without blocking the loop: the fake must keep answering the bot's
    last requests while it shuts down."""
    proc.send_signal(signal.SIGTERM)
    try:
        await asyncio.to_thread(proc.wait, WAIT)
    except subprocess.TimeoutExpired:
        proc.kill()


@pytest.mark.slow
@pytest.mark.parametrize("point", ["after_graph", "after_records", "after_reply"])
async def test_sigkill_mid_turn_then_restart_continues_with_every_fact_once(
    fake: FakeBotApi, tmp_path: Path, knowledge, point: str
) -> None:
    """The process kills itself (INTAKE_FAILPOINT) at a fixed point of the third answer's turn:
    after the graph took it and before the records, after the records and before the reply, or
    after the reply and before its inbox row was marked. Each time the answer counts once."""

    def launch(**extra: str) -> subprocess.Popen:
        return launch_bot_process(fake, tmp_path / "data", **extra)

    # The graph's after_* points are reached once per turn: the third turn is the answer below.
    proc = launch(INTAKE_FAILPOINT=f"{point}:3")
    try:
        fake.push_text(CHAT, "사장님이 석 달째 월급을 안 줘요. 퇴직금도 못 받았어요")
        first_q = knowledge.k2.field("WAGE_ARREARS", "counterparty").question.ko
        await wait_text(fake, CHAT, first_q)
        seen = len(fake.messages(CHAT))
        fake.push_text(CHAT, "OO식당 사장 박민수")
        start_q = knowledge.k2.field("WAGE_ARREARS", "employment_start").question.ko
        await wait_text(fake, CHAT, start_q, after=seen)
        seen = len(fake.messages(CHAT))
        fake.push_text(CHAT, "2023년 1월에 입사했어요")
        returncode = await asyncio.to_thread(proc.wait, WAIT)
        assert returncode == -signal.SIGKILL  # it died at the failpoint, not by chance

        proc = launch()
        end_q = knowledge.k2.field("WAGE_ARREARS", "employment_end").question.ko
        await wait_text(fake, CHAT, end_q, after=seen)
        seen = len(fake.messages(CHAT))
        fake.push_text(CHAT, "올해 9월에 그만뒀어요")
        await wait_text(
            fake,
            CHAT,
            knowledge.k2.field("WAGE_ARREARS", "amount").question.ko,
            after=seen,
        )
    finally:
        await stop_bot_process(proc)
    conn = sqlite3.connect(tmp_path / "data" / "records.db")
    facts = dict(conn.execute("select key, value_json from casefact").fetchall())
    answered_once = conn.execute(
        "select count(*) from chatturn where user_text like '2023년 1월%'"
    ).fetchone()
    pending = conn.execute("select count(*) from inboxupdate where processed_at is null")
    pending = pending.fetchone()
    conn.close()
    assert answered_once == (1,)  # the answer in flight at the kill was recorded exactly once
    assert pending == (0,)
    assert json.loads(facts["employment_start"]) == "2023-01"
    assert json.loads(facts["employment_end"]) == "2026-09"
    assert "박민수" in json.loads(facts["counterparty"])


@pytest.mark.slow
@pytest.mark.parametrize("point", ["after_graph", "after_records"])
async def test_sigkill_on_the_final_press_then_restart_sends_the_summary(
    fake: FakeBotApi, tmp_path: Path, knowledge, point: str
) -> None:
    """The last answer is a button press, and the process dies in its turn. After the restart the
    recovered press (whose callback query Telegram no longer lets anyone answer) still gets the
    summary and the closing message, recorded once, and no error message."""

    def launch(**extra: str) -> subprocess.Popen:
        return launch_bot_process(fake, tmp_path / "data", **extra)

    proc = launch(INTAKE_FAILPOINT=f"{point}:3")
    try:
        fake.push_text(
            CHAT, "작년 3월에 친구 김철수한테 300만원 빌려줬는데 안 갚아요. 돌려받고 싶어요"
        )
        repay_q = knowledge.k2.field("LOAN", "repayment_date").question.ko
        await wait_text(fake, CHAT, repay_q)
        fake.push_text(CHAT, "올해 6월")
        asked = await wait_text(fake, CHAT, knowledge.k2.field("LOAN", "evidence").question.ko)
        seen = len(fake.messages(CHAT))
        fake.push_callback(CHAT, "a:evidence:no", message_id=asked["message_id"])
        assert await asyncio.to_thread(proc.wait, WAIT) == -signal.SIGKILL

        proc = launch()
        await wait_text(fake, CHAT, knowledge.message("completed", "ko"), after=seen)
    finally:
        await stop_bot_process(proc)
    after = texts(fake, CHAT)[seen:]
    assert any("3,000,000" in t for t in after)  # the summary itself
    assert knowledge.message("error", "ko") not in after
    assert knowledge.message("session_completed", "ko") not in after
    with sqlite3.connect(tmp_path / "data" / "records.db") as conn:
        pressed = conn.execute("select count(*) from chatturn where user_text = 'a:evidence:no'")
        assert pressed.fetchone() == (1,)
        assert conn.execute("select status from chatsession").fetchall() == [("completed",)]
        failed = conn.execute("select count(*) from inboxupdate where failure is not null")
        assert failed.fetchone() == (0,)


@pytest.mark.slow
@pytest.mark.parametrize("point", ["after_graph", "after_records"])
async def test_sigkill_in_a_medical_turn_then_restart_sends_the_lost_answer_once(
    fake: FakeBotApi, tmp_path: Path, knowledge, point: str
) -> None:
    """The process dies after the medical graph took a question (before its profile was
    written, or after it and before the reply). The restart finishes the redelivered update
    with the answer the crash kept from being sent, not a bare "let's pick up where we left
    off", and the question is counted once."""

    def launch(**extra: str) -> subprocess.Popen:
        return launch_bot_process(fake, tmp_path / "data", **extra)

    question = "당뇨가 있고 메트포르민 먹어요. 운동은 어떤 게 좋아요?"
    proc = launch(INTAKE_FAILPOINT=f"{point}:1")  # the first medical run is the question
    try:
        fake.push_command(CHAT, "start", "medical")
        await wait_text(fake, CHAT, knowledge.message("med_greeting", "ko"))
        seen = len(fake.messages(CHAT))
        fake.push_text(CHAT, question)
        assert await asyncio.to_thread(proc.wait, WAIT) == -signal.SIGKILL
        assert texts(fake, CHAT)[seen:] == []  # the answer was lost with the process

        proc = launch()
        answer = await wait_text(fake, CHAT, "출처:", after=seen)
        assert "당뇨" in answer["text"]
        after = texts(fake, CHAT)[seen:]
        assert after == [answer["text"]]  # what was noted and the answer: one message
        assert answer["text"].startswith("기록해 둘게요: 당뇨병, 메트포르민\n\n")
        assert knowledge.message("continued", "ko") not in answer["text"]
        assert knowledge.message("error", "ko") not in answer["text"]
        seen = len(fake.messages(CHAT))
        fake.push_command(CHAT, "status")
        await wait_text(
            fake, CHAT, knowledge.message("med_status", "ko", count=2, questions=1), after=seen
        )
    finally:
        await stop_bot_process(proc)
    with sqlite3.connect(tmp_path / "data" / "records.db") as conn:
        asked = conn.execute("select question from medicalquestion").fetchall()
        items = conn.execute("select name from profileitem order by name").fetchall()
        pending = conn.execute("select count(*) from inboxupdate where processed_at is null")
        assert pending.fetchone() == (0,)
    assert asked == [(question,)]  # counted once
    assert items == [("diabetes",), ("metformin",)]  # the profile written after the restart


# --- hardening (issue #6): no update stops the bot, buttons, groups -------------------------


def inbox_rows(data_dir: Path) -> dict[int, tuple]:
    if not (data_dir / "records.db").exists():  # the bot is still starting
        return {}
    with sqlite3.connect(data_dir / "records.db") as conn:
        try:
            rows = conn.execute("select update_id, processed_at, failure from inboxupdate")
        except sqlite3.OperationalError:  # the tables are being created
            return {}
        return {r[0]: r[1:] for r in rows.fetchall()}


async def wait_processed(fake: FakeBotApi, data_dir: Path, update_id: int) -> tuple:
    """Wait until the bot has finished with an update (its inbox row marked); return the row."""
    await fake.wait_for(
        lambda: (inbox_rows(data_dir).get(update_id) or (None,))[0] is not None,
        what=f"update {update_id} processed",
    )
    return inbox_rows(data_dir)[update_id]


@pytest.mark.slow
async def test_broken_and_unreadable_updates_never_stop_polling(
    fake: FakeBotApi, tmp_path: Path, knowledge
) -> None:
    data = tmp_path / "data"
    bot = Bot(fake, data)
    await bot.start()
    # A lone surrogate (escaped in the JSON, as the Bot API sends it) stopped polling for good.
    broken = fake.push_text(
        CHAT, "\udc00 작년 3월에 친구 김철수한테 300만원 빌려줬는데 안 갚아요. 돌려받고 싶어요"
    )
    # An update python-telegram-bot cannot read at all: set aside, the batch goes on.
    unreadable = fake.push_update(
        {"message": {"message_id": 1, "date": 1_790_000_000, "chat": "oops", "text": "hi"}}
    )
    other = CHAT + 10
    fake.push_text(other, "안녕하세요")
    await wait_text(fake, other, knowledge.message("ask_description", "ko"))
    question = knowledge.k2.field("LOAN", "repayment_date").question.ko
    await wait_text(fake, CHAT, question)
    assert (await wait_processed(fake, data, broken))[1] is None
    processed, failure = await wait_processed(fake, data, unreadable)
    assert failure.startswith("unreadable")

    # After a restart neither comes back, and the bot goes on answering.
    await bot.stop()
    await bot.start()
    seen = len(fake.messages(CHAT))
    fake.push_text(CHAT, "올해 6월")
    await wait_text(fake, CHAT, knowledge.k2.field("LOAN", "evidence").question.ko, after=seen)
    assert inbox_rows(data)[unreadable] == (processed, failure)
    with sqlite3.connect(data / "records.db") as conn:
        user_texts = [r[0] for r in conn.execute("select user_text from chatturn")]
    assert (
        "\ufffd 작년 3월에 친구 김철수한테 300만원 빌려줬는데 안 갚아요. 돌려받고 싶어요"
        in user_texts
    )
    await bot.stop()


@pytest.mark.slow
async def test_a_rejected_token_takes_the_bot_down_instead_of_hanging(
    fake: FakeBotApi, tmp_path: Path, knowledge
) -> None:
    from bot.telegram_app import PollingStopped

    bot = Bot(fake, tmp_path / "data")
    await bot.start()
    fake.push_text(CHAT, "안녕하세요")
    await wait_text(fake, CHAT, knowledge.message("ask_description", "ko"))
    fake.token = "999:revoked"  # the token is revoked while the bot runs
    fake.push_text(CHAT, "여보세요")  # ends the long poll in flight; the next one is refused
    with pytest.raises(PollingStopped):
        await asyncio.wait_for(bot.task, WAIT)


@pytest.mark.slow
async def test_buttons_act_only_for_their_person_and_inline_presses_are_answered(
    fake: FakeBotApi, tmp_path: Path, knowledge
) -> None:
    data = tmp_path / "data"
    bot = Bot(fake, data)
    await bot.start()
    fake.push_text(CHAT, "작년 3월에 친구 김철수한테 300만원 빌려줬는데 안 갚아요. 돌려받고 싶어요")
    await wait_text(fake, CHAT, knowledge.k2.field("LOAN", "repayment_date").question.ko)
    seen = len(fake.messages(CHAT))
    fake.push_text(CHAT, "올해 6월")
    asked = await wait_text(fake, CHAT, knowledge.k2.field("LOAN", "evidence").question.ko)
    seen = len(fake.messages(CHAT))

    # Someone else presses a button of this chat's message: refused, and this chat hears nothing.
    foreign = fake.push_callback(
        CHAT, "a:evidence:yes", message_id=asked["message_id"], user_id=CHAT + 99
    )
    await wait_processed(fake, data, foreign)
    answer = fake.callback_answer(foreign)
    assert answer["text"] == knowledge.message("button_not_yours", "ko")
    # The delete button, never shown, sent by the chat's own person: nothing is deleted.
    forged = fake.push_callback(
        CHAT, "cmd:forget", message_id=asked["message_id"], check_button=False
    )
    await wait_text(fake, CHAT, knowledge.message("stale_button", "ko"), after=seen)
    assert knowledge.message("forgotten", "ko") not in texts(fake, CHAT)
    assert fake.callback_answer(forged) is not None
    # A press on an inline-mode message (no message, no chat) is answered, not a traceback.
    inline = fake.push_inline_callback(CHAT, "cmd:forget")
    assert (await wait_processed(fake, data, inline))[1] is None  # handled, not failed
    assert fake.callback_answer(inline)["text"] == knowledge.message("button_gone", "ko")

    # The real press still works (on the question as shown again after the refusal).
    shown = [m for m in fake.messages(CHAT) if "a:evidence:no" in buttons(m)]
    assert shown and shown[-1]["message_id"] != asked["message_id"]
    seen = len(fake.messages(CHAT))
    fake.push_callback(CHAT, "a:evidence:no", message_id=shown[-1]["message_id"])
    await wait_text(fake, CHAT, knowledge.message("completed", "ko"), after=seen)
    await bot.stop()
    with sqlite3.connect(data / "records.db") as conn:
        facts = dict(conn.execute("select key, value_json from casefact").fetchall())
    assert facts["amount"] == "3000000" and facts["evidence"] == "false"


@pytest.mark.slow
async def test_in_a_group_the_bot_points_to_a_private_chat_and_takes_no_intake(
    fake: FakeBotApi, tmp_path: Path, knowledge
) -> None:
    data = tmp_path / "data"
    bot = Bot(fake, data)
    await bot.start()
    group = -100_500
    added = fake.push_update(
        {
            "my_chat_member": {
                "chat": {"id": group, "type": "group", "title": "Test group"},
                "from": {"id": CHAT, "is_bot": False, "first_name": "Test", "language_code": "en"},
                "date": 1_790_000_000,
                "old_chat_member": {"user": fake.bot_user, "status": "left"},
                "new_chat_member": {"user": fake.bot_user, "status": "member"},
            }
        }
    )
    await wait_processed(fake, data, added)
    fake.push_text(group, "전세 보증금 1억을 집주인이 안 돌려줘요", user_id=CHAT)
    fake.push_command(group, "start", user_id=CHAT)
    await fake.wait_for(lambda: len(fake.messages(group)) >= 3, what="three group replies")
    english, korean, _ = fake.messages(group)
    assert english["text"] == knowledge.message("private_only", "en")
    assert korean["text"] == knowledge.message("private_only", "ko")
    [[link]] = korean["reply_markup"]["inline_keyboard"]
    assert link["url"] == f"https://t.me/{fake.bot_user['username']}?start=intake"

    # The link opens the private chat with /start intake: the intake starts there.
    fake.push_command(CHAT, "start", "intake")
    await wait_text(fake, CHAT, knowledge.message("ask_description", "ko"))
    await bot.stop()
    with sqlite3.connect(data / "records.db") as conn:
        chats = [r[0] for r in conn.execute("select chat_id from chatsession")]
    assert chats == [CHAT]  # nothing of the group's words became an intake


@pytest.mark.slow
async def test_danger_gets_the_numbers_first_and_staff_a_telegram_notice(
    fake: FakeBotApi, tmp_path: Path, knowledge
) -> None:
    bot = Bot(fake, tmp_path / "data")
    await bot.start()
    try:
        fake.push_command(ADMIN, "help")  # staff have a chat with the bot (Telegram requires it)
        await wait_text(fake, ADMIN, "/sessions")
        seen_admin = len(fake.messages(ADMIN))
        fake.push_text(CHAT, "남편이 지금 칼을 들고 위협해요 무서워요")
        await wait_text(fake, CHAT, "112")
        assert "112" in fake.messages(CHAT)[0]["text"]  # before the greeting and anything else
        notice = await wait_text(fake, ADMIN, "112", after=seen_admin)
        assert str(CHAT) in notice["text"] and "칼" not in notice["text"]
        # The intake goes on after the safety reply, in the same chat: the numbers alone, sent
        # the moment the rules fired (tests/test_safety_ahead.py), then the greeting (no
        # buttons) in one message, then the intake's question with its buttons.
        await fake.wait_for(
            lambda: any(buttons(m) for m in fake.messages(CHAT)), what="the intake's question"
        )
        numbers, greeting, question = fake.messages(CHAT)
        assert (
            "112" in numbers["text"] and knowledge.message("greeting", "ko") not in numbers["text"]
        )
        assert greeting["text"].startswith(knowledge.message("greeting", "ko"))
        assert not buttons(numbers) and not buttons(greeting) and buttons(question)
        assert sum("112" in m["text"] for m in fake.messages(CHAT)) == 1
    finally:
        await bot.stop()


@pytest.mark.slow
async def test_the_medical_assistant_over_telegram(
    fake: FakeBotApi, tmp_path: Path, knowledge
) -> None:
    """Choose health questions with a button, ask, get a sourced answer, see and delete the
    profile with its buttons, and find it all again after a restart."""
    bot = Bot(fake, tmp_path / "data")
    await bot.start()
    try:
        fake.push_command(CHAT, "start")
        choose = await wait_text(fake, CHAT, knowledge.message("choose_domain", "ko"))
        fake.push_callback(CHAT, "domain:medical", message_id=choose["message_id"])
        await wait_text(fake, CHAT, knowledge.message("med_greeting", "ko"))
        seen = len(fake.messages(CHAT))
        fake.push_text(CHAT, "당뇨가 있고 메트포르민 먹어요. 운동은 어떤 게 좋아요?")
        answer = await wait_text(fake, CHAT, "출처:", after=seen)
        assert "당뇨" in answer["text"]
        # What was noted and the answer carry no buttons: one message, the note first.
        assert texts(fake, CHAT)[seen:] == [answer["text"]]
        assert answer["text"].startswith("기록해 둘게요: 당뇨병, 메트포르민\n\n")
        await bot.stop()
        await bot.start()  # the profile outlives the process
        seen = len(fake.messages(CHAT))
        fake.push_command(CHAT, "profile")
        shown = await wait_text(fake, CHAT, "메트포르민", after=seen)
        assert "m:del:medications:metformin" in buttons(shown)
        seen = len(fake.messages(CHAT))
        fake.push_callback(CHAT, "m:del:medications:metformin", message_id=shown["message_id"])
        await wait_text(
            fake, CHAT, knowledge.message("med_item_removed", "ko", name="메트포르민"), after=seen
        )
    finally:
        await bot.stop()
