"""Which words of a message tell something about the person, and which only ask about a topic.

"What is gout?", "통풍이 뭔가요?", "How does metformin work?" or "고혈압은 완치가 되나요?" name a
condition or a medicine without saying the person has it (or is cured of it): storing them
would put a wrong fact in the staff summary. A question that speaks of the person ("I take
metformin, can I exercise?", "메트포르민 먹는데 운동해도 되나요?") tells as well as asks.
"""

from __future__ import annotations

import re
from dataclasses import replace
from functools import cache

from graphs.common.reading import Role
from graphs.common.text import sentences
from graphs.medical import reader
from graphs.medical.slots import SlotExtraction, SlotExtractor, SlotItem, normalise
from knowledge.medical_bands import load_medical_bands
from knowledge.medical_lexicon import load_medical_lexicon

_QUESTION_EN = re.compile(
    r"^\s*(what|what's|whats|how|why|when|where|which|who|is|are|can|could|does|do|should|"
    r"would|will|may)\b",
    re.I,
)
# "되나요", "할까요", "괜찮은가요", "뭐예요" ask; "열이 나요", "땀이 나요", "체중은 60킬로
# 나가요" tell (a noun, its particle, then 나요 / 나가요).
_QUESTION_KO = re.compile(
    r"((?<![이가]\s)(?<![이가])(?<!나)나요|까요|(?:인|건|는|은|던|된|한|픈|운)가요|뭐예요|뭐에요|"
    r"뭔가요|뭐죠|할까|뭐야|뭐지|는지요|는지|어때요|어떤가요|알려\s*주세요|궁금해요|"
    r"궁금합니다)\s*[?？.!~]*\s*$"
)
# Words by which a question speaks of the person (or of the one they care for).
_PERSONAL_EN = re.compile(
    r"\b(i|i'm|im|i've|ive|i'd|my|me|mine|we|our|us|he|she|his|her|him|he's|she's)\b", re.I
)
_PERSONAL_KO = re.compile(
    r"(제가|저는|전\s|저도|저한테|제\s|나는|내가|우리|저희|있어요|있는데|있고|있어서|먹어요|먹고|"
    r"먹는데|먹는|먹었|복용|앓|진단|받았|나왔|재니|쟀|재보니|드시|드세요|드셔|있으신|계신|"
    r"아버지|어머니|엄마|아빠|남편|아내|와이프|아이|아기|딸|아들|할머니|할아버지|"
    # a clause that tells before it asks: "토하는데 어떻게 해요?", "전단계라고 하던데 …?"
    r"는데|던데|인데|은데|했는데|라고|래요|대요)"
)


def is_question(sentence: str) -> bool:
    stripped = sentence.strip()
    return (
        stripped.endswith(("?", "？"))
        or bool(_QUESTION_EN.match(stripped))
        or bool(_QUESTION_KO.search(stripped))
    )


def speaks_of_the_person(sentence: str) -> bool:
    return bool(_PERSONAL_EN.search(sentence) or _PERSONAL_KO.search(sentence))


def split(text: str) -> tuple[str, str]:
    """(what the message tells of the person, its sentences that only ask about a topic)."""
    told, asked = [], []
    for sentence in sentences(text):
        (asked if is_question(sentence) and not speaks_of_the_person(sentence) else told).append(
            sentence
        )
    return "\n".join(told), "\n".join(asked)


def profile_slots(extractor: SlotExtractor, text: str) -> SlotExtraction:
    """What a message gives the profile: the items its Reading holds as facts about the person
    (graphs/medical/reader.py says which role each clause gives an item). A question, a
    supposition or a leave asked for ("Do I need to go on a statin?", "술 마셔도 돼요?"), a
    topic set aside and the set-aside side of a contrast give nothing. A reading inside a
    question ("A1c 7.1 괜찮은 건가요?") and what a question calls the person's own ("his back
    pain") are probably theirs: kept, a reading to be confirmed before it is used."""
    medical = reader.read(extractor, text)
    said = medical.said
    kept = [v.value for v in medical.reading.values if v.role is Role.FACT]
    if _normal_temperature(kept):  # "열은 37.2였어요": the word named what was measured
        kept = [i for i in kept if i.name != "fever"]
    subject = said.subject if any(not i.family for i in kept) else "self"
    if tuple(kept) == said.items and subject == said.subject:
        return said
    return replace(said, items=tuple(kept), subject=subject)


@cache
def _speaker_own() -> re.Pattern[str]:
    cues = load_medical_lexicon().cues.speaker_own
    return re.compile("|".join(f"(?:{c})" for c in cues) or r"(?!x)x", re.I)


def tells_of_speaker(text: str) -> bool:
    """The message says outright that what it tells is the speaker's own ("내가 당뇨가 있어서
    메트포르민 먹거든요"): in a profile kept for someone they care for, not that person's."""
    return bool(_speaker_own().search(normalise(text or "")))


def _normal_temperature(items: list[SlotItem]) -> bool:
    """A temperature read in the message, below where the bands start to call it raised."""
    temps = [i.value for i in items if i.name == "temp" and isinstance(i.value, int | float)]
    if not temps:
        return False
    raised = [
        band.at_least["temp"]
        for measure in load_medical_bands().measures
        for band in measure.bands
        if "temp" in band.at_least
    ]
    return bool(raised) and max(temps) < min(raised)
