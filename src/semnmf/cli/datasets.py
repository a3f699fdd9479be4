"""``semnmf datasets``: the corpora that can be opened by name."""


def add_parser(commands):
    return commands.add_parser("datasets", help="list the corpora that can be opened by name")


def run(args):
    from ..datasets import BUILTIN, list_datasets

    found = list_datasets()
    for name, description in found.items():
        kind = "built-in" if name in BUILTIN else "found"
        print(f"{name:12s} [{kind}] {description}")
    if len(found) == len(BUILTIN):
        print("(set SEMNMF_DATA to folders of dataset folders to open them by name)")
    return 0
