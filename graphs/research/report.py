"""The drug report: what the research found, and its renders (Telegram text, Markdown, JSON).

`Subject` is what a question is about, named through the medical lexicon (knowledge/medical/
lexicon.yaml: a medicine's or condition's Korean and English spellings), so "메트포르민 최신
연구는?" searches for "metformin". What a drug is for comes from the medical corpus or the
lexicon, never from the model or the articles: "not in our knowledge base" when neither knows it.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import asdict, dataclass, field
from functools import cache
from typing import Any

from graphs.research.types import Article, Trial
from knowledge.loader import Knowledge
from knowledge.medical_corpus import load_medical_corpus
from knowledge.medical_lexicon import expand_form, load_medical_lexicon, surface_key

KOREA = ("korea", "republic of korea", "south korea", "korea, republic of")
LINE_CHARS = 220  # an article's one line, at most
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(])")
_HANGUL = re.compile(r"[가-힣]")


@dataclass(frozen=True)
class Subject:
    """A drug or condition asked about: as asked, and its English name for the searches."""

    asked: str
    english: str
    ko: str | None = None  # its Korean name, when the lexicon knows it
    kind: str = "unknown"  # "medication", "condition" or "unknown"

    def label(self, lang: str) -> str:
        """How the report names it in `lang`."""
        if lang == "ko" and self.ko:
            return f"{self.ko} ({self.english})"
        return self.english


@cache
def _spellings() -> list[tuple[str, str, str, str]]:
    """(spelling, English name, Korean name, kind) of every medicine and condition, longest first."""
    lexicon = load_medical_lexicon()
    rows = []
    for kind, terms in (("medication", lexicon.medications), ("condition", lexicon.conditions)):
        for term in terms:
            for form in term.spellings():
                for spelling in expand_form(form):
                    spelling = spelling.strip("^$ ").lower()
                    if len(surface_key(spelling)) >= 3 or _HANGUL.search(spelling):
                        rows.append((spelling, term.name, term.ko, kind))
    return sorted(rows, key=lambda row: (-len(row[0]), row[3] != "medication"))


def _named_in(spelling: str, lowered: str) -> bool:
    if _HANGUL.search(spelling):
        return spelling in lowered
    return re.search(rf"(?<![a-z0-9]){re.escape(spelling)}(?![a-z0-9])", lowered) is not None


def find_subject(question: str) -> Subject | None:
    """The medicine (else the condition) a question names, longest spelling first; None."""
    lowered = " ".join(question.lower().split())
    for spelling, name, ko, kind in _spellings():
        if _named_in(spelling, lowered):
            return Subject(asked=spelling, english=name, ko=ko, kind=kind)
    return None


def subject_of(drug: str) -> Subject:
    """`/research DRUG`: the lexicon's entry when the words name one, else the words as given
    (a Korean name the lexicon does not know is searched as written)."""
    drug = " ".join(drug.split())
    key = surface_key(drug)
    found = find_subject(drug)
    if found is not None and surface_key(found.asked) == key:
        return Subject(asked=drug, english=found.english, ko=found.ko, kind=found.kind)
    return Subject(asked=drug, english=drug)


def purpose_of(subject: Subject) -> dict[str, str] | None:
    """What the drug or condition is, in both languages, from our knowledge; None if unknown."""
    if subject.kind == "unknown":
        return None
    corpus = load_medical_corpus()
    wanted = subject.english.lower()
    for entry in corpus.entries:
        if entry.id == f"medicine-{wanted}" or (entry.concepts and entry.concepts[0] == wanted):
            return {lang: first_sentence(entry.text.get(lang)) for lang in ("ko", "en")}
    if subject.kind == "medication":
        medicine = load_medical_lexicon().medication_index.get(wanted)
        if medicine is not None:
            groups = ", ".join(medicine.groups)
            en = f"{medicine.name}: {medicine.drug_class}" + (f" ({groups})" if groups else "")
            ko = f"{medicine.ko}: {medicine.drug_class}" + (f" ({groups})" if groups else "")
            return {"ko": ko, "en": en}
    return None


def first_sentence(text: str) -> str:
    """The first sentence of `text` (Korean or English), at most LINE_CHARS long."""
    text = " ".join(text.split())
    ko_end = re.search(r"(요|다)[.!?]\s", text + " ")
    if _HANGUL.search(text[:40]) and ko_end:
        sentence = text[: ko_end.end()].strip()
    else:
        sentence = _SENTENCE.split(text, maxsplit=1)[0]
    return sentence if len(sentence) <= LINE_CHARS else sentence[: LINE_CHARS - 1] + "…"


def article_line(article: Article) -> str:
    """One line for an article: the first sentence of its conclusions (else its results),
    else its title."""
    for wanted in ("CONCLUSION", "RESULT"):
        for section in article.abstract:
            if wanted in section.label.upper() and section.text.strip():
                return first_sentence(section.text)
    return first_sentence(article.title)


def in_korea(trial: Trial) -> bool:
    """Whether a trial runs in Korea (by its countries or its sites)."""
    countries = [*trial.countries, *(site.country for site in trial.sites)]
    return any(c.strip().lower() in KOREA for c in countries)


@dataclass(frozen=True)
class ArticleLine:
    pmid: str
    year: int | None
    title: str
    line: str
    url: str


@dataclass(frozen=True)
class TrialLine:
    nct_id: str
    title: str
    status: str
    phases: tuple[str, ...]
    countries: tuple[str, ...]
    korea: bool
    url: str


SERVICE_NAMES = {"pubmed": "PubMed", "ctgov": "ClinicalTrials.gov"}


@dataclass
class DrugReport:
    """What the research found about one drug or condition, in the asker's language."""

    asked: str  # the drug or question as asked
    drug: str  # the English name searched for
    lang: str  # "ko" or "en": the language of the question
    purpose: dict[str, str] | None = None  # {"ko", "en"}; None: not in our knowledge base
    drug_ko: str | None = None
    spelled_from: str | None = None  # the term before PubMed's spelling correction
    articles_total: int | None = None  # PubMed's count for the search
    counts_by_year: dict[int, int] = field(default_factory=dict)
    articles: list[ArticleLine] = field(default_factory=list)
    trials_total: int | None = None
    trials_seen: int = 0  # how many trials the status and phase counts are from
    by_status: dict[str, int] = field(default_factory=dict)
    by_phase: dict[str, int] = field(default_factory=dict)
    recruiting: list[TrialLine] = field(default_factory=list)
    answer: str | None = None  # the model's final answer (LLM mode)
    stopped_early: bool = False  # the step limit ended the loop
    unavailable: tuple[str, ...] = ()  # services that could not be reached ("pubmed", "ctgov")

    @classmethod
    def build(
        cls,
        subject: Subject,
        lang: str,
        *,
        articles: list[Article],
        trials: list[Trial],
        recruiting: list[Trial],
        **more: Any,
    ) -> DrugReport:
        """The report from what the tools returned (articles in relevance order)."""
        report = cls(
            asked=subject.asked,
            drug=subject.english,
            drug_ko=subject.ko,
            lang=lang,
            purpose=purpose_of(subject),
            **more,
        )
        report.articles = [
            ArticleLine(a.pmid, a.year, a.title, article_line(a), a.url) for a in articles
        ]
        report.trials_seen = len(trials)
        report.by_status = dict(Counter(t.status or "UNKNOWN" for t in trials).most_common())
        phases = Counter(p for t in trials for p in (t.phases or ("NA",)))
        report.by_phase = dict(sorted(phases.items()))
        korea_first = lang == "ko"
        ordered = sorted(recruiting, key=lambda t: korea_first and not in_korea(t))
        report.recruiting = [
            TrialLine(t.nct_id, t.title, t.status, t.phases, t.countries, in_korea(t), t.url)
            for t in ordered
        ]
        return report

    # --- renders ----------------------------------------------------------------------------

    def subject_label(self) -> str:
        if self.lang == "ko" and self.drug_ko:
            return f"{self.drug_ko} ({self.drug})"
        return self.drug

    def as_dict(self) -> dict[str, Any]:
        """The report as JSON-ready data (the CLI's --json)."""
        data = asdict(self)
        data["counts_by_year"] = {str(y): n for y, n in sorted(self.counts_by_year.items())}
        data["caveats"] = self._caveats_en()
        return data

    def to_json(self) -> str:
        return json.dumps(self.as_dict(), ensure_ascii=False, indent=2)

    @staticmethod
    def _caveats_en() -> list[str]:
        return ["counts are PubMed's", "an abstract is not a recommendation", "check eligibility"]

    def text(self, kn: Knowledge) -> str:
        """Telegram text in the asker's language: headings and short lines (the bot splits it)."""
        return "\n".join(self._lines(kn, heading=lambda s: f"■ {s}", bullet="•"))

    def markdown(self, kn: Knowledge) -> str:
        """The same as a Markdown file, with links."""
        return "\n".join(self._lines(kn, heading=lambda s: f"\n## {s}\n", bullet="-", md=True))

    def _lines(self, kn: Knowledge, heading, bullet: str, md: bool = False) -> list[str]:
        lang = self.lang

        def msg(key: str, **values: Any) -> str:
            return kn.message(key, lang, **values)

        title = msg("research_title", subject=self.subject_label())
        lines = [f"# {title}" if md else title]
        if self.spelled_from:
            lines.append(msg("research_spelled", asked=self.spelled_from, term=self.drug))
        if self.answer:
            lines += [heading(msg("research_answer")), self.answer]
        if self.stopped_early:
            lines.append(msg("research_stopped"))
        for service in self.unavailable:
            name = SERVICE_NAMES.get(service, service)
            lines.append(msg("research_part_unavailable", service=name))
        purpose = self.purpose.get(lang) if self.purpose else msg("research_not_known")
        lines += [heading(msg("research_purpose")), purpose]
        if self.counts_by_year:
            lines.append(heading(msg("research_counts")))
            lines += [f"{bullet} {y}: {n}" for y, n in sorted(self.counts_by_year.items())]
        lines.append(heading(msg("research_articles")))
        if not self.articles:
            lines.append(msg("research_no_articles"))
        for a in self.articles:
            year = f" ({a.year})" if a.year else ""
            pmid = f"[PMID {a.pmid}]({a.url})" if md else f"PMID {a.pmid}"
            lines.append(f"{bullet} {pmid}{year} {a.title}")
            if a.line != first_sentence(a.title):
                lines.append(f"  {a.line}")
        total = self.trials_total if self.trials_total is not None else self.trials_seen
        lines.append(heading(msg("research_trials", total=total, seen=self.trials_seen)))
        if not self.trials_seen:
            lines.append(msg("research_no_trials"))
        else:
            status = ", ".join(f"{s} {n}" for s, n in self.by_status.items())
            phase = ", ".join(f"{p} {n}" for p, n in self.by_phase.items())
            lines += [
                f"{bullet} {msg('research_by_status')}: {status}",
                f"{bullet} {msg('research_by_phase')}: {phase}",
            ]
        if self.recruiting:
            lines.append(heading(msg("research_recruiting")))
            for t in self.recruiting:
                where = ", ".join(t.countries[:3])
                nct = f"[{t.nct_id}]({t.url})" if md else t.nct_id
                phases = "/".join(t.phases) or "NA"
                lines.append(
                    f"{bullet} {nct} {phases} {t.title}" + (f" ({where})" if where else "")
                )
        lines.append(heading(msg("research_caveats")))
        for key in ("research_caveat_counts", "research_caveat_abstract", "research_caveat_trials"):
            lines.append(f"{bullet} {msg(key)}")
        return lines
