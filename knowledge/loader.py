"""Load and validate the knowledge YAML files that ship inside the `knowledge` package."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from types import SimpleNamespace
from typing import TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from knowledge.models import (
    Intents,
    K0Messages,
    K1Criteria,
    K2Fields,
    K3Info,
    K4Formats,
    Lexicon,
    MemoLexicon,
    SafetyRules,
    StoryLexicon,
)

KNOWLEDGE_DIR = Path(__file__).resolve().parent
M = TypeVar("M", bound=BaseModel)

FILES: dict[str, type[BaseModel]] = {
    "k0_messages.yaml": K0Messages,
    "k1_case_types.yaml": K1Criteria,
    "k2_fields.yaml": K2Fields,
    "k3_legal_info.yaml": K3Info,
    "k4_summary_formats.yaml": K4Formats,
    "lexicon.yaml": Lexicon,
    "safety.yaml": SafetyRules,
    "intents.yaml": Intents,
    "story.yaml": StoryLexicon,
    "memo.yaml": MemoLexicon,
}


class KnowledgeError(ValueError):
    """A knowledge file is missing, is not YAML, or does not match its schema."""


# libyaml's parser when PyYAML was built with it (about 8x faster on the medical lexicon and
# corpus, read at every start), else the pure-Python one; both construct safe types only.
_SAFE_LOADER: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class UniqueKeyLoader(_SAFE_LOADER):  # type: ignore[misc, valid-type]
    """SafeLoader that refuses a key repeated in one mapping (PyYAML keeps the last silently,
    so a second `btn_done:` would quietly replace the first text)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        seen: set[object] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"key {key!r} appears twice", key_node.start_mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def load_file(path: Path, model: type[M]) -> M:
    """Parse one YAML file into `model`; errors name the file and the field."""
    try:
        raw = yaml.load(path.read_text(encoding="utf-8"), Loader=UniqueKeyLoader)
    except FileNotFoundError as exc:
        raise KnowledgeError(f"{path.name}: file not found") from exc
    except yaml.YAMLError as exc:
        raise KnowledgeError(f"{path.name}: not valid YAML: {exc}") from exc
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        raise KnowledgeError(f"{path.name}: {validation_problems(exc)}") from exc


def validation_problems(exc: ValidationError) -> str:
    """The first five problems of a validation error, each with where it is."""
    return "; ".join(
        f"{'.'.join(str(p) for p in err['loc']) or '(top level)'}: {err['msg']}"
        for err in exc.errors()[:5]
    )


@dataclass(frozen=True)
class Knowledge:
    """All validated knowledge files, cross-checked against each other."""

    k0: K0Messages
    k1: K1Criteria
    k2: K2Fields
    k3: K3Info
    k4: K4Formats
    lexicon: Lexicon
    safety: SafetyRules  # the pre-check run on every message
    intents: Intents  # questions back, delete requests, out of scope
    story: StoryLexicon  # details kept from every message
    memo: MemoLexicon  # what the memo reads beside the key fields

    def message(self, key: str, lang: str, **values: object) -> str:
        """A K0 message in `lang`, with `{placeholders}` filled in."""
        text = self.k0.messages[key].get(lang)
        return text.format(**values) if values else text

    def check(self) -> None:
        """Raise KnowledgeError when the files disagree (a sub-type missing from K2/K3/K4)."""
        codes = [sub.code for _, sub in self.k1.all_sub_types()]
        if len(codes) != len(set(codes)):
            raise KnowledgeError("k1_case_types.yaml: duplicate sub-type codes")
        for code in codes:
            if code not in self.k2.sub_types:
                raise KnowledgeError(f"k2_fields.yaml: sub_types: missing {code}")
            if code not in self.k3.info:
                raise KnowledgeError(f"k3_legal_info.yaml: info: missing {code}")
        if "default" not in self.k4.formats:
            raise KnowledgeError("k4_summary_formats.yaml: formats: missing default")
        for rule in self.safety.rules:
            if rule.case is not None and rule.case not in codes:
                raise KnowledgeError(f"safety.yaml: {rule.code}: unknown sub-type {rule.case}")
        for kind, words in self.memo.party_roles.items():
            for code in words.cases:
                if code not in self.k2.sub_types:
                    raise KnowledgeError(f"memo.yaml: party_roles: {kind}: unknown sub-type {code}")
        for code, fields in self.memo.key_roles.items():
            if code not in self.k2.sub_types:
                raise KnowledgeError(f"memo.yaml: key_roles: unknown sub-type {code}")
            required = {req.key for req in self.k2.sub_types[code].required_fields()}
            for key in fields:
                if key not in required or self.k2.fields[key].kind not in ("amount", "date"):
                    raise KnowledgeError(
                        f"memo.yaml: key_roles: {code}.{key} is no amount or date field of it"
                    )
        closing = ("closing", SimpleNamespace(sections=self.k4.closing))
        for code, fmt in [*self.k4.formats.items(), closing]:
            for section in fmt.sections:
                for key in section.fields:
                    if key not in self.k2.fields:
                        raise KnowledgeError(
                            f"k4_summary_formats.yaml: {code}: unknown field {key!r}"
                        )


def load_knowledge(directory: Path | None = None) -> Knowledge:
    """Load every knowledge file from `directory` (the package folder by default)."""
    base = directory or KNOWLEDGE_DIR
    loaded = {name: load_file(base / name, model) for name, model in FILES.items()}
    knowledge = Knowledge(
        k0=loaded["k0_messages.yaml"],
        k1=loaded["k1_case_types.yaml"],
        k2=loaded["k2_fields.yaml"],
        k3=loaded["k3_legal_info.yaml"],
        k4=loaded["k4_summary_formats.yaml"],
        lexicon=loaded["lexicon.yaml"],
        safety=loaded["safety.yaml"],
        intents=loaded["intents.yaml"],
        story=loaded["story.yaml"],
        memo=loaded["memo.yaml"],
    )
    knowledge.check()
    return knowledge


@lru_cache(maxsize=1)
def default_knowledge() -> Knowledge:
    """The packaged knowledge, loaded once per process."""
    return load_knowledge()
