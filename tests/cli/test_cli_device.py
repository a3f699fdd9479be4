"""``semnmf cluster --device``: the GPU engine asked for where there is none is one line,
before the data is read; ``auto`` runs on the CPU here and says so in run.json."""

import json

from semnmf.cli import main


def test_a_missing_gpu_is_one_line(planted45_csv, tmp_path, capsys):
    assert main(["cluster", planted45_csv, "-k", "3", "--device", "cuda", "--out",
                 str(tmp_path / "r"), "-q"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("semnmf: error: ")
    assert 'semnmf[gpu]' in err[0] and not (tmp_path / "r").exists()
    if _torch_without_cuda():  # the message names the flags, not the library's device="..."
        assert "--device cuda needs a CUDA GPU" in err[0] and "use --device cpu or" in err[0]
        assert "device=" not in err[0]


def _torch_without_cuda():
    try:
        import torch
    except ImportError:
        return False
    return not torch.cuda.is_available()


def test_auto_runs_every_method_and_records_the_engine(planted45_csv, tmp_path):
    for method in ("nmf", "skmeans"):
        out = tmp_path / method
        assert main(["cluster", planted45_csv, "-k", "3", "--method", method, "--device",
                     "auto", "--max-iter", "30", "--out", str(out), "-q"]) == 0
        record = json.loads((out / "run.json").read_text(encoding="utf-8"))
        assert record["cli_arguments"]["device"] == "auto"
        assert record["parameters"].get("device", "auto") == "auto"  # skmeans has none
