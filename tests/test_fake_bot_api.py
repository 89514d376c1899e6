"""The real python-telegram-bot Application, polling the fake Bot API server over HTTP."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator

import aiohttp
import pytest
from aiohttp import web
from telegram import Bot, InlineKeyboardButton, InlineKeyboardMarkup, Sticker, Update
from telegram.constants import ChatAction
from telegram.error import BadRequest, Conflict, NetworkError
from telegram.ext import (
    Application,
    CallbackQueryHandler,
    CommandHandler,
    ContextTypes,
    MessageHandler,
    filters,
)

from tests.fakes.bot_api import FakeBotApi, LoopbackOnlyRequest, parse_html
from tests.support import SHARED_DATA, WAIT

CHAT_ID = 424242
TELEGRAM_DATA = SHARED_DATA / "telegram"
CHOICES = InlineKeyboardMarkup(
    [
        [
            InlineKeyboardButton("네", callback_data="yes"),
            InlineKeyboardButton("아니요", callback_data="no"),
        ]
    ]
)
SUMMARY_BYTES = "상담 요약\n사건 유형: 임대차\n".encode()


async def echo(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Show typing, then echo the text under a yes/no keyboard."""
    await update.effective_chat.send_action(ChatAction.TYPING)
    await update.effective_message.reply_text(
        f"echo: {update.effective_message.text}", reply_markup=CHOICES
    )


async def on_choice(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Answer the press and replace the question with the choice."""
    query = update.callback_query
    context.bot_data["pressed_markup"] = query.message.reply_markup
    await query.answer(f"got {query.data}")
    await query.edit_message_text(f"chosen: {query.data}")


async def on_photo(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Download the largest size of the photo and report its length."""
    photo_file = await update.effective_message.photo[-1].get_file()
    context.bot_data["photo"] = bytes(await photo_file.download_as_bytearray())
    await update.effective_message.reply_text(f"photo: {len(context.bot_data['photo'])} bytes")


async def on_export(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Send the summary as a text document."""
    await update.effective_message.reply_document(
        document=SUMMARY_BYTES, filename="summary.txt", caption="요약본"
    )


async def on_sticker(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Keep the parsed sticker and name its emoji."""
    context.bot_data["sticker"] = update.effective_message.sticker
    await update.effective_message.reply_text(f"sticker: {update.effective_message.sticker.emoji}")


@pytest.fixture
async def fake() -> AsyncIterator[FakeBotApi]:
    async with FakeBotApi() as server:
        yield server


@pytest.fixture
async def bot(fake: FakeBotApi) -> AsyncIterator[Bot]:
    """A plain Bot on the fake, for driving the API without an updater."""
    async with Bot(
        fake.token,
        base_url=f"{fake.url}/bot",
        base_file_url=f"{fake.url}/file/bot",
        request=LoopbackOnlyRequest(),
        get_updates_request=LoopbackOnlyRequest(),
    ) as plain_bot:
        yield plain_bot


@pytest.fixture
async def app(fake: FakeBotApi) -> AsyncIterator[Application]:
    """The real Application, polling the fake; fails the test if a handler raised."""
    application = fake.application_builder().build()
    application.add_handlers(
        [
            CommandHandler("export", on_export),  # /export: upload a document
            MessageHandler(filters.TEXT & ~filters.COMMAND, echo),  # text: echo with keyboard
            MessageHandler(filters.PHOTO, on_photo),  # photo: getFile + download
            MessageHandler(filters.Sticker.ALL, on_sticker),  # sticker: parse check
            CallbackQueryHandler(on_choice),  # button press: answer + edit
        ]
    )
    errors: list[object] = []

    async def record_error(update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
        errors.append(context.error)

    application.add_error_handler(record_error)
    await application.initialize()
    await application.start()
    await application.updater.start_polling(poll_interval=0.0, timeout=1)
    try:
        yield application
    finally:
        await application.updater.stop()
        await application.stop()
        await application.shutdown()
    assert not errors, f"handlers raised {errors!r}\n{fake.describe()}"


async def test_echo_reply_arrives_with_its_inline_keyboard(fake: FakeBotApi, app: Application):
    fake.push_text(CHAT_ID, "안녕하세요, 전세 보증금 문제예요")

    [reply] = await fake.wait_for_messages(CHAT_ID, 1)

    assert reply["text"] == "echo: 안녕하세요, 전세 보증금 문제예요"
    assert reply["reply_markup"] == CHOICES.to_dict()
    assert reply["from"]["id"] == fake.bot_user["id"]
    assert reply["chat"] == {"id": CHAT_ID, "first_name": "Test", "type": "private"}
    assert fake.chat_actions(CHAT_ID) == ["typing"]


async def test_button_press_is_answered_and_edits_the_message(fake: FakeBotApi, app: Application):
    fake.push_text(CHAT_ID, "질문")
    [question] = await fake.wait_for_messages(CHAT_ID, 1)

    press = fake.push_callback(CHAT_ID, "yes", message_id=question["message_id"])
    await fake.wait_for(lambda: fake.messages(CHAT_ID)[0]["text"] == "chosen: yes")

    assert fake.callback_answer(press)["text"] == "got yes"
    assert app.bot_data["pressed_markup"] == CHOICES  # the keyboard survived the round trip
    [edited] = fake.messages(CHAT_ID)
    assert edited["message_id"] == question["message_id"]
    assert "reply_markup" not in edited  # editMessageText without a markup drops the keyboard
    assert "edit_date" in edited


async def test_photo_bytes_come_back_through_get_file(fake: FakeBotApi, app: Application):
    image = bytes(range(256)) * 8
    fake.push_photo(CHAT_ID, caption="진단서 사진", file_bytes=image)

    [reply] = await fake.wait_for_messages(CHAT_ID, 1)

    assert reply["text"] == f"photo: {len(image)} bytes"
    assert app.bot_data["photo"] == image
    assert len(fake.calls_to("getFile")) == 1
    assert len(fake.downloads) == 1 and fake.downloads[0].startswith("photos/")


async def test_send_document_stores_the_upload(fake: FakeBotApi, app: Application):
    fake.push_command(CHAT_ID, "export")

    [message] = await fake.wait_for_messages(CHAT_ID, 1)

    [document] = fake.documents(CHAT_ID)
    assert document["file_name"] == "summary.txt"
    assert document["content"] == SUMMARY_BYTES
    assert document["caption"] == "요약본"
    assert document["mime_type"] == "text/plain"
    assert message["document"]["file_size"] == len(SUMMARY_BYTES)


async def test_recorded_sticker_payload_is_parsed_as_a_sticker(fake: FakeBotApi, app: Application):
    payload = json.loads((TELEGRAM_DATA / "illemius" / "message_with_sticker.json").read_text())

    fake.push_raw(payload, chat_id=CHAT_ID)
    [reply] = await fake.wait_for_messages(CHAT_ID, 1)

    sticker = app.bot_data["sticker"]
    assert isinstance(sticker, Sticker)
    assert (sticker.emoji, sticker.set_name, sticker.width) == ("🛠", "CityWars", 512)
    assert sticker.file_id == payload["message"]["sticker"]["file_id"]
    assert sticker.thumbnail is not None and sticker.thumbnail.width == 128
    assert reply["text"] == "sticker: 🛠"


async def test_offsets_are_confirmed(fake: FakeBotApi, app: Application):
    update_ids = [fake.push_text(CHAT_ID, f"메시지 {n}") for n in range(3)]

    replies = await fake.wait_for_messages(CHAT_ID, 3)
    await fake.wait_for(lambda: fake.confirmed_up_to >= update_ids[-1], what="confirmation")

    assert [reply["text"] for reply in replies] == [f"echo: 메시지 {n}" for n in range(3)]
    assert fake.pending_updates == 0


async def test_edit_to_the_same_content_is_not_modified(fake: FakeBotApi, app: Application):
    fake.push_text(CHAT_ID, "같은 내용")
    [reply] = await fake.wait_for_messages(CHAT_ID, 1)

    with pytest.raises(BadRequest, match="Message is not modified"):
        await app.bot.edit_message_text(
            reply["text"], chat_id=CHAT_ID, message_id=reply["message_id"], reply_markup=CHOICES
        )


async def test_long_poll_returns_as_soon_as_an_update_is_pushed(fake: FakeBotApi, bot: Bot):
    # The poll may wait twice the test's limit; the update must end it within the limit.
    poll = asyncio.create_task(bot.get_updates(timeout=int(2 * WAIT)))
    await fake.wait_for(lambda: fake.calls_to("getUpdates"), what="the long poll to arrive")
    await asyncio.sleep(0.05)
    assert not poll.done()  # nothing pending: the server holds the poll open

    first = fake.push_text(CHAT_ID, "하나")
    [update] = await asyncio.wait_for(poll, WAIT)
    assert update.update_id == first and update.message.text == "하나"

    second = fake.push_text(CHAT_ID, "둘")
    [update] = await bot.get_updates(offset=first + 1, timeout=0)
    assert update.update_id == second
    assert (fake.confirmed_up_to, fake.pending_updates) == (first, 1)


async def test_factories_build_updates_ptb_parses(fake: FakeBotApi, bot: Bot):
    fake.push_command(CHAT_ID, "start", "안녕")
    fake.push_document(
        CHAT_ID, file_name="계약서.pdf", mime_type="application/pdf", caption="계약서"
    )
    fake.push_voice(CHAT_ID)
    fake.push_location(CHAT_ID)
    fake.push_sticker(CHAT_ID)

    command, document, voice, location, sticker = [u.message for u in await bot.get_updates()]

    assert list(command.parse_entities(["bot_command"]).values()) == ["/start"]
    assert (document.document.file_name, document.caption) == ("계약서.pdf", "계약서")
    assert voice.voice.mime_type == "audio/ogg"
    assert location.location.latitude == pytest.approx(37.5665)
    assert sticker.sticker.type == "regular"
    downloaded = await (await document.document.get_file()).download_as_bytearray()
    assert bytes(downloaded) == b"%PDF-1.4 fake document"


async def test_every_recorded_payload_reaches_ptb(fake: FakeBotApi, bot: Bot):
    payloads = [
        json.loads(path.read_text()) for path in (TELEGRAM_DATA / "illemius").glob("*.json")
    ]
    payloads += [
        json.loads(line)
        for line in (TELEGRAM_DATA / "teloxide_updates.jsonl").read_text().splitlines()
    ]
    pushed = [
        fake.push_raw(p, chat_id=CHAT_ID) for p in payloads if "update_id" in p or "payload" in p
    ]

    updates = await bot.get_updates()  # an update PTB cannot parse would raise here

    assert [update.update_id for update in updates] == pushed


async def test_commands_and_deletion(fake: FakeBotApi, bot: Bot):
    fake.push_text(CHAT_ID, "시작")
    await bot.set_my_commands([("start", "상담 시작"), ("export", "요약 받기")])
    sent = await bot.send_message(CHAT_ID, "곧 지울 메시지")

    assert [c.command for c in await bot.get_my_commands()] == ["start", "export"]
    assert await bot.delete_message(CHAT_ID, sent.message_id)
    assert fake.messages(CHAT_ID) == [] and fake.deleted == [(CHAT_ID, sent.message_id)]
    with pytest.raises(BadRequest, match="Chat not found"):
        await bot.send_message(CHAT_ID + 1, "아무도 말 건 적 없는 채팅")


async def test_wire_format_details(fake: FakeBotApi):
    async with aiohttp.ClientSession() as session:
        async with session.post(f"{fake.url}/bot{fake.token}/GETME") as response:
            assert (await response.json())["result"]["id"] == 123456
        async with session.post(f"{fake.url}/bot{fake.token}/noSuchMethod") as response:
            body = await response.json()
            assert (response.status, body["ok"], body["error_code"]) == (404, False, 404)
        async with session.post(f"{fake.url}/bot654321:WRONG/getMe") as response:
            assert response.status == 401
    assert [name for name, _ in fake.calls] == ["getMe", "noSuchMethod"]


def test_html_parse_mode_becomes_text_and_entities():
    text, entities = parse_html('<b>전세</b> &amp; <a href="https://law.go.kr">법령</a>')

    assert text == "전세 & 법령"
    assert entities == [
        {"type": "bold", "offset": 0, "length": 2},
        {"type": "text_link", "offset": 5, "length": 2, "url": "https://law.go.kr"},
    ]
    with pytest.raises(Exception, match="Unsupported start tag"):
        parse_html("줄<br>바꿈")


async def test_requests_beyond_loopback_fail_loudly():
    request = LoopbackOnlyRequest()
    bot = Bot("123456:TEST", request=request, get_updates_request=LoopbackOnlyRequest())

    with pytest.raises(NetworkError, match="network is off in tests"):
        await bot.initialize()  # default base_url: api.telegram.org

    assert request.refused == ["https://api.telegram.org/bot123456:TEST/getMe"]
    await bot.shutdown()


# --- webhook delivery ----------------------------------------------------------------------


class WebhookReceiver:
    """A bot's webhook endpoint on 127.0.0.1: records every POST as it arrives and answers
    ``statuses`` in turn (then 200), each after ``delay`` seconds."""

    def __init__(self, statuses: tuple[int, ...] = (), delay: float = 0.0) -> None:
        self.statuses = list(statuses)
        self.delay = delay
        self.received: list[dict] = []  # headers, update, status
        self.in_flight = 0
        self.peak = 0
        self.url = ""
        self._runner: web.AppRunner | None = None

    async def _receive(self, request: web.Request) -> web.Response:
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            update = await request.json()
            status = self.statuses.pop(0) if self.statuses else 200
            self.received.append({"headers": request.headers, "update": update, "status": status})
            await asyncio.sleep(self.delay)
            return web.Response(status=status)
        finally:
            self.in_flight -= 1

    def ids(self, status: int | None = None) -> list[int]:
        return [
            r["update"]["update_id"]
            for r in self.received
            if status is None or r["status"] == status
        ]

    async def __aenter__(self) -> WebhookReceiver:
        app = web.Application()
        app.router.add_post("/hook", self._receive)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", 0).start()
        self.url = f"http://127.0.0.1:{self._runner.addresses[0][1]}/hook"
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._runner is not None
        await self._runner.cleanup()


def closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}/hook"


async def test_webhook_posts_pending_and_new_updates_with_the_secret(fake: FakeBotApi, bot: Bot):
    before = fake.push_text(CHAT_ID, "웹훅 전에 온 메시지")
    async with WebhookReceiver() as receiver:
        assert await bot.set_webhook(receiver.url, secret_token="s3cret_token-1")
        after = fake.push_text(CHAT_ID, "웹훅 뒤에 온 메시지")

        await fake.wait_for(lambda: receiver.ids(200) == [before, after], what="both POSTs")
        await fake.wait_for(lambda: fake.pending_updates == 0, what="confirmation")

        first = receiver.received[0]
        assert first["headers"]["X-Telegram-Bot-Api-Secret-Token"] == "s3cret_token-1"
        assert first["headers"]["Content-Type"] == "application/json"
        assert Update.de_json(first["update"], bot).message.text == "웹훅 전에 온 메시지"
        info = await bot.get_webhook_info()
        assert (info.url, info.pending_update_count, info.max_connections) == (receiver.url, 0, 40)
        assert fake.confirmed_up_to == after


async def test_webhook_without_a_secret_sends_no_secret_header(fake: FakeBotApi, bot: Bot):
    async with WebhookReceiver() as receiver:
        await bot.set_webhook(receiver.url)
        fake.push_text(CHAT_ID, "비밀 없음")

        await fake.wait_for(lambda: receiver.received, what="the POST")

        assert "X-Telegram-Bot-Api-Secret-Token" not in receiver.received[0]["headers"]


async def test_a_failed_delivery_is_kept_and_retried(fake: FakeBotApi, bot: Bot):
    async with WebhookReceiver(statuses=(500,)) as receiver:
        await bot.set_webhook(receiver.url, secret_token="s")
        update_id = fake.push_text(CHAT_ID, "재시도")

        await fake.wait_for(lambda: receiver.ids() == [update_id], what="the first POST")
        info = await bot.get_webhook_info()
        assert info.pending_update_count == 1  # a 500 does not confirm the update
        assert "500" in info.last_error_message
        await fake.wait_for(lambda: receiver.ids(200) == [update_id], what="the retry")
        await fake.wait_for(lambda: fake.pending_updates == 0, what="confirmation")

        # No one listening: a connection error, retried as well, here to the webhook URL.
        fake.webhook_targets = [closed_port_url()]
        second = fake.push_text(CHAT_ID, "연결 실패")
        await fake.wait_for(
            lambda: [a for a in fake.webhook_attempts if a[1] == second and a[2] is None],
            what="a refused connection",
        )
        assert fake.pending_updates == 1
        fake.webhook_targets = None
        await fake.wait_for(lambda: second in receiver.ids(200), what="the retry to the hook")


async def test_get_updates_conflicts_while_a_webhook_is_set(fake: FakeBotApi, bot: Bot):
    await bot.set_webhook(closed_port_url())  # nobody answers: the update stays pending
    update_id = fake.push_text(CHAT_ID, "폴링 불가")

    with pytest.raises(Conflict, match="can't use getUpdates method while webhook is active"):
        await bot.get_updates(timeout=0)
    assert fake.errors[-1][2] == (
        "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to "
        "delete the webhook first"
    )

    assert await bot.delete_webhook()
    [update] = await bot.get_updates(timeout=0)
    assert update.update_id == update_id and (await bot.get_webhook_info()).url == ""


async def test_webhook_targets_are_served_round_robin(fake: FakeBotApi, bot: Bot):
    async with WebhookReceiver() as a, WebhookReceiver() as b:
        await bot.set_webhook("http://127.0.0.1:9/tg", secret_token="lb")  # the balancer's URL
        fake.webhook_targets = [a.url, b.url]
        pushed = [fake.push_text(CHAT_ID + n, f"채팅 {n}") for n in range(4)]

        await fake.wait_for(lambda: len(a.received) + len(b.received) == 4, what="4 POSTs")

        assert (a.ids(), b.ids()) == (pushed[0::2], pushed[1::2])
        assert all(r["headers"]["X-Telegram-Bot-Api-Secret-Token"] == "lb" for r in a.received)


async def test_a_chat_gets_its_next_update_only_after_the_previous_one_is_confirmed(
    fake: FakeBotApi, bot: Bot
):
    other_chat = CHAT_ID + 1
    async with WebhookReceiver(statuses=(503,), delay=0.1) as receiver:
        first = fake.push_text(CHAT_ID, "하나")
        second = fake.push_text(CHAT_ID, "둘")
        elsewhere = fake.push_text(other_chat, "다른 채팅")
        await bot.set_webhook(receiver.url)

        await fake.wait_for(lambda: len(receiver.ids(200)) == 3, what="3 confirmed POSTs")
        await fake.wait_for(lambda: fake.pending_updates == 0, what="confirmation")

        # The chat's first POST failed: its second update waited for the retry to succeed,
        # while the other chat was served alongside.
        arrived = receiver.ids()
        assert [i for i in arrived if i != elsewhere] == [first, first, second]
        assert receiver.ids(503) == [first]
        assert arrived.index(elsewhere) < 2 and receiver.peak == 2


async def test_max_connections_caps_the_posts_in_flight(fake: FakeBotApi, bot: Bot):
    async with WebhookReceiver(delay=0.1) as receiver:
        for n in range(6):
            fake.push_text(CHAT_ID + n, f"채팅 {n}")
        await bot.set_webhook(receiver.url, max_connections=2)

        await fake.wait_for(lambda: len(receiver.received) == 6, what="6 POSTs")

        assert receiver.peak == 2
