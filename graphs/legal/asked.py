"""Questions the person asks back, as the lawyer receives them: one item per question, each a
sentence that can be read alone (never the whole message it came in, never half a question)."""

from __future__ import annotations

import re
from typing import Any

from graphs.common.reading import Reading

QUESTION_CHARS = 1000  # of a question back kept for the lawyer (300 cut three questions to one)

# A question that points back at what was just said ("해고예고수당? 그런것도 받을수 있나요?",
# "the deposit. is that legal?"): a demonstrative opening it.
_POINTS_BACK = re.compile(
    r"^\s*(?:그런|그것|그거|그건|그게|이런|이거|이것|이건|저런|그럼|그러면"
    r"|(?:(?:is|was|are|were|what about)\s+)?(?:that|this|those|these|it)(?![a-z']))",
    re.I,
)

_MARKED = re.compile(r"[?？]")


def question_back(text: str, info: str | None) -> dict[str, Any]:
    """A question the person asked, for the lawyer: never answered by the bot, which gives at
    most general information (`general_info`); "answered: true" had read as nothing left for
    the lawyer where a generic limitation note met a question about another deadline
    (legal_set17 R3, R4, R6)."""
    return {"text": text[:QUESTION_CHARS], "answered": False, "general_info": info is not None}


def asked_sentences(reading: Reading) -> list[str]:
    """The sentences of a message that ask, each as the lawyer can read it alone: one that
    points back carries the sentence before it ("해고예고수당? 그런것도 받을수 있나요?":
    legal_set19 A1 kept only "그런것도 받을수 있나요?"), a lead-in that asks nothing by itself
    ("궁금한게 있는데요") the question after it."""
    asked: list[str] = []
    clauses = reading.clauses

    def marked(n: int) -> bool:
        return n < len(clauses) and bool(_MARKED.search(clauses[n].text))

    start = None  # where a lead-in began ("궁금한게 있는데요", "해고예고수당?")
    for n, clause in enumerate(clauses):
        after = n + 1 < len(clauses) and (clauses[n + 1].asks or marked(n + 1))
        if after and clause.asks != marked(n):  # a question without its mark, a mark alone
            start = clause.span[0] if start is None else start  # said with the next one
            continue
        if not clause.asks:
            start = None
            continue
        begin = clause.span[0] if start is None else start
        if n and start is None and _POINTS_BACK.match(clause.text):
            before = clauses[n - 1]
            begin = before.span[0]
            if before.asks and asked and asked[-1] == before.text.strip():
                asked.pop()  # listed once, with what it asks about
        asked.append(reading.text[begin : clause.span[1]].strip())
        start = None
    return asked


def questions_of(reading: Reading | None, text: str) -> list[str]:
    """What a message that asks puts to the lawyer: each question sentence where it says more
    than its question (legal_set19: three questions and the facts around them were one item in
    both modes), else the message as typed."""
    said = asked_sentences(reading) if reading is not None and len(reading.clauses) > 1 else []
    return said or [text.strip()]
