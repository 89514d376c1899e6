"""The medical assistant's nodes: each reads the state and returns its updates.

extract_slots → store_memory → (reconfirm | check_similarity) → classify_intent → retrieve →
assemble_context → generate_answer → refine → quality_check → (retrieve | store_response).
Texts come from K0 (`med_*`); facts from the lexicon (slots) and the corpus (answers); what a
question is about (its concepts, focus and referent) from `graphs/medical/about.py`.
"""

from __future__ import annotations

import logging
import re
from collections import OrderedDict
from dataclasses import asdict
from datetime import datetime
from typing import Any

import numpy as np
from langgraph.runtime import Runtime

from graphs.common.context import Context
from graphs.common.intents import read_intent
from graphs.common.normalize import parse_yes_no
from graphs.medical import (
    about,
    clauses,
    corrections,
    interactions,
    leads,
    llm_judge,
    llm_reader,
    llm_writer,
    memory,
    questions,
    rejection,
    render,
    steering,
)
from graphs.medical import evidence as ev
from graphs.medical.about import extractor
from graphs.medical.bridge import bridge_query, english_terms
from graphs.medical.evidence import tokenize
from graphs.medical.fit import asked_of, person_of
from graphs.medical.slots import SlotExtraction, SlotItem
from graphs.medical.state import MedicalState
from knowledge.loader import Knowledge
from knowledge.medical_bands import load_medical_bands, place
from knowledge.medical_corpus import MedicalCorpus, load_medical_corpus
from knowledge.medical_interactions import Interaction, load_interactions

log = logging.getLogger(__name__)

CACHE_SIMILARITY = 0.85  # a new question this close to a cached one may reuse its answer
CACHE_KEPT = 20  # verified answers kept per person
ASKED_KEPT = 50
RETURN_GAP_HOURS = 6.0  # a message after this long is a return: stale items are asked about
# `message["urgent"]` holds the answer back: on the message that raised a 119-now alert
# (RED_FLAG), and on a question asked while help comes (WHILE_WAITING), which the caller answers
# with first aid. Either way the message is still read into the profile.
RED_FLAG, WHILE_WAITING = "red_flag", "while_waiting"
CONTEXT_BUDGET = 1200  # tokens (≈ words, or Korean syllables / 2) of profile and passages
BUTTON = "m:"  # the data of every medical button starts so
YES, NO = f"{BUTTON}yes", f"{BUTTON}no"
# Intents answered without retrieval: a hello or thanks, an impossible reading and nothing else
# (its refusal is the reply), or "which one?" when a question could mean several medicines.
NO_LOOKUP = ("greeting", "rejected_reading", "clarify")


def corpus() -> MedicalCorpus:
    return load_medical_corpus()


def _extraction(data: dict[str, Any]) -> SlotExtraction:
    return SlotExtraction(
        items=tuple(
            SlotItem(
                **{
                    **i,
                    "context": tuple(i.get("context", ())),
                    "details": tuple(i.get("details", ())),
                }
            )
            for i in data.get("items", [])
        ),
        subject=data.get("subject", "self"),
        rejected=tuple(tuple(r) for r in data.get("rejected", [])),  # type: ignore[misc]
        unknown_medicines=tuple(data.get("unknown_medicines", [])),
    )


def _verdict(kn: Knowledge, message: dict[str, Any], lang: str) -> bool | None:
    """Yes / no to what is pending: its button, or a typed yes or no; None otherwise."""
    if message.get("kind") == "choice":
        return {YES: True, NO: False}.get(message.get("data", ""))
    text = (message.get("text") or "").strip(" .!~").lower()
    if not text or len(text) > 40:
        return None
    return parse_yes_no(text, yes=kn.lexicon.yes.get(lang, []), no=kn.lexicon.no.get(lang, []))


# --- the nodes -------------------------------------------------------------------------------


async def extract_slots(state: MedicalState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Read the message: an answer to what is pending, and the six slots of what it says."""
    ctx = runtime.context
    kn, lang, now = ctx.knowledge, ctx.lang, ctx.now
    message = state.get("message") or {}
    profile = state.get("profile") or memory.new_profile()
    pending, deferred = state.get("pending"), state.get("deferred")
    text = (message.get("text") or "").strip() if message.get("kind") == "text" else ""
    notes: list[str] = []
    # A message that raised a red flag, or asked while help comes, is recorded, not answered:
    # what to do now is the caller's reply.
    question = "" if message.get("urgent") else text
    if pending:
        verdict = _verdict(kn, message, lang)
        if verdict is not None:
            if pending["kind"] == "reconfirm":
                profile = memory.settle(profile, pending["key"], verdict, now)
                notes.append(
                    kn.message("med_still_noted" if verdict else "med_no_longer_noted", lang)
                )
                question = deferred or ""
            else:
                profile = _confirm_reading(profile, pending["key"], verdict)
                notes.append(kn.message("med_confirmed" if verdict else "med_not_recorded", lang))
                question = ""
            text = "" if len(text) <= 12 else text  # a bare "네" says nothing more
        elif pending["kind"] == "reconfirm":  # not answered: asked once, not used, not asked again
            profile = memory.settle(profile, pending["key"], None, now)
        pending, deferred = None, None
    said = questions.profile_slots(extractor(), text)
    if ctx.llm is not None and text and not message.get("urgent"):
        # LLM mode: the model reads too, the rules check it (never on a red flag's message:
        # what to do now goes out without waiting for a model)
        said = await llm_reader.read(ctx, extractor(), text, said)
    said, withdrawn = corrections.correct(extractor(), profile, text, said)
    if withdrawn:
        profile = memory.withdraw(profile, withdrawn)
        notes.append(kn.message("med_correction_withdrawn", lang))
    retried = rejection.retry(state, question, said) if question else None
    if retried is not None:  # "수면무호흡 아니고요": the answer's topic set aside, not a denial
        said = rejection.without_topics_set_aside(said, text)
    return {
        "profile": profile,
        "pending": pending,
        "deferred": deferred,
        # the sentences that ask, when the message also tells (graphs/medical/about.py)
        "question": about.asked_part(retried.question if retried else question),
        "excluded": retried.excluded if retried else rejection.still_excluded(state, question),
        "notes": notes,
        "extraction": {
            "items": [asdict(i) for i in said.items],
            "subject": said.subject,
            "rejected": [list(r) for r in said.rejected],
            "unknown_medicines": list(said.unknown_medicines),
        },
        "confirm": None,
        "concepts": [],
        "focus": [],
        "clarify": None,
        "tags": [],
        "context_tags": [],
        "passages": [],
        "retrievals": 0,
        "previous_quality": None,
        "quality": 0.0,
        "uncertainty": 1.0,
        "consistency": 1.0,
        "answer": None,
        "cached": False,
        "query": "",
        "outbox": [],
        "reconfirm": None,
        "person": {},
        "asked_about": [],
        "warnings": [],
        "led": {},
    }


def _confirm_reading(profile: dict[str, Any], key: str, yes: bool) -> dict[str, Any]:
    """An unsure reading confirmed (kept, usable) or denied (removed, with its pair)."""
    keys = {key} | {key.removesuffix(a) + b for a, b in memory.PAIRS.items() if key.endswith(a)}
    items = []
    for item in profile.get("items", []):
        if item["key"] in keys:
            if not yes:
                continue
            item = dict(item, confirmed=True)
        items.append(item)
    return {**profile, "items": items}


async def store_memory(state: MedicalState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Store what the message said in the profile (consolidated), say back what was noted, and
    decide what to ask: an unsure reading to confirm, or a stale item to reconfirm."""
    ctx = runtime.context
    kn, lang, now = ctx.knowledge, ctx.lang, ctx.now
    said = _extraction(state.get("extraction") or {})
    profile = state.get("profile") or memory.new_profile()
    stale = None
    last_seen = state.get("last_seen")
    if last_seen and memory._hours(last_seen, now) >= RETURN_GAP_HOURS and not state.get("pending"):
        stale = memory.to_reconfirm(profile, now)  # before this message refreshes anything
    notes = list(state.get("notes") or [])
    if memory.someone_else(profile, said) and said.items:
        # Two people in one profile would put one person's readings in the other's summary:
        # what is said of another person is answered, not stored.
        held = profile.get("subject", "self")
        current = (
            render.relation_label(held, lang) if held != "self" else kn.message("med_self", lang)
        )
        other = render.relation_label(said.subject, lang)
        note = kn.message("med_other_person", lang, current=current, other=other)
        if state.get("question"):  # an urgent message is not answered: no promise then
            note += " " + kn.message("med_still_answering", lang)
        notes.append(note)
        said = SlotExtraction((), profile.get("subject", "self"), said.rejected, ())
    elif (
        profile.get("subject", "self") != "self"
        and said.subject == "self"
        and said.items
        and questions.tells_of_speaker((state.get("message") or {}).get("text") or "")
    ):  # the carer's own ("내가 당뇨가 있어서"): not the cared-for person's
        current = render.relation_label(profile["subject"], lang)
        notes.append(kn.message("med_speaker_not_stored", lang, current=current))
        said = SlotExtraction((), profile["subject"], said.rejected, ())
    profile, changed = memory.remember(
        profile, said, at=now, input_id=(state.get("message") or {}).get("id")
    )
    words = (state.get("message") or {}).get("text") or ""  # a feeling told beside the question
    feeling = about.feeling(kn, words, lang) if state.get("question") else None
    if feeling:
        notes.insert(0, feeling)
    shown = [
        i for i in changed if not (i["name"] in memory.PAIRS.values() and i["slot"] == "vitals")
    ]
    sure = [i for i in shown if not i["unsure"]]
    if sure:
        items = ", ".join(dict.fromkeys(render.said_text(i, profile, lang) for i in sure))
        if said.subject != "self":
            who = render.relation_label(said.subject, lang)
            notes.append(kn.message("med_recorded_for", lang, who=who, items=items))
        else:
            notes.append(kn.message("med_recorded", lang, items=items))
    for key, _reason in said.rejected:
        notes.append(kn.message("med_rejected", lang, what=render.measure_label(key, lang)))
    for name in said.unknown_medicines[:2]:
        notes.append(kn.message("med_unknown_medicine", lang, name=name))
    confirm = None
    pending = state.get("pending")
    unsure = [i for i in shown if i["unsure"]]
    if unsure:
        item = unsure[0]
        what = (
            render.said_text(item, profile, lang).rsplit(" ", 1)[0]
            if item["slot"] in ("vitals", "labs")
            else render.label(item, lang)
        )
        value = memory.display_value(item, profile) if item["slot"] in ("vitals", "labs") else ""
        confirm = [
            {
                "text": (
                    kn.message("med_confirm_unsure", lang, what=what, value=value)
                    if value  # a reading; a medicine or symptom has no value to show
                    else kn.message("med_confirm_unsure_item", lang, what=what)
                ).replace("  ", " "),
                "choices": [
                    {"label": kn.message("btn_med_yes", lang), "data": YES},
                    {"label": kn.message("btn_med_no", lang), "data": NO},
                ],
            }
        ]
        pending = {"kind": "confirm", "key": item["key"]}
    reconfirm = None
    if stale is not None and not unsure:
        refreshed = next((i for i in profile["items"] if i["key"] == stale["key"]), None)
        if refreshed is not None and memory.freshness(refreshed, now) < memory.FRESH_FLOOR:
            reconfirm = stale["key"]
    return {
        "profile": profile,
        "notes": notes,
        "confirm": confirm,
        "pending": pending,
        "reconfirm": reconfirm,
    }


async def reconfirm(state: MedicalState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Ask once, briefly, whether a stale item still holds; the question waits for the answer."""
    ctx = runtime.context
    kn, lang = ctx.knowledge, ctx.lang
    profile = state["profile"]
    item = next(i for i in profile["items"] if i["key"] == state["reconfirm"])
    name = (
        render.label(item, lang)
        if item["slot"] not in ("vitals", "labs")
        else render.said_text(item, profile, lang).rsplit(" ", 1)[0]
    )
    text = kn.message(
        f"med_reconfirm_{item['slot']}",
        lang,
        name=name,
        value=memory.display_value(item, profile),
    )
    ask = {
        "text": text,
        "choices": [
            {"label": kn.message("btn_med_still", lang), "data": YES},
            {"label": kn.message("btn_med_not_now", lang), "data": NO},
        ],
    }
    log.info("reconfirming a %s item before answering", item["slot"])
    return {
        "pending": {"kind": "reconfirm", "key": item["key"]},
        "deferred": state.get("question") or None,
        "confirm": [ask],
    }


def _says_any(lowered: str, words: tuple[str, ...] | list[str]) -> bool:
    """Whether a lower-cased text holds any of the words: Korean ones anywhere (they take
    endings: "안녕하세요"), English ones as whole words ("hi" is not the hi of "this")."""
    for word in words:
        if word.isascii():
            if re.search(rf"\b{re.escape(word)}\b", lowered):
                return True
        elif word in lowered:
            return True
    return False


def _trivial(text: str) -> bool:
    """Nothing to look up: empty, a word or two ("네", "ok"), or no searchable term."""
    stripped = text.strip()
    return not stripped or (len(stripped) <= 6 and "?" not in stripped) or not tokenize(stripped)


async def check_similarity(state: MedicalState, runtime: Runtime[Context]) -> dict[str, Any]:
    """The response cache: a question close to an earlier verified answer (vector similarity ≥
    0.85) whose profile items stand as they did reuses it."""
    ctx = runtime.context
    question = state.get("question") or ""
    if _trivial(question) or ctx.kb is None:
        return {"qvec": None}
    vectors = ctx.kb.embed([question])
    if not vectors:
        return {"qvec": None}
    vec = np.asarray(vectors[0], dtype=np.float32)
    profile = state.get("profile") or memory.new_profile()
    best, best_sim = None, 0.0
    # The same words may ask about something else: "its side effects?" after another medicine.
    subject = sorted(about.reading(state, ctx.now)[0])
    for entry in state.get("cache") or []:
        if entry["lang"] != ctx.lang or sorted(entry.get("concepts") or []) != subject:
            continue
        if set(entry.get("entries") or []) & set(state.get("excluded") or []):
            continue  # the answer the person said missed is not given again
        sim = float(ev.cosine(vec.tolist(), _vector(entry["vec"]).tolist()))
        if sim >= CACHE_SIMILARITY and sim > best_sim:
            if _fingerprint(profile, entry["used_keys"], ctx.now) == entry["fp"]:
                best, best_sim = entry, sim
    packed = vec.astype(np.float16).tobytes()
    if best is None:
        return {"qvec": packed}
    log.info("answer cache hit (similarity %.2f)", best_sim)
    answer = {
        "lines": [ctx.knowledge.message("med_cached", ctx.lang), *best["lines"]],
        "sources": best["sources"],
        "used_keys": best["used_keys"],
        "answered": True,
        "entries": best.get("entries") or [],
    }
    return {"qvec": packed, "answer": answer, "cached": True, "uncertainty": best["uncertainty"]}


def _fingerprint(profile: dict[str, Any], used: list[str], now: datetime) -> str:
    """The cache key's profile part: the items the answer used and every current condition and
    medicine (what an answer is personalised by), as they stand now. A new diagnosis or
    medicine misses the cache even where the old answer did not use it."""
    basis = {i["key"] for i in memory.current_items(profile, now, ("conditions", "medications"))}
    return memory.fingerprint(profile, sorted(basis | set(used)), now)


def _vector(packed: bytes) -> np.ndarray:
    return np.frombuffer(packed, dtype=np.float16).astype(np.float32)


async def classify_intent(state: MedicalState, runtime: Runtime[Context]) -> dict[str, Any]:
    """What the question is about (`about.reading`), and greeting / clarify (which medicine,
    which measure) / simple / moderate / complex by its concepts; sets k for retrieval
    (3 / 8 / 15) and the quality threshold (0.4 / 0.55 / 0.7)."""
    ctx = runtime.context
    kn = ctx.knowledge
    question = state.get("question") or ""
    concepts, focus = about.reading(state, ctx.now)
    lowered = question.lower()
    greeting_words = [*kn.lexicon.greetings.get("ko", []), *kn.lexicon.greetings.get("en", [])]
    thanks = ("감사", "고마", "thank", "thanks")
    if (
        not about.concepts(question)
        and not focus
        and (
            _trivial(question)
            or read_intent(question, kn).kind == "small_talk"
            or (len(tokenize(question)) <= 4 and _says_any(lowered, (*greeting_words, *thanks)))
        )
    ):
        return {"intent": "greeting", "concepts": [], "k": 0, "threshold": 0.0}
    profile = state.get("profile") or memory.new_profile()
    said = state.get("extraction") or {}
    if not concepts and not focus and said.get("rejected") and not said.get("items"):
        # an impossible reading and nothing else ("체온 60도예요"): its refusal is the reply
        return {"intent": "rejected_reading", "concepts": [], "k": 0, "threshold": 0.0}
    if not concepts and about.unclear_medicine(state, ctx.now):
        return {"intent": "clarify", "clarify": "medicine", "concepts": [], "k": 0}
    tags = list(dict.fromkeys([*about.tags(concepts), *focus]))
    person = person_of(state, ctx.now)
    asked = asked_of(question, tags)
    # what leads and what touches an interaction is read in the whole message ("인슐린 맞는데
    # 저혈당 와서 응급실 다녀왔어요. 저녁 인슐린 맞아도 돼요?"), the answer on what it asks
    told = (state.get("message") or {}).get("text") or ""
    told = told if question and question in told else question
    led = leads.led_entries(told, asked, person)  # "when should I call 119?" names no reading
    if not concepts and not focus and not led and about.bare_number(question):
        return {"intent": "clarify", "clarify": "measure", "concepts": [], "k": 0}
    intent = ev.complexity(question, concepts)
    warned = interactions.touched(told, asked, person)
    return {
        "intent": intent,
        "concepts": concepts,
        "focus": focus,
        "tags": tags,
        "person": steering.person_state(person),
        "asked_about": sorted(asked),
        "warnings": [rule.id for rule in warned],
        "led": steering.floors(led),
        "context_tags": about.context_tags(profile, ctx.now),
        "k": ev.K_BY_INTENT[intent],
        "threshold": ev.QUALITY_THRESHOLD[intent],
    }


def _rewrite(question: str, concepts: list[str], profile: dict[str, Any], now: datetime) -> str:
    """The retry's query: the question's concepts in English and Korean, and the profile's
    current conditions, without the person's filler words."""
    terms = list(concepts) or english_terms(question, extractor())
    context = [i["name"] for i in memory.current_items(profile, now, ("conditions",))][:2]
    words = [w for w in tokenize(question) if len(w) > 1][:8]
    return " ".join(dict.fromkeys([*terms, *context, *words]))


async def retrieve(state: MedicalState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Hybrid retrieval over every medical collection; the duplicate guard keeps only passages
    that add something."""
    ctx = runtime.context
    kb = ctx.kb
    query = state.get("query") or _first_query(state, ctx.now)
    taken = [ev.Passage.from_state(p) for p in state.get("passages") or []]
    found: list[ev.Passage] = []
    if kb is not None:
        collections = kb.medical_collections()
        if collections:
            # more than k: the entries that do not fit the person are dropped after the search
            k = (state.get("k") or 8) + steering.UNFIT_MARGIN
            hits = kb.search(query, k=k, collections=collections)
            found = ev.passages_from(
                hits,
                corpus(),
                ctx.lang,
                state.get("tags") or [],
                state.get("focus") or [],
                state.get("context_tags") or [],
            )
    found = steering.steer(
        found,
        corpus(),
        ctx.lang,
        floor=state.get("led") or {},
        excluded=[
            *(state.get("excluded") or []),
            *steering.warned_entries([r.entry for r in _warned(state) if r.entry]),
        ],
        person=steering.person_from(state.get("person")),
        asked=frozenset(state.get("asked_about") or ()),
    )
    fresh = ev.new_only(taken, found)
    merged = sorted(taken + fresh, key=lambda p: (-p.relevance, -p.fused))
    return {
        "passages": [p.as_state() for p in merged],
        "retrievals": (state.get("retrievals") or 0) + 1,
        # a round after the first is judged by what it adds to the quality before it
        "previous_quality": state.get("quality") if state.get("retrievals") else None,
        "query": query,
        "stalled": not fresh,
    }


def _first_query(state: MedicalState, now: datetime) -> str:
    """The question with the English names of its medical terms and topics (Korean to English
    documents) and of the concepts carried from the question before; a question naming no
    medical concept ("운동은 어떤 게 안전한가요?") is read in the light of the person's current
    conditions."""
    question = state.get("question") or ""
    query = bridge_query(question, extractor())
    named = set(about.concepts(question))
    readings = {r.key for m in extractor().lexicon.measures for r in m.readings}
    carried = [c for c in state.get("concepts") or [] if c not in named]
    extra = [c for c in about.tags(carried) if c not in readings]  # "bp_sys" is no search word
    if _HANGUL.search(question):
        extra += state.get("focus") or []
    if not state.get("concepts"):
        profile = state.get("profile") or memory.new_profile()
        conditions = memory.current_items(profile, now, ("conditions",))[:2]
        names = [i["name_ko"] if _HANGUL.search(question) else i["name"] for i in conditions]
        names += [i["name"] for i in conditions if _HANGUL.search(question)]
        extra += names
    extra = [w for w in dict.fromkeys(extra) if w.lower() not in query.lower()]
    return f"{query} {' '.join(extra)}" if extra else query


_HANGUL = re.compile(r"[가-힣]")


def _tokens_of(text: str) -> int:
    return max(len(text.split()), len(text) // 2)


async def assemble_context(state: MedicalState, runtime: Runtime[Context]) -> dict[str, Any]:
    """The profile summary and the passages within the token budget, most important first."""
    ctx = runtime.context
    profile = state.get("profile") or memory.new_profile()
    lines = [
        render.said_text(i, profile, ctx.lang)
        for i in memory.current_items(profile, ctx.now)
        if i["name"] not in memory.PAIRS.values()
    ]
    budget = CONTEXT_BUDGET - sum(_tokens_of(line) for line in lines)
    passages = [ev.Passage.from_state(p) for p in state.get("passages") or []]
    qvec = state.get("qvec")
    if qvec and passages:  # relevance to the person's question, not to the expanded query
        vectors = _passage_vectors(ctx, passages, limit=len(passages))
        question = _vector(qvec).tolist()
        passages = [
            p.rescored(
                ev.relevance_of(
                    ev.cosine(question, vectors[p.id]) if p.id in vectors else p.relevance,
                    p.concepts,
                    state.get("tags") or [],
                    state.get("focus") or [],
                    state.get("context_tags") or [],
                )
            )
            for p in passages
        ]
        led = state.get("led") or {}  # an entry led to keeps its place whatever its similarity
        passages = [p.rescored(max(p.relevance, led[p.id])) if p.id in led else p for p in passages]
        passages.sort(key=lambda p: (-p.relevance, -p.fused))
    kept = []
    for passage in (p.as_state() for p in passages):
        cost = _tokens_of(passage["text"])
        if cost > budget and kept:
            break
        kept.append(passage)
        budget -= cost
    return {"passages": kept, "context_profile": lines}


async def generate_answer(state: MedicalState, runtime: Runtime[Context]) -> dict[str, Any]:
    """An answer composed from the best passages in the person's language (in LLM mode written
    by the model, checked), personalised from the profile, with its sources; a caution when the
    evidence is uncertain."""
    ctx = runtime.context
    kn, lang, now = ctx.knowledge, ctx.lang, ctx.now
    if state.get("intent") == "clarify" and state.get("clarify") == "measure":
        lines = [kn.message("med_which_measure", lang)]  # "150 나왔어요": 150 of what?
        return {"answer": {"lines": lines, "sources": [], "used_keys": [], "answered": False}}
    if state.get("intent") == "clarify":  # "부작용은요?" with several medicines noted
        names = ", ".join(
            about.medicine_label(n, lang) for n in about.unclear_medicine(state, now) if n
        )
        key = "med_which_medicine" if names else "med_which_medicine_named"
        lines = [kn.message(key, lang, names=names)]
        return {"answer": {"lines": lines, "sources": [], "used_keys": [], "answered": False}}
    if state.get("intent") in ("greeting", "rejected_reading"):  # no lookup, a short reply
        question = (state.get("question") or "").lower()
        thanked = any(w in question for w in ("감사", "고마", "thank"))
        if thanked:
            lines = [kn.message("med_thanks", lang)]
        elif read_intent(question, kn).kind == "small_talk" and not _trivial(question):
            lines = [kn.message("med_about_bot", lang)]  # "are you a doctor?"
        elif state.get("notes") or state.get("confirm"):
            lines = []  # what was noted (or asked) is the reply
        elif (state.get("message") or {}).get("urgent"):
            lines = []  # what to do now is the caller's reply: no "ask me anything" after it
        elif state.get("last_seen"):  # the introduction once; a short prompt after it
            lines = [kn.message("med_prompt", lang)]
        else:
            lines = [kn.message("med_greeting", lang)]
        return {"answer": {"lines": lines, "sources": [], "used_keys": [], "answered": False}}
    passages = [ev.Passage.from_state(p) for p in state.get("passages") or []]
    question = state.get("question") or ""
    agreement = ev.consistency(passages, _passage_vectors(ctx, passages))
    doubt = ev.uncertainty(passages, agreement)
    banded, band_sources = _bands(kn, state, lang)
    warned = _warned(state)
    warning_lines = interactions.warning_lines(warned, lang)
    led = state.get("led") or {}
    # A message that asks nothing gets a passage only when it clearly fits what was told: an
    # unsure one read from its words ("생각나서" -> memory loss) would be advice nobody asked for.
    unasked_doubt = doubt > ev.UNCERTAIN and not _asks(question)
    if (
        not passages
        or passages[0].relevance < ev.RELEVANCE_FLOOR
        or (unasked_doubt and passages[0].id not in led)
    ):
        sources = [*interactions.warning_sources(warned), *band_sources]
        # Nothing found for a message that asks nothing ("우리 애기 두달됐어요") is no
        # failure to answer: what was noted (or an invitation to ask) is the reply.
        nothing = kn.message("med_no_answer", lang) if _asks(question) else None
        if nothing is None and not (state.get("notes") or warning_lines or banded):
            nothing = kn.message("med_noted_ask", lang)
        lines = [*warning_lines, *banded, *([nothing] if nothing else [])]
        if warned:
            lines.append(kn.message("med_sources", lang, sources="; ".join(sources)))
        return {
            "answer": {
                "lines": lines,
                "sources": sources,
                "used_keys": [],
                "answered": False,
            },
            "uncertainty": 1.0,
            "consistency": agreement,
        }
    terms = set(tokenize(state.get("query") or question)) | set(tokenize(question))
    top = passages[0]
    body = ev.best_sentences(top.text, terms, 3)
    used = [top]
    covered = set(top.concepts)
    # A question on several concepts gets a sentence on each; one with a focus (exercise,
    # diet) stays on it, and the person's own items come in as personal lines.
    spread = [] if state.get("focus") else state.get("tags") or []
    for other in passages[1:3]:
        missing = [c for c in spread if c not in covered and c in other.concepts]
        if missing:
            body += ev.best_sentences(other.text, terms | set(missing), 1)
            used.append(other)
            covered |= set(other.concepts)
    writer = "rules"
    if ctx.llm is not None:  # LLM mode: the model writes the body from the passages, checked
        written = await llm_writer.compose(ctx, question, passages)
        if written is not None:
            body, used, writer = written.body, written.cited, "model"
            if written.disagrees:  # its samples disagree: confirm with a clinician, not cached
                doubt = max(doubt, llm_writer.DISAGREED)
    profile = state.get("profile") or memory.new_profile()
    personal, used_keys = _personal(
        kn,
        body,
        profile,
        passages[:3],
        state.get("tags") or [],
        state.get("focus") or [],
        lang,
        now,
    )
    lines = [*banded, " ".join(body), *personal]
    if state.get("focus"):  # say what the answer is on: "당뇨병이 있을 때 운동", not "운동"
        lines.insert(0, kn.message("med_answer_about", lang, title=top.title))
    lines = [*warning_lines, *lines]  # an interaction the question touches comes first
    if doubt > ev.UNCERTAIN:
        lines.append(kn.message("med_uncertain", lang))
    lines.append(kn.message("med_not_diagnosis", lang))
    sources = list(
        dict.fromkeys(
            [
                *interactions.warning_sources(warned),
                *(f"{p.source} ({p.url})" if p.url else p.source for p in used),
                *band_sources,
            ]
        )
    )
    lines.append(kn.message("med_sources", lang, sources="; ".join(sources)))
    return {
        "answer": {
            "lines": lines,
            "body": body,
            "sources": sources,
            "used_keys": used_keys,
            "answered": True,
            "entries": [p.id for p in used],
            "writer": writer,
        },
        "uncertainty": doubt,
        "consistency": agreement,
    }


def _warned(state: MedicalState) -> list[Interaction]:
    """The interactions classify_intent found the question touches, in its order."""
    rules = {rule.id: rule for rule in load_interactions().rules}
    return [rules[i] for i in state.get("warnings") or [] if i in rules]


def _asks(text: str) -> bool:
    """The message asks something: a question mark, or a clause read as a question or a
    request (graphs/medical/clauses.py)."""
    if "?" in text or "？" in text:
        return True
    return any(c.kind in ("question", "hypothetical") for c in clauses.reader().read(text))


def _addresses(sentence: str, names: set[str]) -> bool:
    """Whether a sentence speaks to people who have (or take) the item: "당뇨병이나 콩팥병이
    있으면 …", "people with diabetes …", "메트포르민을 먹는 사람은 …", "if you take warfarin".
    A sentence that merely names it ("당뇨병 전단계는 …") says nothing to the person."""
    for name in (n for n in names if n):
        escaped = re.escape(name)
        if re.search(rf"{escaped}\S{{0,4}}\s*(?:\S+\s*)?{_ADDRESS_KO}", sentence) or re.search(
            rf"{_ADDRESS_EN}\s+(?:\w+\s+){{0,2}}{escaped}", sentence, re.I
        ):
            return True
    return False


# After a condition or medicine in Korean ("당뇨병이나 콩팥병이 있으면"), before it in English.
_ADDRESS_KO = (
    r"(?:있으면|있는|있을|있다면|있으신|환자|이면|인\s?경우|일\s?때|이신|앓|먹는|먹으면|"
    r"드시는|드시면|복용하|쓰는|쓰면)"
)
_ADDRESS_EN = (
    r"\b(?:if you have|if you've got|people with|those with|anyone with|patients with|"
    r"someone with|if you take|if you're taking|people taking|those taking|people on|if you're on)"
)


def _bands(kn: Knowledge, state: MedicalState, lang: str) -> tuple[list[str], list[str]]:
    """Where the readings this message gave fall ("혈당 180: 공복혈당 기준으로 '당뇨병' 범위"),
    by the bands guidance draws (knowledge/medical/bands.yaml), with their sources. Readings
    still to be confirmed, and a relative's, are left out."""
    items = [
        i
        for i in (state.get("extraction") or {}).get("items", [])
        if i["slot"] in ("vitals", "labs") and not i["unsure"] and not i["family"]
    ]
    lines: list[str] = []
    sources: list[str] = []
    pairs = memory.PAIRS
    for item in items:
        if item["name"] in pairs.values():
            continue  # said with its pair (the diastolic with the systolic)
        values = {item["name"]: float(item["value"])}
        shown = memory.display_value(item)
        partner = next((i for i in items if i["name"] == pairs.get(item["name"])), None)
        if partner is not None:
            values[partner["name"]] = float(partner["value"])
            shown = f"{shown}/{memory.display_value(partner)}"
        placed = place(load_medical_bands(), values, item["text"], item.get("context") or ())
        if placed is None:
            continue
        if lang == "ko":
            what = "혈압" if item["name"] == "bp_sys" else item["name_ko"]
        else:
            what = render.EN_MEASURES.get(item["name"], item["name"])
        source = f"{placed.measure.source.name} ({placed.measure.source.url})"
        lines.append(
            kn.message(
                "med_band",
                lang,
                what=what,
                value=shown,
                context=placed.measure.context.get(lang),
                band=placed.band.name.get(lang),
                source=placed.measure.source.name,
            )
        )
        sources.append(source)
    return lines, sources


def _personal(
    kn: Knowledge,
    body: list[str],
    profile: dict[str, Any],
    passages: list[ev.Passage],
    concepts: list[str],
    focus: list[str],
    lang: str,
    now: datetime,
) -> tuple[list[str], list[str]]:
    """Lines tying the passages to the person's own conditions and medicines, and the keys of
    every current item the answer depends on (its cache fingerprint). A line is taken only
    from a passage on what was asked (its focus, else its concepts): a sentence that merely
    names the person's condition in a passage on something else says nothing to them."""
    lines: list[str] = []
    relevant: list[str] = []
    shown = set(body)
    topic = set(concepts) | {c for p in passages for c in p.concepts}
    wanted = set(focus or concepts)
    on_topic = [p for i, p in enumerate(passages) if i == 0 or wanted & set(p.concepts)]
    chose = False
    for item in memory.current_items(profile, now, ("conditions", "medications")):
        names = {item["name"].lower(), item["name_ko"]}
        mentioned = item["name"] in topic or any(
            n and n in p.text.lower() for n in names for p in passages
        )
        if not mentioned:
            continue
        relevant.append(item["key"])
        if len(lines) >= 2:
            continue
        for p in on_topic:
            found = [s for s in ev.sentences(p.text) if s not in shown and _addresses(s, names)]
            if found:
                key = (
                    "med_personal_medication"
                    if item["slot"] == "medications"
                    else "med_personal_condition"
                )
                label = render.label(item, lang)
                if lang == "ko":  # "메트포르민을", "당뇨병이"
                    label += render.josa(
                        label, "을/를" if item["slot"] == "medications" else "이/가"
                    )
                lines.append(kn.message(key, lang, name=label, sentence=found[0]))
                shown.add(found[0])
                break
        else:  # no sentence names it, but a question on a topic was answered for it: say so
            chosen = set(about.tags([item["name"]])) & set(passages[0].concepts)
            if (
                chosen
                and not chose
                and focus
                and not set(about.tags([item["name"]])) & set(concepts)
            ):
                label = render.label(item, lang)
                if lang == "ko":
                    label += render.josa(label, "이/가")
                lines.append(
                    kn.message("med_personal_chosen", lang, name=label, title=passages[0].title)
                )
                chose = True
    return lines, relevant


_PASSAGE_VECTORS: OrderedDict[tuple[int, str], list[float]] = OrderedDict()


def _passage_vectors(
    ctx: Context, passages: list[ev.Passage], limit: int = ev.PASSAGES_USED
) -> dict[str, list[float]]:
    """The passages' vectors: those the index stored for their documents, else embedded once
    per process."""
    used = passages[:limit]
    space = id(ctx.kb)  # vectors of one index's embedding are compared with each other only
    wanted = [p for p in used if (space, p.doc_id) not in _PASSAGE_VECTORS]
    if wanted and ctx.kb is not None:
        for collection in {p.collection for p in wanted}:
            ids = [p.doc_id for p in wanted if p.collection == collection]
            for doc_id, vector in ctx.kb.stored_vectors(collection, ids).items():
                _PASSAGE_VECTORS[(space, doc_id)] = vector
        missing = [p for p in wanted if (space, p.doc_id) not in _PASSAGE_VECTORS]
        if missing:
            vectors = ctx.kb.embed([p.text for p in missing]) or []
            for p, v in zip(missing, vectors, strict=False):
                _PASSAGE_VECTORS[(space, p.doc_id)] = v
        while len(_PASSAGE_VECTORS) > 4096:
            _PASSAGE_VECTORS.popitem(last=False)
    return {
        p.id: _PASSAGE_VECTORS[(space, p.doc_id)]
        for p in used
        if (space, p.doc_id) in _PASSAGE_VECTORS
    }


async def refine(state: MedicalState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Quality of the answer: coverage of the question's concepts and grounding in the
    passages, with the best passage's relevance; in LLM mode lowered to the model's judge."""
    answer = state.get("answer") or {}
    passages = [ev.Passage.from_state(p) for p in state.get("passages") or []]
    if not answer.get("answered"):
        return {"quality": 0.0, "judge": None}
    asked = [*(state.get("concepts") or []), *(state.get("focus") or [])]
    question = state.get("question") or ""
    cover = ev.coverage(asked, question, passages[:3])
    grounded = ev.grounding(answer.get("body") or [], passages)
    quality = ev.quality(cover, grounded, passages[0].relevance if passages else 0.0)
    if runtime.context.llm is None:
        return {"quality": quality}
    # LLM mode: the model's score can only lower the rules' (llm_judge.combined)
    judged = await llm_judge.judge(runtime.context, question, answer.get("body") or [], passages)
    return {"quality": llm_judge.combined(quality, judged), "judge": judged}


async def quality_check(state: MedicalState, runtime: Runtime[Context]) -> dict[str, Any]:
    """The query rewritten when the route (`route_after_quality`, a pure function of what this
    node leaves unchanged) will retrieve again (in LLM mode by the model, checked); nothing
    otherwise."""
    ctx = runtime.context
    updates: dict[str, Any] = {}
    if route_after_quality(state) == "retrieve":
        question = state.get("question") or ""
        written = None
        if ctx.llm is not None:  # LLM mode: the model's query when it passes the checks
            written = await llm_judge.rewrite(ctx, question, state.get("query") or "")
        updates["query"] = written or _rewrite(
            question,
            state.get("concepts") or [],
            state.get("profile") or memory.new_profile(),
            ctx.now,
        )
        log.info(
            "quality %.2f below %.2f; retrieving again",
            state.get("quality") or 0,
            state.get("threshold") or 0,
        )
    return updates


def route_after_quality(state: MedicalState, *, threshold: float | None = None) -> str:
    """The adaptive threshold: retrieve again while quality is under the question's threshold
    (or the passages disagree), at most twice, while it helps and finds new passages."""
    answer = state.get("answer") or {}
    if not answer.get("answered") and not state.get("passages"):
        wanted = True  # nothing found at all: one rewritten try
    else:
        limit = state.get("threshold") or 0.0 if threshold is None else threshold
        wanted = (state.get("quality") or 0.0) < limit or (
            state.get("consistency", 1.0) < ev.CONSISTENCY_FLOOR
        )
    if not wanted or state.get("intent") in NO_LOOKUP:
        return "store_response"
    if (state.get("retrievals") or 0) > ev.MAX_EXTRA_RETRIEVALS:
        return "store_response"
    if state.get("stalled") and (state.get("retrievals") or 0) > 1:
        return "store_response"  # the duplicate guard left nothing new
    before = state.get("previous_quality")
    if before is not None and (state.get("quality") or 0.0) - before < ev.NO_PROGRESS:
        return "store_response"  # no progress
    return "retrieve"


async def store_response(state: MedicalState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Cache the verified answer, log the question, and write this run's replies."""
    ctx = runtime.context
    now = ctx.now
    answer = state.get("answer") or {}
    outbox = [{"text": line, "choices": []} for line in state.get("notes") or []]
    lines = answer.get("lines") or []
    if lines and not state.get("reconfirm"):
        outbox.append({"text": "\n\n".join(lines), "choices": []})
    outbox += state.get("confirm") or []
    cache = list(state.get("cache") or [])
    asked = list(state.get("asked") or [])
    question = state.get("question") or ""
    profile = state.get("profile") or memory.new_profile()
    message = state.get("message") or {}
    if message.get("urgent") and message.get("text"):
        # The words that raised a red flag, or a question asked while help comes (answered by
        # the caller with first aid, whose sources it gives): staff read them in the summary.
        waiting = message["urgent"] == WHILE_WAITING
        asked.append(
            {
                "q": message["text"][:500],
                "sources": list(message.get("sources") or []) if waiting else [],
                "answered": waiting,
                "uncertainty": 1.0,
                "cached": False,
                "retrievals": 0,
                "intent": WHILE_WAITING if waiting else RED_FLAG,
                "urgent": True,
                "input_id": message.get("id"),
                "at": now.isoformat(timespec="seconds"),
            }
        )
    if question and state.get("intent") not in NO_LOOKUP and not state.get("reconfirm"):
        told = message.get("text") or ""  # staff read the person's words, not the part answered
        asked.append(
            {
                "q": (told if question in told else question)[:500],
                "sources": answer.get("sources") or [],
                "answered": bool(answer.get("answered")),
                "uncertainty": state.get("uncertainty", 1.0),
                "cached": bool(state.get("cached")),
                "retrievals": state.get("retrievals") or 0,
                "intent": state.get("intent"),
                "concepts": state.get("concepts") or [],
                "writer": answer.get("writer") or "rules",  # who wrote the answer's body
                "judge": state.get("judge"),  # the model's score and reasons (LLM mode)
                "at": now.isoformat(timespec="seconds"),
            }
        )
        verified = (
            answer.get("answered")
            and not state.get("cached")
            and state.get("qvec")
            and (state.get("quality") or 0.0) >= (state.get("threshold") or 0.0)
            and (state.get("uncertainty") or 0.0) <= ev.UNCERTAIN
        )
        if verified:
            keys = answer.get("used_keys") or []
            cache.append(
                {
                    "q": question[:300],
                    "vec": state["qvec"],
                    "lang": ctx.lang,
                    "used_keys": keys,
                    "fp": _fingerprint(profile, keys, now),
                    "concepts": state.get("concepts") or [],
                    "lines": [line for line in lines],
                    "sources": answer.get("sources") or [],
                    "uncertainty": state.get("uncertainty", 0.0),
                    "entries": answer.get("entries") or [],
                }
            )
    if not outbox and not message.get("urgent"):  # what to do now is the caller's reply
        outbox.append({"text": ctx.knowledge.message("med_thanks", ctx.lang), "choices": []})
    last_entries = state.get("last_entries") or []
    if answer.get("answered"):  # what a rejection in the next message would drop
        last_entries = answer.get("entries") or []
    return {
        "last_entries": last_entries,
        "outbox": outbox,
        "cache": cache[-CACHE_KEPT:],
        "asked": asked[-ASKED_KEPT:],
        "last_seen": now.isoformat(timespec="seconds"),
        "last_input_id": (state.get("message") or {}).get("id"),
        # one run's scratch is not carried in the checkpoint
        "passages": [],
        "extraction": None,
        "qvec": None,
        "judge": None,
    }
