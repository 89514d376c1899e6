"""Telegram rendering: splitting long replies at Telegram's limit, and sending them for real.

`split_text` is checked on a table of texts; `send_reply` and the button handler run against
the fake Bot API over HTTP.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import AsyncIterator, Callable

import pytest
from telegram import Bot, InlineKeyboardButton, InlineKeyboardMarkup
from telegram.ext import CallbackQueryHandler

from bot.engine import Engine, Reply
from bot.sending import SEND_ATTEMPTS
from bot.telegram_app import (
    CONTEXT_TYPES,
    TELEGRAM_TEXT_LIMIT,
    on_button,
    send_reply,
    split_text,
    typing_while,
    utf16_len,
)
from bot.tg_render import joined_messages
from tests.fakes.bot_api import FakeBotApi, LoopbackOnlyRequest

CHAT = 6001
SENTENCE_END = tuple(".!?…。！？")

FAMILY = "👨\u200d👩\u200d👧"  # one emoji: 3 astral characters joined by ZWJ, 8 UTF-16 units
FLAG = "🇰🇷"  # one emoji: 2 regional indicators, 4 UTF-16 units
YES_NO = InlineKeyboardMarkup(
    [
        [
            InlineKeyboardButton("네", callback_data="a:evidence:yes"),
            InlineKeyboardButton("아니요", callback_data="a:evidence:no"),
        ]
    ]
)


def pieces(text: str, parts: list[str]) -> list[str]:
    """Check that the parts are `text.strip()` in order with only whitespace dropped between
    them; return the dropped gaps (an empty gap is a hard cut)."""
    whole = text.strip()
    gaps: list[str] = []
    position = 0
    for index, part in enumerate(parts):
        if index:
            start = position
            while position < len(whole) and whole[position].isspace():
                position += 1
            gaps.append(whole[start:position])
        assert whole.startswith(part, position), f"part {index} is not the next piece of the text"
        position += len(part)
    assert position == len(whole), "text left over after the last part"
    return gaps


def check_parts(text: str, parts: list[str], limit: int) -> list[str]:
    """The invariants of every split of a long text; returns the gaps between the parts."""
    assert len(parts) >= 2
    for part in parts:
        assert part and part == part.strip(), f"blank or padded part {part[:20]!r}…"
        assert utf16_len(part) <= limit
    gaps = pieces(text, parts)
    for part, gap in zip(parts[:-1], gaps, strict=True):
        # A cut with nothing dropped cuts a word: allowed only when the part has no space at all.
        assert gap or not any(c.isspace() for c in part), "a word was cut though a space was there"
    return gaps


def paragraphs_of_lines() -> str:
    rng = random.Random(1)
    lines = [f"{n}번째 줄입니다. 보증금 " + " 가나다" * rng.randint(3, 15) for n in range(200)]
    return "\n\n".join("\n".join(lines[i : i + 8]) for i in range(0, 200, 8))


def lines_only() -> str:
    return "\n".join(f"- 항목 {n}: 임대차 계약서 사본과 이체 내역을 보관하세요" for n in range(300))


def sentences_only() -> str:
    rng = random.Random(2)
    endings = ["요.", "다.", "까?", "요!", "다…", "요.”"]
    return " ".join(
        "임대인 김철수가 " + "보증금 반환을 " * rng.randint(1, 12) + rng.choice(endings)
        for _ in range(300)
    )


def words_only() -> str:
    return " ".join(f"단어{n % 97}" for n in range(3000))


SPLITS = [
    # (id, text, limit, what every gap must look like, extra check of the parts)
    ("paragraphs", paragraphs_of_lines(), 4096, lambda gap: gap == "\n\n", None),
    ("lines", lines_only(), 4096, lambda gap: gap == "\n", None),
    (
        "sentences",
        sentences_only(),
        4096,
        lambda gap: gap == " ",
        lambda parts: all(p.rstrip("”").endswith(SENTENCE_END) for p in parts),
    ),
    (
        "words",
        words_only(),
        4096,
        lambda gap: gap == " ",
        lambda parts: all(
            w.startswith("단어") and w[2:].isdigit() for p in parts for w in p.split()
        ),
    ),
    (
        # A blank line near the start of the window must not leave a two-letter part.
        "early paragraph break",
        "제목\n\n" + lines_only(),
        4096,
        lambda gap: "\n" in gap,
        lambda parts: utf16_len(parts[0]) > 4096 // 2,
    ),
    (
        "korean without spaces",
        "가나다라마바사아자차카타파하" * 700,
        4096,
        lambda gap: gap == "",
        lambda parts: [len(p) for p in parts] == [4096, 4096, 1608],
    ),
    (
        "emoji without spaces",
        "😀" * 3000,
        4096,
        lambda gap: gap == "",
        lambda parts: [len(p) for p in parts] == [2048, 952],  # 2 units each
    ),
    (
        "emoji words",
        " ".join(["🙂🙂🙂 괜찮아요"] * 1000),
        4096,
        lambda gap: gap == " ",
        lambda parts: all(w in ("🙂🙂🙂", "괜찮아요") for p in parts for w in p.split()),
    ),
    (
        "long word after a space",
        "참고 " + "https://law.go.kr/" + "a" * 6000,
        4096,
        lambda gap: gap in (" ", ""),
        lambda parts: parts[0] == "참고",
    ),
    (
        # 511 families and 6 units of the next one fit in 4094: the cut goes back before it.
        "zwj sequences",
        FAMILY * 1000,
        4094,
        lambda gap: gap == "",
        lambda parts: all(p == FAMILY * (len(p) // len(FAMILY)) for p in parts),
    ),
    (
        # 1023 flags and one half of the next fit in 4095: the half stays with its flag.
        "flags",
        FLAG * 2000,
        4095,
        lambda gap: gap == "",
        lambda parts: all(p == FLAG * (len(p) // 2) for p in parts),
    ),
    (
        "combining accents",
        "e\u0301" * 3000,
        4095,
        lambda gap: gap == "",
        lambda parts: all(p == "e\u0301" * (len(p) // 2) for p in parts),
    ),
    (
        "outer whitespace",
        "\n\n  " + words_only() + "  \n",
        4096,
        lambda gap: gap == " ",
        None,
    ),
]


@pytest.mark.parametrize(
    ("text", "limit", "gap_ok", "parts_ok"),
    [pytest.param(*row[1:], id=row[0]) for row in SPLITS],
)
def test_long_text_is_split_at_the_best_boundary(
    text: str,
    limit: int,
    gap_ok: Callable[[str], bool],
    parts_ok: Callable[[list[str]], bool] | None,
) -> None:
    parts = split_text(text, limit)

    gaps = check_parts(text, parts, limit)
    assert all(gap_ok(gap) for gap in gaps), f"unexpected cuts: {gaps!r}"
    if parts_ok is not None:
        assert parts_ok(parts), [p[-30:] for p in parts]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("가" * 4096, ["가" * 4096], id="4096 Hangul letters fit"),
        pytest.param("😀" * 2048, ["😀" * 2048], id="2048 emoji are 4096 units and fit"),
        pytest.param("😀" * 2048 + "가", ["😀" * 2048, "가"], id="one unit over"),
        pytest.param("a" * 4095 + "😀", ["a" * 4095, "😀"], id="an emoji does not fit in 1 unit"),
        pytest.param("가" * 4094 + " \n", ["가" * 4094 + " \n"], id="kept as it is"),
        pytest.param("가" * 4096 + " \n", ["가" * 4096], id="over only by blanks"),
        pytest.param("가" * 4096 + " 나", ["가" * 4096, "나"], id="the space at the cut goes"),
        pytest.param(" 짧은 글\n", [" 짧은 글\n"], id="short"),
        pytest.param("", [], id="empty"),
        pytest.param(" \n\n ", [], id="only whitespace"),
    ],
)
def test_text_at_the_limit(text: str, expected: list[str]) -> None:
    assert split_text(text) == expected


def test_random_texts_keep_every_invariant() -> None:
    rng = random.Random(7)
    alphabet = ["가", "나", "a", "😀", FLAG, "é", " ", " ", "\n", "\n\n", ". ", "요. "]
    for _ in range(60):
        limit = rng.choice([2, 3, 7, 50, 333])
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 2000)))
        parts = split_text(text, limit)
        if not text.strip():
            assert parts == []
        elif utf16_len(text) <= limit:
            assert parts == [text]
        else:
            check_parts(text, parts, limit)


def test_a_limit_below_one_emoji_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 2"):
        split_text("😀😀", 1)


# --- against the fake Bot API --------------------------------------------------------------


@pytest.fixture
async def fake() -> AsyncIterator[FakeBotApi]:
    async with FakeBotApi() as server:
        server.push_text(CHAT, "안녕하세요")  # the bot may only write to chats that wrote first
        yield server


@pytest.fixture
async def bot(fake: FakeBotApi) -> AsyncIterator[Bot]:
    async with Bot(
        fake.token,
        base_url=f"{fake.url}/bot",
        request=LoopbackOnlyRequest(),
        get_updates_request=LoopbackOnlyRequest(),
    ) as plain_bot:
        yield plain_bot


async def test_a_long_reply_is_sent_as_several_messages_within_the_limit(
    fake: FakeBotApi, bot: Bot
) -> None:
    # Emoji count 2 in UTF-16: 3,682 characters but 4,114 units, too long for one message.
    paragraph = "🙂🙂 상담 내용을 정리했어요. " * 18
    long_text = "\n\n".join([paragraph.strip()] * 12)
    assert len(long_text) <= TELEGRAM_TEXT_LIMIT < utf16_len(long_text)
    reply = Reply()
    reply.add("접수되었어요.")
    reply.add(long_text, [{"label": "네", "data": "yes"}, {"label": "아니요", "data": "no"}])

    await send_reply(bot, CHAT, reply)

    sent = [params["text"] for params in fake.calls_to("sendMessage")]
    assert sent[0] == "접수되었어요." and len(sent) >= 3
    assert all(utf16_len(text) <= TELEGRAM_TEXT_LIMIT for text in sent)
    assert "\n\n".join(sent[1:]) == long_text  # cut at blank lines, nothing lost
    messages = fake.messages(CHAT)
    assert [m["text"] for m in messages] == sent
    # The buttons go on the last part only.
    assert [("reply_markup" in m) for m in messages] == [False] * (len(sent) - 1) + [True]


# --- consecutive texts without buttons go out as one message ---------------------------------

QUESTION = [{"label": "몰라요", "data": "a:deadline:unknown"}]


def test_consecutive_texts_without_buttons_are_joined_and_a_text_with_buttons_stays_alone() -> None:
    messages = [
        {"text": "112에 전화하세요.", "choices": []},
        {"text": "접수되었어요.", "choices": []},
        {"text": "  ", "choices": []},  # nothing to show: no message, and no break in the run
        {"text": "언제 돌려받기로 하셨나요?", "choices": QUESTION},
        {"text": "고맙습니다.", "choices": []},
        {"text": "", "choices": QUESTION},  # buttons alone still make a message
    ]

    assert joined_messages(messages) == [
        ("112에 전화하세요.\n\n접수되었어요.", []),
        ("언제 돌려받기로 하셨나요?", QUESTION),
        ("고맙습니다.", []),
        ("", QUESTION),
    ]


def test_texts_are_joined_only_while_the_joined_text_fits_the_limit() -> None:
    # 2,000 emoji are 4,000 UTF-16 units: two of them together would pass 4,096.
    big = "🙂" * 2000
    small = "네."
    messages = [{"text": t, "choices": []} for t in (small, big, big, small, small)]

    joined = joined_messages(messages)

    assert [text for text, _ in joined] == [
        f"{small}\n\n{big}",  # the second big one would not fit beside them: a new message
        f"{big}\n\n{small}\n\n{small}",
    ]
    assert all(utf16_len(text) <= TELEGRAM_TEXT_LIMIT for text, _ in joined)
    exact = "가" * (TELEGRAM_TEXT_LIMIT - 2 - len(small))  # joined, exactly at the limit
    assert joined_messages([{"text": exact}, {"text": small}]) == [(f"{exact}\n\n{small}", [])]


async def test_a_reply_of_several_plain_texts_is_sent_as_one_message_before_its_question(
    fake: FakeBotApi, bot: Bot
) -> None:
    reply = Reply()
    reply.add("안전이 먼저예요. 위험하면 112에 전화하세요.")
    reply.add("접수되었어요.")
    reply.add("돈을 언제 돌려받기로 하셨나요?", QUESTION)
    reply.add("입력해 주셔서 고맙습니다.")

    assert await send_reply(bot, CHAT, reply) is True

    sent = fake.calls_to("sendMessage")
    assert [params["text"] for params in sent] == [
        "안전이 먼저예요. 위험하면 112에 전화하세요.\n\n접수되었어요.",
        "돈을 언제 돌려받기로 하셨나요?",
        "입력해 주셔서 고맙습니다.",
    ]
    assert [("reply_markup" in m) for m in fake.messages(CHAT)] == [False, True, False]


async def test_plain_texts_too_long_together_are_split_and_keep_their_order(
    fake: FakeBotApi, bot: Bot
) -> None:
    paragraph = "상담 내용을 정리했어요. " * 40
    long_text = "\n\n".join([paragraph.strip()] * 10)  # 5,608 units: sent as two parts
    assert utf16_len(long_text) > TELEGRAM_TEXT_LIMIT
    reply = Reply()
    reply.add("접수되었어요.")
    reply.add(long_text)
    reply.add("마지막 안내예요.")

    await send_reply(bot, CHAT, reply)

    sent = [params["text"] for params in fake.calls_to("sendMessage")]
    assert sent[0] == "접수되었어요."  # joined with the long text it would not fit
    assert all(utf16_len(text) <= TELEGRAM_TEXT_LIMIT for text in sent)
    assert "\n\n".join(sent) == "\n\n".join(["접수되었어요.", long_text, "마지막 안내예요."])
    assert len(sent) == 4  # the first text, the long one in two parts, the last text


async def test_pressing_a_button_under_a_full_length_question_removes_the_keyboard(
    fake: FakeBotApi, bot: Bot, engine: Engine
) -> None:
    # The ✔ mark would push the question over the limit: only the keyboard is removed.
    question = "가" * (TELEGRAM_TEXT_LIMIT - 2)
    sent = await bot.send_message(CHAT, question, reply_markup=YES_NO)
    application = fake.application_builder().context_types(CONTEXT_TYPES).build()
    application.bot_data.engine = engine
    application.add_handler(CallbackQueryHandler(on_button))
    errors: list[object] = []

    async def record_error(update: object, context: object) -> None:
        errors.append(getattr(context, "error", None))

    application.add_error_handler(record_error)
    async with application:
        await application.start()
        await application.updater.start_polling(poll_interval=0.0, timeout=1)
        press = fake.push_callback(CHAT, "a:evidence:yes", message_id=sent.message_id)
        await fake.wait_for(lambda: len(fake.messages(CHAT)) >= 2, what="the engine's answer")
        await application.updater.stop()
        await application.stop()

    assert not errors, errors
    assert fake.callback_answer(press) is not None
    pressed = fake.messages(CHAT)[0]
    assert pressed["text"] == question and "reply_markup" not in pressed
    assert not [e for e in fake.errors if e[0] == "editMessageText"]


# --- the typing indicator ------------------------------------------------------------------


async def test_typing_is_shown_only_once_the_work_takes_long_and_renewed_until_it_ends(
    fake: FakeBotApi, bot: Bot
) -> None:
    async with typing_while(bot, CHAT, delay=0.05, repeat=0.1):
        # long work: shown at 0.05 s, renewed every 0.1 s; it lasts until renewed twice
        await fake.wait_for(lambda: len(fake.chat_actions(CHAT)) >= 3, what="typing renewed")
    shown = fake.chat_actions(CHAT)
    assert shown[:3] == ["typing"] * 3 and set(shown) == {"typing"}
    await asyncio.sleep(0.25)
    assert fake.chat_actions(CHAT) == shown  # nothing once the work ended

    async with typing_while(bot, CHAT, delay=0.3):
        await asyncio.sleep(0.01)  # a quick reply: no indicator, none later either
    await asyncio.sleep(0.4)
    assert fake.chat_actions(CHAT) == shown


async def test_a_failed_typing_indicator_does_not_stop_the_work(fake: FakeBotApi, bot: Bot) -> None:
    stranger = CHAT + 1  # never wrote to the bot: Telegram refuses every action there
    done = False

    def refused() -> list[tuple]:
        return [e for e in fake.errors if e[0] == "sendChatAction"]

    async with typing_while(bot, stranger, delay=0.0, repeat=0.05):
        # the work goes on while the indicator is refused, and tried again at the next renewal
        await fake.wait_for(lambda: len(refused()) >= 2, what="a refused indicator tried again")
        done = True
    assert done
    assert len(refused()) >= 2  # refused, and tried again at the next renewal


# --- sending: a slow or refused-for-now send is tried again ----------------------------------

QUICK_TIMEOUT = 0.5  # seconds: python-telegram-bot's 5 s, shortened so the tests stay quick


@pytest.fixture
async def impatient_bot(fake: FakeBotApi) -> AsyncIterator[Bot]:
    """A bot that gives up on a request after QUICK_TIMEOUT, as the product's does after 5 s."""
    async with Bot(
        fake.token,
        base_url=f"{fake.url}/bot",
        request=LoopbackOnlyRequest(read_timeout=QUICK_TIMEOUT),
        get_updates_request=LoopbackOnlyRequest(),
    ) as plain_bot:
        yield plain_bot


def two_messages() -> Reply:
    reply = Reply()
    reply.add("접수되었어요.")
    reply.add("돈을 언제 돌려받기로 하셨나요?", [{"label": "몰라요", "data": "a:unknown"}])
    return reply


async def test_a_send_slower_than_the_time_out_is_tried_again_and_arrives_once(
    fake: FakeBotApi, impatient_bot: Bot
) -> None:
    fake.slow_down("sendMessage", QUICK_TIMEOUT * 3)  # the first attempt only

    assert await send_reply(impatient_bot, CHAT, two_messages(), tag="t1") is True

    assert [m["text"] for m in fake.messages(CHAT)] == [
        "접수되었어요.",
        "돈을 언제 돌려받기로 하셨나요?",
    ]
    assert len(fake.calls_to("sendMessage")) == 3  # one given up, tried again, then the next
    assert [method for method, _ in fake.abandoned] == ["sendMessage"]


async def test_flood_control_is_waited_out_for_as_long_as_telegram_asks(
    fake: FakeBotApi, impatient_bot: Bot
) -> None:
    fake.flood_control("sendMessage", retry_after=1, times=2)
    started = time.monotonic()

    assert await send_reply(impatient_bot, CHAT, two_messages()) is True

    assert time.monotonic() - started >= 2.0  # RetryAfter 1 s, twice
    assert len(fake.calls_to("sendMessage")) == 4
    assert [m["text"] for m in fake.messages(CHAT)][0] == "접수되었어요."


async def test_a_send_that_keeps_failing_is_given_up_logged_without_text_and_not_raised(
    fake: FakeBotApi, impatient_bot: Bot, caplog: pytest.LogCaptureFixture
) -> None:
    fake.flood_control("sendMessage", retry_after=1, times=SEND_ATTEMPTS)
    with caplog.at_level(logging.INFO):
        assert await send_reply(impatient_bot, CHAT, two_messages(), tag="t1") is False

    assert len(fake.calls_to("sendMessage")) == SEND_ATTEMPTS  # the second message never tried
    assert fake.messages(CHAT) == []
    [given_up] = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert given_up.getMessage().startswith("chat=t1 reply not delivered: sendMessage failed")
    assert "RetryAfter" in given_up.getMessage()
    assert "접수" not in caplog.text and str(CHAT) not in caplog.text


async def test_a_refused_send_is_not_tried_again(fake: FakeBotApi, impatient_bot: Bot) -> None:
    stranger = CHAT + 1  # never wrote to the bot: "chat not found", which no retry changes
    assert await send_reply(impatient_bot, stranger, two_messages()) is False
    assert len(fake.calls_to("sendMessage")) == 1
