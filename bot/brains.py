"""Which brain reads the messages: the rules (default), or a model checked by the rules.

INTAKE_LLM=on with INTAKE_LLM_BASE_URL and INTAKE_LLM_MODEL gives the LLM brain
(graphs/legal/llm_brain.py); a setting missing is logged and the rules read alone. Nothing is
called at start-up: a model that is down costs each turn one quick failure until the circuit
opens, then nothing.
"""

from __future__ import annotations

import logging

from bot.config import Settings
from graphs.common.brain import Brain
from graphs.legal.rules_brain import RulesBrain
from knowledge.loader import Knowledge

log = logging.getLogger(__name__)


def make_brain(settings: Settings, knowledge: Knowledge) -> Brain:
    """The brain the settings ask for."""
    rules = RulesBrain(knowledge)
    if settings.intake_llm != "on":
        return rules
    key = settings.intake_llm_api_key or settings.openai_api_key
    if not settings.intake_llm_base_url or not settings.intake_llm_model:
        log.error(
            "INTAKE_LLM=on needs INTAKE_LLM_BASE_URL and INTAKE_LLM_MODEL; the rules read alone"
        )
        return rules
    # Imported only in LLM mode: the openai package costs half a second of every start-up.
    from graphs.common.llm import LLMClient, LLMConfig
    from graphs.legal.llm_brain import LLMBrain

    client = LLMClient(
        LLMConfig(
            base_url=settings.intake_llm_base_url,
            api_key=key.get_secret_value() if key else "",
            model=settings.intake_llm_model,
            structured=settings.intake_llm_structured,
            timeout=settings.intake_llm_timeout,
            concurrency=settings.intake_llm_concurrency,
            mask={"auto": None, "on": True, "off": False}[settings.intake_llm_mask],
            models=settings.llm_models,
        )
    )
    log.info(
        "LLM mode: model %s, %s, identifying numbers %s",
        settings.intake_llm_model,
        settings.intake_llm_structured,
        "masked" if client.masking else "sent as written (a local endpoint)",
    )
    return LLMBrain(knowledge, client, rules=rules, budget=settings.intake_llm_budget)


async def close_brain(brain: Brain) -> None:
    """Close what the brain holds open (the model client's connections)."""
    close = getattr(getattr(brain, "client", None), "close", None)
    if close is not None:
        await close()
