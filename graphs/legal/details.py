"""Details kept from every message (names, nicknames, platforms, witnesses, police, injuries,
…; lexicon in knowledge/story.yaml), and a counterparty read as a name plus a kind."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from graphs.legal import names
from knowledge.korean import get_kiwi
from knowledge.loader import Knowledge
from knowledge.models import DetailKind, StoryLexicon

QUOTE_CHARS = 60
VALUE_CHARS = 40
DESCRIPTION_CHARS = 30  # a counterparty without a name: the shortest faithful description
_CLAUSE = re.compile(r"[,.;!?\n]|(?:고|는데|지만|면서|어서|아서)\s|\b(?:and|but)\b")
_DIGITS = re.compile(r"\d[\d\- ]{5,}\d")  # phone and account numbers: never kept
_CALLED = re.compile(rf"(?<![가-힣])(?P<name>{names.SURNAME}[가-힣]{{1,2}})\s?(?:씨|님)")
# A bare full name in an answer about the other party: "같은 팀 박민수요", "김영수예요".
_BARE_NAME = re.compile(
    rf"(?<![가-힣])(?P<name>{names.SURNAME}[가-힣]{{2}})(?=요|이요|이에요|예요|이고|이랑|씨|님|[\s,.!?]|$)"
)
# A bare full name in a story, before a particle that takes people ("오민재랑", "김지은한테").
_NAME_WITH = re.compile(
    rf"(?<![가-힣])(?P<name>{names.SURNAME}[가-힣]{{2}})(?=한테|에게|께|이랑|랑(?![가-힣]))"
)
_NOT_KNOWN = re.compile(r"모르|몰라|don't know|do not know|no idea|not sure who")
_ENGLISH_NAME = re.compile(r"\b(?:mr|mrs|ms|miss|dr)\.?\s+(?P<name>[A-Z][a-z]+)", re.IGNORECASE)
_HANDLE = re.compile(r"@[A-Za-z0-9_.]{2,30}")
# A romanised full name: "Park Jun-ho", "Tom Becker" (not a sentence's first words).
_EN_FULL_NAME = re.compile(r"\b([A-Z][a-z]+(?:\s[A-Z][a-z]+(?:-[a-z]+)?){1,2})\b")
_EN_NOT_NAME_START = frozenset("as the my his her this that when then so and but i it".split())
# Calendar words, capitalised as names are: "it was Tuesday Oct 27" and "it's Friday Dec 4"
# named nobody (legal_set18 B2, B4 got parties "Tuesday Oct", "Friday Dec"). A full month name
# may open a name (April Kim), never end one.
_EN_WEEKDAYS = frozenset(
    "monday tuesday wednesday thursday friday saturday sunday mon tue tues wed thu thur thurs fri "
    "sat sun".split()
)
_EN_MONTH_SHORT = frozenset("jan feb mar apr jun jul aug sep sept oct nov dec".split())
_EN_MONTHS = frozenset(
    "january february march april may june july august september october november december".split()
)


def _calendar_words(name: str, after: str = "") -> bool:
    """Whether a capitalised run of words is a day or a month told, not a name: a weekday, or a
    month with a day after it ("Oct 27"); "Mr Lee Jun" is a name."""
    words = name.lower().split()
    if any(w in _EN_WEEKDAYS for w in words):
        return True
    last = words[-1]
    return (last in _EN_MONTH_SHORT or last in _EN_MONTHS) and bool(re.match(r"\s*\d", after))


_ENDINGS = re.compile(
    r"(?:이에요|예요|이요|입니다|인데요|이고요|이고|이랑|한테|에게|이요|요|은|는|이|가)$"
)


@dataclass(frozen=True)
class Detail:
    """One detail of the story: its kind, a short value, and the words it was read from."""

    kind: str
    value: str
    quote: str


class _Compiled:
    def __init__(self, lexicon: StoryLexicon) -> None:
        negations = [*lexicon.negations.ko, *lexicon.negations.en]
        self.negation = re.compile("|".join(f"(?:{p})" for p in negations))
        self.kinds: list[tuple[str, DetailKind, re.Pattern[str] | None, re.Pattern[str] | None]]
        self.kinds = []
        for name, kind in lexicon.kinds.items():
            both = [*kind.ko, *kind.en]
            trigger = re.compile("|".join(f"(?:{p})" for p in both)) if both else None
            also = re.compile("|".join(f"(?:{p})" for p in kind.also)) if kind.also else None
            self.kinds.append((name, kind, trigger, also))
        ends = sorted(lexicon.name_ends, key=len, reverse=True)
        self.name_end = re.compile("|".join(re.escape(e) for e in ends))


_COMPILED: dict[int, tuple[StoryLexicon, _Compiled]] = {}


def _compiled(lexicon: StoryLexicon) -> _Compiled:
    cached = _COMPILED.get(id(lexicon))
    if cached is None or cached[0] is not lexicon:
        cached = _COMPILED[id(lexicon)] = (lexicon, _Compiled(lexicon))
    return cached[1]


def _clauses(text: str) -> list[str]:
    text = " ".join(unicodedata.normalize("NFC", text).split())
    return [c.strip() for c in _CLAUSE.split(text) if c and c.strip()]


def _clean(value: str) -> str:
    """A value without number strings that could identify someone."""
    return " ".join(_DIGITS.sub("", value).split())[:VALUE_CHARS]


# "id" alone before a word: an ID only when the word looks like one ("id minho_88"), for
# "id say" is "I'd say"
_BARE_ID = re.compile(r"id")
_HANDLE_LIKE = re.compile(r"[0-9_@.]")


def _after(c: _Compiled, clause: str, end: int) -> str:
    """The word(s) right after a trigger, up to the first particle or break."""
    rest = clause[end:].lstrip(" :")
    word = rest.split(" ")[0] if rest else ""
    cut = c.name_end.search(word, 1) if len(word) > 1 else None
    return word[: cut.start()] if cut else word


def story_details(text: str, kn: Knowledge) -> list[Detail]:
    """Every detail found in `text`, in text order, without duplicates or number strings."""
    c = _compiled(kn.story)
    found: list[Detail] = []
    seen: set[tuple[str, str]] = set()
    for clause in _clauses(text):
        lowered = clause.lower()
        if c.negation.search(lowered):
            continue
        for name, kind, trigger, also in c.kinds:
            values: list[tuple[str, str]] = []
            if also is not None:
                values += [(m.group(0), m.group(0)) for m in also.finditer(lowered)]
            for m in trigger.finditer(lowered) if trigger is not None else ():
                if kind.value == "after":
                    value = _after(c, clause, m.end())
                    if name != "nickname" and not names.plausible_name(names.bare(value)):
                        continue  # "명의는 요", "account holder is that": no name
                    if name == "nickname" and (
                        len(value) < 2
                        or value.lower() in names.NOT_NAMES_EN
                        or _BARE_ID.fullmatch(lowered[m.start() : m.end()].strip())
                        and not _HANDLE_LIKE.search(value)
                    ):
                        continue  # "id say 8 million is fair" is "I'd say" (legal_set15 B4)
                elif kind.value == "fixed":
                    value = kind.fixed.ko if _is_korean(clause) else kind.fixed.en
                else:
                    value = clause[m.start() : m.end()]
                values.append((value, clause))
            for value, quote in values:
                value = _clean(value)
                if value and (name, value) not in seen:
                    seen.add((name, value))
                    found.append(Detail(name, value, _clean(quote)[:QUOTE_CHARS] or value))
    return found


def _is_korean(text: str) -> bool:
    return any("가" <= ch <= "힣" for ch in text)


def detail_line(detail: Detail, lang: str, kn: Knowledge) -> str:
    """'목격자: 목격자 있음' / 'Witness: …' for the staff summary."""
    kind = kn.story.kinds.get(detail.kind)
    label = kind.label.get(lang) if kind else detail.kind
    return f"{label}: {detail.value}"


def split_counterparty(text: str, kn: Knowledge) -> tuple[str | None, str | None]:
    """(name, kind) of a counterparty: "집주인은 이영희씨요 개인이에요" → ("이영희", "landlord").

    The kind is a counterparty_type option matched by its synonyms in the clause that names or
    describes the party (None when not said there: in "바로 윗집 1303호요. … 50대 남자분이랑
    가족이 살아요" the family is the neighbour's); with no recognisable name, a short
    description of at most DESCRIPTION_CHARS characters.
    """
    text = " ".join(unicodedata.normalize("NFC", text).split())
    lowered = text.lower()

    def named(name: str | None, at: int | None = None) -> tuple[str | None, str | None]:
        if name is None:
            return None, _party_kind(kn, lowered)
        where = text.find(name) if at is None else at
        return name, _party_kind(kn, _clause_at(lowered, max(where, 0)))

    given = names.party_name(text)  # "김과장이라는 사람", "이름은 박지훈", "his name is Tom"
    if given is not None and not _is_kind_word(kn, given):
        return named(given)
    if _NOT_KNOWN.search(lowered) and not _CALLED.search(text):
        # "윗집 1303호 남자, 이름은 몰라요": the description is what there is
        described = _description(text, skip=_NOT_KNOWN)
        if described is None:
            return None, _party_kind(kn, lowered) or "unknown"
        return named(described)
    for pattern, group in (
        (names.NAMED_RELATION, "name"),
        (_CALLED, "name"),
        (_ENGLISH_NAME, "name"),
    ):
        m = pattern.search(text)
        if m:
            name = re.sub(r"\s?(씨|님)$", "", m.group(group)).strip()
            bare_name = name if pattern is _ENGLISH_NAME else names.bare(name)
            if (
                name
                and not _is_kind_word(kn, name)
                and (names.plausible_name(bare_name) or name.endswith("씨"))
                and name[:2] not in names.NOT_A_NAME_START
            ):
                return named(m.group(0).strip() if pattern is _ENGLISH_NAME else name, m.start())
    for m in _BARE_NAME.finditer(text):
        name = m.group("name")
        if (
            name[:2] not in names.NOT_A_NAME_START
            and not _is_kind_word(kn, name)
            and names.plausible_name(name)
        ):
            return named(name, m.start())
    m = _HANDLE.search(text) or names.COMPANY.search(text)
    if m:
        found = m.group("name") if "name" in m.groupdict() else m.group(0)
        if found.startswith("@") or names.no_endings(names.bare(found)):
            return named(found, m.start())  # not "주식회사였던거"
    m = _EN_FULL_NAME.search(text)
    if m and m.group(1).split()[0].lower() not in _EN_NOT_NAME_START:
        if not _calendar_words(m.group(1), text[m.end(1) :]):
            return named(m.group(1), m.start())
    return named(_description(text))


def _clause_at(text: str, at: int) -> str:
    """The clause of `text` (split as `_clauses` splits) that holds position `at`."""
    start = 0
    for m in _CLAUSE.finditer(text):
        if m.start() >= at:
            return text[start : m.start()]
        start = m.end()
    return text[start:]


def people(text: str, kn: Knowledge) -> list[tuple[str, int]]:
    """Every person or organisation the text names outright, with where the name stands, in
    text order: a name after a relation word ("친구 김민수한테"), one given as such ("김과장이라는
    사람", "his name is Tom"), 김씨 / Mr Park, a bare full name ("같은 팀 박민수요"), a company
    ("(주)한빛"), an @handle, a romanised full name. Never a kind word ("집주인") or a fragment."""
    text = " ".join(unicodedata.normalize("NFC", text).split())
    found: dict[str, int] = {}
    tokens = get_kiwi().tokenize(text) if re.search(r"[가-힣]", text) else []

    def keep(name: str, at: int, *, given: bool = False) -> None:
        """`given`: named as a name ("이름은 …", "…씨"), not only standing where one may."""
        name = name.strip()
        if not name or _is_kind_word(kn, name) or name[:2] in names.NOT_A_NAME_START:
            return
        if not given and re.search(r"[가-힣]", name):
            if names.dictionary_words(name):
                return  # "고지서", "2천만원", "주차위반이라고": words, not a name
            if not _name_in_context(name, at, text, tokens):
                return
        found.setdefault(name, at)

    for name, how in names.named(text):
        keep(name, max(text.find(name), 0), given=how != "called")
    for m in names.NAMED_RELATION.finditer(text):
        name = re.sub(r"\s?(씨|님)$", "", m.group("name")).strip()
        if names.plausible_name(names.bare(name)) or m.group("name").endswith("씨"):
            keep(names.bare(name), m.start("name"), given=m.group("name").endswith("씨"))
    for m in _CALLED.finditer(text):
        if names.plausible_name(m.group("name")) and _name_like(m.group("name")):
            keep(m.group("name"), m.start("name"), given=True)
    for m in [*_BARE_NAME.finditer(text), *_NAME_WITH.finditer(text)]:
        if names.plausible_name(m.group("name")) and _name_like(m.group("name")):
            keep(m.group("name"), m.start("name"))
    for m in _ENGLISH_NAME.finditer(text):
        keep(m.group(0), m.start(), given=True)
    for m in _HANDLE.finditer(text):
        keep(m.group(0), m.start(), given=True)
    for m in names.COMPANY.finditer(text):
        if m.group("name") and names.no_endings(names.bare(m.group("name"))):
            keep(m.group("name"), m.start(), given=True)
    for m in _EN_FULL_NAME.finditer(text):
        if (
            m.start() > 0
            and m.group(1).split()[0].lower() not in _EN_NOT_NAME_START
            and not _calendar_words(m.group(1), text[m.end(1) :])
        ):
            keep(m.group(1), m.start())
    # A name inside a longer one ("김민" of "김민수", "Park" of "Mr Park") is the same person.
    kept = [n for n in found if not any(n != o and n in o for o in found)]
    return sorted(((n, found[n]) for n in kept), key=lambda item: item[1])


# A place's own unit after a place ("마포구", "합정동", "김포시"): no party.
_PLACE_UNITS = frozenset("시 군 구 동 읍 면".split())


def _name_in_context(name: str, at: int, text: str, tokens: list) -> bool:
    """Whether a Korean word found bare where a name may stand still reads as one among the
    words around it (legal_set9): not after a number ("3장이랑"), not words Kiwi knows that the
    word alone hid ("연장비" is 연장 + 비 in "연장비 20만원"), not a verb ("애 키우라고"), not a
    place ("마포구", "서울서 일해서")."""
    if at > 0 and text[at - 1].isdigit():
        return False
    end = at + len(name)
    inside = [t for t in tokens if t.start < end and t.start + t.len > at]
    if not inside or inside[0].start != at:
        return True  # Kiwi split the text elsewhere: nothing to tell
    if any(t.tag.startswith(("V", "E", "J", "XS")) for t in inside):
        return False
    if names.dictionary_words(" ".join(t.form for t in inside)):
        return False
    first = inside[0]
    if first.tag == "NNP" and len(first.form) >= 2 and name[len(first.form) :] == "서":
        return False  # "서울서 일해서": Kiwi reads the particle 서 after a place as a noun
    unit = name[-1]
    if len(inside) == 1 and first.tag == "NNP" and unit in _PLACE_UNITS and len(name) >= 3:
        stem = get_kiwi().tokenize(name[:-1])
        return not (len(stem) == 1 and stem[0].tag == "NNP")
    return True


# What Kiwi sees in a word that is no name standing alone in a story: a verb or its ending
# ("하려고", "하는데"), a suffix ("양육권"), a particle ("기록도", "명이에").
_NOT_NAME_TAGS = ("VV", "VA", "VX", "EC", "EF", "EP", "XSN", "XSV", "XSA", "JX", "JK", "JC")


def _name_like(word: str) -> bool:
    """Whether a surname-and-given-name word found bare in a story reads as a name: Kiwi finds
    no verb, ending, suffix or particle in it, unless it sees the surname alone first (it splits
    "김지은" into 김 + 짓 + 은)."""
    tokens = get_kiwi().tokenize(word)
    if tokens and tokens[0].tag == "NNP" and len(tokens[0].form) == 1:
        return True
    return not any(t.tag.startswith(_NOT_NAME_TAGS) for t in tokens)


def _description(text: str, skip: re.Pattern[str] | None = None) -> str | None:
    """The first clause as a short description of the party ("윗집 1303호 남자"), unless it is
    a fragment (a particle, an ending: "이에요") or longer than DESCRIPTION_CHARS."""
    for clause in _clauses(text):
        if skip is not None and skip.search(clause.lower()):
            continue
        short = _ENDINGS.sub("", clause).strip()
        if not short or len(short) > DESCRIPTION_CHARS:
            return None
        if " " not in short and not names.plausible_name(short):
            return None  # one word that cannot be a name ("이에요", "that") describes nobody
        if _is_korean(short) and not names.ends_in_noun(short):
            return None  # "아마 동네에서 본 것 같아" says something; it describes nobody
        return short
    return None


def _party_kind(kn: Knowledge, lowered: str) -> str | None:
    """The counterparty_type option whose longest synonym appears in the text."""
    spec = kn.k2.fields.get("counterparty_type")
    if spec is None:
        return None
    best: tuple[int, str] | None = None
    for option in spec.options:
        for word in option.synonyms:
            if word.lower() in lowered and (best is None or len(word) > best[0]):
                best = (len(word), option.value)
    return best[1] if best else None


def _is_kind_word(kn: Knowledge, word: str) -> bool:
    spec = kn.k2.fields.get("counterparty_type")
    return bool(spec) and any(
        word == w or (len(w) >= 2 and word.startswith(w)) for o in spec.options for w in o.synonyms
    )
