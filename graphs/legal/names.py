"""Names of people and organisations as people give them, never a particle or a fragment.

"김과장이라는 사람" names 김과장, "한빛산업이라는 하청이고 원청은 대한건설" names 한빛산업 (the
main contractor is another party), "이름은 박지훈" names 박지훈. Whatever pattern proposes a
name, Kiwi's reading of it decides whether it can be one: a word that is a particle, an ending
or the copula ("이라는", "원청은", "이에요", "요") or a role word ("원청", "사람") never is.
"""

from __future__ import annotations

import functools
import re

from knowledge.korean import get_kiwi

# Common surnames (a name is a surname and a one- to three-syllable given name).
SURNAME = (
    "[김이박최정강조윤장임한오서신권황안송전홍유류고문양손배백허남심노하곽성차주우구민진지엄"
    "채원천방공현함변염여추도석선설마길연위표명기반라왕금옥육탁국맹]"
)
# Words that start like a surname and a name and are none ("이라는", "원청은", "정말").
_NOT_NAME_START = frozenset(
    "이라 이에 이었 이였 이랑 이고 이나 이면 이제 이미 이번 이거 이게 이건 이런 원청 원래 "
    "정말 정도 전화 전부 전혀 지금 지난 진짜 한번 한테 오늘 방금 우리 하청".split()
)
# A person named right after a relation word: "친구 김철수한테", "사장 박민수가", "사장 최씨".
_RELATIONS = (
    "친구 지인 동창 동료 선배 후배 사장님 사장 대표님 대표 집주인 임대인 건물주 세입자 임차인 "
    "남편 아내 전남편 전처 동생 형 언니 오빠 누나 삼촌 이모 고모 사촌 애인 약혼자 "
    "남친 여친 남자친구 여자친구 전남친 전여친 상사 팀장 부장 과장 실장 점장 원장 판매자 구매자"
).split()
_RELATIONS += ["전 " + word for word in ("남편", "아내", "남친", "여친", "남자친구", "여자친구")]
RELATION_WORDS = frozenset(_RELATIONS)  # a word naming how someone is related, never a name
# Longest first, so that "남자친구" is not read as "친구" and "사장님" not as "사장".
_RELATION = "|".join(sorted(_RELATIONS, key=len, reverse=True))
_PARTICLE = "한테|에게|께|이랑|랑|하고|씨|님|이가|이는|이를|이한테|가|이|은|는|을|를|와|과|도|의|한"
# What may follow a name: a particle, a copula ending ("이민호요", "김철수예요") or a break.
_AFTER_NAME = rf"(?:{_PARTICLE}|요|예요|였|야|입니다|라|[\s,.!?~)]|$)"
NAMED_RELATION = re.compile(
    rf"(?P<rel>{_RELATION})\s*(?!님)"
    r"(?P<name>[가-힣]{1,2}\s?씨|(?:남궁|황보|제갈|선우|독고|사공|서문)[가-힣]{1,2}"
    rf"|{SURNAME}[가-힣]{{2}})"
    rf"(?={_AFTER_NAME})"
)
# Words that look like a name after a relation word ("친구 전화를", "친구 오늘은", "친구 연락처").
NOT_A_NAME_END = frozenset("를을로에엔는와과랑요께의도만이가고며면데다")
NOT_A_NAME_START = frozenset(
    "이름 이번 이제 이미 이사 이후 이전 이야 이혼 이체 이자 이거 이게 이건 이런 이렇 이분 이놈 "
    "이었 이였 이라 이랑 이한 이니 이지 이죠 이고 이나 이면 이어 "
    "정말 정도 정신 정확 전화 전부 전세 전체 전혀 전재 연락 연봉 문자 문제 오늘 오래 지금 지난 "
    "지인 진짜 진심 한테 한번 한명 한분 한달 명의 남편 남자 남친 여자 여친 여러 차용 신고 고소 "
    "소송 장난 조금 주소 주인 주말 방금 원래 현재 현금 서로 임대 손해 배신 민사 우리 하나 기억 "
    "금액 마지 마음 성격 황당 선물 설명 안에 강제 최근 최대 최소 도움 위해 추가 함께 허락 노력 "
    "공증 변호 송금 아저 아가".split()
)
_PARTICLES = r"에서|에게|한테|이랑|랑|하고|으로|로|에|이|가|은|는|을|를|와|과|도|의"
_COMPANY_PARTICLE = rf"(?:{_PARTICLES})?(?:[\s,.!?]|$)"
# What may follow a company's name: a particle, the copula, or nothing of the word.
_COMPANY_END = (
    rf"(?:{_PARTICLES}|이요|요|이에요|에요|예요|이라는|라는|이라고|라고|이고|인데)?"
    r"(?:[^가-힣A-Za-z0-9]|$)"
)
COMPANY = re.compile(
    rf"(?P<name>(?:\(주\)\s*|주식회사\s*)(?!{_COMPANY_PARTICLE})[가-힣A-Za-z0-9]{{1,20}}?"
    rf"(?={_COMPANY_PARTICLE})|"
    r"[가-힣A-Za-z0-9]{1,20}(?:\s?주식회사|\s?\(주\)|(?<!직장)(?<!직속)상사|건설|산업|유통|식당|마트|카페|"
    rf"편의점)(?={_COMPANY_END}))"  # at a word's end: "스마트워치" names no mart (legal_set14 R6)
)
_KOREAN_NAME = re.compile(rf"{SURNAME}[가-힣]{{1,3}}")
# Tags that cannot be (part of) a name: particles, endings, the copula, verbs, adjectives,
# determiners, adverbs, interjections, pronouns. A trailing particle is cut off first.
_NOT_NAME_TAGS = ("J", "E", "VCP", "VCN", "VV", "VA", "VX", "MM", "MAG", "MAJ", "IC", "NP", "XS")
# Words that stand where a name would and are not one.
_NOT_NAMES = frozenset(
    "원청 하청 원청업체 하청업체 이름 성함 성 사람 분 남자 여자 놈 애 새끼 사장 사장님 대표 "
    "회사 업체 가게 곳 데 상대 상대방 모름 몰라요 없음 계좌 명의 예금주 닉네임 아이디 "
    "저 제가 나 내가 그 그거 그게 그냥 걔 얘 쟤 아무 누구 누가 친구 지인".split()
)
NOT_NAMES_EN = frozenset(
    "that this these those he she they them it its his her my me mine the a an is was were "
    "k nt idk dunno unknown none no not yes and or but so wages money guy man woman person "
    "someone somebody boss company who what said as i you we us our your".split()
)
# "X(이)라는 사람", "X라고 하는 업체": the words before name X.
# A bare "X라고" is reported speech ("17일이라고 했는데", "세금이라고 800만원 보냈어요",
# "침수라고 수리비 …": legal_set14 A1, R1 were offered these as the other party) unless a
# word for a person or a business follows it.
_CALLED_BY = r"사람|분|남자|여자|놈|애|업체|회사|곳|가게|데|하청|원청|대부|캐피탈|직원|사장"
_CALLED_X = re.compile(
    r"(?P<name>[가-힣ㄱ-ㅎA-Za-z0-9][가-힣ㄱ-ㅎA-Za-z0-9&.\-]{0,19}?)\s?(?:이)?"
    rf"(?:(?:라는|라고\s?하는)(?=\s?(?:{_CALLED_BY}|$|[\s,.]))|라고\s?했던"
    rf"|라고(?=\s?(?:{_CALLED_BY})))"
)
# "이름은 박지훈", "성함이 김영수", "닉네임은 정의의사도", "원청은 대한건설".
_LABELLED = re.compile(
    r"(?<![가-힣A-Za-z])(?P<label>이름|성함|닉네임|아이디|상호|가게 이름|회사 이름|하청|원청|[Nn]ame(?:\s?is)?)"
    r"(?:은|는|이|가)?\s?(?:이요|요)?\s?"
    # not an English word that goes on the sentence ("in the name of 김민수", "his name at
    # the time": legal_set16 B1, B3 had parties "of" and "at")
    r"(?!(?i:of|at|and|or|the|a|an|on|in|to|for|was|is|under|with|from|as|by|but|yet|too)\b)"
    r"(?P<name>[가-힣ㄱ-ㅎA-Za-z0-9][가-힣ㄱ-ㅎA-Za-z0-9&.\-]{0,19})"
)
_LABELLED_EN = re.compile(
    r"\b(?i:named|called|his name is|her name is|their name is|name is|name's)\s+"
    r"(?P<name>[A-Z][\w\-]*(?:\s+[A-Z][\w\-]*){0,2})"
)
# The same, typed in lower case ("his name is jason lee, korean name lee jun-ho": legal_set9
# V3): only after "name is", and only a name of up to three words ending the phrase.
_LABELLED_EN_LOWER = re.compile(
    r"\b(?:(?:his|her|their|the|my)\s+(?:full\s+)?name\s+is|name's)\s+"
    r"(?P<name>[a-z][a-z\-]+(?:\s+[a-z][a-z\-]+){0,2}?)"
    r"(?=\s*(?:[,.;!?()]|$|\s(?:and|but|he|she|they|i|from|who|is|was|or)\b))"
)
_TRAILING_PARTICLE = re.compile(
    r"(?:이에요|예요|에요|이요|입니다|이고요|이고|이랑|랑|한테|에게|씨|님|이가|이는|(?<=[0-9A-Za-z])이라(?:는|고)|라는|라고|요|은|는|이|가|을|를|의|도)$"
)


@functools.lru_cache(maxsize=4096)
def plausible_name(word: str) -> bool:
    """Whether `word` can be a person's or an organisation's name (or nickname)."""
    word = word.strip(" '\"“”‘’.,!?~")
    if len(word) < 2:  # one syllable is a surname ("윤씨" is two) or a fragment
        return False
    if word.isdigit() or re.fullmatch(r"\d+[가-힣]{1,2}", word):
        return False  # a number, or one with its counter ("17일", "300만"): no name
    if re.fullmatch(r"[A-Za-z][A-Za-z'\-]*", word):
        return word.lower() not in NOT_NAMES_EN and len(word) >= 2
    if word in _NOT_NAMES:
        return False
    if re.fullmatch(r"[ㄱ-ㅎ]+[가-힣]+", word):  # "ㅇㅇ건설": a name the person masked
        return True
    if not re.search(r"[가-힣]", word):
        return bool(re.search(r"[A-Za-z]{2}", word))  # "ABC Co", "@abc"
    tokens = get_kiwi().tokenize(word)
    if _KOREAN_NAME.fullmatch(word) and word[:2] not in _NOT_NAME_START:
        # a surname and a given name: Kiwi does not know most names ("강태민" is three nouns,
        # "김지은" a verb with its ending), but a tense or a sentence ending is none ("안바꿨어":
        # 안 + 바꾸 + 었 + 어)
        return not any(t.tag in ("EP", "EF") for t in tokens)
    if not tokens or tokens[0].tag.startswith(_NOT_NAME_TAGS):
        return False
    return not any(t.tag.startswith(_NOT_NAME_TAGS) for t in tokens)


# Kiwi's id of a noun it does not know (a name it has never seen: "임하늘", "해피머니").
_UNKNOWN_NOUN = 2


@functools.lru_cache(maxsize=4096)
def dictionary_words(word: str) -> bool:
    """Whether a Korean word found standing where a name may is made only of words Kiwi knows
    and no name: a common noun or a compound of them ("신분증", "주차위반", "배달앱"), a number
    or a date ("2천만원", "9월3일"), a noun with an ending ("선이자" read 선 + 이 + 자). A name
    Kiwi knows is a proper noun ("김민수"), one it does not know an unknown noun ("임하늘")."""
    if re.search(r"\d", word):
        return True
    tokens = get_kiwi().tokenize(word)
    return bool(tokens) and not any(
        t.tag in ("NNP", "SL") or (t.tag == "NNG" and t.id == _UNKNOWN_NOUN) for t in tokens
    )


def no_endings(phrase: str) -> bool:
    """Whether a phrase holds no verb ending, copula or particle ("주식회사였던거" does)."""
    return not any(t.tag.startswith(("E", "VCP", "VCN", "J")) for t in get_kiwi().tokenize(phrase))


def ends_in_noun(phrase: str) -> bool:
    """Whether a Korean phrase is a noun phrase ("윗집 1303호 남자"), not a clause."""
    tokens = get_kiwi().tokenize(phrase)
    return bool(tokens) and tokens[-1].tag in ("NNG", "NNP", "NNB", "NR", "SN", "SL", "SH")


def bare(word: str) -> str:
    """A name without the particle or copula ending stuck to it ("박지훈이에요" -> 박지훈)."""
    word = word.strip(" '\"“”‘’.,!?~")
    cut = _TRAILING_PARTICLE.sub("", word)
    return cut if len(cut) >= 2 else word


def named(text: str) -> list[tuple[str, str]]:
    """(name, how it was named) for each name the text gives outright, in order: "called"
    (X라는), or the label before it (이름, 원청, 하청, ...)."""
    found: list[tuple[int, str, str]] = []
    for m in _CALLED_X.finditer(text):
        name = bare(m.group("name"))
        if name.endswith(("달", "지말")) and text.startswith("라", m.end("name")):
            # "접근금지 해달라고", "산재 하지말라고": a request or a ban told ("…해 달라고",
            # "…하지 말라고"), nobody called 해달 or 하지말 (legal_set16 S2)
            continue
        if plausible_name(name):
            start, name = _titled(text, m.start(), name)
            found.append((start, name, "called"))
    for m in _LABELLED.finditer(text):
        name = bare(m.group("name"))
        handle = m.group("label") in ("닉네임", "아이디")  # any word can be a nickname
        if plausible_name(name) or (handle and len(name) >= 2 and name not in _NOT_NAMES):
            found.append((m.start(), name, m.group("label")))
    for m in _LABELLED_EN.finditer(text):
        name = m.group("name").strip()
        if plausible_name(name.split()[0]):
            found.append((m.start(), name, "called"))
    for m in _LABELLED_EN_LOWER.finditer(text):
        name = m.group("name").strip()
        if not any(at == m.start() for at, _, _ in found) and plausible_name(name.split()[0]):
            found.append((m.start(), name, "called"))
    found.sort()
    # a first word read where a longer name is read too ("name is Jung Min-ho": legal_set19 B3
    # recorded "Jung" in both modes)
    found = [
        (at, name, how)
        for at, name, how in found
        if not any(
            other != name and other.startswith(f"{name} ") and abs(there - at) <= 12
            for there, other, _ in found
        )
    ]
    seen: set[str] = set()
    out = []
    for _, name, how in found:
        if name not in seen:
            seen.add(name)
            out.append((name, how))
    return out


def _titled(text: str, start: int, called: str) -> tuple[int, str]:
    """(start, name) of a person called by a full name and a title ("김민수 검사라는 사람":
    김민수 검사, not the title alone: legal_set12 S1 recorded the scammer as 검사)."""
    before = re.search(r"(\S+)\s+$", text[:start])
    if before is None:
        return start, called
    name = bare(before.group(1))
    tokens = get_kiwi().tokenize(called)
    title = len(tokens) == 1 and tokens[0].tag == "NNG" and len(called) <= 3
    if title and _KOREAN_NAME.fullmatch(name) and plausible_name(name):
        return before.start(1), f"{name} {called}"
    return start, called


def party_name(text: str) -> str | None:
    """The other party's name as given outright: the first name that is not the main
    contractor's (원청 is another party beside the employer)."""
    for name, how in named(text):
        if how != "원청":
            return name
    return None


def leading_name(answer: str) -> str | None:
    """The Korean full name an answer to "who?" opens with ("김도현이요 29살이고 전남친이에요",
    "박지훈입니다."), if it opens with one: a surname and a given name, its ending cut off."""
    first = next(iter(answer.split()), "")
    name = bare(first.rstrip(".,!?~"))
    return name if _KOREAN_NAME.fullmatch(name) and plausible_name(name) else None
