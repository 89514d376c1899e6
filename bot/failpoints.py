"""Named crash points for crash tests: with INTAKE_FAILPOINT set, the process kills itself there.

`INTAKE_FAILPOINT=after_graph` sends SIGKILL to this process the first time `reach("after_graph")`
runs; `after_graph:3` the third time. Several points can be armed at once, comma-separated. Unset
(always, outside crash tests), `reach` costs a dictionary look-up and does nothing.

The points, in the order a Telegram update meets them:
- `inbox_stored`: a getUpdates batch is stored in the inbox, not yet confirmed to Telegram;
- `after_graph`: the graph has run the turn (its checkpoint is written), the records are not;
- `after_records`: the records are written, the reply is not sent;
- `after_reply`: the reply is sent, the inbox row is not marked processed.
"""

from __future__ import annotations

import logging
import os
import signal

log = logging.getLogger(__name__)

POINTS = ("inbox_stored", "after_graph", "after_records", "after_reply")


def _armed(spec: str) -> dict[str, int]:
    """'after_graph:3,after_reply' -> {'after_graph': 3, 'after_reply': 1}."""
    armed: dict[str, int] = {}
    for item in filter(None, (part.strip() for part in spec.split(","))):
        name, _, count = item.partition(":")
        if name not in POINTS:
            raise ValueError(f"unknown INTAKE_FAILPOINT {name!r} (one of {', '.join(POINTS)})")
        armed[name] = int(count) if count else 1
    return armed


_ARMED = _armed(os.environ.get("INTAKE_FAILPOINT", ""))


def reach(name: str) -> None:
    """Kill this process with SIGKILL if `name` is armed and this is its n-th arrival."""
    if name not in _ARMED:
        return
    _ARMED[name] -= 1
    if _ARMED[name] <= 0:
        log.warning("failpoint %s reached: killing the process (INTAKE_FAILPOINT)", name)
        for handler in logging.getLogger().handlers:
            handler.flush()
        os.kill(os.getpid(), signal.SIGKILL)
