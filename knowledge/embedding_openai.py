"""Embeddings from an OpenAI-compatible server (OpenAI, vLLM, Ollama, llama.cpp, TEI...).

Used for the knowledge index when ``INTAKE_EMBEDDING_URL`` and ``INTAKE_EMBEDDING_MODEL`` are
set. Any failure raises ``EmbeddingUnavailable`` with a short message that never quotes the
texts (they may hold a client's story), so callers can fall back to keyword search.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import numpy as np
from chromadb.api.types import Documents, EmbeddingFunction, Embeddings, Space
from chromadb.utils.embedding_functions import register_embedding_function

ENV_URL = "INTAKE_EMBEDDING_URL"
ENV_MODEL = "INTAKE_EMBEDDING_MODEL"
ENV_API_KEY = "INTAKE_EMBEDDING_API_KEY"
# Local servers ignore the key, but the SDK needs one; passing our own also stops the SDK
# from reading OPENAI_API_KEY and sending it to whatever server the URL names.
PLACEHOLDER_API_KEY = "unused"
BATCH_SIZE = 64  # inputs per request; well under the API's 2048 and gentle on small servers
DEFAULT_TIMEOUT = 20.0
DEFAULT_MAX_RETRIES = 2


class EmbeddingUnavailable(RuntimeError):
    """The embedding server gave no usable vectors; callers fall back to keyword search."""


@register_embedding_function
class OpenAICompatibleEmbedding(EmbeddingFunction[Documents]):
    """A Chroma embedding function calling ``POST {base_url}/embeddings`` in batches."""

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        *,
        max_retries: int = DEFAULT_MAX_RETRIES,
        batch_size: int = BATCH_SIZE,
        dimensions: int | None = None,
    ) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.base_url = base_url
        self.model = model
        self.timeout = timeout
        self.max_retries = max_retries
        self.batch_size = batch_size
        self.dimensions = dimensions  # learnt from the first answer when not given
        import openai  # here, not at the top: it costs half a second of every start-up

        self._client = openai.OpenAI(
            base_url=base_url,
            api_key=api_key or PLACEHOLDER_API_KEY,
            timeout=timeout,
            max_retries=max_retries,
        )

    def __call__(self, input: Documents) -> Embeddings:
        """Embed the texts, in input order, as float32 vectors."""
        texts = [input] if isinstance(input, str) else list(input)
        vectors: Embeddings = []
        for start in range(0, len(texts), self.batch_size):
            vectors.extend(self._embed_batch(texts[start : start + self.batch_size]))
        return vectors

    def embed_query(self, input: Documents) -> Embeddings:
        """Embed search queries; the same model and no query prefix, as for documents."""
        return self(input)

    def close(self) -> None:
        """Close the HTTP connection pool."""
        self._client.close()

    def _embed_batch(self, texts: list[str]) -> list[np.ndarray]:
        import openai

        try:
            response = self._client.embeddings.create(model=self.model, input=texts)
        except openai.APIStatusError as exc:
            raise self._unavailable(f"HTTP {exc.status_code}") from None
        except openai.APITimeoutError:
            raise self._unavailable(f"no answer within {self.timeout:g} s") from None
        except openai.APIConnectionError:
            raise self._unavailable("cannot connect") from None
        except (openai.OpenAIError, ValueError, TypeError, AttributeError) as exc:
            # A body that is not JSON or not an embeddings list (the SDK raises ValueError
            # for an empty ``data``). ``from None``: the cause may quote the texts.
            raise self._unavailable(f"malformed answer ({type(exc).__name__})") from None
        return self._vectors(response, len(texts))

    def _vectors(self, response: Any, expected: int) -> list[np.ndarray]:
        """Check the answer and put its vectors in input order (by each item's ``index``)."""
        try:
            items = sorted(response.data, key=lambda item: item.index)
            indices = [item.index for item in items]
            vectors = [np.asarray(item.embedding, dtype=np.float32) for item in items]
        except (AttributeError, TypeError, ValueError):
            raise self._unavailable("malformed answer") from None
        if len(indices) != expected:
            raise self._unavailable(f"{len(indices)} vectors for {expected} inputs")
        if indices != list(range(expected)):
            raise self._unavailable("vector indices do not match the inputs")
        sizes = {vector.shape for vector in vectors}
        if len(sizes) != 1 or len(next(iter(sizes))) != 1 or vectors[0].size == 0:
            raise self._unavailable("vectors of uneven or empty shape")
        size = vectors[0].size
        if self.dimensions is None:
            self.dimensions = size
        elif size != self.dimensions:
            raise self._unavailable(f"{size}-dimensional vectors, expected {self.dimensions}")
        if not all(np.isfinite(vector).all() for vector in vectors):
            raise self._unavailable("non-finite values in vectors")
        return vectors

    def _unavailable(self, reason: str) -> EmbeddingUnavailable:
        return EmbeddingUnavailable(f"embedding server {self.base_url} ({self.model}): {reason}")

    # --- Chroma's configuration protocol -----------------------------------------------------

    @staticmethod
    def name() -> str:
        return "intake_openai_compatible"

    def get_config(self) -> dict[str, Any]:
        """What rebuilds this function for a stored collection; never the API key."""
        config: dict[str, Any] = {"base_url": self.base_url, "model": self.model}
        if self.dimensions is not None:
            config["dimensions"] = self.dimensions
        return config

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> OpenAICompatibleEmbedding:
        """Rebuild from ``get_config()``; the API key comes from the environment."""
        return OpenAICompatibleEmbedding(
            base_url=config["base_url"],
            model=config["model"],
            api_key=os.environ.get(ENV_API_KEY) or None,
            dimensions=config.get("dimensions"),
        )

    @staticmethod
    def validate_config(config: dict[str, Any]) -> None:
        for key in ("base_url", "model"):
            if not isinstance(config.get(key), str) or not config[key]:
                raise ValueError(f"embedding config needs a non-empty {key!r}")

    def validate_config_update(
        self, old_config: dict[str, Any], new_config: dict[str, Any]
    ) -> None:
        """Refuse a change of model or size: the stored vectors came from the old one."""
        if old_config.get("model") != new_config.get("model"):
            raise ValueError("cannot change the embedding model of an existing collection")
        old_size, new_size = old_config.get("dimensions"), new_config.get("dimensions")
        if old_size is not None and new_size is not None and old_size != new_size:
            raise ValueError("cannot change the embedding size of an existing collection")

    def default_space(self) -> Space:
        return "cosine"

    def supported_spaces(self) -> list[Space]:
        return ["cosine", "l2", "ip"]


def embedding_from_env(env: Mapping[str, str]) -> OpenAICompatibleEmbedding | None:
    """The configured embedding function, or None when URL and model are not both set."""
    base_url = env.get(ENV_URL, "").strip()
    model = env.get(ENV_MODEL, "").strip()
    if not base_url or not model:
        return None
    return OpenAICompatibleEmbedding(base_url, model, api_key=env.get(ENV_API_KEY) or None)
