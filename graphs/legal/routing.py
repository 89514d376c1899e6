"""Pure routing functions of the legal intake graph; an impossible state raises."""

from __future__ import annotations

from typing import Literal

from graphs.legal.state import LegalState


class RoutingError(RuntimeError):
    """The state cannot be routed: a bug, not a user error."""


def route_after_init(state: LegalState) -> Literal["INIT", "CASE_CLASSIFICATION"]:
    """Classify once there is a description; otherwise keep asking for one."""
    return "CASE_CLASSIFICATION" if state.get("description") else "INIT"


def route_after_classification(
    state: LegalState,
) -> Literal["FACT_COLLECTION", "CONFIRM_CASE_TYPE"]:
    """Collect facts once the sub-type is known; otherwise let the person pick it."""
    if state.get("sub_type"):
        return "FACT_COLLECTION"
    if state.get("candidates") is None:
        raise RoutingError("classification produced neither a sub-type nor candidates")
    return "CONFIRM_CASE_TYPE"


def route_after_confirmation(
    state: LegalState,
) -> Literal["CASE_CLASSIFICATION", "CONFIRM_CASE_TYPE"]:
    """Back to classification after a pick or a fuller description; else offer buttons again."""
    if state.get("sub_type") or state.get("candidates") is None:
        return "CASE_CLASSIFICATION"
    return "CONFIRM_CASE_TYPE"


def route_after_collection(
    state: LegalState,
) -> Literal["FACT_COLLECTION", "RE_QUESTION", "SUMMARY"]:
    """After an answer was settled: re-ask an invalid one, else ask the next missing fact;
    summarise when nothing was left to ask."""
    if state.get("asking") is None:
        if state.get("invalid"):
            raise RoutingError("an answer was found invalid while no field was asked")
        return "SUMMARY"
    return "RE_QUESTION" if state.get("invalid") else "FACT_COLLECTION"


def route_after_re_question(state: LegalState) -> Literal["RE_QUESTION", "FACT_COLLECTION"]:
    """After a re-asked answer was settled: re-ask it while invalid, else ask the next fact."""
    return "RE_QUESTION" if state.get("invalid") else "FACT_COLLECTION"
