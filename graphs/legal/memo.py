"""The lawyer's intake memo: what a person tells, item by item, each with their words.

Beside the sub-type's key fields (which drive the questions, the deadlines and the summary's
format), an intake keeps a memo as a lawyer would write one:
- *chronology*: each dated clause (the date relative to the message's own day), marked when it
  is a plan or a threat rather than something that happened;
- *money*: each amount with what it is (lent, repaid, owed, offered, demanded, wage, deposit,
  cost, paid, lost — or "unclear"), by the words of its clause, and the person named beside it;
- *parties*: each person or organisation named, with the role its words give;
- *steps*: police, bank, labour office, insurer, court, a formal letter, a hospital — with the
  clause's date;
- *evidence*: a kind of record the person says they have (not one that was threatened).
What the person wants and the questions they asked are kept by `wants` and `questions`.

Every item holds the clause it was read from (`quote`), the message's time (`at`), and whether
the person confirmed it. Rules mode reads items with the rules' own readers (amounts, dates,
names) and the words of knowledge/memo.yaml; a value said in a supposition, taken back or in a
question is no item. An item is never a key field's value: a key field points at the item that
holds the same value (`links`). Pure functions on plain state values.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from graphs.common.intents import read_intent
from graphs.common.normalize import Match, find_dates, is_future, near_ahead
from graphs.common.normalize.amounts import TOTAL_SAID, bare_in_man, find_amounts, per_month_at
from graphs.common.normalize.dates import weekdays_of_then
from graphs.common.reading import ASKS, ASKS_BY_ORDER, Reading, Role
from graphs.common.text import clause_spans, sentences
from graphs.legal import names
from graphs.legal.changes import PRICED_ROLES, name_corrections
from graphs.legal.details import people
from knowledge.korean import get_kiwi
from knowledge.loader import Knowledge
from knowledge.models import LangPatterns, MemoWords

SECTIONS = ("chronology", "money", "parties", "steps", "evidence", "circumstances", "positions")
NOTED = ("circumstances", "positions")  # sections only a model reads into: a kind and words
REMOVED = "removed"  # the section of an item the person had removed (no section shows it)
QUOTE_CHARS = 160  # of the clause kept with an item
MAX_ITEMS = 150  # items per intake (the oldest are kept; later ones past it are dropped)
UNCLEAR = "unclear"
_COMPILED: dict[int, tuple[Any, dict[str, re.Pattern[str]]]] = {}


def _patterns(words: dict[str, MemoWords] | LangPatterns) -> dict[str, re.Pattern[str]]:
    """Each kind's words as one pattern (cached per knowledge object)."""
    cached = _COMPILED.get(id(words))
    if cached is None or cached[0] is not words:
        kinds = words.items() if isinstance(words, dict) else [("", words)]
        compiled = {
            key: re.compile("|".join(f"(?:{p})" for p in [*w.ko, *w.en])) for key, w in kinds
        }
        cached = _COMPILED[id(words)] = (words, compiled)
    return cached[1]


def _nearest(
    words: dict[str, MemoWords],
    lowered: str,
    span: tuple[int, int] | None,
    numbers: Iterable[tuple[int, int]] = (),
    *,
    sub_type: str | None = None,
    within: int | None = None,
    unclaimed: bool = False,
) -> str | None:
    """The kind whose words stand nearest the span (anywhere in the clause when no span);
    on a tie, the kind listed first. A word with another number between it and the span is
    that number's ("1740만 납품에 300 받았으니": 받았 is the 300's, not the 1740만's). A kind
    said only of some sub-types (`cases`) counts in those alone; `within`: no farther away;
    `unclaimed`: a word someone claims to be ("수사관이라고 하면서") does not count."""
    best: tuple[int, int, str] | None = None
    between = [n for n in numbers if span is None or not (n[0] < span[1] and span[0] < n[1])]
    for order, (key, pattern) in enumerate(_patterns(words).items()):
        if words[key].cases and sub_type not in words[key].cases:
            continue
        for m in pattern.finditer(lowered):
            if unclaimed and _claimed(lowered, m.start(), m.end()):
                continue
            if span is None:
                distance = m.start()
            else:
                distance = max(m.start() - span[1], span[0] - m.end(), 0)
                if any(
                    (span[1] <= a and b <= m.start()) or (m.end() <= a and b <= span[0])
                    for a, b in between
                ):
                    continue
            if within is not None and distance > within:
                continue
            if best is None or (distance, order) < best[:2]:
                best = (distance, order, key)
    return best[2] if best else None


def _before(value: object, now: datetime) -> bool:
    """Whether a date ('yyyy-mm-dd', 'yyyy-mm', 'yyyy') ends before the day of `now`."""
    day = now.date().isoformat()
    return isinstance(value, str) and value < day[: len(value)]


def _says(patterns: LangPatterns, lowered: str) -> bool:
    return bool(patterns.ko or patterns.en) and bool(_patterns(patterns)[""].search(lowered))


# How far from a name its role word may stand, in characters ("오성민 … 전 회사 팀 과장": the
# words of its apposition, not any word of the clause).
_ROLE_NEAR = 12


def role_of(kn: Knowledge, text: str, name: str, sub_type: str | None) -> str | None:
    """The role the words beside a name give it, as the memo's parties read it (None: no
    role word beside it): "아버지 성함은 정춘식" is family, "담당 형사 최민호" an officer."""
    lowered = " ".join(text.lower().split())
    where = lowered.find(name.lower())
    if where < 0:
        return None
    span = (where, where + len(name))
    return _nearest(
        kn.memo.party_roles, lowered, span, sub_type=sub_type, within=_ROLE_NEAR, unclaimed=True
    )


# Roles a witness's act outweighs: a friend or a coworker who saw it is a witness to the
# lawyer ("my friend Rodel Santos (filipino coworker) he see the accident": legal_set19 B2;
# "동료 한지수랑 이민호도 다 봤어요": R5).
_SAW_TOO = frozenset({None, "acquaintance", "coworker"})


def _saw(kn: Knowledge, text: str, spans: list[Any], span: Any, name: str) -> bool:
    """Whether the sentence of `span` says, after `name`, that someone saw what happened."""
    sentence = " ".join(
        " ".join(text[s.start : s.end].lower().split())
        for s in spans
        if s.sentence == span.sentence
    )
    after = sentence[sentence.find(name.lower()) + len(name) :] if name.lower() in sentence else ""
    return bool(after) and _patterns(kn.memo.party_roles)["witness"].search(after) is not None


def _not_facts(reading: Reading | None) -> list[tuple[int, int]]:
    """Spans of the reading that are no fact: values supposed, sentences that suppose."""
    if reading is None:
        return []
    spans = [v.span for v in reading.values if v.role is Role.SUPPOSED and v.span is not None]
    spans += [c.span for c in reading.clauses if c.supposes]
    return spans


def _asks_here(kn: Knowledge, spans: list[Any], n: int, clause: str) -> bool:
    """Whether the n-th clause of a sentence that asks is the asking part: its last clause
    ("작년 11월5일에 백만원은 갚앗어 … 차용증 없어도 받을수 있나": the facts before it are told,
    legal_set11 C3), or one that asks by itself."""
    last = n + 1 == len(spans) or spans[n + 1].sentence != spans[n].sentence
    return (
        last
        or read_intent(clause, kn).kind == "question"
        or bool(ASKS.search(clause) or ASKS_BY_ORDER.match(clause))
    )


def _withdrawn(reading: Reading | None) -> list[tuple[tuple[int, int], Any]]:
    """(span, value) of the values the message takes back: no item of the message keeps that
    value ("8,000,000 - sorry no, it was 9,000,000": the 9,000,000 stays)."""
    if reading is None:
        return []
    return [
        (v.span, v.value)
        for v in reading.values
        if v.role is Role.TAKEN_BACK and v.span is not None and v.kind in ("amount", "date")
    ]


def _inside(spans: Iterable[tuple[int, int]], start: int, end: int) -> bool:
    return any(a < end and start < b for a, b in spans)


def read_items(
    kn: Knowledge,
    text: str,
    *,
    at: str,
    now: datetime,
    reading: Reading | None = None,
    negated: re.Pattern[str] | None = None,
    sub_type: str | None = None,
) -> list[dict[str, Any]]:
    """The memo items a message tells, in text order (without ids). `reading`: the rules'
    reading of the same text, whose suppositions, questions and withdrawn values are no items.
    `negated`: a clause it matches names no step or evidence ("경찰에 신고 안 했어요").
    `sub_type`: the matter's, for the roles said of some matters only (an employer)."""
    if reading is not None:
        text = reading.text
    lex = kn.memo
    skip = _not_facts(reading)
    asking = [c.span for c in reading.clauses if c.asks] if reading is not None else []
    withdrawn = _withdrawn(reading)
    evidence = kn.k2.fields.get("evidence_type")
    items: list[dict[str, Any]] = []
    spans = clause_spans(text, at="connective")
    plans = [_says(lex.planned, " ".join(text[s.start : s.end].lower().split())) for s in spans]
    # what the person wants, not what happened: "절도로 고소하고 싶어요", "월 20만원 정도로
    # 분할상환 하고 싶어요" (legal_set10 Q6, Q1: a step taken, a repayment made)
    wished = [False] * len(spans)
    for n in reversed(range(len(spans))):
        s, joined = spans[n], n + 1 < len(spans) and spans[n + 1].sentence == spans[n].sentence
        upto = spans[n + 1].end if joined else s.end  # "고소하고 | 싶어요": the wish's words
        wished[n] = not _past(text[s.start : s.end]) and (
            _wishes(kn, text[s.start : upto]) or (joined and wished[n + 1])
        )
    told_days = find_dates(text.lower(), now=now)
    year_told = [m for m in told_days if not m.yearless]
    carried: str | None = None  # the role of the clause before, for a list that follows it
    carried_in: int | None = None  # the sentence a carried role is bound to (None: any)
    for n, span in enumerate(spans):
        clause = text[span.start : span.end].strip()
        if (
            not clause
            or _inside(skip, span.start, span.end)
            or (_inside(asking, span.start, span.end) and _asks_here(kn, spans, n, clause))
        ):
            carried = None
            continue
        lowered = " ".join(clause.lower().split())
        quote = " ".join(clause.split())[:QUOTE_CHARS]
        base = {"quote": quote, "at": at, "confirmed": False}
        # "월요일에 회사로 찾아가서 사진 뿌린다고 했어요": a clause without a past tense of its
        # own is told in the mood of its sentence's end (a plan, a threat).
        planned = (
            plans[n]
            or wished[n]
            or (
                not _past(clause)
                and any(
                    p
                    for s, p in zip(spans[n + 1 :], plans[n + 1 :], strict=True)
                    if s.sentence == span.sentence
                )
            )
        )
        no = negated is not None and bool(negated.search(lowered))
        gone = {value for _, value in withdrawn}  # withdrawn wherever the message says it
        dates = [
            m for m in find_dates(lowered, now=now, allow_future=planned) if m.value not in gone
        ]
        # a year said earlier in the sentence carries to this clause's dates ("작년 3월 12일에
        # 300만원 보내줬고 6월 5일에 150": last June, legal_set15 R1 got this year's)
        dates = [_carried(m, year_told) for m in dates]
        dates = weekdays_of_then(dates, told_days, now)  # "oct 31 … dont come on monday"
        # a day told alone whose month an earlier clause gave ("10월 5일에 보냈고 | 7일에 또")
        dates += [
            m
            for m in told_days
            if span.start <= m.start < span.end
            and m.value not in gone
            and all(m.value != d.value for d in dates)
            and not find_dates(text[m.start : m.end].lower(), now=now)
        ]
        ends = max(s.end for s in spans if s.sentence == span.sentence)
        if not planned and not told_as_past(text[span.start : ends]):
            dates = [near_ahead(m, now) for m in dates]
        # a clause dated ahead of its message ("다음 달에 200만원 준다고") tells a plan
        planned = planned or any(is_future(m.value, now=now) for m in dates)
        named = [(n, w) for n, w in people(clause, kn) if not _role_word(kn, n)]
        due = _says(lex.deadline, lowered)
        for m in dates:
            # a day before the message is no day ahead, unless it is a day agreed or due ("to
            # be repaid by 31 December 2025"): "the kakao … on nov 12 where he says 'we will
            # pay'" is when it was said (legal_set16 B2, R2 had past days marked "ahead")
            ahead = planned and (due or not _before(m.value, now))
            item = {"section": "chronology", "date": m.value, "planned": ahead, **base}
            items.append(item | ({"yearless": True} if m.yearless else {}))
        own = _nearest(lex.money_roles, lowered, None)
        numbers = [(n.start(), n.end()) for n in _NUMBER.finditer(lowered)]
        amounts = [(a.start, a.end) for a in find_amounts(lowered)]
        for m in find_amounts(lowered):
            if m.value <= 0 or m.value in gone:
                continue
            # "중간에 조금씩만 갚았어요 6월10일에 100만원, 9월5일에 30만원": a list without a
            # word of its own takes the role of the clause right before it
            if carried_in not in (None, span.sentence):
                carried = None
            role = (
                _nearest(lex.money_roles, lowered, (m.start, m.end), numbers)
                or (carried if _bare_list(lowered, now=now) else None)
                or UNCLEAR
            )
            what = _amount_label(lowered, m.start, amounts, dates) if role == UNCLEAR else None
            monthly = per_month_at(lowered, m.start, m.end, **kn.lexicon.per_month)
            items.append(
                {
                    "section": "money",
                    "amount": m.value,
                    "role": role,
                    "party": named[0][0] if named else None,
                    "planned": planned,
                    **({"what": what} if what else {}),
                    **({"monthly": True} if monthly else {}),
                    **base,
                }
            )
        for name, where in named:
            # a role word said beside the name, no other name between ("아버지 성함은
            # 정춘식이고 저는 딸 정미영": the daughter is no father)
            others = [(w, w + len(o)) for o, w in named if o != name]
            role = _nearest(
                lex.party_roles,
                lowered,
                (where, where + len(name)),
                others,
                sub_type=sub_type,
                within=_ROLE_NEAR,
                unclaimed=True,
            )
            if role in _SAW_TOO and _saw(kn, text, spans, span, name):
                role = "witness"
            items.append({"section": "parties", "name": name, "role": role, **base})
        # a role word alone ("갚았어요") carries to the list after it; one beside its own amount
        # only within its sentence
        amounts_here = bool(find_amounts(lowered))
        if own is not None:
            carried, carried_in = own, (span.sentence if amounts_here else None)
        elif amounts_here:
            carried = carried if carried_in in (None, span.sentence) else None
        if no:
            continue
        # a step taken: its clause says something was done, and it is no wish ("지급명령 신청
        # 원함") nor a plan. A place alone ("송파경찰서 | 가서 | 신고했어요": legal_set12 S1)
        # is done by the clauses of its sentence that follow it.
        acted, step_base, step_dates = lowered, base, [m.value for m in dates]
        if not _says(lex.step_acts, lowered):
            rest = [s for s in spans[n + 1 :] if s.sentence == span.sentence]
            acted = " ".join([lowered, *(_lowered(text, s) for s in rest)])
            if negated is not None and negated.search(acted):
                acted = lowered
            elif rest:  # quoted whole, dated by the one date its sentence tells
                said = " ".join(text[span.start : rest[-1].end].split())[:QUOTE_CHARS]
                step_base = {**base, "quote": said}
                whole = [s for s in spans if s.sentence == span.sentence]
                told_dates = {
                    m.value
                    for m in find_dates(
                        " ".join(text[whole[0].start : whole[-1].end].lower().split()), now=now
                    )
                    if m.value not in gone
                }
                step_dates = step_dates or (sorted(told_dates) if len(told_dates) == 1 else [])
        done = _says(lex.step_acts, acted) and not wished[n]
        told = [
            (t.start(), t.end(), bool(re.search(r"[가-힣]", t.group(0))))
            for t in _patterns(lex.told_to)[""].finditer(acted)
        ]
        for body, pattern in _patterns(lex.steps).items():
            said = pattern.search(lowered)
            if said and _claimed(lowered, said.start(), said.end()):
                # "검찰 김민수 수사관이라고 하면서": someone claiming to be one (legal_set15 R3
                # got a police step from the scammer's words)
                continue
            if said and not planned and done and not _told_to(said, told):
                date = next(iter(step_dates), None)
                items.append({"section": "steps", "body": body, "date": date, **step_base})
        if evidence is not None and tells_holding(kn, clause) and not planned:
            for option in evidence.options:
                if any(_word_in(word.lower(), lowered) for word in option.synonyms):
                    items.append({"section": "evidence", "kind": option.value, **base})
    return items + _parts_of_a_total(kn, text, at=at)


def _parts_of_a_total(kn: Knowledge, text: str, *, at: str) -> list[dict[str, Any]]:
    """Bare Korean numbers that add up, with the amounts written beside them, to the bare total
    the message names ("10일 국민은행 1500 11일에 신한은행 800 12일에 농협 1000 다합쳐서 3300이요":
    legal_set15 R3 kept none): each part a money item counted in 만 (marked `in_man`), its role
    the message's; the total is their sum, shown by the ledger."""
    if not re.search(r"[가-힣]", text) or not TOTAL_SAID.search(text):
        return []
    bare = bare_in_man(text, korean=True)
    totals = [
        m for m in bare if any(0 <= m.start - t.end() <= 3 for t in TOTAL_SAID.finditer(text))
    ]
    if len(totals) != 1:
        return []
    parts = [m for m in bare if m is not totals[0]]
    written = [a.value for a in find_amounts(text) if a.value != totals[0].value]
    if len(parts) < 2 or sum(m.value for m in parts) + sum(written) != totals[0].value:
        return []
    lowered = " ".join(text.lower().split())
    role = _nearest(kn.memo.money_roles, lowered, None) or UNCLEAR
    spans = clause_spans(text, at="connective")
    items = []
    for m in parts:
        span = next((c for c in spans if c.start <= m.start < c.end), None)
        quote = " ".join((text[span.start : span.end] if span else text).split())[:QUOTE_CHARS]
        items.append(
            {
                "section": "money",
                "amount": m.value,
                "role": role,
                "party": None,
                "planned": False,
                "in_man": True,
                "quote": quote,
                "at": at,
                "confirmed": False,
            }
        )
    return items


def _lowered(text: str, span: Any) -> str:
    return " ".join(text[span.start : span.end].lower().split())


def _told_to(body: re.Match[str], told: list[tuple[int, int, bool]]) -> bool:
    """Whether a step's body is what someone told the person to go to ("경찰에 신고하라고",
    "told me to report it to the police"), not where they went: the words of telling stand
    right after it (Korean) or before it (English, where one telling may list several: "they
    told us file 산재 at 근로복지공단 and complain to 노동부 labor office")."""
    return any(
        0 <= a - body.end() <= _TOLD_NEAR if korean else 0 <= body.start() - b <= 5 * _TOLD_NEAR
        for a, b, korean in told
    )


_TOLD_NEAR = 12  # characters between a body and the words telling the person to go to it
_NUMBER = re.compile(r"\d[\d,.]*")
# What an amount of no role word is, in the person's words: the nouns right before it
# ("레이저 1회 25만원", "연체료 하루5만원", "physiotherapy was 320,000", "and counselling 60,000").
_LABEL_TAGS = ("NNG", "NNP", "NNB", "SN", "SL", "XSN", "NR")
_LABEL_SKIP = ("J", "VCP", "E")  # a particle or the copula between the noun and its amount
_EN_LINK = re.compile(r"(?:\b(?:was|were|is|are|of|for|cost|costs|came to|about|around)\s+)*$")
_EN_LABEL = re.compile(
    r"(?:^|(?:,|\band|\bplus|\bthen)\s+)((?:[a-z][a-z\-']*\s+){0,2}?[a-z][a-z\-']*)\s+$"
)
_EN_NOT_LABEL = frozenset(
    "i he she they we you it my his her their our me him them that this there which who "
    "then also just only another total".split()
)
LABEL_CHARS = 30


def _amount_label(
    clause: str, at: int, amounts: list[tuple[int, int]], dates: list[Any]
) -> str | None:
    """The person's own words for what an amount of no role word is: the noun phrase right
    before it in its clause, after any other amount or date (None when there is none)."""
    start = max([b for a, b in amounts if b <= at] + [d.end for d in dates if d.end <= at] + [0])
    before = clause[start:at]
    if re.search(r"[가-힣]", before):
        tokens = get_kiwi().tokenize(before)
        while tokens and tokens[-1].tag.startswith(_LABEL_SKIP):
            tokens.pop()
        kept: list[Any] = []
        for token in reversed(tokens):
            if not token.tag.startswith(_LABEL_TAGS):
                break
            kept.insert(0, token)
        if not kept or all(t.tag in ("SN", "NNB", "NR") for t in kept):
            return None
        label = before[kept[0].start : kept[-1].start + kept[-1].len].strip()
    else:
        linked = _EN_LINK.search(before)
        head = before[: linked.start()] if linked else before
        m = _EN_LABEL.search(head + " ")
        if m is None:
            return None
        label = m.group(1).strip()
        if any(w in _EN_NOT_LABEL for w in label.split()):
            return None
    return label[:LABEL_CHARS] or None


# What a clause of a list holds besides its dates and amounts: particles, a connective.
_LIST_TAGS = ("J", "E", "MAJ", "SN", "SP", "SS", "SF", "SO", "SW", "NR", "NNB", "XSN")


_LIST_WORDS = frozenset("on and in at of then also another plus krw won the".split())


def _bare_list(clause: str, *, now: datetime) -> bool:
    """Whether a clause is an item of a list (its dates and amounts and no word of its own:
    "9월5일에 30만원", "1,500,000 on july 15"), which takes the role of the clause before it;
    "1억7천은 제돈" is not."""
    spans = [
        (m.start, m.end)
        for m in [*find_dates(clause, now=now, allow_future=True), *find_amounts(clause)]
    ]
    rest = [
        t
        for t in get_kiwi().tokenize(clause)
        if not any(a <= t.start and t.start + t.len <= b for a, b in spans)
    ]
    return all(
        t.form in _LIST_WORDS if t.tag == "SL" else t.tag.startswith(_LIST_TAGS) for t in rest
    )


_PAST_FINAL = 20  # ㅆ as a Hangul syllable's final consonant: 했, 갔, 났, 었 (not 있)


# A role someone claims, right after its word: "수사관이라고 하면서", "경찰이라며", "검사래요";
# or before it: "claiming to be a police officer", "posing as an investigator".
_CLAIMED = re.compile(r"\s?(?:이)?(?:라고|라며|래요|라는|래서)")
_CLAIMED_BEFORE = re.compile(
    r"(?:claim(?:ed|ing|s)?\s+to\s+be|pretend(?:ed|ing|s)?\s+to\s+be|pos(?:ed|ing|es)\s+as|"
    r"impersonat(?:ed|ing|es))\s+(?:an?\s+|the\s+)?(?:[a-z]+\s+){0,2}$"
)


def _claimed(lowered: str, start: int, end: int) -> bool:
    """Whether the role word at `start:end` is one someone claims to be (a scammer's)."""
    return bool(
        _CLAIMED.match(lowered, end) or _CLAIMED_BEFORE.search(lowered[max(0, start - 40) : start])
    )


def _carried(m: Match, whole: list[Match]) -> Match:
    """A date a clause read without its year, with the year the whole message gives the same
    day (a year said earlier in its sentence), when it gives one."""
    if not m.yearless:
        return m
    value = str(m.value)
    same = [w for w in whole if len(str(w.value)) == len(value) and str(w.value)[4:] == value[4:]]
    return Match(same[0].value, m.start, m.end, m.alternatives) if len(same) == 1 else m


def _past(clause: str) -> bool:
    """Whether a Korean clause holds a past tense ("찾아갔고", "보냈는데")."""
    return any(
        "가" <= ch <= "힣" and ch != "있" and (ord(ch) - 0xAC00) % 28 == _PAST_FINAL
        for ch in clause
    )


# An English verb in the past: a common irregular one, or one in -ed not after a form of "be"
# ("i was fired", "he sent", "they paid"; not "the hearing is scheduled for").
_PAST_EN = re.compile(
    r"\b(?:was|were|did|had|said|told|went|came|sent|paid|got|gave|took|made|hit|quit|left|"
    r"met|saw|found|bought|sold|lost|kept|brought|began|ago|yesterday)\b"
    r"|(?<!\bis )(?<!\bare )(?<!\bbe )(?<!\bbeen )\b[a-z]+[^e\W]ed\b"
)


# Reported speech: its tense is the telling's, not the event's ("학폭위는 12월 4일이라고
# 들었어요", "they told me the hearing is on december 4": legal_set15 R2 dated it last year).
_REPORTED_KO = re.compile(r"(?:이)?라고|다고|라며|다며|래요|대요|라더|다더")
_REPORTED_EN = re.compile(
    r"\b(?:said|told (?:me|us|him|her|them)|heard|wrote|texted|emailed)\b(?:\s+that)?", re.I
)


def told_as_past(words: str) -> bool:
    """Whether words tell something as past, in Korean or English (a reported speech by the
    tense of what it reports)."""
    cut = _REPORTED_KO.search(words)
    if cut is not None:
        words = words[: cut.start()]
    words = _REPORTED_EN.sub(" ", words)
    return _past(words) or _PAST_EN.search(words.lower()) is not None


def _role_word(kn: Knowledge, name: str) -> bool:
    """A "name" that is only a role word ("전남친", "사장님"): no party of its own."""
    words = {name.lower(), name.lower().removeprefix("전").strip()}
    if words & names.RELATION_WORDS:
        return True
    return any(p.fullmatch(w) for p in _patterns(kn.memo.party_roles).values() for w in words)


def step_said(kn: Knowledge, body: str, words: str) -> bool:
    """Whether `words` name the step `body` by one of its words (memo.yaml `steps`)."""
    pattern = _patterns(kn.memo.steps).get(body)
    return pattern is not None and pattern.search(" ".join(words.lower().split())) is not None


def evidence_said(kn: Knowledge, kind: str, words: str) -> bool:
    """Whether `words` name the evidence kind by one of its K2 synonyms."""
    spec = kn.k2.fields.get("evidence_type")
    lowered = " ".join(words.lower().split())
    return spec is not None and any(
        _word_in(w.lower(), lowered) for o in spec.options if o.value == kind for w in o.synonyms
    )


def _wishes(kn: Knowledge, clause: str) -> bool:
    """Whether a clause says what the person wants (the lexicon's `wants`, "원함" too)."""
    squeezed = "".join(clause.lower().split())
    cues = ["".join(c.lower().split()) for ws in kn.lexicon.wants.values() for c in ws]
    return any(c in squeezed for c in [*cues, "원함", "원해", "원합"])


def tells_plan(kn: Knowledge, clause: str) -> bool:
    """Whether a clause tells a plan or a threat ahead by its words (memo.yaml `planned`)."""
    return _says(kn.memo.planned, " ".join(clause.lower().split()))


def tells_deadline(kn: Knowledge, clause: str) -> bool:
    """Whether a clause tells a deadline, a hearing or a summons (memo.yaml `deadline`)."""
    return _says(kn.memo.deadline, " ".join(clause.lower().split()))


def tells_holding(kn: Knowledge, clause: str) -> bool:
    """Whether a clause says the person has a record (memo.yaml `holding`: "캡처해 놨어요")."""
    return _says(kn.memo.holding, " ".join(clause.lower().split()))


def _word_in(word: str, lowered: str) -> bool:
    """A synonym in the clause: anywhere for Korean, as whole words for English (a plural
    too: "bank statements")."""
    if re.search(r"[가-힣]", word):
        return word in lowered
    return re.search(rf"(?<![a-z]){re.escape(word)}(?:e?s)?(?![a-z])", lowered) is not None


def _key(item: dict[str, Any]) -> tuple[Any, ...]:
    """What makes two items the same: the section and its value (a date with its clause)."""
    section = item["section"]
    if section == "chronology":
        return (section, item["date"], item["quote"])
    if section == "money":
        return (section, item["amount"], item["role"])
    if section == "parties":
        return (section, item["name"])
    if section == "steps":
        return (section, item["body"], item.get("date"))
    if section in NOTED:
        return (section, item.get("kind"), item["quote"])
    return (section, item.get("kind"))


def added(
    memo: list[dict[str, Any]], items: list[dict[str, Any]], *, restating: bool = False
) -> list[dict[str, Any]]:
    """The memo with the items it does not hold yet, each given the next id ("m7"). An item
    an earlier one already holds is a restatement, not a new fact: a date less precise than
    a recorded one it covers ("6월" beside 2026-06-10), an amount of unclear role beside the
    same amount recorded; in a message that corrects something (`restating`), the same date
    or amount told again too."""
    # an item the person had removed is not read into the memo again from the same words
    seen = {_key(item.get("held", item)) for item in memo}
    earlier = list(memo)
    out = list(memo)
    for item in items:
        key = _key(item)
        if key in seen and item["section"] == "parties":
            out = [_role_told(old, item) for old in out]
            continue
        if key in seen or len(out) >= MAX_ITEMS or _covered(item, earlier, restating=restating):
            continue
        seen.add(key)
        out.append({"id": f"m{len(out) + 1}", **item})
    return out


# Roles a later, plainer word of a person completes: none told, or only that they are known.
_OPEN_ROLES = frozenset({None, "acquaintance"})


def _role_told(old: dict[str, Any], item: dict[str, Any]) -> dict[str, Any]:
    """A party of the memo with the role a later message gives the same name, where it had
    none or only "acquaintance" ("Rodel Santos", then "he saw the accident": legal_set19 model
    notes B, the witness stayed an acquaintance)."""
    if (
        old["section"] != "parties"
        or old.get("name") != item.get("name")
        or old.get("role") not in _OPEN_ROLES
        or item.get("role") in _OPEN_ROLES
    ):
        return old
    return {**old, "role": item["role"]}


def _covered(item: dict[str, Any], earlier: list[dict[str, Any]], *, restating: bool) -> bool:
    """Whether an earlier item holds what `item` says (see `added`)."""
    section = item["section"]
    for old in earlier:
        if old["section"] != section:
            continue
        if section == "chronology":
            new, had = str(item["date"]), str(old["date"])
            if (len(new) < len(had) and had.startswith(new)) or (restating and new == had):
                return True
            if restating and len(new) == 4:
                return True  # "그것도 작년이고요" corrects a year, it tells no event
        elif section == "money" and item["amount"] == old["amount"]:
            if item["role"] == UNCLEAR or item["role"] == old["role"] or restating:
                return True
    return False


def noted(
    kn: Knowledge,
    memo: list[dict[str, Any]],
    text: str,
    *,
    at: str,
    now: datetime,
    reading: Reading | None = None,
    sub_type: str | None = None,
) -> list[dict[str, Any]]:
    """The memo after reading one more message."""
    return added(memo, message_items(kn, text, at=at, now=now, reading=reading, sub_type=sub_type))


def message_items(
    kn: Knowledge,
    text: str,
    *,
    at: str,
    now: datetime,
    reading: Reading | None = None,
    sub_type: str | None = None,
) -> list[dict[str, Any]]:
    """The items one message tells (`read_items` with the story's negations)."""
    return read_items(
        kn, text, at=at, now=now, reading=reading, negated=_negation(kn), sub_type=sub_type
    )


def _negation(kn: Knowledge) -> re.Pattern[str]:
    return _patterns(kn.story.negations)[""]


def _value(item: dict[str, Any]) -> tuple[Any, ...]:
    """What an item is about, whatever its role: the amount, the date, the name, the body."""
    field = {"chronology": "date", "money": "amount", "parties": "name", "steps": "body"}
    return (item["section"], item.get(field.get(item["section"], "kind")))


def merged(
    ruled: list[dict[str, Any]], model: Iterable[dict[str, Any]], *, at: str, text: str
) -> list[dict[str, Any]]:
    """One message's items when a model read it in context (its items checked by the rules):
    the model's, with the rules' own for anything the model did not name. Where both read the
    same value with another role, the model's role is kept and the rules' stands beside it
    (`rules_role`) for staff to see."""
    model = [{**m, "at": at, "confirmed": False} for m in model]
    if not model:
        return ruled
    out = []
    for item in model:
        twin = next((r for r in ruled if _value(r) == _value(item)), None)
        if twin is not None and "role" in item and twin.get("role") != item["role"]:
            item = {**item, "rules_role": twin.get("role")}
        out.append(item)
    named = {_value(m) for m in model}
    out += [r for r in ruled if _value(r) not in named and not _redated(r, model)]
    flat = " ".join(text.split())
    return sorted(out, key=lambda i: max(flat.find(i["quote"]), 0))


def _redated(ruled: dict[str, Any], model: list[dict[str, Any]]) -> bool:
    """Whether the model dated the same words otherwise: a day the rules put in a past year
    that the model read as this day ahead ("감독관이 12월4일 오전10시에 출석하래요": 2025-12-04
    beside the model's 2026-12-04, legal_set13 A1, B1, B4) — one event, the model's year."""
    if ruled["section"] != "chronology" or len(str(ruled.get("date") or "")) < 7:
        return False
    day = str(ruled["date"])[4:]
    return any(
        m["section"] == "chronology"
        and str(m.get("date") or "")[4:] == day
        and (m["quote"] in ruled["quote"] or ruled["quote"] in m["quote"])
        for m in model
    )


# --- key fields point at items -----------------------------------------------------------------


def with_day_chosen(
    memo: list[dict[str, Any]], pending: dict[str, Any], chosen: str
) -> list[dict[str, Any]]:
    """The memo once the person chose which day words meant (`pending`: the days offered, the
    message's time): that message's chronology items dated the first day offered are the day
    chosen, its year now the person's."""
    first = str(pending["options"][0])
    return [
        {k: v for k, v in item.items() if k != "yearless"} | {"date": chosen}
        if item.get("section") == "chronology"
        and item.get("at") == pending.get("at")
        and item.get("date") == first
        else item
        for item in memo
    ]


def links(
    kn: Knowledge, sub_type: str, facts: dict[str, Any], memo: list[dict[str, Any]]
) -> dict[str, str]:
    """For each key field whose value an item holds, the item's id: an amount field the money
    item of that amount, a date field the chronology item of that date, a name the party."""
    out: dict[str, str] = {}
    for key, value in facts.items():
        if key not in kn.k2.fields or value is None:
            continue
        kind = kn.k2.field(sub_type, key).kind
        for item in memo:
            if (
                (kind == "amount" and item["section"] == "money" and item["amount"] == value)
                or (kind == "date" and item["section"] == "chronology" and item["date"] == value)
                or (
                    key == "counterparty"
                    and item["section"] == "parties"
                    and isinstance(value, str)
                    and item["name"] in value
                )
            ):
                out[key] = item["id"]
                break
    return out


def confirmed(memo: list[dict[str, Any]], ids: Iterable[str]) -> list[dict[str, Any]]:
    """The memo with the items of `ids` confirmed by the person."""
    wanted = set(ids)
    return [{**i, "confirmed": True} if i["id"] in wanted else i for i in memo]


# --- what the lawyer reads ---------------------------------------------------------------------


# Roles whose amounts add up to what passed between the parties. A rate (wage, rent), a
# deposit, an estimate or a sum offered or demanded does not: two estimates are alternatives,
# two offers a negotiation; an amount of unclear role may be any of them. Nor does what is
# still owed: it is a balance, told again as it grows ("19.5 million", then "about 21 million
# with interest"), so two of them are most often one debt.
SUMMED = ("lent", "borrowed", "repaid", "received", "paid", "lost", "deducted")


def ledger(memo: list[dict[str, Any]]) -> dict[str, int]:
    """The total per role of the roles whose amounts add up (`SUMMED`), for a role told more
    than once (lent 500만 and repaid 100만 twice: the lawyer sees the repaid total). An amount
    that is the sum of the role's others is the total the person told ("150 보내고 250 보내서
    합쳐서 400"), not one more. Plans and threats are not in it."""
    told: dict[str, list[dict[str, Any]]] = {}
    for item in memo:
        if (
            item["section"] == "money"
            and not item.get("planned")
            and not item.get("monthly")  # a rate is no part of a total
            and item["role"] in SUMMED
        ):
            told.setdefault(item["role"], []).append(item)
    sums: dict[str, int] = {}
    for role, items in told.items():
        if len(items) < 2:
            continue
        amounts = [i["amount"] for i in items]
        total = max(items, key=lambda i: i["amount"])
        parts = sum(amounts) - total["amount"]
        told_total = total["amount"] == parts or _TOTAL.search(total["quote"])
        # "I've lost almost 28 million won" beside transfers of 3, 5, 12 and 8.5 million: a
        # total told roughly is no loss of its own; the parts give it exactly (legal_set16 B1
        # showed Σ lost 56,550,000)
        rough = len(items) > 2 and abs(total["amount"] - parts) <= parts * ROUGHLY
        if told_total:
            sums[role] = total["amount"]
        elif role in _SUMMED_WHEN_DATED and not all(_dated(i["quote"]) for i in items):
            continue
        else:
            sums[role] = parts if rough else sum(amounts)
    return sums


# What was paid adds up only as a series of payments, each told with its day: paid undated is
# as often a price and what of it was paid, or paid to someone else (legal_set19 B1: the price,
# an instalment and the two paid as Σ paid 3,285,000; A2: a new flat's deposit and an insurance
# fee; B2: the company's payment and his own).
_SUMMED_WHEN_DATED = ("paid",)
_ANY_DAY = datetime(2000, 1, 1)  # only whether a day is told matters, never which


_DAY_OF_MONTH = re.compile(r"(?<!\d)\d{1,2}\s*일(?![동간째])|\b\d{1,2}(?:st|nd|rd|th)\b", re.I)


def _dated(quote: str) -> bool:
    """Whether an item's words tell the day it happened ("11일에", "on the 11th" after the
    month told before it)."""
    return bool(_DAY_OF_MONTH.search(quote) or find_dates(quote, now=_ANY_DAY, allow_future=True))


ROUGHLY = 0.05  # how near the sum of the others a total told roughly is


# An amount told as the total of others ("3.5 million in total", "합쳐서 400"), some of which
# may be in no item of the role: the role's sum is that amount.
_TOTAL = re.compile(
    r"(?<![가-힣])총\s?(?:액|\d|[일이삼사오육칠팔구십백천])|합쳐|합해|합계|\bin total\b|\baltogether\b|\btotal of\b",
    re.I,
)


def ordered(memo: list[dict[str, Any]], section: str) -> list[dict[str, Any]]:
    """A section's items; the chronology in date order (a month before its days, told order
    kept within the same date)."""
    items = [i for i in memo if i["section"] == section]
    if section == "chronology":  # an event told without a date (a model's) after the dated
        items.sort(key=lambda i: (i["date"] is None, str(i["date"])))
    return items


# --- the memo checks the key fields ------------------------------------------------------------


def checked_keys(
    kn: Knowledge,
    sub_type: str,
    found: dict[str, Any],
    items: list[dict[str, Any]],
    *,
    cued: Iterable[str] = (),
    placed: Iterable[str] = (),
) -> dict[str, Any]:
    """`found` (key field values read from one message) with each amount or date field of
    memo.yaml's `key_roles` settled by the message's own items when it tells several amounts
    (or dates): the amount of the one item of the field's roles, or the date of that item's
    clause. Without one such item a value no word of the field placed (`cued`) is left out (it
    is asked): a wrong key field is worse than a missing one."""
    roles = kn.memo.key_roles.get(sub_type, {})
    money = [i for i in items if i["section"] == "money" and not i.get("planned")]
    dated = [
        i for i in items if i["section"] == "chronology" and i["date"] and not i.get("planned")
    ]
    ahead = {i["date"] for i in items if i["section"] == "chronology" and i.get("planned")}
    out = dict(found)
    for key, told_roles in kn.memo.money_told.get(sub_type, {}).items():
        if key not in out and any(i["role"] in told_roles for i in money):
            out[key] = True  # "Is money involved?" answered by the amounts told
    for key, value in found.items():
        # "월요일에 회사로 찾아가서 사진 뿌린다고": a day told of a plan or threat is no date of
        # what happened (a field that may lie ahead takes the plan's own date)
        spec = kn.k2.field(sub_type, key) if key in kn.k2.fields else None
        if spec is None or spec.kind != "date" or key in cued or not ahead:
            continue
        if value not in {i["date"] for i in dated} and not (spec.allow_future and value in ahead):
            del out[key]
    for key, wanted in roles.items():
        amount = kn.k2.fields[key].kind == "amount"
        if key not in out:
            if key in placed:
                continue  # read two ways (the rules and a model): the person chooses
            # several values no word placed, none taken by default (extract): the one item of
            # the field's roles settles it ("작년 3월에 … 500만원 빌려줬는데 5월에 100만원 갚고":
            # the loan's day and amount)
            holders = [i for i in money if i["role"] in wanted]
            quotes = {i["quote"] for i in holders}
            told = (
                {i["amount"] for i in holders}
                if amount
                else {i["date"] for i in dated if i["quote"] in quotes}
            )
            if len(told) == 1:
                out[key] = told.pop()
            continue
        if len({i["amount"] for i in money} if amount else {i["date"] for i in dated}) <= 1:
            # one value told: nothing to choose between, unless it is a rate or a proposal of
            # another kind ("my salary every month 230만 won" is no unpaid total: legal_set14
            # B1 had it shown as the wages owed)
            rated = [i for i in money if i["role"] in PRICED_ROLES and i["role"] not in wanted]
            if amount and rated and key not in cued and out[key] == rated[0]["amount"]:
                del out[key]
            continue
        holders = [i for i in money if i["role"] in wanted]
        if amount:
            values = {i["amount"] for i in holders}
        else:
            quotes = {i["quote"] for i in holders}
            values = {i["date"] for i in dated if i["quote"] in quotes}
        if len(values) == 1:
            out[key] = values.pop()  # the item of the field's own kind ("빌려준" 500만원)
        elif key not in cued:
            del out[key]  # a default placement among several: unsure, so asked
    return out


# --- corrections of memo items -----------------------------------------------------------------

ITEM = "memo:"  # a proposed change's field naming a memo item ("memo:m9"), not a key field
_VALUE_OF = {"chronology": "date", "money": "amount", "parties": "name"}


def is_item(field: str) -> bool:
    """Whether a proposed change (or an aside) is of a memo item, not of a key field."""
    return field.startswith(ITEM)


def item_fix(
    kn: Knowledge, memo: list[dict[str, Any]], item_id: str, said: str, *, now: datetime
) -> dict[str, Any] | None:
    """A proposed change of a memo item from the words of a correction, read with the rules'
    reader of the item's kind: a date ("작년이고요" keeps the recorded month and day, a day
    without its year keeps the recorded year), an amount, a name. None when the words give no
    such value or the same one."""
    item = next((i for i in memo if i.get("id") == item_id), None)
    if item is None or item["section"] not in _VALUE_OF:
        return None
    key = _VALUE_OF[item["section"]]
    old = item.get(key)
    lowered = " ".join(said.lower().split())
    if key == "date":
        found = find_dates(lowered, now=now, allow_future=bool(item.get("planned")))
        if len(found) != 1 or not isinstance(old, str):
            return None
        new = found[0].value
        if len(new) == 4 and len(old) > 4:
            new = new + old[4:]  # the year said, the month and day kept
        elif len(new) > 4 and not re.search(r"\d{4}|년|year", lowered):
            new = old[:4] + new[4:]  # a day said without its year keeps the recorded year
    elif key == "amount":
        amounts = find_amounts(lowered)
        if len(amounts) != 1:
            return None
        new = amounts[0].value
    else:
        named = people(said, kn)
        if not named:
            return None
        new = named[0][0]
    if new == old:
        return None
    return {"field": ITEM + item_id, "old": old, "new": new}


def item_removal(
    kn: Knowledge, memo: list[dict[str, Any]], item_id: str, lang: str = "ko"
) -> dict[str, Any] | None:
    """The proposed removal of a memo item the person says is wrong or told twice, shown with
    the item's value before it is made; None for no such item."""
    item = next((i for i in memo if i.get("id") == item_id and i["section"] in SECTIONS), None)
    if item is None:
        return None
    return {"field": ITEM + item_id, "old": item_brief(kn, item, lang), "new": None, "remove": True}


def removals(
    kn: Knowledge, memo: list[dict[str, Any]], text: str, lang: str
) -> list[dict[str, Any]]:
    """The rules' reading of a request to delete an item ("경위에 2026-11-23 이거 아직 있어요
    지워주세요"): a word of memo.yaml `remove` and the value of exactly one item as the record
    shows it (a date, an amount, a name); none otherwise (a wrong removal is worse than none)."""
    # only what a sentence asking to remove names ("… 그거 아니에요 … 남편 이름은 박성호에요"
    # offered to delete the husband: legal_set19 R3)
    asking = [
        said
        for said in (" ".join(s.lower().split()) for s in sentences(text))
        if _says(kn.memo.remove, said)
    ]
    if not asking:
        return []
    lowered = " ".join(asking)
    digits = re.sub(r"[,\s]", "", lowered)
    named = [
        item
        for item in memo
        if item["section"] in SECTIONS
        and (
            (item["section"] == "chronology" and item["date"] and str(item["date"]) in lowered)
            or (item["section"] == "money" and f"{item['amount']}원" in digits)
            or (
                item["section"] == "parties"
                and len(item["name"]) >= 2
                and item["name"].lower() in lowered
            )
        )
    ]
    if len(named) != 1:
        return []
    made = item_removal(kn, memo, named[0]["id"], lang)
    return [made] if made else []


def without_fixed(
    told: list[dict[str, Any]], proposed: Iterable[dict[str, Any]], memo: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """A message's items less those holding the new value of a change it proposes of a
    recorded item ("the hospital money was 1,850,000 not 1,800,000": the 1,850,000 is the
    fix of the recorded item, no second item beside it once confirmed; legal_set13 B1 kept
    both)."""
    sections = {ITEM + i["id"]: i["section"] for i in memo if "id" in i}
    brought = {
        (sections.get(fix["field"]), fix["new"])
        for fix in proposed
        if is_item(fix["field"]) and fix.get("new") is not None
    }
    if not brought:
        return told
    return [
        i for i in told if (i["section"], i.get(_VALUE_OF.get(i["section"], ""))) not in brought
    ]


def with_fixes(
    memo: list[dict[str, Any]], proposed: Iterable[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The memo with the confirmed changes of its items made: the new value, confirmed, the
    old one kept beside it (`was`); an item removed stays as `REMOVED`, with what it held, so
    its id is never given again and staff can see what the person struck out."""
    fixes = {c["field"].removeprefix(ITEM): c for c in proposed if is_item(c["field"])}
    out = []
    for item in memo:
        fix = fixes.get(item.get("id", ""))
        if fix is not None and fix.get("remove") and item["section"] in SECTIONS:
            held = {k: v for k, v in item.items() if k != "id"}
            item = {"id": item["id"], "section": REMOVED, "held": held, "confirmed": True}
        elif fix is not None and item["section"] in _VALUE_OF:
            key = _VALUE_OF[item["section"]]
            item = {**item, key: fix["new"], "was": fix["old"], "confirmed": True}
        out.append(item)
    return out


def item_label(kn: Knowledge, memo: list[dict[str, Any]], field: str, lang: str) -> str:
    """How a memo item is named to the person: its section and the words it came from."""
    item = next((i for i in memo if i.get("id") == field.removeprefix(ITEM)), None)
    title = kn.memo.titles["chronology" if item is None else item["section"]].get(lang)
    return f"{title} «{item['quote'][:40]}»" if item else title


def item_brief(kn: Knowledge, item: dict[str, Any], lang: str) -> str:
    """An item in a few words for the person ("갚은 돈 8,000,000원", "2024-06-30")."""
    lex = kn.memo
    section = item["section"]
    if section == "money":
        role = lex.money_roles.get(item["role"])
        what = role.label.get(lang) if role else item.get("what")
        return f"{what} {shown(item['amount'], lang)}" if what else shown(item["amount"], lang)
    if section == "steps":
        step = lex.steps.get(item["body"])
        label = step.label.get(lang) if step else item["body"]
        return f"{label} {item['date']}" if item.get("date") else label
    if section in NOTED:
        kinds = getattr(lex, section)
        return kinds[item["kind"]].get(lang) if item.get("kind") in kinds else ""
    if section == "evidence":
        spec = kn.k2.fields.get("evidence_type")
        option = next((o for o in spec.options if o.value == item["kind"]), None) if spec else None
        return option.label.get(lang) if option else str(item["kind"])
    return str(item.get("date") or item.get("name") or "")


def record_line(item: dict[str, Any], quote_chars: int = QUOTE_CHARS) -> str | None:
    """An item as a model reads the record ("- m3 money: 5000000 lent «…»"); None for one the
    person had removed."""
    if item["section"] not in SECTIONS:
        return None
    value = item.get("amount") or item.get("date") or item.get("name") or item.get("body")
    if item["section"] == "chronology" and not item.get("date"):
        value = "(date not told)"
    kind = item.get("role") or item.get("kind") or ""
    ahead = " (ahead)" if item.get("planned") else ""
    ahead += " (a month)" if item.get("monthly") else ""
    ahead += " (year not said)" if item.get("yearless") else ""
    return f"- {item['id']} {item['section']}: {value or ''} {kind}{ahead} «{item['quote'][:quote_chars]}»"


def shown(value: Any, lang: str) -> str:
    """A memo value as the person reads it (an amount with its unit)."""
    if isinstance(value, int):
        return f"{value:,}원" if lang == "ko" else f"KRW {value:,}"
    return str(value)


def taken_back_fixes(
    memo: list[dict[str, Any]], reading: Reading, told: list[dict[str, Any]], *, quote: str
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Corrections of memo items the rules read: a recorded amount or date taken back ("9월5일에
    받은거 30만원 아니고 50만원이었어요") with one new value of its kind in the message is that
    item's correction, shown old → new (a day without its year keeps the recorded year); the
    new value is then no item of its own. (proposed changes, the message's items left)."""
    proposed: list[dict[str, Any]] = []
    left = list(told)
    for kind, value, written in reading.taken_back:
        section = {"amount": "money", "date": "chronology"}.get(kind)
        if section is None:
            continue
        key = _VALUE_OF[section]
        held = [i for i in memo if i["section"] == section and _holds(i[key], value, kind)]
        fresh = [i for i in left if i["section"] == section and i[key] != value]
        if len(held) != 1 or len(fresh) != 1:
            continue
        new = fresh[0][key]
        old = held[0][key]
        if kind == "date" and not re.search(r"\d{4}|년|year", written.lower()):
            new = str(old)[:4] + str(new)[4:]
        if new != old:
            proposed.append({"field": ITEM + held[0]["id"], "old": old, "new": new, "quote": quote})
            left.remove(fresh[0])
    return proposed, left


def _holds(recorded: Any, said: Any, kind: str) -> bool:
    """Whether a recorded value is the one taken back (a date by its month and day when said
    without a year, or by what it covers)."""
    if kind == "date" and isinstance(recorded, str) and isinstance(said, str):
        return recorded[5:].startswith(said[5:]) if len(said) > 4 else recorded.startswith(said)
    return bool(recorded == said)


def party_fixes(
    memo: list[dict[str, Any]], text: str, named: list[tuple[str, int]]
) -> list[dict[str, Any]]:
    """A party's name taken back ("박정우 아니고 박정훈이에요"): that item's correction."""
    parties = {ITEM + i["id"]: i["name"] for i in memo if i["section"] == "parties"}
    return name_corrections(parties, {key: [] for key in parties}, named, text)
