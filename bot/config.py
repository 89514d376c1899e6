"""Settings from the environment (and an optional .env file)."""

from __future__ import annotations

import re
from functools import cached_property
from pathlib import Path
from typing import Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import Field, SecretStr, ValidationInfo, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    """Every setting the product reads; each is documented in the README."""

    model_config = SettingsConfigDict(env_file=".env", extra="ignore")

    intake_data_dir: Path = Field(Path("./data"), description="SQLite files and the index")
    intake_database_url: str | None = Field(
        None, description="postgresql://… for records and checkpoints; unset: SQLite files"
    )
    telegram_bot_token: str | None = None
    telegram_api_url: str | None = Field(
        None, description="custom Bot API base_url, e.g. http://localhost:8081/bot"
    )
    admin_ids: str = Field("", description="comma-separated Telegram user ids of staff")
    clinician_ids: str = Field(
        "", description="comma-separated Telegram user ids of clinicians (/research, /ask)"
    )
    ncbi_api_key: SecretStr | None = Field(
        None, description="NCBI E-utilities key: 10 requests/s instead of 3"
    )
    ncbi_email: str | None = Field(None, description="contact address NCBI asks tools to send")
    intake_pubmed_url: str = Field(
        "https://eutils.ncbi.nlm.nih.gov/entrez/eutils", description="E-utilities base URL"
    )
    intake_ctgov_url: str = Field(
        "https://clinicaltrials.gov/api/v2", description="ClinicalTrials.gov API v2 base URL"
    )
    intake_default_lang: Literal["ko", "en"] = "ko"
    intake_log_level: str = "INFO"
    intake_log_secret: SecretStr | None = Field(
        None, description="key of the chat tags in logs; unset: INTAKE_DATA_DIR/log_secret"
    )
    intake_timezone: str = Field(
        "Asia/Seoul", description="IANA zone in which 어제, 지난달, 6/1 ... are read"
    )
    intake_embedding_url: str | None = None
    intake_embedding_model: str | None = None
    intake_embedding_api_key: str | None = None
    intake_durability: Literal["sync", "async", "exit"] = "exit"
    intake_webhook_url: str | None = Field(
        None, description="public HTTPS URL Telegram posts updates to (run --webhook)"
    )
    intake_webhook_listen: str = Field("127.0.0.1", description="address the webhook listens on")
    intake_webhook_port: int = Field(8443, ge=1, le=65535)
    intake_webhook_secret: str | None = Field(
        None, description="Telegram's secret_token: 1-256 of A-Z a-z 0-9 _ -"
    )
    intake_typing_delay: float = Field(
        0.5, ge=0, description="seconds a reply may take before the chat shows typing (0: always)"
    )
    intake_concurrent_updates: int = Field(
        64, ge=1, description="updates of different chats processed at once (Telegram)"
    )
    intake_llm: Literal["off", "on"] = Field(
        "off", description="on: an OpenAI-compatible model reads too, checked by the rules"
    )
    intake_llm_base_url: str | None = Field(None, description="the endpoint's /v1 URL")
    intake_llm_api_key: SecretStr | None = Field(None, description="unset: OPENAI_API_KEY")
    openai_api_key: SecretStr | None = None
    intake_llm_model: str | None = None
    intake_llm_models: str = Field(
        "", description="a model per task, e.g. classify=small-model,read=big-model"
    )
    intake_llm_structured: Literal["json_schema", "function_calling", "json_mode"] = "json_schema"
    intake_llm_timeout: float = Field(20.0, gt=0, description="seconds per model call")
    intake_llm_budget: float = Field(
        8.0, gt=0, description="seconds all of a turn's model calls share before the rules answer"
    )
    intake_llm_concurrency: int = Field(4, ge=1, description="model calls at once")
    intake_llm_mask: Literal["auto", "on", "off"] = Field(
        "auto", description="mask ID, phone, card, account numbers (auto: for remote endpoints)"
    )

    @field_validator("intake_timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ValueError(
                f"unknown time zone {value!r} (an IANA name, e.g. Asia/Seoul)"
            ) from exc
        return value

    @field_validator("admin_ids", "clinician_ids")
    @classmethod
    def _numeric_ids(cls, value: str, info: ValidationInfo) -> str:
        bad = [x for x in value.replace(" ", "").split(",") if x and not x.lstrip("-").isdigit()]
        if bad:
            name = (info.field_name or "admin_ids").upper()
            raise ValueError(f"{name} must be numeric Telegram user ids, not {bad[0]!r}")
        return value

    @field_validator("intake_log_secret")
    @classmethod
    def _long_enough(cls, value: SecretStr | None) -> SecretStr | None:
        if value is None or not value.get_secret_value():
            return None  # set but empty: as if unset
        if len(value.get_secret_value()) < 16:
            raise ValueError("INTAKE_LOG_SECRET must be at least 16 characters (a random string)")
        return value

    @field_validator("intake_webhook_secret")
    @classmethod
    def _secret_token(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(r"[A-Za-z0-9_-]{1,256}", value):
            raise ValueError(
                "INTAKE_WEBHOOK_SECRET must be 1-256 of A-Z a-z 0-9 _ - (Telegram's rule)"
            )
        return value

    @field_validator("intake_llm_models")
    @classmethod
    def _task_models(cls, value: str) -> str:
        for pair in filter(None, (p.strip() for p in value.split(","))):
            task, _, model = pair.partition("=")
            if task.strip() not in ("read", "classify", "summary") or not model.strip():
                raise ValueError(
                    f"INTAKE_LLM_MODELS takes task=model pairs (tasks: read, classify, summary), not {pair!r}"
                )
        return value

    @property
    def llm_models(self) -> dict[str, str]:
        """INTAKE_LLM_MODELS as {task: model}."""
        pairs = (p.partition("=") for p in self.intake_llm_models.split(",") if "=" in p)
        return {task.strip(): model.strip() for task, _, model in pairs}

    @property
    def zone(self) -> ZoneInfo:
        """INTAKE_TIMEZONE as a tzinfo."""
        return ZoneInfo(self.intake_timezone)

    @cached_property
    def admins(self) -> frozenset[int]:
        """ADMIN_IDS as a set of ints (blank entries ignored)."""
        return frozenset(int(x) for x in self.admin_ids.replace(" ", "").split(",") if x)

    @cached_property
    def clinicians(self) -> frozenset[int]:
        """CLINICIAN_IDS as a set of ints (blank entries ignored)."""
        return frozenset(int(x) for x in self.clinician_ids.replace(" ", "").split(",") if x)

    @property
    def research_staff(self) -> frozenset[int]:
        """Who may use the research assistant: ADMIN_IDS and CLINICIAN_IDS."""
        return self.admins | self.clinicians

    @property
    def embedding_env(self) -> dict[str, str]:
        """The embedding settings as the knowledge layer reads them."""
        return {
            "INTAKE_EMBEDDING_URL": self.intake_embedding_url or "",
            "INTAKE_EMBEDDING_MODEL": self.intake_embedding_model or "",
            "INTAKE_EMBEDDING_API_KEY": self.intake_embedding_api_key or "",
        }

    @property
    def telegram_file_url(self) -> str | None:
        """The file download base URL that goes with TELEGRAM_API_URL."""
        if not self.telegram_api_url:
            return None
        base = self.telegram_api_url.rstrip("/")
        return base[: -len("/bot")] + "/file/bot" if base.endswith("/bot") else base + "/file/bot"
