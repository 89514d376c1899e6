"""Small text utilities shared by the graphs: the one place a message is cut into sentences
and clauses, Korean lemmas, language guess, nonsense check."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Literal

from knowledge.korean import get_kiwi

# Kiwi tags kept as lemmas: nouns, numerals, pronouns, verbs/adjectives (incl. auxiliaries),
# the copula's negative form, adverbs (안, 못), roots, numbers and hanja. Particles, endings,
# suffixes and punctuation are dropped. Irregular stems carry a suffix ("VV-I", "VA-R").
_KEPT_TAGS = frozenset(
    {"NNG", "NNP", "NNB", "NR", "NP", "VV", "VA", "VX", "VCN", "MAG", "XR", "SN", "SH"}
)
# Where a sentence ends: after ! ? ; and their full-width forms (not inside brackets: "제 몫
# (유류분?)이 얼마나"), at a line break, at a full stop
# that ends a word ("열이 나요. 기침도", "나요.기침도") or a run of dots ("하고..애도"), but neither
# at a decimal point ("1.5", "3.5억", "2024.6.1") nor at one dot inside a word ("죽.고.싶.어",
# "계약서.pdf"); after a run of crying or laughing ("37.8이에요ㅠ 남편은"), and after a Korean
# sentence ending that closes a word before a space, as chats leave out the full stop: 요, 죠, 다
# (and 니다). The word 다 ("all": "이거 다 갚아야돼요", "애들 둘다 제가 키우고") ends nothing, nor do the particles 마다,
# 보다, 에다 ("일주일마다 이자", "어제보다 더 아파요"), 필요 and 중요 (nouns ending in 요), nor
# 까, which before a space mostly asks inside a sentence ("먹을까 봐 걱정돼요", "시작할까
# 고민이에요") or is no ending at all ("아까", "재보니까").
_SENTENCE_END = re.compile(
    r"[!?;\n？！。]+(?![)\]）])|\.{2,}|\.(?=\s|$)|(?<=[가-힣][요다죠])\.|(?<=[A-Za-z]{2})\.(?=[A-Z])"
    r"|(?<=[가-힣][요다죠])(?<!필요)(?<!중요)(?<!마다)(?<!보다)(?<!에다)"
    r"(?<!둘다)(?<!셋다)(?<!전부다)(?<!모두다)(?=\s)"
    r"|[ㅠㅜㅋㅎ\u1172\u116e\u110f\u1112]+"
)
# Where a sentence divides into clauses. Every connective (`clause_spans(..., at="connective")`,
# what one negation, history cue or question covers in the medical reading): a Korean connective
# ending before a space (있고, 없는데, 있지만, 아파서, 먹으니까, 가다가, 아프거나 — but "…에서 " is
# a place), a comma after a predicate (not between listed nouns: "당뇨, 고혈압"), and English
# conjunctions that start a new statement.
_CONNECTIVE = re.compile(
    r"(?<=[가-힣])(?:고|데|지만|면서|며|(?<!에)서|니까|다가|거나)(?=\s)"
    r"|(?<=[요다고데음함임며서지])\s*,"
    r"|\b(?:but|however|although|though|whereas|except|while)\b"
    r"|,(?=\s*(?:but|and|i|i'm|he|she|my|though|although|so)\b)"
    r"|\band\b(?=\s+(?:i|i'm|i've|he|she|my|has|have|had|takes?|took|is|was|am|gets?|got|also"
    r"|then|no|not|never)\b)",
    re.I,
)
# Only where what is said turns (`at="turn"`, what one safety guard covers: "칼 들고 죽인다고"
# stays whole, "예전에 맞은 적 있는데 지금 또 때려요" does not): a comma, … or ~ before a space;
# after 는데/지만, spaced or not ("예전엔 그랬는데 지금은"), unless a number follows ("쟀는데
# 320"); before 지금/방금; before English "but", "however", "although", "though".
_TURN = re.compile(
    r",+|[…~]+(?=\s|$)|(?<=는데|인데|은데|던데|지만)(?!\s*\d)|(?=지금|방금)"
    r"|\s+(?=(?:but|however|although|though)\b)",
    re.I,
)
ClauseCut = Literal["connective", "turn"]
_CUTS: dict[ClauseCut, re.Pattern[str]] = {"connective": _CONNECTIVE, "turn": _TURN}
_LATIN_WORD = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)?")
_HANGUL_SYLLABLE = re.compile(r"[\uac00-\ud7a3]")
_HANGUL_ANY = re.compile(r"[\uac00-\ud7a3\u1100-\u11ff\u3131-\u318e]")
_JAMO_ONLY = re.compile(r"^[\u3131-\u318e\u1100-\u11ff]+$")
_LATIN = re.compile(r"[A-Za-z]")
_KEYBOARD_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")
# Jamo-only chat shorthand that does carry meaning (yes / okay / no); everything else made of
# bare jamo ("ㅋㅋㅋ", "ㅠㅠ", "ㅁㄴㅇㄹ") is laughter, crying or keyboard mash.
_MEANINGFUL_JAMO = frozenset({"ㅇㅇ", "ㅇㅋ", "ㄴㄴ", "ㅇㅇㅇ", "ㅇㅋㅇㅋ"})
# Syllables of written laughter ("하하", "크크크", "키킥"); repeated "네네" is a real answer.
_LAUGHTER_SYLLABLES = frozenset("하핳호히헤흐크킄킥키캬푸풉")


@dataclass(frozen=True)
class Span:
    """A stretch of a text: a sentence or a clause, and the number of the sentence it is in."""

    start: int
    end: int
    sentence: int


def sentence_spans(text: str) -> list[Span]:
    """Where the sentences of a chat message stand, in order; blank stretches left out."""
    spans: list[Span] = []
    start = 0
    for end in [m.end() for m in _SENTENCE_END.finditer(text)] + [len(text)]:
        if end > start and text[start:end].strip():
            spans.append(Span(start, end, len(spans)))
        start = max(start, end)
    return spans


def sentences(text: str) -> list[str]:
    """The sentences of a message as people write them in a chat, stripped, empty ones left out."""
    return [text[s.start : s.end].strip() for s in sentence_spans(text)]


def clause_spans(
    text: str,
    *,
    at: ClauseCut = "connective",
    more: re.Pattern[str] | None = None,
) -> list[Span]:
    """Where the clauses of a message stand: its sentences cut at every connective (`at=
    "connective"`: the medical reading, where a negation covers one predicate) or only where
    what is said turns (`at="turn"`: the safety check, where a guard covers what a person tells
    in one breath), and after each match of `more`, a caller's own cues. Blank stretches are left
    out; a text with none is one clause."""
    spans: list[Span] = []
    for sentence in sentence_spans(text):
        cuts = {m.end() for m in _CUTS[at].finditer(text, sentence.start, sentence.end)}
        if more is not None:
            cuts |= {m.end() for m in more.finditer(text, sentence.start, sentence.end)}
        edges = sorted({sentence.start, *cuts, sentence.end})
        spans += [
            Span(a, b, sentence.sentence)
            for a, b in zip(edges, edges[1:], strict=False)
            if text[a:b].strip()
        ]
    return spans or [Span(0, len(text), 0)]


def clauses(text: str, *, at: ClauseCut = "connective") -> list[str]:
    """The clauses of a message (see `clause_spans`), stripped, in order; none in a blank one."""
    found = (text[c.start : c.end].strip() for c in clause_spans(text, at=at))
    return [clause for clause in found if clause]


def valid_unicode(text: str) -> str:
    """`text` with what UTF-8 cannot encode replaced: a lone surrogate becomes U+FFFD.

    A surrogate pair left in two halves (as some clients escape emoji) is joined again first.
    Everything past the edge (Kiwi, the databases, the console) can then take the text.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text


def lemmas(text: str) -> list[str]:
    """Content morphemes of `text` in order: Korean stems without 다, nouns, numbers, English words.

    "빌려줬는데" gives ["빌리", "주"]; English is taken from the raw text (Kiwi splits
    "don't" oddly) and lower-cased.
    """
    found: list[tuple[int, str]] = []
    if _HANGUL_ANY.search(text) or any(ch.isdigit() for ch in text):
        for token in get_kiwi().tokenize(text):
            tag = token.tag.split("-", 1)[0]
            if tag in _KEPT_TAGS:
                found.append((token.start, token.form))
    found.extend((m.start(), m.group().lower()) for m in _LATIN_WORD.finditer(text))
    found.sort(key=lambda item: item[0])
    return [form for _, form in found]


def detect_lang(text: str) -> Literal["ko", "en"] | None:
    """ "ko" or "en" by which script has more letters (Hangul wins ties); None when neither."""
    hangul = len(_HANGUL_ANY.findall(text))
    latin = len(_LATIN.findall(text))
    if hangul == 0 and latin == 0:
        return None
    return "ko" if hangul >= latin else "en"


def clearly_written_in(text: str) -> Literal["ko", "en"] | None:
    """The language a message is plainly written in, for a chat to follow: English from three
    words and ten letters on ("~/.ssh/id_rsa" is none), Korean from six syllables on, each at least twice the other script. A word or
    term of the other language ("jeonse", "보증금", "LG", "ok") is no change of language."""
    hangul = len(_HANGUL_SYLLABLE.findall(text))
    words = _LATIN_WORD.findall(text)
    latin = sum(len(w) for w in words)
    if len(words) >= 3 and latin >= 10 and latin >= 2 * hangul:
        return "en"
    if hangul >= 6 and hangul >= 2 * latin:
        return "ko"
    return None


def _is_mash_word(word: str) -> bool:
    """A Latin word that is keyboard mash: a run along a keyboard row, no vowels, or a stutter."""
    if len(word) < 4:
        return False
    if any(word in row or word in row[::-1] for row in _KEYBOARD_ROWS):
        return True
    return not set(word) & set("aeiouy") or _is_repetition(word)


def _is_repetition(chars: str) -> bool:
    """True for one or two letters repeated: "aaaa", "haha", "hahah"."""
    for unit in (1, 2):
        piece = chars[:unit]
        if piece * (len(chars) // unit) + piece[: len(chars) % unit] == chars:
            return True
    return False


def is_meaningless(text: str) -> bool:
    """True when `text` says nothing: blank, only emoji/punctuation, laughter or keyboard mash.

    Digits alone ("3", "2024") are not meaningless: they answer questions about amounts and dates.
    """
    letters = "".join(ch for ch in text if unicodedata.category(ch)[0] in "LN" and not ch.isspace())
    if not letters:
        return True
    if any(ch.isdigit() for ch in letters):
        return False
    compact = letters.lower()
    if _JAMO_ONLY.match(compact):
        return compact not in _MEANINGFUL_JAMO
    if _HANGUL_SYLLABLE.search(compact):
        # Bare jamo next to syllables ("진짜요ㅋㅋ") are ignored; the syllables decide.
        syllables = [ch for ch in compact if _HANGUL_SYLLABLE.match(ch)]
        return len(syllables) >= 2 and all(ch in _LAUGHTER_SYLLABLES for ch in syllables)
    if _LATIN.search(compact):
        words = [w.lower() for w in re.findall(r"[A-Za-z]+", text)]
        return all(_is_mash_word(w) for w in words)
    return False
