"""The rules reader: a message as a `Reading` (graphs/common/reading.py) of a sub-type's fields.

Its clauses (the common sentence splitter) with what each does, and every amount, date,
count, option, phrase and name found, each placed in a field or given the role that keeps it
out of the record (taken back, of another event, said in a supposition).
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import date, datetime
from typing import Any

from graphs.common import normalize
from graphs.common.intents import read_intent
from graphs.common.normalize.amounts import TOTAL_SAID
from graphs.common.reading import (
    ASKED,
    ASKS,
    ASKS_BY_ORDER,
    CUED,
    DEFAULT,
    HEDGED,
    Act,
    ActWords,
    Clause,
    Reading,
    Role,
    Value,
    clause_about,
    clause_acts,
)
from graphs.common.text import clause_spans, is_meaningless, sentence_spans, sentences
from graphs.common.text import clauses as clauses_of
from graphs.legal import names
from graphs.legal.memo import ROUGHLY, UNCLEAR, read_items, role_of, tells_holding, tells_plan
from knowledge.korean import get_kiwi
from knowledge.loader import Knowledge
from knowledge.models import FieldSpec

MAX_TEXT_ANSWER = 500  # characters kept of a free-text answer
CUE_WINDOW_BEFORE = 14  # characters before a value searched for a field cue ("보증금 2억")
# Where a clause ends: punctuation, or a connective ending followed by a space (빌려줬고 ,
# 했는데 , 받았지만 , 하면서 ) or an English conjunction.
# "입사해서 ", "나와서 " end a clause too ("…에서 " does not).
# (a sentence ended without a stop too: "7일에 또 30만원 보냈어요 9일에 경찰에 신고했어요" gave
# the 보냈 of the sentence before to the police's day: legal_set17 S4)
_CLAUSE_BOUNDARY = re.compile(
    r"[,.;!?\n]|(?:고|는데|지만|면서|다가|니까|(?<!에)서|어요|아요|습니다|[었았했]다)\s"
    r"|\b(?:and|but|then)\b"
)
# A value the person takes back: "not 3 million", "300만원 아니고", "3백 말고", "이 아니라".
_TAKEN_BACK_BEFORE = re.compile(r"(?i)\b(?:not|instead\s+of|rather\s+than)\s+$")
# A qualifier may stand between ("6월 말 아니고", "300만원쯤 아니고").
_TAKEN_BACK_AFTER = re.compile(
    r"^\s?(?:말|초|중순|쯤|경|정도|즈음|께)?\s?(?:이|가)?\s?(?:아니고|아니라|아니에요|아니구요|아니었|말고)"
)
# A value put right at once by another of its kind that follows ("8,000,000 - sorry no, it was
# 9,000,000", "200,000 won - no, sorry, 300,000 won", "200만원 아니 300만원"): the first is
# taken back when the next value of its kind comes within SELF_FIX_WINDOW characters.
_SELF_FIX_AFTER = re.compile(
    r"(?i)^\s?(?:won|krw|원|만원)?(?:이요|요|이에요|예요|이고|이|가)?\s?[-–—,.…!]*\s*"
    r"(?:oh\s+|ah\s+|아\s?|앗\s?)?"
    # a bare "no" only as a word of its own ("- no, sorry", "no 9,000,000"), not "no interest"
    r"(?:no(?=\s*[,.!…—–-]|\s+(?:sorry|wait|it\b|i\b|\d))|nope\b|sorry\b|oops\b|wait\b|"
    r"i\s+mean\b|i\s+meant\b|correction\b|아니(?![가-힣])|아니다|"
    r"아니지|정정|잠깐만?|"
    # "I said Oct 28 but it was actually the 27th" (legal_set18 B2 kept the 28th)
    r"but\s+(?:it\s+(?:was|is)\s+|it'?s\s+)?actually\b)"
)
# After the clause's own word ("3억 남았어요 아 아니다 2억 5천", "3 million left, no wait,
# 2.5"; legal_set15 R2 kept both) only an unmistakable marker counts: a bare "아니" there
# opens a story as often ("300 빌려줬어요 아니 글쎄 50만 갚고").
_SELF_FIX_AFTER_WORD = re.compile(
    r"(?i)^\s?(?:won|krw|원|만원)?(?:이|가|은|는)?\s?[a-z가-힣]{1,8}[-–—,.…!]*\s+"
    r"(?:oh\s+|ah\s+|아\s?|앗\s?)?"
    r"(?:no\s+wait\b|wait\s+no\b|sorry\b|oops\b|i\s+mean\b|i\s+meant\b|correction\b|"
    r"아니다|아니지|아니\s?아니|정정)"
)
SELF_FIX_WINDOW = 60
# A list of people answering "how many?": words joined by 랑/하고/와/과/, or "and".
_PERSON_PARTICLE = re.compile(
    r"(?:이랑|랑|하고|이하고|와|과|이요|요|이에요|예요|이고|도|까지|이|가|,)+$"
)
CUE_WINDOW_AFTER = 8  # characters after it ("2억의 보증금", "작년 3월에 퇴사")

_NO_EVIDENCE = re.compile(r"(증거|자료|evidence)[^.!?\n]{0,12}(없|안 ?남|no\b|none)", re.I)
# A mention followed closely by a negation does not count: "차용증은 없어요", "no contract".
_NEGATION_AFTER = re.compile(r"^[^.!?,\n]{0,6}?(없|안 ?썼|안 ?했|못 ?받|않|싫)")
_LATIN = re.compile(r"[a-z]")
# An answer made only of dates, amounts and counts ("6/1이요", "300만원 정도", "2명", "about
# 3 million won"). Numbers of eight digits or more (phone and account numbers) do not count as
# values: they can identify someone.
_BARE_NUMBER = re.compile(r"(?<![\d\-])(?:\d{1,3}(?:,\d{3})+|\d{1,7})(?:\.\d+)?(?![\d\-])")
# What may stick to a value inside a word: a counter, a particle or a copula ending.
_GLUED_TO_VALUE = re.compile(
    r"(?:약|총|개월|시간|퍼센트|명|개|살|세|번|회|건|원|일|월|년|주|달|분|초|층|호|평|만|천|백|억|"
    r"쯤|정도|경|즈음|무렵|부터|까지|이에요|이요|에요|예요|요|입니다|이고|이었어요|였어요|에|은|는|"
    r"이|가|(?i:st|nd|rd|th))*"
)
# Words that may stand beside a value without naming anyone.
_BESIDE_VALUE = frozenset(
    "약 총 대략 한 정도 정도요 정도예요 정도입니다 쯤 쯤이요 쯤요 이요 요 입니다 이에요 예요 에요 "
    "같아요 인 것 about around roughly approx approximately on in the of won krw".split()
)
_PUNCT = re.compile(r"[\W_]+")
_AGE_AFTER = re.compile(r"\s?(?:살|세(?!대)|(?i:years?\s+old|yo)\b)")
# "I said it already" around an answer said again ("아까 말했는데 매출 안좋아서 인원 정리한다고요",
# "방금 말했는데요 전세보증금 3억", "위에 말했잖아요 영업정지 취소나 감경이요", "오상철 팀장이요.
# (처음에 말씀드렸어요 ㅠ)": legal_set19 A1, R3, S6, R5 kept it in the lawyer's value).
_RESTATED = re.compile(
    r"^(?:아까|방금|이미|위에|위에서|처음에|앞에서)\s?도?\s?(?:말|말씀|얘기|적|썼|쓴)[가-힣]*"
    r"(?:는데요?|잖아요|다니까요|어요|요)[,.~!\s]*"
    r"|^(?i:as i (?:said|told you|mentioned)|i (?:already )?(?:said|told you)(?: that)?)[,.:!\s]+"
    r"|\s*\((?:아까|방금|이미|위에|처음에)[^)]{0,20}\)\s*$"
)
_TIMES_AFTER = re.compile(r"\s?(?:번|회(?!사)|(?i:times?)\b)")
# Words that tell an amount was given in parts: "세번에 나눠서", "두 번", "in three transfers".
_IN_PARTS = re.compile(
    r"나눠|나누어|번에 걸쳐|(?<![가-힣])(?:두|세|네|다섯|[2-9])\s?번(?!째)"
    r"|(?i:\b(?:two|three|four|five|[2-9])\s+(?:times|transfers|payments|instal?lments|parts)\b)"
)


def _parts(kn: Knowledge, text: str, *, now: datetime) -> int | None:
    """The sum of the amounts an answer lists as parts of one ("세번에 나눠서 보냈어요. 3월
    10일에 1000만원, 5월 20일에 500만원, 8월 2일에 1500만원이요", legal_set10 Z1: the last part
    alone was kept), for the person to confirm; None when the answer gives one amount, names
    its total itself, or does not say its amounts are parts (a list of dated amounts does)."""
    found = normalize.find_amounts(text)
    if len({m.value for m in found}) < 2 or len(found) > 12 or TOTAL_SAID.search(text):
        return None
    values = [m.value for m in found]
    if 2 * values[0] == sum(values):
        # the first amount is the others together: a total told, then where it went ("874만원
        # 인데 200 받았고 150 받았어요 그래서 524만원 남았어요": legal_set13 A1 was offered
        # 17,480,000), not parts to add up
        return None
    distinct = sorted(set(values))
    last, before = found[-1], found[-2]
    if (
        len(distinct) > 2
        and last.value == distinct[-1]
        and abs(sum(distinct[:-1]) - last.value) <= last.value * ROUGHLY
        and not normalize.find_dates(text[before.end : last.start], now=now)
    ):
        # the last, undated, is the others together: their total ("membership is 800,000 and
        # the PT sessions are 980,000, so about 1,780,000 total": legal_set18 S1 was offered
        # 3,560,000, B2 10,000,000 for 3,750,000); to confirm. A dated one is a part ("3월에
        # 1000만원, 5월에 500만원, 8월에 1500만원")
        return last.value
    if not re.sub(r"[\s,.~!?-]", "", text[: found[0].start]):
        return None  # "300만원이요 갚은건 440 넘게": the amount that opens the answer is it
    # a series told as parts, or each part with its day ("세번에 나눠서 … 3월 10일에 1000만원,
    # 5월 20일에 500만원, 8월 2일에 1500만원"): one of them may equal two others by chance
    series = bool(_IN_PARTS.search(text)) or len(normalize.find_dates(text, now=now)) >= len(found)
    if (_a_total_among(distinct) and not series) or any(
        normalize.per_month_at(text.lower(), m.start, m.end, **kn.lexicon.per_month) for m in found
    ):
        # "3,300,000 won (1m deposit + 2.3m balance). also … 2,800,000" (legal_set19 S1 was
        # offered 6,100,000), "2,190,000 … 365,000 per month … 730,000 is gone" (B1: 3,285,000):
        # a total told among its parts, or a rate, is no list of parts to add up
        return None
    if any(_CONTRAST.search(text, a.end, b.start) for a, b in zip(found, found[1:], strict=False)):
        # "4 month so 9,400,000. but he pay one time 1,500,000" (legal_set15 B1 was offered
        # their sum): an amount set against another is no part of it
        return None
    # parts of one thing ("천장 180만원, 도배 95만원, 누수탐지 15만원": legal_set10 Z2 kept the
    # last alone): no two of its amounts told as different kinds of money (lent and repaid,
    # paid and still owed)
    roles = {
        i["role"]
        for i in read_items(kn, text, at="", now=now)
        if i["section"] == "money" and i["role"] != UNCLEAR
    }
    return sum(m.value for m in found) if len(roles) <= 1 else None


def _a_total_among(values: list[int]) -> bool:
    """Whether one of the amounts is the sum of two or more of the others."""
    if len(values) > 8:
        return False
    for n, total in enumerate(values):
        others = values[:n] + values[n + 1 :]
        for size in range(2, len(others) + 1):
            if any(sum(c) == total for c in itertools.combinations(others, size)):
                return True
    return False


def _total_told(text: str) -> int | None:
    """The amount an answer names as the total with the word for one right before it ("총
    1840만원이요 본세가 1520이고 가산세가 320 붙었어요": legal_set18 R6 kept the penalty tax,
    cued by its "세", as the tax assessed), when every other amount told is smaller."""
    found = normalize.find_amounts(text)
    for m in found:
        if TOTAL_SAID.search(text[max(0, m.start - _TOTAL_NEAR) : m.start]) and all(
            o.value < m.value for o in found if o is not m
        ):
            return m.value
    return None


_TOTAL_NEAR = 8  # characters before an amount where the word for a total names it one
# A turn between two amounts: the second is set against the first, not added to it.
_CONTRAST = re.compile(r"(?i:\bbut\b|\bexcept\b|\bhowever\b)|근데|그런데|하지만|그러나|는데")


# An age told of someone: "7살", "여섯 살", "he's 6", "6 years old", "aged 6".
_AGE_SAID = re.compile(
    r"(?:\d+|[한두세네]|다섯|여섯|일곱|여덟|아홉|열[한두세네]?|스물[한두세네]?)\s?(?:살|세(?!대|요))"
    r"|(?i:\b(?:he|she|they)(?:'s|s| is| are)\s+\d+\b|\b\d+\s*(?:years?\s+old|yo)\b|\baged?\s+\d+\b)"
)
_DAY_UNITS = ("일", "days")  # an int field counted in days ("영업정지 2개월" is 60)
_AGE_UNITS = ("살", "세")  # an age: "2명이요" (a count of people) is none
_COUNTED_ELSE = re.compile(
    r"\d+\s*(?:명|개|번|회|년|개월|달|주|시간|원|만|천)|\b\d+\s*(?:people|persons|kids|children|times|years ago)\b"
)
_APPROX_KINDS = frozenset({"amount", "date", "int", "decimal", "duration"})
# An English question that supposes ("If I sue for 5 million, would I win?").
_ASKS_IF = re.compile(r"(?i)\s*(?:and\s+|so\s+|but\s+)?if\b")


@functools.cache
def _whole_word(word: str) -> re.Pattern[str]:
    """A Latin option word as a whole word, plural allowed (the words are the knowledge's)."""
    return re.compile(rf"(?<![a-z]){re.escape(word)}(?:e?s)?(?![a-z])")


@functools.cache
def _is_latin(word: str) -> bool:
    return _LATIN.search(word) is not None


def _spans(lowered: str, word: str) -> list[tuple[int, int]]:
    """Where `word` occurs in the text, not negated right after; Latin words match whole words,
    a plural 's' allowed ("bank statements", "emails")."""
    if _is_latin(word):
        found = [(m.start(), m.end()) for m in _whole_word(word).finditer(lowered)]
    else:
        found, pos = [], lowered.find(word)
        while pos >= 0:
            found.append((pos, pos + len(word)))
            pos = lowered.find(word, pos + 1)
    return [
        (start, end)
        for start, end in found
        if _heads_compound(lowered, end) or not _NEGATION_AFTER.match(lowered[end:])
    ]


def _heads_compound(lowered: str, end: int) -> bool:
    """Whether an option's Korean word is the first part of a compound noun ("전세보증금 못
    받고": the deposit is not received, the lease is still jeonse; legal_set10 X1 was asked
    again), so that what negates the compound's head does not negate the option."""
    rest = re.match(r"[가-힣]{2,}", lowered[end:])
    if rest is None or not _HANGUL.search(lowered[max(0, end - 1) : end]):
        return False
    tokens = get_kiwi().tokenize(rest.group(0))
    return bool(tokens) and tokens[0].tag == "NNG" and len(tokens[0].form) >= 2


_HANGUL = re.compile(r"[가-힣]")
_VERB_TAGS = ("VV", "VA")
_NEGATING = frozenset({"안", "못", "않", "없", "아니", "싫", "말"})


@functools.lru_cache(maxsize=8192)
def _lemma_seq(text: str) -> tuple[tuple[str, str], ...]:
    """(lemma, tag) of the content morphemes of a text (Kiwi), cached."""
    from knowledge.korean import get_kiwi

    kept = ("NNG", "NNP", "NP", "NR", "VV", "VA", "MAG", "XR", "SN")
    return tuple(
        (t.form, t.tag.split("-", 1)[0])
        for t in get_kiwi().tokenize(text)
        if t.tag.split("-", 1)[0] in kept
    )


def _verb_lemmas(word: str) -> tuple[str, ...] | None:
    """The lemmas of an option word that has a verb and can be said in other endings ("제가
    키우", "떼인 쪽"); None for any other word (most: a noun, one word, a Latin word)."""
    if not _HANGUL.search(word):
        return None
    seq = _lemma_seq(word)
    if len(seq) < 2 or not any(tag.startswith(_VERB_TAGS) for _, tag in seq):
        return None
    if all(lemma in _LIGHT_LEMMAS for lemma, _ in seq):
        # "안 해줘" (a spouse who refuses) is 안 + 하 by its lemmas, as any "안 했어요" is:
        # legal_set19 R3 got a divorce "through the court" from "씻기는것도 한번 안했어요"
        return None
    return tuple(lemma for lemma, _ in seq)


# Lemmas that say nothing of their own: a negation and the light verbs.
_LIGHT_LEMMAS = frozenset({"안", "못", "하", "되", "주", "있", "없", "않", "지"})


def _says_lemmas(lemmas_said: list[str], wanted: tuple[str, ...]) -> bool:
    """Whether an option word with a verb ("제가 키우", "떼인 쪽"; `wanted`: its `_verb_lemmas`)
    is said in other endings: its lemmas in order, at most one word between, and not negated
    right after (안 키워요)."""
    for start, lemma in enumerate(lemmas_said):
        if lemma != wanted[0]:
            continue
        at, gaps = start, 0
        for need in wanted[1:]:
            nxt = at + 1
            while (
                nxt < len(lemmas_said)
                and lemmas_said[nxt] != need
                and gaps < 1
                and lemmas_said[nxt] not in _NEGATING  # "제가 안 키울래요" is no "제가 키우"
            ):
                nxt, gaps = nxt + 1, gaps + 1
            if nxt >= len(lemmas_said) or lemmas_said[nxt] != need:
                break
            at = nxt
        else:
            before = lemmas_said[start - 1] if start else ""
            after = lemmas_said[at + 1] if at + 1 < len(lemmas_said) else ""
            if before not in _NEGATING and after not in _NEGATING:
                return True
    return False


def _only_values(text: str, *, now: datetime) -> bool:
    """Whether the text says nothing but dates, amounts and numbers ("6/1", "300만원", "2024.6.1")."""
    is_value = [False] * len(text)
    spans = [(m.start, m.end) for m in normalize.find_dates(text, now=now)]
    spans += [(m.start, m.end) for m in normalize.find_amounts(text)]
    spans += [m.span() for m in _BARE_NUMBER.finditer(text)]
    for start, end in spans:
        is_value[start:end] = [True] * (end - start)
    if not spans:
        return False
    for word in re.finditer(r"\S+", text):
        rest = "".join(
            ch
            for ch, value in zip(word[0], is_value[word.start() : word.end()], strict=True)
            if not value
        )
        rest = _PUNCT.sub("", rest).lower()
        glued = any(is_value[word.start() : word.end()])
        if glued and not _GLUED_TO_VALUE.fullmatch(rest):
            return False
        if not glued and rest and rest not in _BESIDE_VALUE:
            return False
    return True


def _words_of(by_lang: dict[str, list[str]]) -> tuple[str, ...]:
    return tuple(w.lower() for words in by_lang.values() for w in words)


def _any_of(words: list[str]) -> re.Pattern[str]:
    """One pattern that finds any of the words as written: `pattern.search(text)` is exactly
    `any(word in text for word in words)`, in one pass of the regex engine."""
    if not words:
        return re.compile(r"(?!)")  # never matches, as any() of nothing
    return re.compile("|".join(re.escape(w) for w in sorted(set(words), key=len, reverse=True)))


@dataclasses.dataclass(frozen=True)
class _OptionMatcher:
    """A choice field's option words compiled once: a pattern that finds whether any of them
    is written at all (most messages name no option of most fields, and then no word is looked
    for one by one), and the words that can be said in other endings, by their lemmas."""

    said: re.Pattern[str]  # any option word as written (a superset of what `_spans` finds)
    by_lemmas: tuple[tuple[str, tuple[tuple[str, ...], ...]], ...]  # (value, lemma sequences)

    @classmethod
    def of(cls, spec: FieldSpec) -> _OptionMatcher:
        by_lemmas = []
        for value, words in spec.option_words:
            wanted = tuple(w for w in map(_verb_lemmas, words) if w is not None)
            if wanted:
                by_lemmas.append((value, wanted))
        return cls(
            said=_any_of([w for _, words in spec.option_words for w in words]),
            by_lemmas=tuple(by_lemmas),
        )


class FactExtractor:
    """Extracts a sub-type's facts from Korean or English text with the K2 field definitions."""

    def __init__(self, knowledge: Knowledge) -> None:
        self.knowledge = knowledge
        lex = knowledge.lexicon
        self._yes = [w for ws in lex.yes.values() for w in ws]
        self._no = [w for ws in lex.no.values() for w in ws]
        self._unknown = [w.lower() for ws in lex.unknown.values() for w in ws]
        self._corrections = [w.lower() for ws in lex.correction_markers.values() for w in ws]
        self._ongoing = [w.lower() for ws in lex.ongoing.values() for w in ws]
        self._people = {w.lower() for ws in lex.people.values() for w in ws}
        self._other_events = [w.lower() for ws in lex.other_events.values() for w in ws]
        self._emotions = [
            (kind, cue.lower())
            for kind, by_lang in lex.emotions.items()
            for cues in by_lang.values()
            for cue in cues
        ]
        first_person = {"저", "본인", "제가", "i", "me", "myself"}
        self._acts = ActWords(
            suppositions=_words_of(lex.suppositions),
            requests=_words_of(lex.requests),
            contrasts=_words_of(lex.contrasts),
            corrections=tuple(self._corrections),
            people=frozenset(self._people - first_person),
        )
        before = "|".join(re.escape(w) for w in _words_of(lex.approximate_before))
        after = "|".join(re.escape(w) for w in _words_of(lex.approximate_after))
        # Right beside the value: "약 300만원", "about 3 million"; "6월쯤", "300만원 정도요"
        # (not "300만원 경찰에": a Korean word after it must end there or take a particle).
        self._approx_before = re.compile(rf"(?:^|[^a-z가-힣])(?:{before or '(?!x)x'})\s?$")
        self._approx_after = re.compile(
            rf"\s?(?:{after or '(?!x)x'})(?:(?![a-z가-힣])|(?=[에이요은는도로인]))"
        )
        # The word lists compiled once (see `_any_of`), and each choice field's options on
        # first use (K2 field specs are made once per sub-type and field: keyed by identity).
        self._unknown_said = _any_of(self._unknown)
        self._other_events_said = _any_of(self._other_events)
        self._emotions_said = _any_of([cue for _, cue in self._emotions])
        self._not_feelings = _any_of(list(_words_of(lex.not_feelings)))
        self._option_matchers: dict[int, tuple[FieldSpec, _OptionMatcher]] = {}

    # --- public -----------------------------------------------------------------------------

    def read(self, text: str, *, sub_type: str, asked: str | None, now: datetime) -> Reading:
        """The message as a Reading: its clauses, every value found with its field or role,
        the asked field's answer (or why not) and the feelings it shows."""
        lowered = text.lower()
        clauses = self.clauses(text)
        # Words said in a supposition count for nothing: the readers of whole-text facts
        # (options, phrases, names) read the message with those clauses blanked.
        plain = text
        for clause in clauses:
            if clause.supposes:
                start, end = clause.span
                plain = plain[:start] + " " * (end - start) + plain[end:]
        values = self._values(text, plain, sub_type=sub_type, asked=asked, now=now, clauses=clauses)
        invalid, unknown = None, False
        if asked is not None:
            values, invalid, unknown = self._answer(
                text, plain, values, sub_type=sub_type, asked=asked, now=now
            )
        taken = [v.span for v in values if v.role is Role.TAKEN_BACK]
        clauses = tuple(
            replace(c, acts=(c.acts - {Act.STATEMENT}) | {Act.CORRECTION})
            if any(c.holds(span) for span in taken)
            else c
            for c in clauses
        )
        return Reading(
            text=text,
            clauses=clauses,
            values=tuple(values),
            asked=asked,
            invalid=invalid,
            unknown=unknown,
            corrects=bool(taken) or any(m in lowered for m in self._corrections),
            emotions=self._emotions_in(lowered),
        )

    def clauses(self, text: str) -> tuple[Clause, ...]:
        """The message's sentences (the common splitter) with what each does and whom of."""
        found = []
        for cut in sentence_spans(text):  # the common splitter's sentences, stripped
            raw = text[cut.start : cut.end]
            start = cut.start + len(raw) - len(raw.lstrip())
            sentence = raw.strip()
            span = (start, start + len(sentence))
            # A question by its words (the intents), or by its ending and mark in a sentence
            # of some length that is nothing else ("남은 돈은 안 갚아도 되는거 맞죠?").
            intent = read_intent(sentence, self.knowledge).kind
            asks = not HEDGED.match(sentence) and (
                intent == "question"
                or (
                    intent == "none"
                    and bool(ASKS.search(sentence) or ASKS_BY_ORDER.match(sentence))
                    and len(sentence.split()) >= 3
                )
            )
            acts = clause_acts(sentence, self._acts, asks=asks)
            if asks and _ASKS_IF.match(sentence):  # "If I sue for 5 million, would I win?"
                acts |= {Act.HYPOTHETICAL}
            found.append(
                Clause(
                    text=sentence, span=span, acts=acts, about=clause_about(sentence, self._acts)
                )
            )
        return tuple(found)

    def _answer(
        self,
        text: str,
        plain: str,
        values: list[Value],
        *,
        sub_type: str,
        asked: str,
        now: datetime,
    ) -> tuple[list[Value], str | None, bool]:
        """The asked field's answer among `values` (or read from the words): the values with
        the answer's role, the reason it cannot be used, and whether they said they do not know."""
        spec = self.knowledge.k2.field(sub_type, asked)
        if spec.kind == "text" and _only_values(text.strip(), now=now):
            # A bare "6/1" or "300만원" answering "who is the other party?" is no statement
            # of another fact either: record nothing and ask again with the reason.
            values = [replace(v, role=Role.UNPLACED) if v.role is Role.FACT else v for v in values]
        tagged = next(
            (v for v in reversed(values) if v.role is Role.FACT and v.field == asked), None
        )
        # The asked field's own values are its answer's, not other facts.
        values = [
            replace(v, role=Role.UNPLACED) if v.role is Role.FACT and v.field == asked else v
            for v in values
        ]
        said = plain
        # a value taken back is withdrawn wherever the message says it ("1200만원 보냈어요. 아
        # 1200이 아니라 1500이네요": legal_set12 S6)
        gone = {
            (v.kind, v.value)
            for v in values
            if v.role is Role.TAKEN_BACK and v.kind in ("date", "amount")
        }
        for v in values:  # another event's value answers nothing, nor one taken back
            taken_back = v.kind in ("date", "amount") and (v.kind, v.value) in gone
            if (v.role is Role.OTHER_EVENT or taken_back) and v.kind == spec.kind and v.span:
                start, end = v.span
                said = said[:start] + " " * (end - start) + said[end:]
        for v in sorted(values, key=lambda v: v.span or (0, 0), reverse=True):
            # a day put right alone ("아 아니다 14일") is read in its month by the answer too
            if v.kind == "date" == spec.kind and v.span and _DAY_ALONE.fullmatch(v.said or ""):
                start, end = v.span
                said = f"{said[:start]} {v.value} {said[end:]}"
        if (
            tagged is not None
            and (spec.kind == "date" or not tagged.cued)
            and self._values_told(spec, said, now) > 1
        ):
            # several dates, or amounts none of which the field's words placed ("예금 한
            # 천만원? … 사채가 1억": the 예금 one is): the answer's reader chooses
            tagged = None
        total = _total_told(said) if spec.kind == "amount" else None
        if total is not None:  # "총 1840만원이요 본세가 1520이고 가산세가 320": the total is it
            tagged = None
        answer, invalid = self.parse_answer(
            spec,
            said,
            now=now,
            tagged=total if total is not None else (tagged.value if tagged else None),
        )
        summed = None
        if tagged is None and spec.kind == "amount":
            summed = _parts(self.knowledge, said, now=now)
        if summed is not None and self._check(spec, summed, now=now)[1] is None:
            answer, invalid = summed, None
        others = {v.field for v in values if v.role is Role.FACT}
        cued = {v.field for v in values if v.cued and v.role is not Role.SUPPOSED}
        if (
            spec.kind == "text"
            and tagged is None
            and answer is not None
            and cued & others
            and not (spec.short and self._short_name(said) is not None)
        ):
            # "다음달 말까지 갚기로 했어요" to "who borrowed it?" states another field's value by
            # its cue (갚기로 -> repayment date) and names nobody: keep the value, ask again (a
            # counted failure, so it never loops). "6/1에 만난 사람" has no cue: an answer, and
            # so is a name said beside other facts ("김도현이요 29살이고 … 2월10일부터 연락이 와요").
            answer, invalid = None, "text_other"
        unknown = False
        if answer is None and self._says_unknown(text.lower()):
            unknown, invalid = True, None
        if answer is not None:
            values.append(
                Value(
                    kind=spec.kind,
                    value=answer,
                    span=tagged.span if tagged else None,
                    fields=(asked,),
                    field=asked,
                    role=Role.ANSWER,
                    confidence=max(tagged.confidence, ASKED) if tagged else ASKED,
                    cued=bool(tagged and tagged.cued),
                    approx=bool(tagged and tagged.approx) or self._approx_words(said, spec.kind),
                    said=tagged.said if tagged else text.strip()[:MAX_TEXT_ANSWER],
                    alternatives=(
                        tagged.alternatives
                        if tagged
                        else self.answer_readings(spec, said, now=now, value=answer)
                    ),
                    summed=summed is not None and answer == summed,
                )
            )
        return values, invalid, unknown

    def answer_readings(
        self, spec: FieldSpec, text: str, *, now: datetime, value: Any
    ) -> tuple[str, ...]:
        """The other dates a date answer's words may mean on this day ("last Saturday" said on
        a Sunday), as the field accepts them; () for one reading, or for another kind."""
        if spec.kind != "date" or value in (None, "ongoing"):
            return ()
        found = normalize.find_dates(text.strip(), now=now, allow_future=spec.allow_future)
        match = next((m for m in reversed(found) if m.value == value), None)
        return self._readings(spec, match.alternatives if match else (), now=now)

    def _readings(self, spec: FieldSpec, readings: tuple[Any, ...], *, now: datetime) -> tuple:
        """The readings a field accepts (a date ahead is none for a date that cannot be)."""
        return tuple(r for r in readings if self._check(spec, r, now=now)[1] is None)

    def parse_answer(
        self, spec: FieldSpec, text: str, *, now: datetime, tagged: Any = None
    ) -> tuple[Any, str | None]:
        """Normalise `text` as the answer to a field: (value, None) or (None, reason code).
        One reader per kind of value (`_ANSWER_READERS`); a text field takes the words."""
        if tagged is not None:
            return self._check(spec, tagged, now=now)
        stripped = text.strip()
        reader = _ANSWER_READERS.get(spec.kind, FactExtractor._text_answer)
        return reader(self, spec, stripped, stripped.lower(), now)

    # --- the answer readers, one per kind of value ---------------------------------------------

    def _checked_or(
        self, spec: FieldSpec, value: Any, reason: str, now: datetime
    ) -> tuple[Any, str | None]:
        return self._check(spec, value, now=now) if value is not None else (None, reason)

    def _amount_answer(
        self, spec: FieldSpec, stripped: str, lowered: str, now: datetime
    ) -> tuple[Any, str | None]:
        found = normalize.find_amounts(stripped)
        # the amount that opens the answer ("20만원이요 기간안에 내면 16만원이라고"), else the
        # last one the field allows ("300만원이요 갚은건 440 넘게": not the bare 440)
        fits = [m for m in found if self._check(spec, m.value, now=now)[1] is None]
        opening = [m for m in fits if not re.sub(r"[\s,.~!?-]", "", stripped[: m.start])]
        # the total the answer names ("합쳐서 3000만원이요 1000만원 2000만원") is the answer
        opening = [
            m
            for m in fits
            if any(0 <= m.start - t.end() <= 6 for t in TOTAL_SAID.finditer(stripped))
        ] or opening
        if not opening and len({m.value for m in fits}) > 1:
            # several amounts, none opening the answer nor named its total ("견적 340만원 …
            # 수리비 168만원 … 22만원 냈어요": legal_set14 A1 kept the last as the loss):
            # the person says which, the memo keeps them all
            return None, "amount_several"
        value = (opening or fits or found)[-1].value if found else normalize.parse_amount(stripped)
        return self._checked_or(spec, value, "amount_unparsed", now)

    def _date_answer(
        self, spec: FieldSpec, stripped: str, lowered: str, now: datetime
    ) -> tuple[Any, str | None]:
        if any(word in lowered for word in self._ongoing):
            return "ongoing", None
        ahead = spec.allow_future
        found = normalize.find_dates(stripped, now=now, allow_future=ahead)
        if not ahead and len(found) > 1:
            # "11월20일날 받았어요 … 의견제출 기한이 12월5일까지래요": a deadline or a plan told
            # beside the answer is no past date of the field (and last year's 5 December less so)
            plans = [
                span
                for span in clause_spans(stripped)
                if tells_plan(self.knowledge, stripped[span.start : span.end])
            ]
            done = [m for m in found if not any(p.start <= m.start < p.end for p in plans)]
            found = done or found
        values = {str(m.value) for m in found}
        finest = max(values, key=len) if values else ""
        if len(values) > 1 and all(finest.startswith(v) for v in values):
            # one day told at two grains ("end of august this year, last day 8월 31일":
            # legal_set15 B1 was refused in both modes): the finer
            found = [m for m in found if str(m.value) == finest]
        if len({m.value for m in found}) > 1:
            found = self._the_date_asked(spec, stripped, found)
            if not found:
                return None, "date_unparsed"  # several dates, none plainly the one asked
        value = (
            found[-1].value
            if found
            else normalize.parse_date(stripped, now=now, allow_future=ahead)
        )
        return self._checked_or(spec, value, "date_unparsed", now)

    @staticmethod
    def _values_told(spec: FieldSpec, text: str, now: datetime) -> int:
        """How many different dates (amounts) an answer to a date (amount) field gives."""
        if spec.kind == "date":
            found = normalize.find_dates(text.strip(), now=now, allow_future=spec.allow_future)
        elif spec.kind == "amount":
            found = normalize.find_amounts(text.strip())
        else:
            return 0
        return len({m.value for m in found})

    def _the_date_asked(self, spec: FieldSpec, text: str, found: list[Any]) -> list[Any]:
        """Of several dates in an answer to a date question, the one it gives ([] when unsure,
        for a wrong date drives a wrong deadline): not one whose clause says another date field's
        event ("작년 3월에 입사해서 10월 31일에 잘렸어요" to the last day); then the date that
        opens the answer alone in its clause ("10월28일이요 … 그전에 9월30일에 예고통지"); then
        the one date whose clause has the field's own words."""
        spans = clause_spans(text)

        def clause(m: Any) -> str:
            span = next((c for c in spans if c.start <= m.start < c.end), None)
            return text[span.start : span.end].lower() if span else text.lower()

        def says(words: Iterable[str], where: str) -> bool:
            return any(_cue_in(w.lower(), where) for w in words)

        own = {c.lower() for c in spec.cues}
        others = {
            c.lower() for f in self.knowledge.k2.fields.values() if f.kind == "date" for c in f.cues
        } - own
        left = [m for m in found if not (says(others, clause(m)) and not says(own, clause(m)))]
        ranged = _end_of_range(own, text, left)
        if ranged:
            return ranged
        opening = [
            m
            for m in left
            if not re.sub(r"[\s,.~!?-]", "", text[: m.start])
            and sum(clause(n) == clause(m) for n in found) == 1
        ]
        if opening:
            return opening[:1]
        cued = [m for m in left if says(own, clause(m))]
        if len({m.value for m in cued}) == 1:
            return cued[:1]
        return left if len({m.value for m in left}) == 1 else []

    def _yesno_answer(
        self, spec: FieldSpec, stripped: str, lowered: str, now: datetime
    ) -> tuple[Any, str | None]:
        # The field's own phrases first: "네 못받았어요" to "퇴직금도 받지 못하셨나요?" says
        # it is unpaid, whatever a leading 네 or a trailing 받았어요 says on its own.
        phrases = spec.says + spec.answers
        value = normalize.phrase_polarity(
            lowered, true=phrases.affirm, false=phrases.deny, first=True
        )
        if value is None:
            # beside "I don't know", only a yes or no that opens the answer answers it ("네
            # 받았는데 날짜는 모르겠어요"): "i did the address change …, i dont know about the
            # fixed date thing" is no yes (legal_set16 S1)
            head = stripped.split(maxsplit=1)[0] if self._says_unknown(lowered) else stripped
            value = normalize.parse_yes_no(head, yes=self._yes, no=self._no)
        return (value, None) if value is not None else (None, "yesno")

    def _choice_answer(
        self, spec: FieldSpec, stripped: str, lowered: str, now: datetime
    ) -> tuple[Any, str | None]:
        matches = self.match_options(spec, lowered)
        if len(matches) == 2:
            matches = self._head_option(spec, lowered, matches)
        # Two options named ("피해자인데 고소를 당했어요") is no answer: asked again with
        # buttons rather than the first one taken.
        return (matches[0], None) if len(matches) == 1 else (None, "choice")

    def _multi_answer(
        self, spec: FieldSpec, stripped: str, lowered: str, now: datetime
    ) -> tuple[Any, str | None]:
        matches = self.match_options(spec, lowered)
        return (matches, None) if matches else (None, "choice")

    def _int_answer(
        self, spec: FieldSpec, stripped: str, lowered: str, now: datetime
    ) -> tuple[Any, str | None]:
        if spec.unit in _DAY_UNITS:
            return self._checked_or(spec, normalize.parse_days(stripped), "int", now)
        if spec.unit in _AGE_UNITS:
            ages = {int(a) for a in re.findall(r"(\d+)\s*(?:살|세)", lowered)}
            if len(ages) == 1:
                return self._checked_or(spec, ages.pop(), "int", now)
            if ages or _COUNTED_ELSE.search(lowered):
                # several ages, or "2명이요" (a count of people) to "how old is …?"
                return None, "int"
        # An age is no count of anything else ("Jian, he's 6" is no six children).
        if spec.unit not in _AGE_UNITS:  # an age field takes "she's 6" as its answer
            stripped = _AGE_SAID.sub(" ", stripped).strip()
        # The count opens the answer; what follows tells of each one ("두 명이에요. 첫째 아들이
        # 10살, 둘째 딸이 7살이에요" is two, not the five people its words name).
        head = next(iter(sentences(stripped)), stripped)
        value = normalize.parse_int(stripped)
        if value is None and head != stripped:
            value = normalize.parse_int(head)
        if value is None:
            # "one, our son Jian, hes 6" (legal_set9 U4): the count opens the answer before
            # its first comma too, the age after it
            value = normalize.parse_int(re.split(r"[,，]", head, maxsplit=1)[0])
        listed = self._count_people(head)
        if listed >= 2:
            # "엄마랑 저랑 남동생이요" is three; a count that disagrees with the list
            # ("엄마랑 저랑 동생 둘") is not taken on either reading.
            if value is not None and value != listed:
                return None, "int"
            value = listed
        if (
            value is None
            and spec.says.deny
            and normalize.phrase_polarity(lowered, true=[], false=spec.says.deny) is False
        ):
            value = 0  # "no kids", "아이는 없어요"
        if value is None and spec.minimum == 0 and self._says_none(stripped):
            value = 0
        return self._checked_or(spec, value, "int", now)

    def _decimal_answer(
        self, spec: FieldSpec, stripped: str, lowered: str, now: datetime
    ) -> tuple[Any, str | None]:
        return self._checked_or(spec, normalize.parse_decimal(stripped), "decimal", now)

    def _duration_answer(
        self, spec: FieldSpec, stripped: str, lowered: str, now: datetime
    ) -> tuple[Any, str | None]:
        value = normalize.parse_duration_months(stripped)
        if value is None:
            value = self._months_since(stripped, now=now)
        return self._checked_or(spec, value, "duration", now)

    def _text_answer(
        self, spec: FieldSpec, stripped: str, lowered: str, now: datetime
    ) -> tuple[Any, str | None]:
        stripped = _RESTATED.sub("", stripped).strip() or stripped  # "아까 말했는데 …": the rest
        lowered = stripped.lower()
        if (
            is_meaningless(stripped)
            or self._says_unknown(lowered)
            or _only_values(stripped, now=now)
        ):
            return None, "text"  # nothing, or only a date/amount/number where words are asked for
        if (
            spec.short
            and normalize.parse_yes_no(stripped.split()[0], yes=self._yes, no=self._no) is not None
            and self._counterparty_name(stripped) is None
            and not names.named(stripped)
            and not any(names.plausible_name(w) for w in _NAME_WORD.findall(stripped))
            and (_ends_in_verb(stripped) or len(stripped.split()) == 1)
        ):
            return None, "text"  # "네 지금도 계속돼요" names no one: it answers something else
        given = names.party_name(stripped) if spec.short else None
        if given is not None and len(stripped.split()) > len(given.split()):
            return given, None  # "his name is jason lee, … hes in my econ seminar": the name
        lead = names.leading_name(stripped) if spec.short and len(stripped.split()) > 1 else None
        if lead is not None and not stripped.startswith(f"{lead} "):
            return lead, None  # "김도현이요 29살이고 전남친이에요": the name, its facts elsewhere
        return stripped[:MAX_TEXT_ANSWER], None

    def _short_name(self, text: str) -> str | None:
        """The name a short answer gives, outright or opening it."""
        return self._counterparty_name(text) or names.leading_name(text)

    def match_options(self, spec: FieldSpec, lowered: str) -> list[str]:
        """Option values whose label or synonyms appear in the text (not negated), in option order.

        A mention inside a longer mention of another option does not count: "medical
        certificate" is a medical record, not also a certificate.
        """
        matcher = self._options_of(spec)
        spans = (
            {
                value: [s for w in words if w in lowered for s in _spans(lowered, w)]
                for value, words in spec.option_words
            }
            if matcher.said.search(lowered)
            else {}
        )
        spans = {  # most options: not said; "no subcontractor", "하청 아니고": said, not chosen
            value: [sp for sp in own if not _negated(lowered, sp, done=spec.done_or_had)]
            for value, own in spans.items()
        }
        spans = {value: own for value, own in spans.items() if own}
        if not spans and matcher.by_lemmas and _HANGUL.search(lowered):
            # Nothing said as written: "제가 키운다니까요" for "제가 키우", by the option's
            # words' lemmas in order (a fallback: it never adds a second option to one said)
            said = [lemma for lemma, _ in _lemma_seq(lowered)]
            for value, wanted in matcher.by_lemmas:
                if value not in spans and any(_says_lemmas(said, w) for w in wanted):
                    spans[value] = [(-1, -1)]
        found = []
        for value, own in spans.items():
            longer = [o for other, os in spans.items() if other != value for o in os]
            if any(
                not any(o[0] <= s[0] and s[1] <= o[1] and o[1] - o[0] > s[1] - s[0] for o in longer)
                for s in own
            ):
                found.append(value)
        return found

    # --- helpers ----------------------------------------------------------------------------

    def _options_of(self, spec: FieldSpec) -> _OptionMatcher:
        """The field's option words compiled, once per field spec."""
        known = self._option_matchers.get(id(spec))
        if known is None or known[0] is not spec:
            known = self._option_matchers[id(spec)] = (spec, _OptionMatcher.of(spec))
        return known[1]

    @staticmethod
    def _head_option(spec: FieldSpec, lowered: str, matches: list[str]) -> list[str]:
        """Of two options named side by side, the second is the head of the phrase and the
        first its modifier: "회사 단톡방" is a group chat, "work group chat" too."""
        spans = {
            value: [s for w in words for s in _spans(lowered, w)]
            for value, words in spec.option_words
            if value in matches
        }
        first, second = matches
        for a, b in ((first, second), (second, first)):
            if any(
                0 <= sb[0] - sa[1] <= 1 and not lowered[sa[1] : sb[0]].strip()
                for sa in spans[a]
                for sb in spans[b]
            ):
                return [b]
        return matches

    def _check(self, spec: FieldSpec, value: Any, *, now: datetime) -> tuple[Any, str | None]:
        """Validate a normalised value against the field's rules."""
        if spec.kind == "amount" and value <= 0:
            return None, "amount_nonpositive"
        if spec.kind == "date" and value != "ongoing":
            if not spec.allow_future and normalize.is_future(value, now=now):
                return None, "date_future"
        if spec.kind in ("int", "duration", "decimal"):
            low = spec.minimum if spec.minimum is not None else 0
            high = spec.maximum if spec.maximum is not None else 10**6
            if not low <= value <= high:
                return None, "int_range"
        return value, None

    def field_keys(self, sub_type: str) -> list[str]:
        """Every field the sub-type may need, conditional ones included."""
        spec = self.knowledge.k2.sub_types.get(sub_type)
        return [req.key for req in spec.required_fields()] if spec else []

    def _values(
        self,
        text: str,
        plain: str,
        *,
        sub_type: str,
        asked: str | None,
        now: datetime,
        clauses: tuple[Clause, ...],
    ) -> list[Value]:
        """Every value of the sub-type's fields the message gives, in the order read (a later
        telling of a field wins), each with its field or the role that keeps it out: one finder
        per kind of value (`_FINDERS`), each reading the same scope.

        Amounts, dates and counts are read in the whole `text` and those in a supposition get
        that role; options, phrases and names are read in `plain` (suppositions blanked).
        """
        k2 = self.knowledge.k2
        scope = _Scope(
            text=text,
            plain=plain,
            lowered=text.lower(),
            plain_lowered=plain.lower(),
            specs={key: k2.field(sub_type, key) for key in self.field_keys(sub_type)},
            sub_type=sub_type,
            asked=asked,
            now=now,
            supposed=[c for c in clauses if c.supposes],
        )
        return [value for finder in _FINDERS for value in finder(self, scope)]

    def _placed(
        self, scope: _Scope, kind: str, value: Any, span: tuple[int, int], key: str, **more: Any
    ) -> Value:
        """A value placed in field `key`, supposed when its clause supposes."""
        role = Role.SUPPOSED if any(c.holds(span) for c in scope.supposed) else Role.FACT
        cued = more.pop("cued", False) and role is Role.FACT
        return Value(
            kind=kind,
            value=value,
            span=span,
            field=key,
            role=role,
            cued=cued,
            said=scope.text[span[0] : span[1]],
            approx=self._approx_at(scope.lowered, *span),
            **more,
        )

    def _spanned_values(self, scope: _Scope) -> list[Value]:
        """Amounts and dates, each placed by its field's cue, the asked field or the primary
        field of its kind; taken back, supposed or of another event they get that role."""
        text, lowered, specs, asked, now = (
            scope.text,
            scope.lowered,
            scope.specs,
            scope.asked,
            scope.now,
        )
        supposed = scope.supposed
        values: list[Value] = []
        # A date without a year lies in the past, unless its field allows the future: then the
        # same span is read again with the message's year.
        ahead = (
            {(m.start, m.end): m for m in normalize.find_dates(text, now=now, allow_future=True)}
            if any(s.kind == "date" and s.allow_future for s in specs.values())
            else {}
        )
        for kind, finder in (
            ("amount", lambda: normalize.find_amounts(text)),
            ("date", lambda: normalize.find_dates(text, now=now)),
        ):
            fields = [k for k, s in specs.items() if s.kind == kind]
            fallback = (
                asked if asked in fields else next((k for k in fields if specs[k].primary), None)
            )
            matches = list(finder())
            if kind == "date":
                matches = _days_put_right(text, matches)
            # Several dates or amounts no field's word places ("reported it to Naver on
            # October 1 … blocked on October 8 … Google declined on October 15"; "10 million
            # … paid back 2 million … and 1 million"): none is the primary field's, unless
            # asked; the memo keeps each (legal_set16 S3 had the last date as the date of the
            # posts, B4 the last repayment as the amount lent).
            taken = {
                index
                for index, match in enumerate(matches)
                if _TAKEN_BACK_BEFORE.search(text[: match.start])
                or _TAKEN_BACK_AFTER.match(text[match.end :])
                or _put_right_at_once(text, match, matches[index + 1 :])
            }
            loose = (
                len(
                    {
                        m.value
                        for index, m in enumerate(matches)
                        if index not in taken
                        and self._cued_field(lowered, m.start, m.end, fields, specs) is None
                    }
                )
                if fields
                else 0
            )
            for index, match in enumerate(matches):
                span = (match.start, match.end)
                said = text[match.start : match.end]
                if index in taken:
                    # taken back whether or not a field of the matter takes its kind: the
                    # memo keeps no item of it ("대출이 3억 남았, 아 아니다 2억 5천" in a divorce)
                    values.append(Value(kind, match.value, span, role=Role.TAKEN_BACK, said=said))
                    continue
                if not fields:
                    continue
                by_cue = self._cued_field(lowered, match.start, match.end, fields, specs)
                if any(c.holds(span) for c in supposed):  # "만약 500만원만 돌려받는다면"
                    key = by_cue or fallback
                    values.append(
                        Value(
                            kind,
                            match.value,
                            span,
                            fields=tuple(fields),
                            field=key,
                            role=Role.SUPPOSED,
                            said=said,
                        )
                    )
                    continue
                if by_cue is None and (
                    self._of_another_event(
                        lowered,
                        match.start,
                        match.end,
                        own=[c for k in fields for c in specs[k].cues],
                    )
                    or self._cue_denied(lowered, match.end, fields, specs)
                ):
                    # "결혼식이 10월 18일이었는데", "보험사가 80만원 준대요": another event's
                    # date, another role's amount; the story keeps it, no field takes it.
                    values.append(Value(kind, match.value, span, role=Role.OTHER_EVENT, said=said))
                    continue
                key = by_cue or fallback
                monthly = kind == "amount" and normalize.per_month_at(
                    lowered, *span, **self.knowledge.lexicon.per_month
                )
                if monthly and by_cue is None and (key is None or not specs[key].per_month):
                    # "보증금 1000만원에 월 50만원": a sum per month is the field kept per month
                    key = next((k for k in fields if specs[k].per_month), key)
                if by_cue is None and key is not None and key != asked and loose > 1:
                    values.append(Value(kind, match.value, span, fields=tuple(fields), said=said))
                    continue
                if (
                    kind == "amount"
                    and key is not None
                    and key != asked
                    and by_cue is None
                    and specs[key].per_month
                    and not monthly
                ) or (
                    kind == "amount" and key is not None and not specs[key].per_month and monthly
                ):
                    # "my pay is 2,300,000 a month": a rate fills no total; and a field kept
                    # per month takes no sum not said so ("2019년 3월에 4억2천에 샀고" is no
                    # child support: legal_set16 S6). The memo keeps either.
                    values.append(Value(kind, match.value, span, fields=tuple(fields), said=said))
                    continue
                found, readings = match.value, match.alternatives
                if key is not None and kind == "date" and specs[key].allow_future:
                    later = ahead.get(span)
                    found, readings = (later.value, later.alternatives) if later else (None, ())
                checked, invalid = (
                    self._check(specs[key], found, now=now)
                    if key is not None and found is not None
                    else (None, "unplaced")
                )
                if invalid is not None:
                    values.append(Value(kind, match.value, span, fields=tuple(fields), said=said))
                    continue
                values.append(
                    self._placed(
                        scope,
                        kind,
                        checked,
                        span,
                        key,
                        fields=(key, *(k for k in fields if k != key)),
                        cued=by_cue is not None,
                        confidence=CUED if by_cue else ASKED if key == asked else DEFAULT,
                        alternatives=self._readings(specs[key], readings, now=now),
                    )
                )
        return values

    def _counted_values(self, scope: _Scope) -> list[Value]:
        """Counts and lengths of time, only next to a field's cue ("결혼한 지 10년", "애가 둘",
        "married 3 years"): a bare number in a story is no fact."""
        text, lowered, specs, asked, now = (
            scope.text,
            scope.lowered,
            scope.specs,
            scope.asked,
            scope.now,
        )
        values: list[Value] = []
        for kind, finder in (
            ("int", normalize.find_ints),
            ("days", normalize.find_days),
            ("duration", normalize.find_durations),
        ):
            # Counts and lengths of time count only next to a field's cue ("결혼한 지 10년",
            # "애가 둘", "married 3 years"): a bare number in a story is no fact.
            fields = [
                k
                for k, s in specs.items()
                if s.cues
                and k != asked
                and (s.kind == kind or (kind == "days" and s.kind == "int"))
                and (kind != "int" or s.unit not in _DAY_UNITS)
                and (kind != "days" or s.unit in _DAY_UNITS)
            ]
            for match in finder(text) if fields else []:
                if kind == "int" and _AGE_AFTER.match(text, match.end):
                    continue  # "작은애가 7살" is an age, not how many children
                if kind == "int" and _TIMES_AFTER.match(text, match.end):
                    continue  # "애들 씻기는것도 한번 안했어요": how often, no count of anything
                    # (legal_set19 R3 had one child beside the two told)
                key = self._cued_field(lowered, match.start, match.end, fields, specs)
                if key is not None:
                    checked, invalid = self._check(specs[key], match.value, now=now)
                    if invalid is None:
                        values.append(
                            self._placed(
                                scope,
                                specs[key].kind,
                                checked,
                                (match.start, match.end),
                                key,
                                fields=(key,),
                                confidence=CUED,
                            )
                        )
        return values

    def _zero_values(self, scope: _Scope) -> list[Value]:
        """A count said to be none by its field's own words ("no kids", "아이는 없어요")."""
        values = []
        for key, spec in scope.specs.items():
            if key != scope.asked and spec.kind == "int" and spec.says.deny:
                said = normalize.phrase_polarity(scope.plain_lowered, true=[], false=spec.says.deny)
                if said is False:
                    values.append(Value("int", 0, field=key, fields=(key,), **_WHOLE))
        return values

    def _option_values(self, scope: _Scope) -> list[Value]:
        """A choice named in the message, where the field's cue is said too (when it has one)."""
        values = []
        for key, spec in scope.specs.items():
            if (
                key == scope.asked
                or spec.kind not in ("choice", "multi_choice")
                or key == "evidence_type"
            ):
                continue
            if spec.cues and not any(cue.lower() in scope.plain_lowered for cue in spec.cues):
                continue  # "my brother took everything" names no one who died
            lowered = scope.plain_lowered
            if key == "counterparty_type":
                lowered = _without_the_represented(lowered)
            matches = self.match_options(spec, lowered)
            if spec.kind == "choice" and len(matches) > 1 and spec.cues:
                # the option said where the cue is ("아버지가 지난 8월에 돌아가셨는데요, 큰오빠가
                # …": legal_set19 S4 was asked who had died)
                cued = " ".join(
                    lowered[c.start : c.end]
                    for c in clause_spans(lowered)
                    if any(cue.lower() in lowered[c.start : c.end] for cue in spec.cues)
                )
                matches = [m for m in self.match_options(spec, cued) if m in matches]
            if matches and spec.kind == "choice" and len(matches) == 1:
                values.append(Value("choice", matches[0], field=key, fields=(key,), **_WHOLE))
            elif matches and spec.kind == "multi_choice":  # "바람을 피워서" -> grounds: affair
                values.append(Value("multi_choice", matches, field=key, fields=(key,), **_WHOLE))
        return values

    def _phrase_values(self, scope: _Scope) -> list[Value]:
        """A yes or no said by a field's own phrases ("퇴직금은 받았어요")."""
        values = []
        for key, spec in scope.specs.items():
            if spec.kind == "yesno" and key != scope.asked and (spec.says.affirm or spec.says.deny):
                said = normalize.phrase_polarity(
                    scope.plain_lowered, true=spec.says.affirm, false=spec.says.deny
                )
                if said is not None:
                    values.append(Value("yesno", said, field=key, fields=(key,), **_WHOLE))
        return values

    def _evidence_values(self, scope: _Scope) -> list[Value]:
        """Evidence named (a yes, and its kinds) or denied."""
        specs, values = scope.specs, []
        if "evidence" not in specs:
            return values
        # A record only threatened ("사진 뿌린다고 했어요") is no evidence the person has; told
        # beside other things, a kind is evidence where its clause says they have it ("카톡
        # 캡처해 놨어요"), not where it is how something was done ("112에 문자 보냈어요").
        asked = scope.asked in ("evidence", "evidence_type")
        kept = " ".join(
            c
            for c in clauses_of(scope.plain)
            if not tells_plan(self.knowledge, c) and (asked or tells_holding(self.knowledge, c))
        ).lower()
        kinds = self.match_options(self.knowledge.k2.field(scope.sub_type, "evidence_type"), kept)
        if kinds:
            values.append(Value("yesno", True, field="evidence", fields=("evidence",), **_WHOLE))
            if "evidence_type" in specs or scope.asked == "evidence":
                values.append(
                    Value(
                        "multi_choice",
                        kinds,
                        field="evidence_type",
                        fields=("evidence_type",),
                        **_WHOLE,
                    )
                )
        elif _NO_EVIDENCE.search(scope.plain):
            values.append(Value("yesno", False, field="evidence", fields=("evidence",), **_WHOLE))
        return values

    def _name_values(self, scope: _Scope) -> list[Value]:
        """The other party named beside its role word ("집주인 정미경", "OO건설"): cued, unless
        its words make it someone else ("아버지 성함은 정춘식", "저는 딸 정미영": the person's
        family; "담당은 최형사님"), who corrects no other party recorded (legal_set12 S1, R5).
        A name said to the asked name field ("예금주는요?" - "박지훈이라는 사람 계좌") is its."""
        if "counterparty" not in scope.specs or scope.asked == "counterparty":
            return []
        if scope.asked is not None and scope.specs[scope.asked].short:
            return []
        name = self._counterparty_name(scope.plain)
        if not name:
            return []
        bare = name.split()[-1]
        at = scope.plain.find(bare)
        if _SELF_NAMED.search(scope.plain[max(0, at - 10) : max(at, 0)].lower()):
            return []  # the writer's own name
        role = role_of(self.knowledge, scope.plain, bare, scope.sub_type)
        if role in _NOT_THE_OTHER_PARTY - {"family"}:
            return []
        after = scope.plain[at + len(bare) : at + len(bare) + 14].lower()
        if "account_holder" in scope.specs and _ACCOUNT_OF.search(after):
            return []  # "하나은행 박지훈 이라는 사람 계좌": the account's holder (legal_set12 S1)
        # the family of the person or of the other party: another party's name only when no
        # other party is recorded (a loan to "동생 김철수" is the brother's)
        other = role == "family"
        return [
            Value(
                "name",
                name,
                span=None,
                field="counterparty",
                fields=("counterparty",),
                role=Role.FACT,
                confidence=CUED,
                cued=not other,
                said=name,
            )
        ]

    def _approx_at(self, lowered: str, start: int, end: int) -> bool:
        """Whether a value at this span is given as approximate ("약 300만원", "6월쯤")."""
        return bool(
            self._approx_before.search(lowered[max(0, start - 16) : start])
            or self._approx_after.match(lowered, end)
        )

    def _approx_words(self, text: str, kind: str) -> bool:
        """Whether an answer of this kind gives its value as approximate ("300만원 정도요")."""
        if kind not in _APPROX_KINDS:
            return False
        lowered = text.lower()
        spans = [(m.start, m.end) for m in normalize.find_amounts(text)]
        spans += [m.span() for m in _BARE_NUMBER.finditer(text)]
        return any(self._approx_at(lowered, start, end) for start, end in spans)

    def _of_another_event(self, lowered: str, start: int, end: int, own: list[str]) -> bool:
        """Whether the clause of a value names another event or role (lexicon other_events)
        that is not a cue of the sub-type's own fields (`own`: 월세 is a lease's own)."""
        before = lowered[:start]
        boundaries = list(_CLAUSE_BOUNDARY.finditer(before))
        head = boundaries[-1].end() if boundaries else 0
        tail = _CLAUSE_BOUNDARY.search(lowered, end)
        clause = lowered[head : tail.end() if tail else len(lowered)]
        if not self._other_events_said.search(clause):
            return False  # (the common case: no such word at all)
        owned = {cue.lower() for cue in own}
        return any(word in clause and word not in owned for word in self._other_events)

    @staticmethod
    def _cued_field(
        lowered: str, start: int, end: int, fields: list[str], specs: dict[str, FieldSpec]
    ) -> str | None:
        """The field whose cue stands nearest to a value, within a short window."""
        # A cue before the value ("보증금 2억") wins over one after it ("2억, 월세는 …"). Both
        # stop at a clause boundary: in "6월 1일에 빌려줬고 12월 말까지 갚기로" the 빌려줬 of
        # the first clause does not claim the second clause's date.
        before = lowered[max(0, start - CUE_WINDOW_BEFORE) : start]
        boundaries = list(_CLAUSE_BOUNDARY.finditer(before))
        if boundaries:
            before = before[boundaries[-1].end() :]
        offset = start - len(before)
        after = lowered[end : end + CUE_WINDOW_AFTER]
        boundary = _CLAUSE_BOUNDARY.search(after)
        if boundary:
            after = after[: boundary.start()]
        best, best_distance = None, 10**6
        for key in fields:
            for cue in (c.lower() for c in specs[key].cues):
                pos = before.rfind(cue)
                if (
                    pos >= 0
                    and _HANGUL.search(cue[-1:])
                    and _heads_compound(lowered, offset + pos + len(cue))
                ):
                    continue  # "사망신고할때 7월1일": the registration's day, not the death's
                if pos >= 0 and re.search(r"\d", before[pos + len(cue) :]):
                    continue  # another value stands between: the cue is its ("보증금 1000만원에 월 50")
                # nearest by where the cue ends: "월세 보증금 1000만원" is the deposit
                if pos >= 0 and len(before) - pos - len(cue) < best_distance:
                    best, best_distance = key, len(before) - pos - len(cue)
        if best is not None:
            return best
        for key in fields:
            for cue in (c.lower() for c in specs[key].cues):
                pos = after.find(cue)
                if (
                    pos >= 0
                    and pos < best_distance
                    and not _NEGATED_AFTER.match(
                        lowered[end + pos + len(cue) : end + pos + len(cue) + 10]
                    )
                ):
                    best, best_distance = key, pos
        return best

    @staticmethod
    def _cue_denied(lowered: str, end: int, fields: list[str], specs: dict[str, FieldSpec]) -> bool:
        """Whether a value is said not to be a field's, by the field's own word right after it
        ("450만원은 보증금이 아니라 수리비에요"): no field takes it then."""
        after = lowered[end : end + CUE_WINDOW_AFTER]
        boundary = _CLAUSE_BOUNDARY.search(after)
        after = after[: boundary.start()] if boundary else after
        for key in fields:
            for cue in (c.lower() for c in specs[key].cues):
                pos = after.find(cue)
                if pos >= 0 and _NEGATED_AFTER.match(
                    lowered[end + pos + len(cue) : end + pos + len(cue) + 10]
                ):
                    return True
        return False

    @staticmethod
    def _counterparty_name(text: str) -> str | None:
        """A named person or company in free text ("친구 김철수", "사장 최씨", "OO건설",
        "김과장이라는 사람", "이름은 박지훈"), if any."""
        given = names.party_name(text)
        if given is not None:
            return given
        for match in names.NAMED_RELATION.finditer(text):
            name = match.group("name")
            if name[:2] in names.NOT_A_NAME_START or (
                not name.endswith("씨") and name[-1] in names.NOT_A_NAME_END
            ):
                continue
            if not name.endswith("씨") and not names.plausible_name(name):
                continue
            return f"{match.group('rel')} {name}"
        match = names.COMPANY.search(text)
        if match and names.no_endings(names.bare(match.group("name").strip())):
            return match.group("name").strip()
        return None

    def _count_people(self, text: str) -> int:
        """How many people a list names ("엄마랑 저랑 남동생이요" -> 3, "me and my brother" ->
        2); 0 or 1 when it is no list."""
        words = re.findall(r"[가-힣]+|[a-z]+", text.lower())
        count = 0
        for word in words:
            bare = _PERSON_PARTICLE.sub("", word) if re.match("[가-힣]", word) else word
            if bare in self._people or word in self._people:
                count += 1
        return count

    @staticmethod
    def _months_since(text: str, *, now: datetime) -> int | None:
        """A length of time given as its start ("2015년 5월에 결혼했어요"): whole months from the
        start to now, when the text names one past date with at least its month."""
        value = normalize.parse_date(text, now=now)
        if value is None or len(value) < 7 or normalize.is_future(value, now=now):
            return None
        year, month = int(value[:4]), int(value[5:7])
        return (now.year - year) * 12 + now.month - month

    def _says_unknown(self, lowered: str) -> bool:
        return self._unknown_said.search(lowered) is not None

    def _says_none(self, text: str) -> bool:
        return normalize.parse_yes_no(text, yes=[], no=self._no) is False

    def _emotions_in(self, lowered: str) -> tuple[dict[str, str], ...]:
        seen: dict[str, str] = {}
        lowered = self._not_feelings.sub(" ", lowered)
        if not self._emotions_said.search(lowered):
            return ()
        for kind, cue in self._emotions:
            if kind not in seen and cue in lowered:
                seen[kind] = cue
        return tuple({"kind": kind, "cue": cue} for kind, cue in seen.items())


# One reader per kind of value a field takes (rasa-sdk's `validate_<slot>` per slot is the
# model): K2's `kind` picks it; a kind not listed is read as words.
_ANSWER_READERS = {
    "amount": FactExtractor._amount_answer,
    "date": FactExtractor._date_answer,
    "yesno": FactExtractor._yesno_answer,
    "choice": FactExtractor._choice_answer,
    "multi_choice": FactExtractor._multi_answer,
    "int": FactExtractor._int_answer,
    "decimal": FactExtractor._decimal_answer,
    "duration": FactExtractor._duration_answer,
    "text": FactExtractor._text_answer,
}


_NEGATED_BEFORE = re.compile(r"\b(?:no|not|never|isn'?t|wasn'?t|aren'?t)\s+(?:an?\s+|the\s+)?$")
_NEGATED_AFTER = re.compile(r"^\S{0,3}\s?(?:아니|아닌|아님|아냐)")


# An English clause's verb said as not done, a few words before an option's words ("i didn't
# call the police", "we never signed a contract"); the clause starts after its last boundary.
_NOT_DONE_BEFORE = re.compile(
    r"\b(?:didn'?t|did not|don'?t|do not|haven'?t|have not|hasn'?t|has not|never|not yet)"
    r"\s+(?:[a-z'-]+\s+){0,4}$"
)
_EN_CLAUSE_START = re.compile(r"[,.;!?]|\b(?:but|and|so|then)\b")
# ... or said and denied right after them ("it says 'called the police' - i didn't")
_NOT_DONE_AFTER = re.compile(
    r"^\W{0,6}\s*(?:but\s+)?(?:i|we)\s+(?:didn'?t|did not|never|haven'?t|have not|don'?t)\b"
)
_NOT_ADVERBS = frozenset({"안", "못"})


def _negated(lowered: str, span: tuple[int, int], *, done: bool = False) -> bool:
    """Whether an option's words are said as what it is not ("no subcontractor", "i am not
    subcontractor", "하청 아니고 직영이에요"), or, for a field of what the person did or has
    (`done`), as not done or not had ("경찰은 안 불렀어요", "계약서는 없고", "i didn't call the
    police")."""
    start, end = span
    if _NEGATED_BEFORE.search(lowered[max(0, start - 16) : start]):
        return True
    if _NEGATED_AFTER.match(lowered[end : end + 10]):
        return True
    if not done:
        return False
    clause = _EN_CLAUSE_START.split(lowered[max(0, start - 48) : start])[-1]
    return bool(
        _NOT_DONE_BEFORE.search(clause) or _NOT_DONE_AFTER.match(lowered[end : end + 40])
    ) or _predicate_negated(lowered, span)


def _predicate_negated(lowered: str, span: tuple[int, int]) -> bool:
    """Whether the first Korean predicate after an option's words, in their clause, is negated:
    안 / 못 before it ("경찰 신고는 아직 안 했어요"), -지 않다 after it ("쓰지 않았어요"), or
    없다 ("계약서는 없고"). A later predicate is another clause's ("말했는데 안 해결돼요")."""
    start, end = span
    if start < 0 or not _HANGUL.search(lowered[end : end + 24]):
        return False
    tokens = get_kiwi().tokenize(lowered[start : end + 24])
    after = [t for t in tokens if t.start >= end - start]
    for i, token in enumerate(after):
        if token.tag in ("SF", "SP"):
            return False
        if not token.tag.startswith(("VV", "XSV", "VA", "XSA")):
            continue
        if token.form == "없" and token.tag == "VA":
            return True
        if i and after[i - 1].tag == "MAG" and after[i - 1].form in _NOT_ADVERBS:
            return True
        ending = after[i + 1 : i + 3]
        return (
            len(ending) == 2
            and (ending[0].form, ending[0].tag) == ("지", "EC")
            and ending[1].form in ("않", "못", "말")
        )
    return False


def _ends_in_verb(text: str) -> bool:
    """Whether a Korean answer's last predicate is a verb or an adjective ("지금도 계속돼요"),
    not the copula of a noun phrase ("모르는 사람이에요")."""
    verbs = ("VV", "VA", "XSV", "XSA")  # 계속되다: a noun made a verb by its suffix
    predicates = [t.tag for t in get_kiwi().tokenize(text) if t.tag.startswith((*verbs, "VC"))]
    return bool(predicates) and predicates[-1].startswith(verbs)


# A full Korean name standing alone in an answer ("네 김민수요"): surname and given name.
_NAME_WORD = re.compile(rf"(?<![가-힣]){names.SURNAME}[가-힣]{{2}}(?=요|이요|예요|이에요|\s|$)")
_WHOLE: dict[str, Any] = {"span": None, "said": "", "role": Role.FACT}  # read from the whole text


# The person written for: "어머니 대신 문의드립니다", "on behalf of my mother", "for my dad".
# "아버지 일로 대신 문의드립니다" too (legal_set16 A2 had the father as the other party's type).
_REPRESENTED = re.compile(
    r"(?P<ko>[가-힣]+?)(?:을|를|님|의)?\s?(?:일로|일 때문에|건으로|건 때문에)?\s?대신"
    r"|\b(?:on behalf of|for) (?:my|our) (?P<en>[a-z]+)"
)


def _without_the_represented(lowered: str) -> str:
    """The text with every mention of the person it is written for blanked: "어머니 대신
    문의드립니다. 어머니(72세) … 한결인테리어 대표" is about a business, not the family
    (legal_set12 S6 prefilled 가족·친척 as the other party's type); and of the other side's
    insurer, no type of the other side ("Other driver's insurance company now offers me …":
    legal_set19 B3 prefilled a company)."""
    for m in _REPRESENTED.finditer(lowered):
        word = m.group("ko") or m.group("en")
        if len(word) >= 2:
            lowered = re.sub(re.escape(word), " " * len(word), lowered)
    return _THEIR_INSURER.sub(lambda m: " " * len(m.group(0)), lowered)


_THEIR_INSURER = re.compile(
    r"\b(?:(?:the\s+)?other\s+(?:driver|party|side|person)|his|her|their|the\s+driver)'?s?\s+"
    r"insurance(?:\s+company)?|\binsurer\b|(?:상대|상대방|가해자|가해 차량|그쪽)\s?(?:측\s?)?보험(?:사|회사)"
)


# The roles of the memo's parties that are never the other party: a name beside one of these
# words is someone else's (the person's family, a witness, an officer, a teacher, staff).
_NOT_THE_OTHER_PARTY = frozenset({"family", "witness", "officer", "teacher", "staff"})
_ACCOUNT_OF = re.compile(r"계좌|명의|통장|예금주|\baccount\b")
# The writer giving their own name: "저는 딸 정미영이에요", "제 이름은", "my name is".
_SELF_NAMED = re.compile(r"(?:^|\s)(?:저는|제 이름|제이름|본인은)|\b(?:my name is|i am|i'm)\b")


@dataclass(frozen=True)
class _Scope:
    """What every finder of `FactExtractor._values` reads: the message, with its suppositions
    blanked (`plain`), the sub-type's fields, the field asked, the clauses that suppose."""

    text: str
    plain: str
    lowered: str
    plain_lowered: str
    specs: dict[str, FieldSpec]
    sub_type: str
    asked: str | None
    now: datetime
    supposed: list[Clause]


# The finders of values in free text, one per kind of value, in the order they are read.
_FINDERS = (
    FactExtractor._spanned_values,
    FactExtractor._counted_values,
    FactExtractor._zero_values,
    FactExtractor._option_values,
    FactExtractor._phrase_values,
    FactExtractor._evidence_values,
    FactExtractor._name_values,
)


def _cue_in(cue: str, lowered: str) -> bool:
    """A field's cue in a clause: anywhere for Korean, as whole words for English."""
    if re.search(r"[가-힣]", cue):
        return cue in lowered
    return re.search(rf"(?<![a-z]){re.escape(cue)}(?![a-z])", lowered) is not None


# A day alone after a date taken back ("9월 15일이요 아 아니다 14일", "11월 12일 아니다 13일"):
# the same month's day (legal_set12 R1, R2 kept the first).
_BARE_DAY = re.compile(
    r"\s*(?:이요|요|이|가|은|는)?\s*[,.…!]*\s*(?:아\s?)?(?:아니(?:다|고|라|지|요)?|no|sorry)?[\s,.…!]*(\d{1,2})\s?일(?![가-힣]*월)"
)


_WEEKDAY = re.compile(r"(?i)[월화수목금토일]요일|(?:mon|tues|wednes|thurs|fri|satur|sun)day")
_DAY_ALONE = re.compile(r"\d{1,2}\s?일")


def _days_put_right(text: str, dates: list[Any]) -> list[Any]:
    """`dates` with the day said alone right after a date it puts right, read in that date's
    month (the date itself is then taken back, as any value put right at once)."""
    out: list[Any] = []
    for n, m in enumerate(dates):
        if out and _WEEKDAY.fullmatch(text[m.start : m.end]) and m.start - out[-1].end <= 3:
            continue  # "13일 목요일에": the weekday names the day before it
        out.append(m)
        if not (isinstance(m.value, str) and len(m.value) == 10):
            continue
        after = text[m.end : dates[n + 1].start if n + 1 < len(dates) else len(text)]
        marked = _SELF_FIX_AFTER.match(after) or _TAKEN_BACK_AFTER.match(after)
        day = _BARE_DAY.match(after) if marked else None
        if day and 1 <= int(day[1]) <= 31:
            value = f"{m.value[:8]}{int(day[1]):02d}"
            try:
                date.fromisoformat(value)
            except ValueError:
                continue
            start = m.end + day.start(1)
            out.append(replace(m, value=value, start=start, end=m.end + day.end(), alternatives=()))
    return out


# A span of time told ("from December 1 2024 to November 30 2026", "2024년 5월 2일부터 8월
# 31일까지"): to a question of its end (a field whose own words say an end) the date after, of
# its start the date before (legal_set19 S3's lease end was refused: "I already have that").
_RANGE_BETWEEN = re.compile(
    r"\s*(?:부터|에서)\s*(?:~|-|–|—)?\s*|\s*(?:~|-|–|—|(?i:to|until|till|through))\s*"
)
_END_WORDS = frozenset(
    "until end ends ended expire expires expired expiry left 끝나 끝난 끝났 만료 만기 종료 퇴사".split()
)
_START_WORDS = frozenset("start started began joined hired 시작 입사 취업 취직".split())


def _end_of_range(own: set[str], text: str, found: list[Any]) -> list[Any]:
    """The end (or start) of the one span of time told, for a field of an end (or start)."""
    spans = [
        (a, b)
        for a, b in zip(found, found[1:], strict=False)
        if _RANGE_BETWEEN.fullmatch(text[a.end : b.start])
    ]
    if len(spans) != 1:
        return []
    words = {w for c in own for w in c.split()}
    if words & _END_WORDS and not words & _START_WORDS:
        return [spans[0][1]]
    if words & _START_WORDS and not words & _END_WORDS:
        return [spans[0][0]]
    return []


def _put_right_at_once(text: str, match: Any, later: list[Any]) -> bool:
    """A value followed by "no, sorry" / "아니" and, soon after, another of its kind."""
    return bool(
        later
        and (
            _SELF_FIX_AFTER.match(text[match.end :])
            or _SELF_FIX_AFTER_WORD.match(text[match.end :])
        )
        and later[0].start - match.end <= SELF_FIX_WINDOW
    )
