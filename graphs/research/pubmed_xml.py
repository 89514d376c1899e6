"""The E-utilities' XML answers read into the research types, with lxml.

Each reader takes a body as the service sent it (or as the cache kept it) and returns typed
results, or raises `SourceError` for an error body or a malformed answer. The parser never
loads a DTD or anything else from the network (the answers name NCBI's DTDs), and never
expands external entities.
"""

from __future__ import annotations

import html
import json
import re

from lxml import etree

from graphs.research.types import AbstractSection, Article, SearchResult, SourceError

SERVICE = "pubmed"
MATHML = "{http://www.w3.org/1998/Math/MathML}"
_PARSER = etree.XMLParser(
    resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False, remove_comments=True
)
_YEAR = re.compile(r"\b(1[89]\d\d|2[01]\d\d)\b")


def parse_xml(body: str | bytes) -> etree._Element:
    """The answer's root element; an error answer in JSON or XML raises SourceError."""
    raw = body.encode("utf-8") if isinstance(body, str) else body
    if raw.lstrip().startswith(b"{"):
        raise SourceError(SERVICE, _json_error(raw))
    try:
        root = etree.fromstring(raw, _PARSER)
    except etree.XMLSyntaxError as exc:
        raise SourceError(SERVICE, "malformed answer") from exc
    if root.tag == "ERROR" or (_error_text(root) and not _has_results(root)):
        raise SourceError(SERVICE, _short(_error_text(root) or "error"))
    return root


def _json_error(raw: bytes) -> str:
    try:
        answer = json.loads(raw)
    except ValueError:
        return "malformed answer"
    if isinstance(answer, dict) and answer.get("error"):
        return _short(str(answer["error"]))
    return "unexpected JSON answer"


def _error_text(root: etree._Element) -> str:
    """The text of the answer's own <ERROR> (espell sends an empty one with every answer)."""
    if root.tag == "ERROR":
        return text_of(root)
    found = root.find("ERROR")
    return text_of(found) if found is not None else ""


def _has_results(root: etree._Element) -> bool:
    return any(root.find(path) is not None for path in ("DocSum", "PubmedArticle", "IdList/Id"))


def _short(reason: str) -> str:
    return " ".join(reason.split())[:200]


def text_of(element: etree._Element | None) -> str:
    """An element's text in plain words: inline markup (<i>, <sup>) dropped, a MathML formula
    written without spaces, entities (also doubly escaped ones) resolved, spaces collapsed."""
    if element is None:
        return ""
    parts: list[str] = []
    _collect(element, parts, top=True)
    return " ".join(html.unescape("".join(parts)).split())


def _collect(element: etree._Element, parts: list[str], *, top: bool = False) -> None:
    if not isinstance(element.tag, str):  # a comment, an unexpanded entity: no words
        pass
    elif element.tag.startswith(MATHML):
        parts.append("".join(piece.strip() for piece in element.itertext()))
    else:
        parts.append(element.text or "")
        for child in element:
            _collect(child, parts)
    if not top:
        parts.append(element.tail or "")


# ------------------------------------------------------------------ esearch, espell


def read_search(root: etree._Element) -> SearchResult:
    """An esearch answer (or its rettype=count form: the count alone)."""
    if root.tag != "eSearchResult":
        raise SourceError(SERVICE, "unexpected answer to a search")
    count = _int(root.findtext("Count"))
    if count is None:
        raise SourceError(SERVICE, "a search answer without a count")
    ids = tuple(i.text.strip() for i in root.iterfind("IdList/Id") if i.text and i.text.strip())
    notes = root.find("ErrorList")
    errors = () if notes is None else tuple(f"{n.tag}: {text_of(n)}" for n in notes)
    return SearchResult(
        count=count, ids=ids, translation=text_of(root.find("QueryTranslation")), errors=errors
    )


def read_spelling(root: etree._Element, term: str) -> str | None:
    """espell's corrected query, or None when it is empty or the query itself."""
    if root.tag != "eSpellResult":
        raise SourceError(SERVICE, "unexpected answer to a spelling check")
    corrected = text_of(root.find("CorrectedQuery"))
    if not corrected or corrected.casefold() == " ".join(term.split()).casefold():
        return None
    return corrected


# ------------------------------------------------------------------ esummary


def read_summaries(root: etree._Element) -> list[Article]:
    """esummary (v1) DocSums as articles without abstracts; a DocSum with an error is left out."""
    if root.tag != "eSummaryResult":
        raise SourceError(SERVICE, "unexpected answer to a summary")
    return [_summary(doc) for doc in root.iterfind("DocSum") if doc.find("ERROR") is None]


def _summary(doc: etree._Element) -> Article:
    items = {item.get("Name"): item for item in doc.iterfind("Item")}
    authors = items.get("AuthorList")
    journal = text_of(items.get("Source")) or text_of(items.get("FullJournalName"))
    return Article(
        pmid=(doc.findtext("Id") or "").strip(),
        title=text_of(items.get("Title")),
        journal=journal,
        year=_year(text_of(items.get("PubDate")) or text_of(items.get("EPubDate"))),
        authors=() if authors is None else tuple(text_of(a) for a in authors if text_of(a)),
        doi=_summary_doi(items),
    )


def _summary_doi(items: dict[str | None, etree._Element]) -> str | None:
    ids = items.get("ArticleIds")
    for item in ids if ids is not None else ():
        if item.get("Name") == "doi" and text_of(item):
            return text_of(item)
    location = text_of(items.get("ELocationID"))
    return location.removeprefix("doi:").strip() or None if location.startswith("doi:") else None


# ------------------------------------------------------------------ efetch


def read_articles(root: etree._Element) -> list[Article]:
    """An efetch PubmedArticleSet (journal articles and book chapters) as articles."""
    if root.tag != "PubmedArticleSet":
        raise SourceError(SERVICE, "unexpected answer to a fetch")
    articles = [_article(a) for a in root.iterfind("PubmedArticle")]
    articles += [_book(b) for b in root.iterfind("PubmedBookArticle")]
    return [a for a in articles if a.pmid]


def _article(element: etree._Element) -> Article:
    citation = element.find("MedlineCitation")
    if citation is None:
        return Article(pmid="", title="")
    article = citation.find("Article")
    if article is None:
        return Article(pmid=text_of(citation.find("PMID")), title="")
    journal = article.find("Journal")
    return Article(
        pmid=text_of(citation.find("PMID")),
        title=text_of(article.find("ArticleTitle")) or text_of(article.find("VernacularTitle")),
        journal=_journal_name(journal, citation),
        year=_article_year(article),
        authors=_authors(article.find("AuthorList")),
        abstract=_abstract(article.find("Abstract")),
        doi=_doi(article, element.find("PubmedData/ArticleIdList")),
    )


def _journal_name(journal: etree._Element | None, citation: etree._Element) -> str:
    if journal is not None:
        for tag in ("ISOAbbreviation", "Title"):
            if text_of(journal.find(tag)):
                return text_of(journal.find(tag))
    return text_of(citation.find("MedlineJournalInfo/MedlineTA"))


def _article_year(article: etree._Element) -> int | None:
    """The electronic publication's year, else the issue's (Year, else the MedlineDate's)."""
    for path in ("ArticleDate/Year", "Journal/JournalIssue/PubDate/Year"):
        year = _year(article.findtext(path) or "")
        if year is not None:
            return year
    return _year(article.findtext("Journal/JournalIssue/PubDate/MedlineDate") or "")


def _authors(author_list: etree._Element | None) -> tuple[str, ...]:
    """ "LastName Initials" (or the collective name) of each valid author, in order."""
    names = []
    for author in author_list.iterfind("Author") if author_list is not None else ():
        if author.get("ValidYN") == "N":
            continue
        collective = text_of(author.find("CollectiveName"))
        last = text_of(author.find("LastName"))
        initials = text_of(author.find("Initials"))
        name = collective or " ".join(part for part in (last, initials) if part)
        if name:
            names.append(name)
    return tuple(names)


def _abstract(abstract: etree._Element | None) -> tuple[AbstractSection, ...]:
    sections = []
    for part in abstract.iterfind("AbstractText") if abstract is not None else ():
        label = part.get("Label") or part.get("NlmCategory") or ""
        text = text_of(part)
        if text:
            sections.append(
                AbstractSection(label="" if label == "UNASSIGNED" else label, text=text)
            )
    return tuple(sections)


def _doi(article: etree._Element, article_ids: etree._Element | None) -> str | None:
    for location in article.iterfind("ELocationID"):
        if location.get("EIdType") == "doi" and location.get("ValidYN") != "N" and location.text:
            return text_of(location)
    for article_id in article_ids if article_ids is not None else ():
        if article_id.get("IdType") == "doi" and text_of(article_id):
            return text_of(article_id)
    return None


def _book(element: etree._Element) -> Article:
    document = element.find("BookDocument")
    if document is None:
        return Article(pmid="", title="")
    book = document.find("Book")
    title = text_of(document.find("ArticleTitle")) or text_of(document.find("Book/BookTitle"))
    return Article(
        pmid=text_of(document.find("PMID")),
        title=title,
        journal=text_of(document.find("Book/BookTitle")),
        year=None if book is None else _year(book.findtext("PubDate/Year") or ""),
        authors=_authors(document.find("AuthorList")),
        abstract=_abstract(document.find("Abstract")),
        doi=_doi(document, element.find("PubmedBookData/ArticleIdList")),
    )


def _year(text: str) -> int | None:
    found = _YEAR.search(text)
    return int(found.group(1)) if found else None


def _int(text: str | None) -> int | None:
    try:
        return int((text or "").strip())
    except ValueError:
        return None
