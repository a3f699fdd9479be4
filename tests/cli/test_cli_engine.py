"""``semnmf cluster --engine dask``: the options, refused combinations (before any data is
read), and a run on a sharded folder with a small local cluster."""

import json
import os

import pytest

from conftest import make_planted
from semnmf.cli import main


@pytest.mark.parametrize("argv, message", [
    (["--workers", "2"], "--workers applies to --engine dask"),
    (["--scheduler", "tcp://x:1"], "--scheduler applies to --engine dask"),
    (["--engine", "dask", "--method", "skmeans"], "runs --method snmf-robust or nmf or snmf"),
    (["--engine", "dask", "--method", "snmf", "--orthogonal"], "--orthogonal runs on the local"),
    (["--engine", "dask", "--consensus", "mmm"], "--consensus runs on the local engine"),
    (["--engine", "dask", "--workers", "0"], "at least 1"),
    (["--engine", "dask", "--workers", "2", "--scheduler", "tcp://x:1"], "one of them"),
    (["--engine", "dask", "--refine", "centroid"], "--refine runs on the local engine"),
    (["--semantics", "glove", "--refine", "centroid"], "drop --refine centroid or --semantics"),
])
def test_refused_engine_options(tmp_path, capsys, argv, message):
    out = tmp_path / "out"
    assert main(["cluster", "bbc", "-k", "3", "--out", str(out), *argv]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.parametrize("method", [["--method", "nmf"], ["--method", "snmf"], [],
                                    ["--method", "snmf", "--loss", "kl", "--max-nnz", "200"]])
def test_dask_engine_on_shards(tmp_path, method):
    pytest.importorskip("distributed", reason="--engine dask needs the [dask] extra")
    from semnmf.text.shards import write_shards

    texts, labels = make_planted(20)
    write_shards(tmp_path / "shards", texts, labels, shard_size=25)
    out = tmp_path / "out"
    assert main(["cluster", str(tmp_path / "shards"), "-k", "3", *method,
                 "--engine", "dask", "--workers", "1", "--out", str(out), "-q"]) == 0
    record = json.loads((out / "run.json").read_text())
    assert record["engine"] == {"name": "dask", "workers": 1, "scheduler": None,
                                "sharded": True}
    assert record["scores"]["nmi"] == pytest.approx(1.0)
    if "--max-nnz" in method:
        assert record["context"]["max_nnz"] == 200
        assert record["context"]["pruning"]["nnz"] <= 200
    assert record["data"]["n_documents"] == 60 and record["model"] is None
    assert sorted(os.listdir(out)) == ["assignments.csv", "run.json", "topics.csv"]
    # without --method the Dask engine runs the local engine's default, SNMF-KL with its
    # context (window PPMI: shards hold raw text)
    loss = "kl" if method == [] or "kl" in method else "frobenius"
    if method != ["--method", "nmf"]:
        assert record["parameters"]["loss"] == loss
    if method == []:
        assert record["method"] == "snmf-robust" and record["context"]["context"] == "window"
    # the shards' blocks are made in the method's dtype (the default's float32)
    assert record["data"]["dtype"] == ("float32" if method == [] else "float64")
