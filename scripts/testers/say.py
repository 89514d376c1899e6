"""One message of a live persona conversation, as a tester types it (scripts/testers/README.md):

    python scripts/testers/say.py CHAT 'text'        a message
    python scripts/testers/say.py CHAT --press DATA  a button (its data, as printed after →)
    python scripts/testers/say.py CHAT /command      a command (/status, /new, /forget, …)

Each call resumes the conversation from its checkpoint in $TESTERS_DIR/data, through the
console of the product (`intake-bot chat --jsonl --domain legal`). A chat is in LLM mode when
$TESTERS_DIR/llm/CHAT holds an endpoint's /v1 URL (a woz.py endpoint: ../shared/tools/WOZ.md).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def line_of(args: list[str]) -> str:
    """The console line for what the tester typed."""
    if args[0] == "--press":
        return json.dumps({"choice": args[1]}, ensure_ascii=False)
    if args[0].startswith("/"):
        return json.dumps({"command": " ".join(args)}, ensure_ascii=False)
    return json.dumps({"text": " ".join(args)}, ensure_ascii=False)


def show(reply: dict) -> str:
    """The reply as a person reads it: each message, its buttons (label → data), an alert."""
    out = []
    for message in reply.get("messages", []):
        out.append(message.get("text", ""))
        out += [f"   [{c['label']}] → {c['data']}" for c in message.get("choices", [])]
        out.append("")
    if reply.get("alerts"):
        out.append("(safety alert raised)")
    return "\n".join(out)


def main() -> None:
    chat, args = sys.argv[1], sys.argv[2:]
    folder = Path(os.environ["TESTERS_DIR"])
    env = {**os.environ, "INTAKE_DATA_DIR": str(folder / "data")}
    command = [str(ROOT / ".venv/bin/intake-bot"), "chat", "--jsonl", "--domain", "legal"]
    command += ["--chat-id", chat]
    endpoint = folder / "llm" / chat
    if endpoint.exists():
        command += ["--llm", endpoint.read_text().strip()]
        env.setdefault("INTAKE_LLM_MODEL", "woz")
        env.setdefault("INTAKE_LLM_API_KEY", "x")
        env.setdefault("INTAKE_LLM_TIMEOUT", "600")  # an answer written by hand takes a while
        env.setdefault("INTAKE_LLM_BUDGET", "900")
    with (folder / "console.log").open("a") as log:
        done = subprocess.run(
            command,
            input=line_of(args) + "\n",
            env=env,
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
        )
        log.write(done.stderr)
    for line in done.stdout.splitlines():
        if line.strip():
            print(show(json.loads(line)))
    if done.returncode:
        print(f"(the console stopped with code {done.returncode}; see console.log)")


if __name__ == "__main__":
    main()
