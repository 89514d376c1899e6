"""Where a reading falls (knowledge/medical/bands.yaml): every band edge, the fasting cue, the
schema's refusals, and the line an answer carries."""

from __future__ import annotations

import copy

import pytest
import yaml
from pydantic import ValidationError

from knowledge.medical_bands import BANDS_PATH, MedicalBands, load_medical_bands, place
from knowledge.medical_lexicon import load_medical_lexicon


@pytest.mark.parametrize(
    ("values", "text", "band"),
    [
        ({"bp_sys": 118, "bp_dia": 76}, "혈압 118/76", "normal"),
        ({"bp_sys": 125, "bp_dia": 78}, "혈압 125/78", "elevated"),
        ({"bp_sys": 125, "bp_dia": 82}, "혈압 125/82", "prehypertension"),  # either number
        ({"bp_sys": 150, "bp_dia": 95}, "BP 150/95", "stage 1 hypertension"),
        ({"bp_sys": 138, "bp_dia": 100}, "BP 138/100", "stage 2 hypertension"),
        ({"bp_sys": 85, "bp_dia": 55}, "BP 85/55", "low"),
        ({"glucose": 180}, "공복혈당 180", "diabetes"),
        ({"glucose": 126}, "fasting glucose 126", "diabetes"),
        ({"glucose": 110}, "fasting sugar 110", "prediabetes (impaired fasting glucose)"),
        ({"glucose": 95}, "공복 혈당 95", "normal"),
        ({"glucose": 60}, "혈당 60", "low blood sugar (hypoglycaemia)"),  # whenever taken
        ({"glucose": 250}, "혈당 250", "high enough to suggest diabetes"),
        ({"hba1c": 6.5}, "A1c 6.5", "diabetes"),
        ({"hba1c": 6.1}, "당화혈색소 6.1", "prediabetes"),
        ({"hba1c": 5.4}, "HbA1c 5.4", "normal"),
        ({"ldl": 165}, "LDL 165", "high"),
        ({"temp": 38.5}, "체온 38.5", "fever"),
        ({"temp": 37.6}, "temp 37.6", "slightly raised"),
        ({"spo2": 91}, "산소포화도 91", "low (needs urgent care)"),
        ({"spo2": 98}, "SpO2 98", "normal"),
    ],
)
def test_a_reading_falls_in_its_band(values: dict, text: str, band: str) -> None:
    placed = place(load_medical_bands(), values, text)
    assert placed is not None and placed.band.name.en == band


@pytest.mark.parametrize(
    ("values", "contexts", "band"),
    [
        # at home hypertension begins at 135/85 (NICE NG136), lower than in the clinic
        ({"bp_sys": 138, "bp_dia": 80}, ("home",), "hypertension"),
        ({"bp_sys": 130, "bp_dia": 86}, ("home",), "hypertension"),
        ({"bp_sys": 152, "bp_dia": 90}, ("home",), "stage 2 hypertension"),
        ({"bp_sys": 130, "bp_dia": 80}, ("home",), "normal"),
        # near-misses: the same number in the clinic, or said nowhere
        ({"bp_sys": 138, "bp_dia": 80}, ("clinic",), "prehypertension"),
        ({"bp_sys": 138, "bp_dia": 80}, (), "prehypertension"),
        # a glucose read as fasting from its context, not only from its own words
        ({"glucose": 130}, ("fasting",), "diabetes"),
    ],
)
def test_a_reading_is_placed_by_the_setting_it_was_taken_in(values, contexts, band) -> None:
    placed = place(load_medical_bands(), values, "", contexts)
    assert placed is not None and placed.band.name.en == band


def test_a_glucose_after_a_meal_is_not_placed_as_fasting() -> None:
    assert place(load_medical_bands(), {"glucose": 130}, "", ("after meal",)) is None


@pytest.mark.parametrize(
    ("values", "text"),
    [
        ({"glucose": 180}, "혈당 180"),  # fasting or not is not said: no band
        ({"glucose": 150}, "blood sugar 150 after lunch"),
        ({"hr": 90}, "맥박 90"),  # a measure with no bands
    ],
)
def test_a_reading_that_cannot_be_placed_says_nothing(values: dict, text: str) -> None:
    assert place(load_medical_bands(), values, text) is None


def test_every_banded_reading_is_one_the_lexicon_reads() -> None:
    keys = {r.key for m in load_medical_lexicon().measures for r in m.readings}
    for measure in load_medical_bands().measures:
        assert set(measure.readings) <= keys, measure.key
        assert measure.source.url.startswith("https://")


def _raw() -> dict:
    return yaml.safe_load(BANDS_PATH.read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda r: r["measures"][0]["bands"][0]["at_least"].update(pulse=1), "lacks"),
        (lambda r: r["measures"][0]["source"].update(url="http://x"), "https://"),
        (lambda r: r["measures"][0]["bands"][0]["name"].update(ko="stage"), "Hangul"),
        (lambda r: r["measures"][0].update(bands=[]), "at least 1"),
    ],
)
def test_a_broken_bands_file_is_refused(change, message: str) -> None:
    raw = copy.deepcopy(_raw())
    change(raw)
    with pytest.raises(ValidationError, match=message):
        MedicalBands.model_validate(raw)
