"""What the person wants from the case, kept whatever the case type: "돈만 돌려받고 싶어요",
"처벌을 원합니다", "I just want my deposit back". Lexicon: `wants` and `wants_not`.

A sentence saying a wish is kept in the person's words in the field `desired_outcome`; a later
wish is added beside the earlier ones, never in place of them. A question ("돌려받을 수 있나요?")
is the lawyer's to answer and listed as a question, not here.
"""

from __future__ import annotations

import re
from typing import Any

from graphs.common.text import sentences
from knowledge.loader import Knowledge

FIELD = "desired_outcome"
MAX_CHARS = 400  # of all wishes kept together
SENTENCE_CHARS = 200  # a longer "sentence" is a whole account, not a wish
_QUESTION = re.compile(r"[?？]\s*$")
_HANGUL = re.compile(r"[가-힣]")


def wishes(kn: Knowledge, text: str) -> list[str]:
    """The sentences of `text` that say what the person wants, as written."""
    lex = kn.lexicon
    cues = [*map(_squeezed, lex.wants.get("ko", [])), *(c.lower() for c in lex.wants.get("en", []))]
    nots = [_squeezed(n) if _HANGUL.search(n) else n.lower() for n in lex.wants_not]
    found = []
    for sentence in sentences(text):
        if len(sentence) > SENTENCE_CHARS or _QUESTION.search(sentence):
            continue
        lowered = " ".join(sentence.lower().split())
        # Korean is matched without spaces: "받고싶어요" and "받고 싶어요" alike
        forms = (lowered, _squeezed(lowered))
        if any(c in f for c in cues for f in forms) and not any(
            n in f for n in nots for f in forms
        ):
            found.append(" ".join(sentence.split()))
    return found


def _squeezed(text: str) -> str:
    return "".join(text.lower().split())


def with_wishes(kn: Knowledge, facts: dict[str, Any], text: str) -> str | None:
    """The field's value once the wishes in `text` are added; None when nothing new was said."""
    kept = str(facts.get(FIELD) or "")
    new = [w for w in wishes(kn, text) if w not in kept]
    if not new:
        return None
    value = " / ".join([kept, *new] if kept else new)
    return value[:MAX_CHARS] if len(value) > MAX_CHARS else value
