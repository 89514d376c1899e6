"""What a health profile stands for in the safety rules: the terms of knowledge/safety.yaml's
`profile_terms` that its current items hold (heart failure, a pregnancy, a blood thinner, a
medicine that can bring blood sugar too low, an age of 65 or more), so a sign said today
completes a rule with what was said last week."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from graphs.medical import memory
from knowledge.medical_lexicon import load_medical_lexicon
from knowledge.models import ProfileTerm


def profile_terms(
    profile: dict[str, Any], now: datetime, terms: dict[str, ProfileTerm]
) -> list[str]:
    """The names of `terms` that the profile's current items hold."""
    medicines = load_medical_lexicon().medication_index
    held: set[str] = set()
    for item in profile.get("items", []):
        if item["status"] != "current" or not memory.is_current(item, now):
            continue
        names = {item["name"]}
        medicine = medicines.get(item["name"]) if item["slot"] == "medications" else None
        classes = {medicine.drug_class} if medicine is not None else set()
        groups = set(medicine.groups) if medicine is not None else set()
        for term, wants in terms.items():
            if names & set(wants.names) or classes & set(wants.classes):
                held.add(term)
            elif groups & set(wants.groups):
                held.add(term)
            elif item["name"] == "age" and isinstance(item.get("value"), int | float):
                low, high = wants.age_min, wants.age_max
                if (low is not None or high is not None) and (
                    (low is None or item["value"] >= low)
                    and (high is None or item["value"] <= high)
                ):
                    held.add(term)
    return sorted(held)
