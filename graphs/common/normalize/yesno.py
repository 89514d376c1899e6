"""Yes and no: whether an answer says yes or no with the lexicon's cue words ("네", "없어요",
"nope"), and whether a text says one of a fact's phrases ("이사 나왔", "moved out") or its
opposite, not negated.

The cue words and phrases are knowledge (YAML); this module only knows how Korean and English
answers and negations are shaped.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?")
# "I don't know" / "모르" answers are unknown, not a no.
_NOT_A_NO_AFTER = {"know", "remember", "recall", "understand", "idea"}
_SHORT_ANSWER = 4  # words; in a short answer a later content word overrides a leading 네/아니요
_SHORT_SENTENCE = 6  # words; a longer text is an answer only when it leads with a cue


def _words(text: str) -> list[str]:
    """Lower-cased words, apostrophes kept ("don't")."""
    return _WORD.findall(text.lower().replace("’", "'"))


# Emphatic and quoting endings people add when they repeat themselves: "있다니까요", "없다고요",
# "했거든요", "맞잖아요", "아니라니까요". The stem with a plain ending is looked up instead.
_EMPHATIC = re.compile(
    r"^(?P<stem>[가-힣]+?)(?:다니까는요|다니까요|다니까|다니깐요|다니깐|다고요|다구요|다고|다구|"
    r"거든요|거든|잖아요|잖아|라니까요|라니까|라고요|라구요)$"
)
_PLAIN_ENDINGS = ("어요", "아요", "요", "습니다", "어", "아")


def _plain(word: str, single: set[str]) -> str:
    """An emphatic form ("있다니까요") as its plain form among the one-word cues ("있어요")."""
    if word in single:
        return word
    m = _EMPHATIC.match(word)
    if m is None:
        return word
    return next((m["stem"] + e for e in _PLAIN_ENDINGS if m["stem"] + e in single), word)


def parse_yes_no(text: str, *, yes: Iterable[str], no: Iterable[str]) -> bool | None:
    """True/False when the answer says yes/no with the given cue words, None when unclear."""
    yes, no = list(yes), list(no)
    single = {cue[0] for phrase in (*yes, *no) if len(cue := _words(phrase)) == 1}
    words = [_plain(word, single) for word in _words(text)]
    cues: list[tuple[int, int, bool]] = []  # (first word, word count, is yes)
    for answer, phrases in ((True, yes), (False, no)):
        for phrase in phrases:
            cue = _words(phrase)
            n = len(cue)
            for i in range(len(words) - n + 1):
                window = words[i : i + n]
                # A one-word cue also matches itself repeated ("네네", "넵넵").
                if window == cue or (
                    n == 1 and re.fullmatch(f"(?:{re.escape(cue[0])})+", words[i])
                ):
                    if not answer and i + n < len(words) and words[i + n] in _NOT_A_NO_AFTER:
                        continue
                    cues.append((i, n, answer))
    # Longer cues win over the cues inside them ("안 했어요" over "했어요").
    chosen: list[tuple[int, int, bool]] = []
    for cue in sorted(cues, key=lambda c: (-c[1], c[0])):
        if all(cue[0] >= o[0] + o[1] or o[0] >= cue[0] + cue[1] for o in chosen):
            chosen.append(cue)
    chosen.sort()
    leads = bool(chosen) and chosen[0][0] <= 1
    if not chosen or (len(words) > _SHORT_SENTENCE and not leads):
        return None
    answers = {c[2] for c in chosen}
    if len(answers) == 1:
        return answers.pop()
    # Korean answers the form of the question: "네, 없어요" to "없으세요?" means there is none.
    if len(words) <= _SHORT_ANSWER:
        return chosen[-1][2]
    return chosen[0][2] if leads else None


_KO_NEGATED_BEFORE = ("안", "못")
_KO_NEGATED_AFTER = re.compile(r"^(?:지\s?(?:도|는|가)?\s?(?:않|못)|진\s?(?:않|못))")
_EN_NEGATED_BEFORE = re.compile(r"(?:\bnot|n't|\bnever|\bno)\s+(?:\w+\s+)?$")


@functools.cache
def _phrase_form(phrase: str) -> tuple[re.Pattern[str] | None, str]:
    """(whole-word pattern, None) for an English phrase, (None, the phrase without spaces) for a
    Korean one: made once per phrase of the knowledge."""
    phrase = phrase.lower()
    if _LATIN_WORD.search(phrase):
        return re.compile(rf"(?<![a-z']){re.escape(phrase)}(?![a-z])"), phrase
    return None, _SPACES.sub("", phrase)


@functools.lru_cache(maxsize=64)
def _squeezed(text: str) -> str:
    """The text without spaces (one message is searched for many phrases)."""
    return _SPACES.sub("", text)


_SPACES = re.compile(r"\s+")


# What follows a 아직 that means "not yet" (the text squeezed of spaces).
_NOT_YET_AFTER = re.compile(r"(?:안|못|없|이요|요|은|아니|까지|$|[.,!?~ㅠㅜ])")


def _phrase_spans(text: str, phrase: str, *, not_yet: bool = False) -> list[tuple[int, int]]:
    """Where a phrase is said, not negated: Korean ignoring spaces ("못 받았" = "못받았") and not
    after 안/못 or before 지 않/지 못; English as whole words, not after not/n't/never/no.
    `not_yet`: the phrase says no (its 아직 is "not yet", never 아직도, "still")."""
    pattern, target = _phrase_form(phrase)
    if pattern is not None:
        return [
            m.span()
            for m in pattern.finditer(text)
            if not _EN_NEGATED_BEFORE.search(text[: m.start()])
        ]
    squeezed = _squeezed(text)
    spans, pos = [], squeezed.find(target)
    while pos >= 0:
        end = pos + len(target)
        negated = (
            not target.startswith(_KO_NEGATED_BEFORE)
            and squeezed[:pos].endswith(_KO_NEGATED_BEFORE)
        ) or bool(_KO_NEGATED_AFTER.match(squeezed[end:]))
        # "아직" says no as "not yet" ("아직이요", "아직 안 했어요"), not as "still" ("아직도 밖에서
        # 두드리고 있어요", "손이 아직 떨리네요" to "did you get a protection order?" read as no:
        # legal_set19 A4)
        still = not_yet and target.endswith("아직") and not _NOT_YET_AFTER.match(squeezed, end)
        if not negated and not still:
            spans.append((pos + 10**6, end + 10**6))  # apart from the English positions
        pos = squeezed.find(target, pos + 1)
    return spans


_LATIN_WORD = re.compile(r"[a-z]")


def phrase_polarity(
    text: str, *, true: Iterable[str], false: Iterable[str], first: bool = False
) -> bool | None:
    """True or False when the text says one of a fact's phrases ("이사 나왔", "moved out"), None
    when it says none, or says both (`first`: the one said first, as an answer opens with its
    yes or no: "Not the police yet. I reported the review to Naver"). A longer phrase wins
    over one inside it ("못 받았" over "받았"), and a negated phrase does not count ("안
    다쳤어요" is not "다쳤")."""
    lowered = text.lower()
    found = [
        (start, end, polarity)
        for polarity, phrases in ((True, true), (False, false))
        for phrase in phrases
        for start, end in _phrase_spans(lowered, phrase, not_yet=not polarity)
    ]
    chosen: list[tuple[int, int, bool]] = []
    for cue in sorted(found, key=lambda c: c[0] - c[1]):
        if all(cue[0] >= o[1] or o[0] >= cue[1] for o in chosen):
            chosen.append(cue)
    polarities = {c[2] for c in chosen}
    if len(polarities) > 1 and first:
        return min(chosen)[2]
    return polarities.pop() if len(polarities) == 1 else None
