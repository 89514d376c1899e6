"""Telegram's message length: a reply cut into messages of at most 4096 UTF-16 code units.

Pure text work, no network: `split_text` finds the best breaks (a blank line, a line break, a
sentence end, a space) and never cuts inside an emoji sequence, a flag or an accent.
"""

from __future__ import annotations

import re
import unicodedata

from telegram.constants import MessageLimit

TELEGRAM_TEXT_LIMIT = int(MessageLimit.MAX_TEXT_LENGTH)  # 4096, counted in UTF-16 code units
_WHITESPACE_RUN = re.compile(r"\s+")
# Punctuation that ends a sentence, and closers that may follow it (`다.” 그리고` ends after `”`).
_SENTENCE_END = frozenset(".!?…。！？")
_CLOSERS = frozenset("\"')]}”’」』》〉）")
_ZWJ = "\u200d"
# Preferred cuts are searched in the last half of the window only, so a break near the start
# of a long message does not leave a tiny part.
_LATE_FRACTION = 0.5


def utf16_len(text: str) -> int:
    """Length as Telegram counts it: UTF-16 code units (astral characters such as emoji are 2)."""
    return len(text.encode("utf-16-le")) // 2


def _fitting_prefix(text: str, limit: int) -> int:
    """The largest n such that text[:n] is at most `limit` UTF-16 code units."""
    if utf16_len(text[:limit]) <= limit:  # no astral character in the first `limit`
        return min(len(text), limit)
    units = 0
    for index, char in enumerate(text):
        units += 2 if ord(char) > 0xFFFF else 1
        if units > limit:
            return index
    return len(text)


def _joins_previous(char: str) -> bool:
    """A character that belongs to the one before it (accents, ZWJ, variation selectors, ...)."""
    code = ord(char)
    return (
        unicodedata.combining(char) != 0
        or char == _ZWJ
        or 0xFE00 <= code <= 0xFE0F  # variation selectors (emoji presentation)
        or 0x1F3FB <= code <= 0x1F3FF  # skin-tone modifiers
        or 0xE0020 <= code <= 0xE007F  # tag characters (subdivision flags)
        or 0xE0100 <= code <= 0xE01EF  # variation selectors supplement
    )


def _is_regional_indicator(char: str) -> bool:
    return 0x1F1E6 <= ord(char) <= 0x1F1FF


def _hard_cut(text: str, end: int) -> int:
    """`end`, moved back so the cut does not split an emoji sequence, a flag or an accent."""
    cut = end
    while 0 < cut < len(text) and (_joins_previous(text[cut]) or text[cut - 1] == _ZWJ):
        cut -= 1
    if 0 < cut < len(text) and _is_regional_indicator(text[cut]):
        run = cut
        while run > 0 and _is_regional_indicator(text[run - 1]):
            run -= 1
        if (cut - run) % 2:  # the cut falls between the two halves of a flag
            cut -= 1
    return cut if cut > 0 else end


def _cut_level(text: str, start: int, end: int) -> int:
    """How good a cut at the whitespace run text[start:end] is: 0 paragraph ... 3 plain space."""
    gap = text[start:end]
    if gap.count("\n") >= 2:
        return 0
    if "\n" in gap:
        return 1
    before = start
    while before > 0 and text[before - 1] in _CLOSERS:
        before -= 1
    if before > 0 and text[before - 1] in _SENTENCE_END:
        return 2
    return 3


def _split_point(text: str, limit: int) -> tuple[int, int]:
    """(end of the first part, start of the rest) for text longer than `limit`."""
    window = _fitting_prefix(text, limit)
    late = int(window * _LATE_FRACTION)
    best: dict[int, tuple[int, int]] = {}  # level -> the last run of that level in the window
    latest: tuple[int, int] | None = None
    for run in _WHITESPACE_RUN.finditer(text, 1, window + 1):
        start = run.start()
        if start > window:
            break
        end = _WHITESPACE_RUN.match(text, start).end()  # the whole run, past the window too
        latest = (start, end)
        if start >= late:
            best[_cut_level(text, start, end)] = (start, end)
    if best:
        return best[min(best)]
    if latest is not None:  # only early breaks: a short part beats a word cut in two
        return latest
    cut = _hard_cut(text, window)
    return cut, cut


def split_text(text: str, limit: int = TELEGRAM_TEXT_LIMIT) -> list[str]:
    """Split a reply into Telegram messages of at most `limit` UTF-16 code units each.

    A text that fits is returned as it is. A longer one is cut at the best break in the last
    half of each window: a blank line, then a line break, then the end of a sentence, then a
    space; with none there, at the last space anywhere in the window; only a text with no
    space at all (long Korean without spaces, emoji runs) is cut hard, and never inside an emoji
    sequence or a flag. The whitespace at a cut is dropped, as are the text's outer blanks, so
    no part starts or ends with whitespace and none is empty: the parts, joined with the
    dropped whitespace put back, are ``text.strip()``. A text with nothing but whitespace
    gives no parts.
    """
    if limit < 2:
        raise ValueError("limit must be at least 2 (an emoji takes 2 UTF-16 code units)")
    if not text.strip():
        return []
    if utf16_len(text) <= limit:
        return [text]
    parts: list[str] = []
    rest = text.strip()
    while utf16_len(rest) > limit:
        end, start = _split_point(rest, limit)
        parts.append(rest[:end])
        rest = rest[start:]
    parts.append(rest)
    return parts
