"""What a health question is about: the medical concepts it names (with their corpus tags), the
topics it asks about (its focus), what it refers back to when it names nothing, which medicine
"the medicine" means, the person's own context, and the feeling it voices.

Read by classify_intent (and the nodes around it) from the question, the questions asked
before and the profile; nothing here writes state.
"""

from __future__ import annotations

import re
from datetime import datetime
from functools import cache
from typing import Any

from graphs.medical import clauses, memory
from graphs.medical.evidence import tokenize
from graphs.medical.questions import is_question
from graphs.medical.slots import SlotExtractor
from graphs.medical.state import MedicalState
from knowledge.loader import Knowledge

RELATED = ("conditions", "medications", "symptoms", "vitals", "labs")
CARRY_HOURS = 2.0  # a question naming nothing is read with the concepts of one this recent


@cache
def extractor() -> SlotExtractor:
    """The slot extractor (its lexicon is compiled once per process, about a second)."""
    return SlotExtractor()


def concepts(question: str) -> list[str]:
    """The canonical names of the conditions, symptoms, medicines and readings a text names."""
    said = extractor().extract(question) if question else None
    if said is None:
        return []
    return list(dict.fromkeys(i.name for i in said.items if i.slot in RELATED))


# A supposition that asks ("먹어도 돼요?", "먹으면 되나요", "can I if ..."), not one that
# merely qualifies a statement ("잠 못자면.", "if I sleep badly").
_ASKING_SUPPOSITION = re.compile(r"[?？]|(?:돼|되|될|괜찮|나요|까요|죠)\S{0,3}[\s.!~ㅠㅜ]*$")


def asked_part(text: str) -> str:
    """The sentences of a message that ask something, when it also tells other things and the
    asking sentences name what they ask about: "153에 95요. 잠 못자면 머리가 묵직해요. 근데
    혈압약 한알 더 먹어도 돼요?" is a question about the pill, not about sleep. Otherwise the
    whole message ("열이 나요. 어떡해요?" asks about what the statement names)."""
    read = clauses.reader().read(text)
    asking = {
        c.sentence
        for c in read
        if c.kind == "question"
        or (c.kind == "hypothetical" and _ASKING_SUPPOSITION.search(text[c.start : c.end]))
    }
    if not asking or asking == {c.sentence for c in read}:
        return text
    part = " ".join(
        text[
            min(c.start for c in read if c.sentence == n) : max(
                c.end for c in read if c.sentence == n
            )
        ].strip()
        for n in sorted(asking)
    )
    names = concepts(part) or extractor().topics(part)
    return part if names else text


def tags(names: list[str]) -> list[str]:
    """The corpus concept tags of lexicon names: each name, a medicine's class, their aliases."""
    lexicon = extractor().lexicon
    return list(dict.fromkeys(tag for name in names for tag in lexicon.concepts_of(name)))


def medicine_label(name: str, lang: str) -> str:
    """A medicine's (or medicine group's) name in the person's language."""
    lexicon = extractor().lexicon
    for term in (*lexicon.medications, *lexicon.medication_groups):
        if term.name == name:
            return term.ko if lang == "ko" else term.name
    return name


def is_medicine(name: str) -> bool:
    lexicon = extractor().lexicon
    return name in lexicon.medication_index or any(
        g.name == name for g in lexicon.medication_groups
    )


def carried(state: MedicalState, now: datetime, kind: str) -> list[str]:
    """What a question naming nothing refers to, from the questions of the last CARRY_HOURS:
    for a medicine's side effects or timing, the one medicine asked about last (or the
    person's only current one); otherwise the concepts of the question just before."""
    if kind == "medicine":
        candidates = medicine_candidates(state, now)
        return candidates if len(candidates) == 1 else []
    for entry in recent_questions(state, now):
        return list(entry["concepts"])
    return []


def recent_questions(state: MedicalState, now: datetime) -> list[dict[str, Any]]:
    """The questions of the last CARRY_HOURS that named something, latest first."""
    recent = []
    for entry in reversed(state.get("asked") or []):
        if memory._hours(entry["at"], now) > CARRY_HOURS:
            break
        if entry.get("intent") != "red_flag" and entry.get("concepts"):
            recent.append(entry)
    return recent


def medicine_candidates(state: MedicalState, now: datetime) -> list[str]:
    """The medicines "the medicine" may mean: those of the latest question that named any,
    else the person's current ones."""
    for entry in recent_questions(state, now):
        medicines = [c for c in entry["concepts"] if is_medicine(c)]
        if medicines:
            return medicines
    profile = state.get("profile") or memory.new_profile()
    return [i["name"] for i in memory.current_items(profile, now, ("medications",))]


def reading(state: MedicalState, now: datetime) -> tuple[list[str], list[str]]:
    """What a question is about: the concepts it names (or, naming neither a concept nor a
    topic but referring back, what it refers to) and its focus (its topics)."""
    question = state.get("question") or ""
    named = concepts(question)
    focus = extractor().topics(question) if question else []
    if not named and not focus:
        # Korean drops what it refers to ("미리 준비해 둘 만한 게 있나요?"): a question that
        # names nothing is read as a follow-up too, unless it asks about "the medicine".
        kind = extractor().refers_back(question) or ("any" if is_question(question) else None)
        if kind:
            named = carried(state, now, kind)
    return named, focus


def unclear_medicine(state: MedicalState, now: datetime) -> list[str]:
    """The medicines a question about "the medicine" may mean when it cannot be told which
    (several, or [""] for none in sight): the reply asks which. Empty when it is clear or not
    such a question."""
    question = state.get("question") or ""
    if concepts(question) or extractor().refers_back(question) != "medicine":
        return []
    candidates = medicine_candidates(state, now)
    if not candidates and len(tokenize(question)) <= 2:
        return [""]  # "부작용은요?" with no medicine in sight: which one?
    return candidates if len(candidates) > 1 else []


def context_tags(profile: dict[str, Any], now: datetime) -> list[str]:
    """What the person's answers are read with: their current conditions and, from 65, older
    adults' guidance."""
    names = [i["name"] for i in memory.current_items(profile, now, ("conditions",))]
    found = tags(names)
    age = next(
        (i["value"] for i in profile.get("items", []) if i["name"] == "age" and i.get("current")),
        None,
    )
    if isinstance(age, int | float) and age >= 65:
        found.append("older adults")
    return found


# Feelings a health question may carry, answered in a word before the answer. Distress words
# ("답답", "잠을 못", "스트레스") are left out: in health questions they are symptoms.
FEELINGS = ("fear", "anger", "urgency")


def feeling(kn: Knowledge, question: str, lang: str) -> str | None:
    """A brief word for the first feeling the question expresses (worry, frustration, haste)."""
    lowered = question.lower()
    if question and extractor().worries(question):
        return kn.message("med_empathy_fear", lang)
    for kind in FEELINGS:
        words = kn.lexicon.emotions.get(kind, {})
        if any(w in lowered for w in (*words.get("ko", []), *words.get("en", []))):
            return kn.message(f"med_empathy_{kind}", lang)
    return None


# A number that could be a reading (two or three digits, or a pair), not a date, a count, an
# age, an amount or a number with a unit of its own.
_READING_LIKE = re.compile(
    r"(?<![\d.])\d{2,3}(?:\.\d)?(?:\s*/\s*\d{2,3})?(?![\d.])"
    r"(?!\s*(?:년|월|일|시|분|초|살|세|개월|주|번|회|명|원|만|천|층|호|%|kg|cm|mg|ml|years?|"
    r"months?|days?|hours?|minutes?|times|yo\b))",
    re.I,
)
BARE_NUMBER_TOKENS = 6  # a longer message with a number in it is about more than the number


def bare_number(question: str) -> bool:
    """A short message with a number that may be a reading but says not of what ("150
    나왔어요", "it was 180 this morning"): the slot extractor read nothing from it."""
    return (
        bool(_READING_LIKE.search(question))
        and len(tokenize(question)) <= BARE_NUMBER_TOKENS
        and not extractor().extract(question).items
    )
