"""`intake-bot chat --jsonl` end to end, as a real process on a temporary data directory."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from knowledge.kb import KnowledgeBase
from tests.fakes.openai_api import FakeOpenAI, OpenAIApiError
from tests.support import WAIT

INTAKE_BOT = Path(sys.executable).parent / "intake-bot"


@pytest.fixture
def built_index(kb: KnowledgeBase, tmp_path: Path) -> None:
    """The data directory (tmp_path) starts with a copy of the session's index, as after
    `intake-bot kb build`: the console only checks it on start (building it is tested in
    test_index.py and test_kb_cli.py)."""
    shutil.copytree(kb.index.path, tmp_path / "index")


def run_chat(data_dir: Path, lines: list[str], *extra: str) -> list[dict]:
    env = {**os.environ, "INTAKE_DATA_DIR": str(data_dir), "ADMIN_IDS": ""}
    proc = subprocess.run(
        [str(INTAKE_BOT), "chat", "--jsonl", *extra],
        input="".join(line + "\n" for line in lines),
        capture_output=True,
        text=True,
        env=env,
        timeout=WAIT,
        check=True,
    )
    out = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(out) == len(lines), proc.stderr  # exactly one output line per input line
    return out


@pytest.mark.slow
@pytest.mark.usefixtures("built_index")
def test_jsonl_intake_resumes_across_processes_and_completes(tmp_path: Path) -> None:
    first = run_chat(
        tmp_path,
        [
            '{"command": "/start legal"}',
            "작년 3월에 친구 김철수한테 300만원 빌려줬는데 안 갚아요. 돌려받고 싶어요",
            "",
        ],
    )
    assert first[0]["state"] == "INIT" and first[0]["field"] is None
    assert first[1]["state"] == "FACT_COLLECTION" and first[1]["field"] == "repayment_date"
    assert 0 < first[1]["progress"] < 100
    assert first[2]["field"] == "repayment_date"  # an empty line is answered, nothing lost
    for message in first[1]["messages"]:
        assert set(message) == {"text", "choices"}

    # A new process on the same data directory continues the same intake.
    second = run_chat(
        tmp_path,
        ['{"text": "올해 6월"}', '{"choice": "a:evidence:yes"}', "카톡 대화가 남아 있어요"],
    )
    assert second[0]["field"] == "evidence"
    assert [c["data"] for c in second[0]["messages"][-1]["choices"]][:2] == [
        "a:evidence:yes",
        "a:evidence:no",
    ]
    assert second[1]["field"] == "evidence_type"
    assert second[2]["state"] == "COMPLETED" and second[2]["progress"] == 100

    # Another chat id is another conversation.
    other = run_chat(tmp_path, ["hello"], "--chat-id", "2")
    assert other[0]["state"] == "INIT"

    exported = subprocess.run(
        [str(INTAKE_BOT), "export", "--format", "json"],
        capture_output=True,
        text=True,
        env={**os.environ, "INTAKE_DATA_DIR": str(tmp_path)},
        timeout=WAIT,
        check=True,
    )
    rows = json.loads(exported.stdout)
    assert [r["sub_case_type"] for r in rows] == ["LOAN"]
    assert rows[0]["facts"]["evidence_type"] == ["messages"]
    md = tmp_path / "out.md"
    subprocess.run(
        [str(INTAKE_BOT), "export", "--format", "md", "--all", "--out", str(md)],
        check=True,
        env={**os.environ, "INTAKE_DATA_DIR": str(tmp_path)},
        capture_output=True,
        timeout=WAIT,
    )
    assert "LOAN" in md.read_text(encoding="utf-8")


def run_chat_bytes(data_dir: Path, payload: bytes, *extra: str) -> tuple[list[dict], str]:
    """The console fed raw bytes (not necessarily UTF-8); (output lines, stderr)."""
    env = {**os.environ, "INTAKE_DATA_DIR": str(data_dir), "ADMIN_IDS": ""}
    proc = subprocess.run(
        [str(INTAKE_BOT), "chat", "--jsonl", *extra],
        input=payload,
        capture_output=True,
        env=env,
        timeout=WAIT,
    )
    stderr = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode == 0, stderr
    return [json.loads(line) for line in proc.stdout.decode("utf-8").splitlines()], stderr


@pytest.mark.slow
@pytest.mark.usefixtures("built_index")
def test_inputs_that_crashed_the_console_each_get_one_polite_line(tmp_path: Path) -> None:
    deep = "{" * 100_000 + '"text": 1' + "}" * 100_000  # past json's recursion limit
    lines = [
        '{"command": ""}',
        '{"command": "/"}',
        "//",
        deep,
        '{"text": "\\udc00"}',  # a lone surrogate as the first message
        '{"text": "작년 3월에 친구 김철수한테 300만원 빌려줬는데 안 갚아요. 돌려받고 싶어요 \\ud800"}',
        '{"text": "올해 6월"}',
        '{"text": "없어요 \\udfff"}',  # and in the last answer, whose reply is printed
        '{"command": "/summary"}',
    ]
    payload = "".join(line + "\n" for line in lines).encode()
    payload += b"\xff\xfe not UTF-8 \xc3\n"  # bytes that decode to nothing
    out, stderr = run_chat_bytes(tmp_path, payload)

    assert len(out) == len(lines) + 1, stderr  # one line for every line, and no traceback
    assert "Traceback" not in stderr
    for reply in out:
        assert reply["messages"] and all(m["text"] for m in reply["messages"])
    assert out[6]["field"] == "evidence"
    assert out[7]["state"] == "COMPLETED"
    assert "3,000,000" in out[8]["messages"][0]["text"]  # the summary was written
    assert out[9]["state"] == "COMPLETED"  # what follows is told the intake is complete


def test_parse_command_takes_an_empty_or_bare_slash_as_an_unknown_command() -> None:
    from bot.console import parse_command, parse_line

    for text in ("", "/", "//", "   "):
        inbound = parse_command(text, 1)
        assert (inbound.kind, inbound.command, inbound.args) == ("command", "", ())
    # a JSON text opening with a command is one, as Telegram marks it; a path is not
    assert parse_line('{"text": "/help"}', 1).command == "help"
    assert parse_line('{"text": "/lang@intake_bot en"}', 1).args == ("en",)
    assert parse_line('{"text": "/home/me/notes.txt 보냈어요"}', 1).kind == "text"
    nested = parse_line("[" * 50_000, 1)
    assert nested.kind == "text"
    assert parse_line("{" * 50_000 + "}" * 50_000, 1).kind == "text"


@pytest.mark.slow
@pytest.mark.usefixtures("built_index")
def test_jsonl_lines_carry_the_safety_rules_each_input_fired(tmp_path: Path) -> None:
    out = run_chat(
        tmp_path,
        [
            "생후 2개월 아기가 열이 38도예요",
            "친구한테 300만원 빌려줬는데 안 갚아요",
            "땅콩 먹고 입술이 퉁퉁 부었어요",
        ],
    )
    assert [line["alerts"] for line in out] == [["INFANT_FEVER"], [], ["ANAPHYLAXIS"]]
    assert "119" in out[0]["messages"][0]["text"]  # what to do now comes first


@pytest.mark.slow
@pytest.mark.usefixtures("built_index")
def test_console_medical_domain_remembers_across_processes(tmp_path: Path) -> None:
    first = run_chat(
        tmp_path,
        [
            "67세 남자고 당뇨가 있어요. 메트포르민 먹어요",
            "가슴이 아파요",
            "식은땀이 나요",
            "/profile",
        ],
        "--domain",
        "medical",
    )
    assert all(line["state"] == "MEDICAL" for line in first)
    assert first[0]["messages"][0]["text"] == "기록해 둘게요: 67세, 남성, 당뇨병, 메트포르민"
    assert first[0]["messages"][-1]["text"].splitlines()[-1].startswith("출처:")
    assert first[1]["alerts"] == [] and first[2]["alerts"] == ["CHEST_PAIN"]
    assert "메트포르민" in first[3]["messages"][0]["text"]
    # A new process: the chat is still in the medical domain, with its profile and alerts.
    second = run_chat(tmp_path, ["/summary"])
    summary = second[0]["messages"][0]["text"]
    assert "CHEST_PAIN" in summary and "메트포르민" in summary and "흉통" in summary


def down(request: dict) -> str:
    """A model server that answers every call with an HTTP 500."""
    raise OpenAIApiError(500, "down")


@pytest.mark.slow
@pytest.mark.usefixtures("built_index")
def test_chat_llm_calls_the_given_endpoint_and_answers_while_it_fails(tmp_path: Path) -> None:
    """`chat --llm URL` is LLM mode on that endpoint with no other setting; a model that
    answers only errors leaves every turn answered by the rules."""
    with FakeOpenAI().run_in_thread() as fake:
        fake.responder = down
        out = run_chat(
            tmp_path, ["작년 3월에 친구한테 300만원 빌려줬는데 안 갚아요", "네"], "--llm", fake.url
        )
        asked = fake.chat_requests()
    assert asked, "the console in --llm mode never called the endpoint"
    assert all(r["messages"][-1]["role"] == "user" for r in asked)
    assert all(o["messages"] for o in out), "a turn went unanswered while the model failed"
    assert out[0]["state"] != "INIT"
