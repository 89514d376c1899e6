"""When a recorded fact may change: only through a correction of that field, confirmed.

A message is read for every open field (nothing is asked twice), but a value it gives for a
field already recorded is not simply "the latest statement": people mention the date of
another event, the insurer's offer beside the loss, their mother's death beside their
father's. A recorded value changes only when the message corrects that field — it takes the
recorded value back ("4월 아니고 3월"), or names the field with a value and a correction cue
("피해날짜 19일 아니라 20일") or plainly restates the field by its cue ("보증금은 1억 2천이에요")
— and then only once the person has confirmed old → new. Any other differing value is kept
aside for the lawyer, never applied and never announced as a change.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from graphs.common.normalize import find_dates
from graphs.common.normalize.amounts import find_amounts
from graphs.common.reading import Reading
from graphs.common.text import sentences
from knowledge.loader import Knowledge

_YEAR_SAID = re.compile(r"\d{4}|\d{2}\s*년|년도|작년|올해|재작년|지난해|last year|this year")
# Field kinds whose values a taken-back value can point to ("4월 아니고" -> the date that was April).
_KIND_OF_VALUE = {"date": "date", "amount": "amount"}


@dataclass
class Sorted:
    """A message's facts sorted against what is recorded."""

    new: dict[str, Any] = field(default_factory=dict)  # fields not recorded yet: stored
    same: dict[str, Any] = field(default_factory=dict)  # said again with the recorded value
    proposed: list[dict[str, Any]] = field(default_factory=list)  # corrections to confirm
    # another value of a recorded field, read by its kind alone (a police visit's date beside
    # the incident's, a repair cost beside the deposit): no conflict to settle, the message's
    # memo items and the account keep it
    elsewhere: dict[str, Any] = field(default_factory=dict)

    def drop(self, keys: set[str]) -> None:
        """Forget what was read of `keys` (a correction read otherwise settles them)."""
        self.proposed = [c for c in self.proposed if c["field"] not in keys]
        self.elsewhere = {k: v for k, v in self.elsewhere.items() if k not in keys}

    def settle_pairs(self, paired: list[dict[str, Any]]) -> None:
        """Forget what the message's pairs of values settle: their fields, and any other field
        their new value was read into ("the late penalty is 470,000 not 290,000" changes the
        290,000, not the tax assessed: legal_set12 S4)."""
        news = [c["new"] for c in paired]
        taken = {c["field"] for c in self.proposed if any(_same(c["new"], n) for n in news)}
        self.drop({c["field"] for c in paired} | taken)


def unnamed_choices(
    kn: Knowledge, sub_type: str, facts: dict[str, Any], found: dict[str, Any], text: str
) -> dict[str, Any]:
    """`found` without a choice that would change a recorded one the message does not name
    (its option's words, or the field's): "my wife just checked her banking app … 1.5 million,
    not 1 million" changes no other party's type (legal_set16 B4 was offered "family" with the
    amount), where "Su-jin is not family, she's a former friend" names the one recorded."""
    lowered = text.lower()
    kept = dict(found)
    for key, value in found.items():
        old = facts.get(key)
        if key not in kn.k2.fields or old is None or old == value:
            continue
        spec = kn.k2.field(sub_type, key)
        if spec.kind != "choice":
            continue
        words = [w for v, ws in spec.option_words if v == old for w in ws]
        words += [spec.label.ko.lower(), spec.label.en.lower()]
        if not any(w and w in lowered for w in words):
            del kept[key]
    return kept


def _removal_said(kn: Knowledge, text: str) -> bool:
    lowered = " ".join(text.lower().split())
    patterns = kn.memo.remove
    return any(re.search(p, lowered) for p in (*patterns.ko, *patterns.en))


def _without(old: Any, named: Any) -> list[Any] | None:
    """The recorded kinds without those named, when some (not all) of them are named."""
    if not (isinstance(old, list) and isinstance(named, list) and named):
        return None
    if set(named) <= set(old) and set(named) != set(old):
        return [v for v in old if v not in named]
    return None


def removed_options(
    kn: Knowledge, facts: dict[str, Any], found: dict[str, Any], text: str
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A kind recorded among others that the person asks to take out ("피해 내용에 이미 퍼뜨림
    빼주세요", "please remove the receipts"): `found` without it, and the change to confirm, the
    recorded list without the kinds named (legal_set16 A4 was offered the named kind alone)."""
    if not _removal_said(kn, text):
        return found, []
    kept, proposed = dict(found), []
    for key, value in found.items():
        if key not in kn.k2.fields or not isinstance(value, list):
            continue
        old = facts.get(key)
        named = _named_to_take_out(kn, kn.k2.fields[key], value, text)
        left = _without(old, named)
        if left is None and isinstance(old, list) and set(named) < set(value):
            # "시댁갈등은 빼주세요 성격차이만요" (legal_set19 R3, asked twice): the kind named
            # to take out goes, the other one named stays or comes in
            left = [v for v in old if v not in named]
        if left is not None:
            left += [v for v in value if v not in named and v not in left]
        if left is not None and left and left != old:
            proposed.append(change(key, old, left, text) | {"taken_out": True})
            del kept[key]
    return kept, proposed


def _named_to_take_out(kn: Knowledge, spec: Any, value: list[Any], text: str) -> list[Any]:
    """The kinds of `value` named in a sentence that asks to take something out; all of them
    when none is (the field's label named there: "증거 종류에서 빼주세요 … 카톡")."""
    asking = [s.lower() for s in sentences(text) if _removal_said(kn, s)]
    words = dict(spec.option_words)
    named = [
        v for v in value if any(w and w.lower() in s for w in words.get(v, ()) for s in asking)
    ]
    return named or value


def removals_kept(kn: Knowledge, proposed: list[dict[str, Any]], text: str) -> list[dict[str, Any]]:
    """The changes shown, where the message asks to take kinds out: a change to the kinds named
    alone (a field's label and its option, "증거 종류에서 카톡은 지워주세요") keeps the others."""
    if not _removal_said(kn, text):
        return proposed
    out = []
    for p in proposed:
        left = None if p.get("taken_out") else _without(p.get("old"), p.get("new"))
        out.append(p if left is None else {**p, "new": left, "taken_out": True})
    return out


def sort_facts(
    facts: dict[str, Any],
    found: dict[str, Any],
    ex: Reading,
    kinds: dict[str, str],
    *,
    asked: str | None = None,
    text: str = "",
) -> Sorted:
    """Sort `found` (field -> value read from one message) against the recorded `facts`.

    `kinds` gives each field's kind (date, amount, text, ...); `asked` is the field the message
    answers, whose value is the person's answer and never a correction of another field.
    """
    out = Sorted()
    targets = _taken_back_targets(facts, ex, kinds, text)
    for key, value in found.items():
        old = facts.get(key)
        retarget = targets.get(kinds.get(key, ""))
        if retarget is not None and retarget != key and key != asked and key not in ex.cued:
            # "4월 아니고 3월2일" while the end date is asked: the April on record is the
            # start date, so the new value corrects the start date.
            out.proposed.append(change(retarget, facts[retarget], value, text))
            continue
        if key not in facts or old is None:
            out.new[key] = value
        elif _same(old, value):
            out.same[key] = value
        elif isinstance(old, list) and isinstance(value, list) and not ex.correction:
            out.new[key] = value  # more kinds ("카톡도 있어요"): they add up when stored
        elif _corrects(key, old, ex, kinds, targets):
            out.proposed.append(change(key, old, value, text))
        else:
            out.elsewhere[key] = value
    return out


_TAKEN_BACK = r"(?:이|가)?\s*(?:아니고|아니라|말고|아니구|아닌)\S*\s*"
# "500 아니고 600", "19 말고 20": two bare numbers, the first taken back.
_BARE_PAIR = re.compile(
    rf"(?<![\d.,\-/])(\d{{1,3}}(?:,\d{{3}})*|\d+)\s*{_TAKEN_BACK}"
    r"(\d{1,3}(?:,\d{3})*|\d+)(?![\d.,\-/]|\s*(?:일|월|년|살|세|명|개|시|번|회))"
)
_SCALES = (1, 10_000, 1_000_000, 10_000_000, 100_000_000)  # 원, 만, 백만, 천만, 억
# A count or a length in years taken back, as (pattern, field kind, recorded units per number):
# "5 아니고 2요", "5명이 아니라 2명이에요" of a count; "5년 아니고 23년" of months.
_NUMBER_PAIRS = (
    (
        re.compile(rf"(?<![\d.,\-/])(\d{{1,2}})\s*년\s*{_TAKEN_BACK}(\d{{1,2}})\s*년"),
        "duration",
        12,
    ),
    (
        re.compile(
            rf"(?<![\d.,\-/])(\d{{1,3}})\s*(?:명|개|살|세|번|회|곳|군데)?\s*{_TAKEN_BACK}"
            r"(\d{1,3})(?![\d.,\-/]|\s*(?:일|월|년|시|만|천|백|억|원))"
        ),
        "int",
        1,
    ),
)


_MEMO_ITEM = "memo:"  # a change's field naming a memo item (graphs/legal/memo.ITEM)
# What stands between two values of a kind when the first is taken back for the second
# ("3월 5일 아니고 4월 5일", "not 2026-09-20 but 2025-06-03") and when the second is taken back
# for the first ("end of december 2025, not 2026-12-25", "4,500,000 instead of 5,000,000").
_FIRST_TAKEN_BACK = re.compile(rf"\s*{_TAKEN_BACK}|\s*,?\s*but\s*(?:it\s*(?:is|was|'s)\s*)?")
_SECOND_TAKEN_BACK = re.compile(r"\s*,?\s*(?:and\s*)?(?:not|instead of|rather than)\s*")
_NOT_BEFORE = re.compile(r"(?:\bnot|\bisn't|\bwasn't)\s*(?:on\s*|in\s*)?$")


def paired_corrections(
    facts: dict[str, Any],
    kinds: dict[str, str],
    text: str,
    *,
    now: datetime,
    memo: list[dict[str, Any]] = (),  # type: ignore[assignment]
) -> list[dict[str, Any]]:
    """Corrections told as a pair of values, the one taken back beside the one meant ("not
    2026-09-20 but 2025-06-03", "end of december 2025, not 2026-12-25", "5월 3일 아니고 6월
    3일"): the recorded date or amount that is the value taken back, changed to the other (a
    day said without its year keeps the recorded year); else the one memo item that holds it
    ("중도금 1,500만원 아니고 1,800만원"). Read by where the values stand, not by which field the
    words would place them in."""
    lowered = " ".join(text.lower().split())
    proposed: list[dict[str, Any]] = []
    for kind, found in (
        ("date", find_dates(lowered, now=now, allow_future=True)),
        ("amount", find_amounts(lowered)),
    ):
        for first, second in zip(found, found[1:], strict=False):
            between = lowered[first.end : second.start]
            if _FIRST_TAKEN_BACK.fullmatch(between) and (
                "but" not in between or _NOT_BEFORE.search(lowered[: first.start])
            ):
                old, new = first, second
            elif _SECOND_TAKEN_BACK.fullmatch(between):
                old, new = second, first
            else:
                continue
            held = [
                (key, recorded)
                for key, recorded in facts.items()
                if kinds.get(key) == kind and _is_said(recorded, old.value, kind)
            ]
            if not held:
                section, value = ("chronology", "date") if kind == "date" else ("money", "amount")
                held = [
                    (_MEMO_ITEM + i["id"], i[value])
                    for i in memo
                    if i.get("section") == section and _is_said(i.get(value), old.value, kind)
                ]
                held = held if len(held) == 1 else []
            for key, recorded in held[:1]:
                if not _same(recorded, new.value):
                    proposed.append(change(key, recorded, new.value, text))
    return proposed


def field_cues(kn: Knowledge, sub_type: str, facts: Mapping[str, Any]) -> dict[str, list[str]]:
    """The words that tie a value to each recorded field (K2's `cues`)."""
    return {k: kn.k2.field(sub_type, k).cues for k in facts if k in kn.k2.fields}


# Money roles that price or propose something (memo.yaml): a wage, a rent, a deposit, a sum
# offered or demanded — never the total a key amount field holds unless it is that field's own.
PRICED_ROLES = ("wage", "rent", "deposit", "offered", "demanded")


def beside_paired(
    proposed: list[dict[str, Any]],
    paired: list[dict[str, Any]],
    *,
    memo: Sequence[dict[str, Any]] = (),
    cues: Mapping[str, list[str]] | None = None,
) -> list[dict[str, Any]]:
    """The proposed changes without those of memo items that held the value a key field's
    pair took back: "과태료 금액이 16만원이 아니고 20만원이에요 16만원은 빨리내면 깎아준다는거구요"
    corrects the field, and the item «기간안에 내면 16만원» stays what it was. An item told in
    the field's own words (`cues`: «올해 6월 3일에 돌아가셨어요» for the date of death) is of
    that field's event and changes with it (legal_set10 Q4 kept the old date beside the new)."""
    quotes = {_MEMO_ITEM + i["id"]: " ".join(i.get("quote", "").lower().split()) for i in memo}
    # a wage, a rent, an offer or a demand told beside a key field's correction keeps its value
    # (a deposit item is the deposit field's own and changes with it)
    rates = {
        _MEMO_ITEM + i["id"]
        for i in memo
        if i.get("role") in PRICED_ROLES and i.get("role") != "deposit"
    }

    def own(field: str, item: str) -> bool:
        if item in rates:
            return False  # «my salary every month 230만 won» is no unpaid total (legal_set14 B1)
        words = (cues or {}).get(field) or []
        squeezed = quotes.get(item, "").replace(" ", "")
        return any(w.lower().replace(" ", "") in squeezed for w in words)

    olds = [(c["field"], c["old"]) for c in paired if not c["field"].startswith(_MEMO_ITEM)]
    return [
        p
        for p in proposed
        if not (
            p["field"].startswith(_MEMO_ITEM)
            and any(_same(o, p["old"]) and not own(f, p["field"]) for f, o in olds)
        )
    ]


def _is_said(recorded: Any, said: Any, kind: str) -> bool:
    """Whether a recorded value is the one said (a date by its month and day too)."""
    if kind == "date" and isinstance(recorded, str) and isinstance(said, str):
        return recorded == said or (len(said) == len(recorded) == 10 and recorded[5:] == said[5:])
    return bool(recorded == said)


_SAID_RIGHT = re.compile(
    r"\s*(?:이|가|은|는|도|요)?\s*(?:맞|정확|right|correct|is right|is correct)"
)
_DATE_VALUE = re.compile(r"\d{4}(?:-\d{2}){0,2}")


def kept_as_said(
    proposed: list[dict[str, Any]], text: str, *, now: datetime
) -> list[dict[str, Any]]:
    """The proposed changes whose recorded value the message does not say is right: "월 양육비
    80만원 맞아요 960만원은 밀린 전체 금액이에요" confirms the 80만원 and corrects nothing,
    whatever the 960만원 beside it would otherwise be read as."""
    lowered = " ".join(text.lower().split())
    dates = find_dates(lowered, now=now, allow_future=True)
    amounts = find_amounts(lowered)

    def right(old: Any) -> bool:
        if isinstance(old, int) and not isinstance(old, bool):
            found, kind = amounts, "amount"
        elif isinstance(old, str) and _DATE_VALUE.fullmatch(old):
            found, kind = dates, "date"
        else:
            return False
        return any(
            _is_said(old, m.value, kind) and _SAID_RIGHT.match(lowered, m.end) for m in found
        )

    return [p for p in proposed if p.get("remove") or not right(p.get("old"))]


def numbers_taken_back(text: str) -> bool:
    """Whether a message takes a number back for another ("5년 아니고 23년", "3 아니고 2"):
    a correction of a recorded value, never the plain answer to a question of another kind."""
    return any(p.search(text) for p, _, _ in _NUMBER_PAIRS) or bool(_BARE_PAIR.search(text))


def bare_number_corrections(
    facts: dict[str, Any], kinds: dict[str, str], text: str
) -> list[dict[str, Any]]:
    """Corrections of recorded numbers written as bare numbers: an amount in its own unit
    ("500 아니고 600이에요" of 5,000,000원 is 6,000,000원, the unit the recorded one's), a
    count as it was recorded ("5명이 아니라 2명이에요" of 5 children), years of a length of
    time ("5년 아니고 23년" of a 60-month marriage)."""
    proposed = []
    for pattern, kind, unit in _NUMBER_PAIRS:
        for match in pattern.finditer(text):
            old_n, new_n = (int(g) * unit for g in match.groups())
            key = next(
                (k for k, v in facts.items() if kinds.get(k) == kind and v == old_n != new_n),
                None,
            )
            if key is not None:
                proposed.append(change(key, old_n, new_n))
    if proposed:
        return proposed
    for match in _BARE_PAIR.finditer(text):
        old_n, new_n = (int(g.replace(",", "")) for g in match.groups())
        for key, recorded in facts.items():
            if kinds.get(key) != "amount" or not isinstance(recorded, int):
                continue
            scale = next((s for s in _SCALES if old_n * s == recorded), None)
            if scale is not None and new_n * scale != recorded:
                proposed.append(change(key, recorded, new_n * scale))
                break
    return proposed


def name_corrections(
    facts: dict[str, Any],
    labels: dict[str, list[str]],
    named: list[tuple[str, int]],
    text: str,
) -> list[dict[str, Any]]:
    """Corrections of a recorded name or label (`labels`: such a field -> the words that name
    it), from the names the message gives (`named`: (name, where), in order): the recorded name
    taken back ("김민수가 아니고 김민호예요", "not Kim Minsu, Kim Minho") or the field named with
    another name ("상대방은 김민호예요", "빌려 간 사람 이름은 김민호"). The new name is the first
    one after those words (or, taken back last, the one before them); none: no correction."""
    proposed = []
    for key, words in labels.items():
        old = facts.get(key)
        if not isinstance(old, str) or not old.strip():
            continue
        core = old.split()[-1]  # "친구 김민수" is corrected by "김민수 아니고"
        back = re.search(rf"{re.escape(core)}\S*?{_BACK_AFTER}", text) or re.search(
            rf"\bnot\s+{re.escape(core)}", text, re.I
        )
        if back is not None:
            after = [n for n, at in named if at >= back.end() and n not in old]
            before = [n for n, at in named if at < back.start() and n not in old]
            new = after[0] if after else (before[-1] if before else None)
        else:
            said = [
                m.end()
                for word in words
                for m in re.finditer(
                    rf"{re.escape(word)}\s?(?:의\s?)?(?:이름)?\s?(?:은|는|이|가)?\s", text, re.I
                )
            ]
            new = next((n for n, at in named if said and at >= min(said) and n not in old), None)
        if new is not None and new != old:
            proposed.append(change(key, old, new))
    return proposed


def taken_back_field(
    facts: dict[str, Any], ex: Reading, kinds: dict[str, str], kind: str
) -> str | None:
    """The recorded field of `kind` whose value the message takes back ("3월 아니고 4월 5일"
    answering another date question corrects the date that was March), if any."""
    return _taken_back_targets(facts, ex, kinds).get(kind) if ex.correction else None


def change(key: str, old: Any, new: Any, text: str = "") -> dict[str, Any]:
    """A proposed correction of a recorded field. A date corrected without its year ("3월
    아니고 4월 5일") keeps the recorded date's year."""
    if (
        isinstance(old, str)
        and isinstance(new, str)
        and len(old) >= 4
        and len(new) >= 7
        and old[:4].isdigit()
        and new[:4].isdigit()
        and text
        and not _YEAR_SAID.search(text)
    ):
        new = old[:4] + new[4:]
    return {"field": key, "old": old, "new": new}


def same_value(a: Any, b: Any) -> bool:
    """Whether two values of a field are the same (a multi-choice's options in any order)."""
    if isinstance(a, list) and isinstance(b, list):
        return set(a) == set(b)
    return bool(a == b)


def _same(old: Any, new: Any) -> bool:
    if isinstance(old, list) and isinstance(new, list):
        return set(map(str, new)) <= set(map(str, old))  # more kinds add up elsewhere
    return bool(old == new)


def _corrects(
    key: str, old: Any, ex: Reading, kinds: dict[str, str], targets: dict[str, str]
) -> bool:
    """Whether the message corrects field `key`: its old value taken back, or the field named
    by its own cue (a value said of the field itself)."""
    if targets.get(kinds.get(key, "")) == key:
        return True
    if key in ex.cued:
        # another person named beside a role word ("그날 옆에서 본 정우라는 친구", "손해사정사
        # 정민호 과장") is another party, kept in the memo: the recorded one changes only when
        # the message says something was wrong (legal_set14 A1, A3, R1, R6 were each asked to
        # replace the other party with a witness, an adjuster, an app, a smartwatch)
        named = any(v.kind == "name" and v.field == key for v in ex.values)
        return not named or ex.correction
    if kinds.get(key) in ("choice", "multi_choice", "yesno") and ex.correction:
        return True  # "퇴직금은 받았어요, 아까 잘못 말했어요": the field's own words, corrected
    return False


_BACK_AFTER = r"\s?(?:이|가|은|는)?\s?(?:아니고|아니라|아니에요|말고|아닌)"


def _written_back(facts: dict[str, Any], kinds: dict[str, str], text: str) -> dict[str, str]:
    """kind -> the recorded field whose value is written out and taken back as the summary
    shows it ("2010 아니고 2026-09-15", "not 2025-12-03 but 2026-12-03", "5,000,000원 아니고")."""
    found: dict[str, str] = {}
    for key, value in facts.items():
        kind = kinds.get(key)
        if kind not in ("date", "amount") or value is None:
            continue
        shown = [str(value)] if kind == "date" else [f"{value:,}", str(value)]
        for form in shown:
            said = re.escape(form)
            if re.search(rf"{said}(?:원)?{_BACK_AFTER}|\bnot\s+(?:krw\s?)?{said}", text, re.I):
                found.setdefault(kind, key)
    return found


def _taken_back_targets(
    facts: dict[str, Any], ex: Reading, kinds: dict[str, str], text: str = ""
) -> dict[str, str]:
    """kind -> the recorded field whose value the message takes back ("4월 아니고")."""
    targets: dict[str, str] = dict(_written_back(facts, kinds, text)) if text else {}
    for kind, value, written in ex.taken_back:
        kind = _KIND_OF_VALUE.get(kind, kind)
        for key, recorded in facts.items():
            if kinds.get(key) == kind and _matches(recorded, value, written, kind):
                targets.setdefault(kind, key)
    return targets


def _matches(recorded: Any, said: Any, written: str, kind: str) -> bool:
    """Whether a taken-back value is the recorded one: a date said with less precision
    ("4월" for 2026-04-03) matches the date it covers, and one said without its year
    ("3월 아니고" of 2025-03-05) by its month and day."""
    if kind == "date" and isinstance(recorded, str) and isinstance(said, str):
        if not _YEAR_SAID.search(written):
            recorded, said = recorded[5:], said[5:]
            if not said:
                return False
        return recorded.startswith(said) or said.startswith(recorded)
    return bool(recorded == said)
