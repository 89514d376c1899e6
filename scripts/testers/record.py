"""What staff receive for one chat of a round, as JSON (the export with open intakes):
python scripts/testers/record.py CHAT (with TESTERS_DIR set). For scoring, after the talk."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def main() -> None:
    chat = int(sys.argv[1])
    env = {**os.environ, "INTAKE_DATA_DIR": str(Path(os.environ["TESTERS_DIR"]) / "data")}
    out = subprocess.run(
        [str(ROOT / ".venv/bin/intake-bot"), "export", "--all", "--format", "json"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    ).stdout
    rows = [r for r in json.loads(out) if r.get("chat_id") == chat]
    print(json.dumps(rows, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
