"""The OpenAI-compatible embedding function, the real ``openai`` client against a fake server."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import chromadb
import numpy as np
import openai
import pytest
from chromadb.config import Settings

from knowledge.embedding_openai import (
    ENV_API_KEY,
    ENV_MODEL,
    ENV_URL,
    EmbeddingUnavailable,
    OpenAICompatibleEmbedding,
    embedding_from_env,
)
from tests.fakes.openai_api import FakeOpenAI
from tests.support import WAIT

MODEL = "text-embedding-fake"
API_KEY = "sk-test-secret-123"
# A client's story: it must never show up in an error message.
PRIVATE_TEXT = "임대인 김철수가 보증금 5천만원을 돌려주지 않아요"


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(api_key=API_KEY).run_in_thread() as server:
        yield server


def embedding(fake: FakeOpenAI, **options: object) -> OpenAICompatibleEmbedding:
    """An embedding function on the fake that fails at once instead of retrying."""
    options = {"api_key": API_KEY, "timeout": WAIT, "max_retries": 0, **options}
    return OpenAICompatibleEmbedding(fake.url, MODEL, **options)  # type: ignore[arg-type]


def embedding_requests(fake: FakeOpenAI) -> list[dict]:
    return [r for r in fake.requests if r["path"] == "/v1/embeddings"]


def assert_private(error: BaseException) -> None:
    assert PRIVATE_TEXT not in str(error)
    assert "보증금" not in str(error)
    # No chained exception either: the SDK's may quote the request or the server's answer.
    assert error.__cause__ is None
    assert error.__context__ is None or error.__suppress_context__


# --- vectors ---------------------------------------------------------------------------------


def test_one_text_is_one_float32_vector(fake: FakeOpenAI) -> None:
    vectors = embedding(fake)([PRIVATE_TEXT])

    assert len(vectors) == 1
    assert vectors[0].dtype == np.float32 and vectors[0].shape == (64,)
    np.testing.assert_allclose(vectors[0], fake.embed(PRIVATE_TEXT), rtol=0, atol=0)
    [request] = embedding_requests(fake)
    assert request["json"]["model"] == MODEL
    assert request["json"]["input"] == [PRIVATE_TEXT]
    assert request["json"]["encoding_format"] == "base64"  # the SDK's default; it decodes
    assert request["authorization"] and "authorization" not in request["headers"]


def test_many_texts_go_in_batches_and_come_back_in_order(fake: FakeOpenAI) -> None:
    texts = [f"사건 {i}: 전세 보증금 반환 문제 number {i * 7}" for i in range(150)]

    vectors = embedding(fake)(texts)

    assert len(vectors) == 150
    for text, vector in zip(texts, vectors, strict=True):
        np.testing.assert_array_equal(vector, np.asarray(fake.embed(text), dtype=np.float32))
    assert [len(r["json"]["input"]) for r in embedding_requests(fake)] == [64, 64, 22]


def test_items_are_put_in_input_order_by_index(fake: FakeOpenAI) -> None:
    texts = ["first text", "second text", "third text"]
    fake.tamper_next(lambda body: body["data"].reverse())

    vectors = embedding(fake)(texts)

    for text, vector in zip(texts, vectors, strict=True):
        np.testing.assert_array_equal(vector, np.asarray(fake.embed(text), dtype=np.float32))


def test_embed_query_uses_the_same_vectors(fake: FakeOpenAI) -> None:
    ef = embedding(fake)
    np.testing.assert_array_equal(ef.embed_query(["보증금"])[0], ef(["보증금"])[0])


def test_similar_texts_are_nearest_in_chroma(
    fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = chromadb.EphemeralClient(Settings(anonymized_telemetry=False))
    name = f"k1-{uuid.uuid4().hex[:8]}"
    collection = client.create_collection(name, embedding_function=embedding(fake))
    documents = {
        "deposit": "집주인이 전세 보증금을 돌려주지 않습니다",
        "wages": "회사가 석 달째 월급을 주지 않고 있어요",
        "divorce": "배우자와 이혼하고 양육권을 갖고 싶습니다",
        "traffic": "교통사고 가해자 보험사가 합의금을 너무 적게 제시해요",
    }
    collection.add(ids=list(documents), documents=list(documents.values()))

    hits = collection.query(query_texts=["집주인이 전세 보증금을 안 돌려줍니다"], n_results=2)

    assert hits["ids"][0][0] == "deposit"
    assert collection.configuration["hnsw"]["space"] == "cosine"  # default_space()

    # Opened without a function, the collection rebuilds ours from its stored config (by the
    # registered name), with the key from the env.
    assert API_KEY not in repr(collection._model.configuration_json)
    monkeypatch.setenv(ENV_API_KEY, API_KEY)
    reopened = client.get_collection(name)
    assert isinstance(reopened.configuration["embedding_function"], OpenAICompatibleEmbedding)
    sent = len(embedding_requests(fake))
    again = reopened.query(query_texts=["회사가 월급을 석 달째 안 줘요"], n_results=1)
    assert again["ids"][0][0] == "wages"
    assert len(embedding_requests(fake)) == sent + 1


# --- configuration ---------------------------------------------------------------------------


def test_config_never_holds_the_api_key(fake: FakeOpenAI) -> None:
    ef = embedding(fake)
    assert ef.get_config() == {"base_url": fake.url, "model": MODEL}
    ef(["something"])
    config = ef.get_config()
    assert config == {"base_url": fake.url, "model": MODEL, "dimensions": 64}
    assert API_KEY not in repr(config)
    assert OpenAICompatibleEmbedding.name() == "intake_openai_compatible"
    assert ef.default_space() == "cosine" and "cosine" in ef.supported_spaces()


def test_build_from_config_reads_the_key_from_the_env(
    fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = embedding(fake).get_config()

    monkeypatch.setenv(ENV_API_KEY, API_KEY)
    assert len(OpenAICompatibleEmbedding.build_from_config(config)(["x"])) == 1

    monkeypatch.delenv(ENV_API_KEY)
    with pytest.raises(EmbeddingUnavailable, match="HTTP 401"):
        OpenAICompatibleEmbedding.build_from_config(config)(["x"])


def test_a_model_change_is_refused(fake: FakeOpenAI) -> None:
    ef = embedding(fake)
    with pytest.raises(ValueError, match="model"):
        ef.validate_config_update(ef.get_config(), {**ef.get_config(), "model": "other"})


def test_embedding_from_env() -> None:
    assert embedding_from_env({}) is None
    assert embedding_from_env({ENV_URL: "http://127.0.0.1:9/v1"}) is None
    assert embedding_from_env({ENV_MODEL: MODEL, ENV_URL: "  "}) is None

    ef = embedding_from_env({ENV_URL: "http://127.0.0.1:9/v1", ENV_MODEL: MODEL})
    assert ef is not None
    assert ef.get_config() == {"base_url": "http://127.0.0.1:9/v1", "model": MODEL}


@pytest.mark.slow  # starts a fake server itself
def test_an_empty_key_is_sent_as_a_placeholder() -> None:
    with FakeOpenAI(api_key="unused").run_in_thread() as fake:
        env = {ENV_URL: fake.url, ENV_MODEL: MODEL, ENV_API_KEY: ""}
        ef = embedding_from_env(env)
        assert ef is not None
        assert len(ef(["x"])) == 1


# --- failures --------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [400, 401, 429, 500, 503])
def test_an_http_error_is_unavailable(fake: FakeOpenAI, status: int) -> None:
    fake.fail_next(status)
    with pytest.raises(EmbeddingUnavailable, match=f"HTTP {status}") as caught:
        embedding(fake)([PRIVATE_TEXT])
    assert_private(caught.value)
    assert len(embedding(fake)([PRIVATE_TEXT])) == 1  # only the scripted answer failed


def test_the_client_retries_a_server_error_when_allowed(fake: FakeOpenAI) -> None:
    fake.fail_next(500)
    assert len(embedding(fake, max_retries=1)(["x"])) == 1
    assert len(embedding_requests(fake)) == 2


@pytest.mark.slow  # starts a fake server itself
def test_a_refused_connection_is_unavailable_without_a_retry() -> None:
    with FakeOpenAI().run_in_thread() as fake:
        ef = embedding(fake)  # max_retries=0
    # Count the HTTP attempts the SDK makes: a retry would be a second request to the closed port.
    attempts: list[str] = []
    ef._client._client.event_hooks["request"].append(lambda r: attempts.append(str(r.url)))

    with pytest.raises(EmbeddingUnavailable, match="cannot connect") as caught:
        ef([PRIVATE_TEXT])

    assert attempts == [f"{fake.url}/embeddings"]
    assert "no answer within" not in str(caught.value)  # refused, not waited for until timeout
    assert_private(caught.value)


@pytest.mark.slow  # starts a fake server itself
def test_a_refused_connection_is_retried_when_allowed() -> None:
    with FakeOpenAI().run_in_thread() as fake:
        ef = embedding(fake, max_retries=1)
    attempts: list[str] = []
    ef._client._client.event_hooks["request"].append(lambda r: attempts.append(str(r.url)))

    with pytest.raises(EmbeddingUnavailable, match="cannot connect"):
        ef(["x"])

    assert len(attempts) == 2


def test_malformed_json_is_unavailable(fake: FakeOpenAI) -> None:
    fake.malformed_next()
    with pytest.raises(EmbeddingUnavailable, match="malformed") as caught:
        embedding(fake)([PRIVATE_TEXT])
    assert_private(caught.value)
    assert len(embedding(fake)([PRIVATE_TEXT])) == 1


def test_a_missing_vector_is_unavailable(fake: FakeOpenAI) -> None:
    fake.tamper_next(lambda body: body["data"].pop())
    with pytest.raises(EmbeddingUnavailable, match="1 vectors for 2 inputs") as caught:
        embedding(fake)([PRIVATE_TEXT, "second"])
    assert_private(caught.value)


def test_an_empty_data_list_is_unavailable(fake: FakeOpenAI) -> None:
    fake.tamper_next(lambda body: body["data"].clear())
    with pytest.raises(EmbeddingUnavailable, match="malformed") as caught:
        embedding(fake)([PRIVATE_TEXT])
    assert_private(caught.value)


def test_a_change_of_size_is_unavailable(fake: FakeOpenAI) -> None:
    ef = embedding(fake, dimensions=32)
    with pytest.raises(EmbeddingUnavailable, match="64-dimensional vectors, expected 32"):
        ef(["x"])


# --- the fake's chat endpoint (for the LLM work) ---------------------------------------------


def test_chat_completions_play_scripted_replies_then_echo(fake: FakeOpenAI) -> None:
    client = openai.OpenAI(base_url=fake.url, api_key=API_KEY, max_retries=0)
    fake.reply_next("사건 유형: 임대차")
    messages = [{"role": "user", "content": "보증금을 못 받았어요"}]

    first = client.chat.completions.create(model="fake-chat", messages=messages)  # type: ignore[arg-type]
    second = client.chat.completions.create(model="fake-chat", messages=messages)  # type: ignore[arg-type]

    assert first.choices[0].message.content == "사건 유형: 임대차"
    assert second.choices[0].message.content == "보증금을 못 받았어요"
    assert fake.requests[-1]["json"]["messages"] == messages


@pytest.mark.slow  # starts a fake server itself
async def test_the_fake_serves_async_clients_on_the_test_loop() -> None:
    async with FakeOpenAI() as fake:
        client = openai.AsyncOpenAI(base_url=fake.url, api_key="k", max_retries=0)
        response = await client.embeddings.create(model=MODEL, input="안녕하세요")
        await client.close()
    assert response.data[0].embedding == pytest.approx(fake.embed("안녕하세요"))
