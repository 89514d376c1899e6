"""Where a reading's number falls (`medical/bands.yaml`): the bands mainstream guidance draws
for blood pressure, glucose, HbA1c, LDL, temperature and oxygen saturation, each measure with
its source, validated on load."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import yaml
from pydantic import Field, model_validator

from knowledge.loader import UniqueKeyLoader
from knowledge.medical_corpus import Bilingual, Source
from knowledge.models import Strict

BANDS_PATH = Path(__file__).resolve().parent / "medical" / "bands.yaml"


class Band(Strict):
    """One band: it applies when any `at_least` value is reached or any `below` value is not;
    with neither, it is the measure's default."""

    name: Bilingual
    at_least: dict[str, float] = {}
    below: dict[str, float] = {}

    def applies(self, values: dict[str, float]) -> bool:
        if not self.at_least and not self.below:
            return True
        return any(values.get(k, float("-inf")) >= v for k, v in self.at_least.items()) or any(
            values.get(k, float("inf")) < v for k, v in self.below.items()
        )


class Cue(Strict):
    ko: tuple[str, ...] = ()
    en: tuple[str, ...] = ()


class BandedMeasure(Strict):
    """A measure's bands, top-down, for the readings it names."""

    key: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    readings: tuple[str, ...] = Field(min_length=1)
    when: Cue | None = None  # words the reading's own text must hold ("공복", "fasting")
    # ...or the context it was read in (the lexicon's reading_contexts: "home", "fasting")
    setting: str | None = None
    context: Bilingual
    source: Source
    bands: tuple[Band, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _bands_name_its_readings(self) -> BandedMeasure:
        for band in self.bands:
            unknown = (set(band.at_least) | set(band.below)) - set(self.readings)
            if unknown:
                raise ValueError(f"{self.key}: a band names readings it lacks: {sorted(unknown)}")
        return self

    def said(self, text: str, contexts: Iterable[str] = ()) -> bool:
        """Whether a reading was taken where or when this measure needs (its `setting`, or
        its `when` words in the reading's text); always, for a measure that needs neither."""
        if self.when is None and self.setting is None:
            return True
        if self.setting is not None and self.setting in contexts:
            return True
        lowered = text.lower()
        return self.when is not None and any(
            cue in lowered for cue in (*self.when.ko, *self.when.en)
        )


class MedicalBands(Strict):
    measures: tuple[BandedMeasure, ...] = Field(min_length=1)


@dataclass(frozen=True)
class Placed:
    """Where a reading falls: its band and the measure (context, source) that drew it."""

    measure: BandedMeasure
    band: Band


def place(
    bands: MedicalBands, values: dict[str, float], text: str, contexts: Iterable[str] = ()
) -> Placed | None:
    """The first band that applies to a reading's values (one reading, or a pair), over the
    measures that name its readings and whose setting it was read in (a home blood pressure
    by the home thresholds); None when none applies."""
    contexts = tuple(contexts)
    for measure in bands.measures:
        if not set(values) <= set(measure.readings) or not measure.said(text, contexts):
            continue
        band = next((b for b in measure.bands if b.applies(values)), None)
        if band is not None:
            return Placed(measure, band)
    return None


@cache
def load_medical_bands() -> MedicalBands:
    """The packaged bands, read and validated once per process."""
    raw = yaml.load(BANDS_PATH.read_text(encoding="utf-8"), Loader=UniqueKeyLoader)
    return MedicalBands.model_validate(raw)
