"""Offline, deterministic case-type classification from the cues in K1.

Each sub-type scores the cues found in the text: keywords (Korean lemmas or substrings,
English words or prefixes, one-jamo typos of long Korean words), phrases (twice a keyword,
Korean ones matched jamo by jamo without spaces) and negative cues (subtracted). A cue listed under several sub-types is split between them.
Confidence is the top score discounted by how close the runner-up comes.
"""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict

from graphs.common.brain import Candidate, Classification
from graphs.common.text import is_meaningless, lemmas
from knowledge.models import K1Criteria

MAX_CANDIDATES = 3

KEYWORD_WEIGHT = 1.0
PHRASE_WEIGHT = 2.0
NEGATIVE_WEIGHT = 1.5
FUZZY_FACTOR = 0.6  # a one-jamo typo of a keyword counts for less than the word itself
REPEAT_BONUS = 0.25  # each further mention of a Korean keyword, up to MAX_REPEATS
MAX_REPEATS = 2
SATURATION = 1.5  # raw score at which a candidate's score reaches 0.5
FUZZY_MIN_SYLLABLES = 3  # shorter Korean words have too many one-jamo neighbours
FUZZY_MIN_LETTERS = 6
EN_PREFIX_MIN = 4
_EN_SUFFIXES = ("s", "es", "ed", "d", "ing")

_LATIN = re.compile(r"[a-z]")
_SPACES = re.compile(r"\s+")
_EN_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")
_HANGUL_RUN = re.compile(r"[\uac00-\ud7a3]+")

# Unicode Hangul syllable arithmetic: 19 initials x 21 medials x 28 finals from U+AC00.
_HANGUL_BASE, _MEDIALS, _FINALS = 0xAC00, 21, 28


EMPTY = Classification(candidates=(), confidence=0.0)


def _jamo(text: str) -> str:
    """Decompose Hangul syllables into (initial, medial, final) code points, as a string."""
    out: list[str] = []
    for ch in text:
        code = ord(ch) - _HANGUL_BASE
        if 0 <= code < 11172:
            out.append(chr(0x1100 + code // (_MEDIALS * _FINALS)))
            out.append(chr(0x1161 + (code // _FINALS) % _MEDIALS))
            if code % _FINALS:
                out.append(chr(0x11A7 + code % _FINALS))
        else:
            out.append(ch)
    return "".join(out)


def _deletions(word: str) -> set[str]:
    """The word and every string made by deleting one character from it."""
    return {word} | {word[:i] + word[i + 1 :] for i in range(len(word))}


def _within_one_edit(a: str, b: str) -> bool:
    """Levenshtein distance of a and b is at most 1."""
    if abs(len(a) - len(b)) > 1:
        return False
    if len(a) > len(b):
        a, b = b, a
    i = 0
    while i < len(a) and a[i] == b[i]:
        i += 1
    if len(a) == len(b):
        return a[i + 1 :] == b[i + 1 :]
    return a[i:] == b[i + 1 :]


def _compact(text: str) -> str:
    """Lower-case NFC text without whitespace: "안 갚" and "안갚" become the same string."""
    return _SPACES.sub("", unicodedata.normalize("NFC", text).lower())


class CaseClassifier:
    """Scores a free-text description against every K1 sub-type; pure given the criteria."""

    def __init__(self, criteria: K1Criteria) -> None:
        pairs = criteria.all_sub_types()
        self._labels = [(ct.code, sub.code) for ct, sub in pairs]
        keyword_owners: dict[str, set[int]] = defaultdict(set)
        phrase_owners: dict[str, set[int]] = defaultdict(set)
        negative_owners: dict[str, set[int]] = defaultdict(set)
        for index, (_, sub) in enumerate(pairs):
            for words in sub.keywords.values():
                for word in words:
                    keyword_owners[word.lower().strip()].add(index)
            for texts in sub.phrases.values():
                for phrase in texts:
                    phrase_owners[phrase.lower().strip()].add(index)
            for texts in sub.negative.values():
                for cue in texts:
                    negative_owners[cue.lower().strip()].add(index)

        # Keywords split by script: Korean ones match lemmas/substrings, English ones words.
        self._ko_keywords: dict[str, tuple[int, ...]] = {}
        self._en_keywords: dict[str, tuple[int, ...]] = {}
        for word, owners in keyword_owners.items():
            target = self._en_keywords if _LATIN.search(word) else self._ko_keywords
            target[word] = tuple(sorted(owners))
        self._keyword_weight = {w: KEYWORD_WEIGHT / len(o) for w, o in keyword_owners.items()}

        # Fuzzy index: one-deletion neighbourhoods of long keywords' jamo strings.
        self._fuzzy: dict[str, set[str]] = defaultdict(set)
        self._fuzzy_lengths: list[int] = []
        self._jamo_of: dict[str, str] = {}  # a fuzzy Korean keyword -> its jamo string
        for word in self._ko_keywords:
            if len(word) >= FUZZY_MIN_SYLLABLES and _HANGUL_RUN.fullmatch(word):
                self._jamo_of[word] = _jamo(word)
                for variant in _deletions(self._jamo_of[word]):
                    self._fuzzy[variant].add(word)
        self._fuzzy_lengths = sorted({len(word) for word in self._jamo_of})
        for word in self._en_keywords:
            if len(word) >= FUZZY_MIN_LETTERS and word.isalpha():
                for variant in _deletions(word):
                    self._fuzzy[variant].add(word)

        # Phrases and negatives: Korean ones as compact jamo, English ones at a word start.
        self._ko_phrases: list[tuple[str, tuple[int, ...]]] = []
        self._en_phrases: list[tuple[str, tuple[int, ...]]] = []
        for phrase, owners in phrase_owners.items():
            self._add_cue(phrase, owners, self._ko_phrases, self._en_phrases)
        self._ko_negatives: list[tuple[str, tuple[int, ...]]] = []
        self._en_negatives: list[tuple[str, tuple[int, ...]]] = []
        for cue, owners in negative_owners.items():
            self._add_cue(cue, owners, self._ko_negatives, self._en_negatives)
        # A one-word Korean negative cue (a verb stem like 때리) also matches as a lemma.
        self._ko_negative_lemmas = {
            _jamo(_compact(cue)): cue for cue in negative_owners if not _LATIN.search(cue)
        }

    @staticmethod
    def _add_cue(
        cue: str,
        owners: set[int],
        ko: list[tuple[str, tuple[int, ...]]],
        en: list[tuple[str, tuple[int, ...]]],
    ) -> None:
        """File a phrase or negative cue under its script, in the form it is matched in."""
        if _LATIN.search(cue):
            en.append((" " + " ".join(cue.split()), tuple(sorted(owners))))
        else:
            ko.append((_jamo(_compact(cue)), tuple(sorted(owners))))

    def classify(self, text: str) -> Classification:
        """Rank the sub-types that `text` points to; nothing when it says nothing useful."""
        if is_meaningless(text):
            return EMPTY
        raw = self._raw_scores(text)
        ranked = sorted(
            (index for index, value in enumerate(raw) if value > 0),
            key=lambda index: -raw[index],
        )
        if not ranked:
            return EMPTY
        candidates = tuple(
            Candidate(
                case_type=self._labels[index][0],
                sub_type=self._labels[index][1],
                score=round(raw[index] / (raw[index] + SATURATION), 4),
            )
            for index in ranked[:MAX_CANDIDATES]
        )
        best = raw[ranked[0]]
        runner_up = raw[ranked[1]] if len(ranked) > 1 else 0.0
        margin = (best - runner_up) / best
        confidence = candidates[0].score * (0.5 + 0.5 * margin)
        return Classification(candidates=candidates, confidence=round(confidence, 4))

    def _raw_scores(self, text: str) -> list[float]:
        """Unbounded score per sub-type, in K1 order."""
        normal = unicodedata.normalize("NFC", text).lower()
        compact = _SPACES.sub("", normal)
        # Korean phrases match on jamo, so a phrase ending in an open syllable also matches the
        # contracted past form: "발로 차" in "발로 찼어요", "손을 대" in "손을 댔는데".
        compact_jamo = _jamo(compact)
        words = _EN_WORD.findall(normal)
        spaced = " " + " ".join(words) + " "
        found = lemmas(text)
        lemma_set = set(found)
        # A two-syllable keyword may also sit inside one lemma or start a word; anywhere in the
        # compact text is too loose for it ("이상해요" holds "상해", injury).
        inside_lemmas = "|" + "|".join(found) + "|"
        word_starts = " " + " ".join(normal.split())

        matched: dict[str, float] = {}  # keyword -> strength (1, repeat bonus, or fuzzy factor)
        for word in self._ko_keywords:
            if len(word) >= FUZZY_MIN_SYLLABLES:
                hit = word in compact
            elif len(word) == 2:
                hit = word in lemma_set or word in inside_lemmas or " " + word in word_starts
            else:
                hit = word in lemma_set
            if hit:
                repeats = min(max(compact.count(word), 1) - 1, MAX_REPEATS)
                matched[word] = 1.0 + REPEAT_BONUS * repeats
        for word in words:
            for form in self._english_forms(word):
                if form in self._en_keywords:
                    matched.setdefault(form, 1.0)
        for word in self._fuzzy_matches(compact, words):
            matched.setdefault(word, FUZZY_FACTOR)

        raw = [0.0] * len(self._labels)
        for word, strength in matched.items():
            owners = self._ko_keywords.get(word) or self._en_keywords[word]
            for index in owners:
                raw[index] += self._keyword_weight[word] * strength
        for phrase, owners in self._ko_phrases:
            if phrase in compact_jamo:
                for index in owners:
                    raw[index] += PHRASE_WEIGHT / len(owners)
        for phrase, owners in self._en_phrases:
            if phrase in spaced:
                for index in owners:
                    raw[index] += PHRASE_WEIGHT / len(owners)
        for cue, owners in self._ko_negatives:
            if cue in compact_jamo or self._ko_negative_lemmas[cue] in lemma_set:
                for index in owners:
                    raw[index] -= NEGATIVE_WEIGHT
        for cue, owners in self._en_negatives:
            if cue in spaced:
                for index in owners:
                    raw[index] -= NEGATIVE_WEIGHT
        return raw

    @staticmethod
    def _english_forms(word: str) -> set[str]:
        """The word, its prefixes of 4+ letters, and the word with a common suffix removed."""
        forms = {word}
        forms.update(word[:i] for i in range(EN_PREFIX_MIN, len(word)))
        for suffix in _EN_SUFFIXES:
            if word.endswith(suffix) and len(word) > len(suffix) + 1:
                forms.add(word[: -len(suffix)])
        return forms

    def _fuzzy_matches(self, compact: str, words: list[str]) -> set[str]:
        """Keywords that appear in the text with one jamo (Korean) or letter (English) wrong."""
        found: set[str] = set()
        windows: set[str] = set()  # jamo strings of every keyword-long stretch of syllables
        for run in _HANGUL_RUN.findall(compact):
            syllables = [_jamo(ch) for ch in run]
            for size in self._fuzzy_lengths:
                for start in range(len(run) - size + 1):
                    windows.add("".join(syllables[start : start + size]))
        fuzzy = self._fuzzy
        for window in windows:
            for variant in _deletions(window):
                for word in fuzzy.get(variant, ()):
                    if word not in found and _within_one_edit(window, self._jamo_of[word]):
                        found.add(word)
        for word in words:
            if len(word) >= FUZZY_MIN_LETTERS - 1:
                for variant in _deletions(word):
                    for keyword in fuzzy.get(variant, ()):
                        if _LATIN.match(keyword) and _within_one_edit(word, keyword):
                            found.add(keyword)
        return found
