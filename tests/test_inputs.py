"""Inputs as users hold them: data frames, Series, arrays and iterables of texts; CSV files
read strictly (every row as written, or refused naming its line), whatever their delimiter.
"""

import csv
import io
import json
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import semnmf
from semnmf.cli import main
from semnmf.datasets import DatasetError, load_dataset, read_column

from conftest import make_planted


@pytest.fixture(scope="module")
def frame():
    pd = pytest.importorskip("pandas")
    texts, labels = make_planted(15)
    return pd.DataFrame({"body": texts, "topic": labels,
                         "post_id": [f"p{i}" for i in range(len(texts))],
                         "day": pd.date_range("2024-01-01", periods=len(texts), freq="D")})


def test_a_data_frame_with_named_columns(frame, tmp_path):
    run = semnmf.cluster(frame, 3, text_column="body", label_column="topic",
                         id_column="post_id", time_column="day")
    assert run.scores["nmi"] > 0.9 and run.method == "snmf-robust"
    assert run.corpus.ids.tolist() == frame["post_id"].tolist()
    assert run.extra["time"]["n_undated"] == 0
    run.save(tmp_path / "run")
    rows = list(csv.DictReader(open(tmp_path / "run" / "assignments.csv", encoding="utf-8")))
    assert [r["doc"] for r in rows] == frame["post_id"].tolist()
    assert [r["label"] for r in rows] == frame["topic"].tolist()


def test_series_arrays_and_iterables_are_texts(frame):
    expected = semnmf.cluster(frame["body"].tolist(), 3).labels
    for source in (frame["body"], frame["body"].to_numpy(dtype=str),
                   (t for t in frame["body"])):
        run = semnmf.cluster(source, 3)
        np.testing.assert_array_equal(run.labels, expected)
        assert run.method == "snmf-robust"  # raw text, not a matrix of counts
    run = semnmf.cluster(frame["body"], 3, labels=frame["topic"])
    assert run.scores["nmi"] > 0.9


def test_bad_frames_and_missing_texts_are_refused_in_one_line(frame):
    with pytest.raises(DatasetError, match=r"no text column 'text'; its columns are \['body'"):
        semnmf.cluster(frame, 3)
    with pytest.raises(DatasetError, match="no id column 'uid'"):
        semnmf.cluster(frame, 3, text_column="body", id_column="uid")
    holes = frame["body"].copy()
    holes[4] = None
    with pytest.raises(DatasetError, match=r"texts must all be strings; document 4 is missing"):
        semnmf.cluster(holes, 3)
    with pytest.raises(ValueError, match="data frames: label_column="):
        semnmf.cluster(frame, 3, text_column="body", labels=frame["topic"])


def test_the_id_column_of_a_csv_names_the_documents(tmp_path):
    texts, labels = make_planted(15)
    path = tmp_path / "posts.csv"
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["post_id", "text", "label"])
        writer.writerows([f"post-{i}", t, y] for i, (t, y) in enumerate(zip(texts, labels)))
    out = tmp_path / "run"
    assert main(["cluster", str(path), "-k", "3", "--id-column", "post_id", "--out", str(out),
                 "-q"]) == 0
    rows = list(csv.DictReader(open(out / "assignments.csv", encoding="utf-8")))
    assert [r["doc"] for r in rows] == [f"post-{i}" for i in range(len(texts))]


def test_a_stray_quote_that_swallows_a_row_is_refused_with_its_line(tmp_path):
    """Before, the row with the stray quote took the next one in: 299 documents of 300, a
    fragment of text became a label, and the run ended well."""
    texts, labels = make_planted(100)
    lines = ["id,text,label"]
    for i, (t, y) in enumerate(zip(texts, labels)):
        text = f'"{t}, quoted"' if i % 7 == 0 else t
        lines.append(f"x{i},{text},{y}")
    lines[51] = lines[51].replace(",", ',"', 1)  # x50,"unclosed quote ...
    path = tmp_path / "stray.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=r"stray.csv, line 5[12]"):
        load_dataset(path)
    assert main(["cluster", str(path), "-k", "3", "--out", str(tmp_path / "r"), "-q"]) == 2


def test_rows_with_more_or_fewer_fields_are_refused(tmp_path):
    path = tmp_path / "ragged.csv"
    path.write_text("text,label\napple pie,a\nbanana, split,b\ncherry,c\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=r"ragged.csv, line 3: 3 field\(s\) where the "
                                           r"header has 2 \(comma-separated\)"):
        load_dataset(path)
    path.write_text("text,label\napple pie,a\n\nbanana\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=r"line 4: 1 field\(s\) where the header has 2"):
        load_dataset(path)


def test_semicolon_separated_spreadsheets(tmp_path):
    texts, labels = make_planted(15)
    path = tmp_path / "excel.csv"
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f, delimiter=";")
        writer.writerow(["Text", "Label"])
        writer.writerows(zip([t.replace(".", ";", 1) for t in texts], labels))
    corpus = load_dataset(path, text_column="Text", label_column="Label")
    assert corpus.texts == [t.replace(".", ";", 1) for t in texts]
    assert list(corpus.labels) == labels


FIELD = st.text(alphabet=st.sampled_from(list("ab ,;\t|\"'\n") + ["é", "x"]), max_size=12)


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(st.tuples(FIELD, st.sampled_from(["p", "q", ""])), min_size=1,
                     max_size=8),
       delimiter=st.sampled_from([",", ";", "\t"]),
       quoting=st.sampled_from([csv.QUOTE_MINIMAL, csv.QUOTE_ALL]),
       damage=st.one_of(st.none(), st.tuples(st.sampled_from(['"', ",", ";", "\t", "\n"]),
                                             st.floats(0, 1))),
       skip=st.booleans())
def test_fuzz_every_row_is_read_as_written_or_refused(tmp_path, rows, delimiter, quoting,
                                                      damage, skip):
    """Any CSV written with a delimiter and quoting, then damaged by one stray character:
    either every row is read as written, or the read stops with one line naming a line, or
    (``on_bad_lines="skip"``) the bad rows are left out and their lines listed; no row is
    merged, dropped or split silently."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter=delimiter, quoting=quoting, lineterminator="\n")
    writer.writerow(["text", "label"])
    writer.writerows(rows)
    content = buffer.getvalue()
    if damage is not None:
        char, where = damage
        at = len("text,label\n") + int(where * (len(content) - len("text,label\n")))
        content = content[:at] + char + content[at:]
    path = tmp_path / "fuzz.csv"
    path.write_bytes(content.encode("utf-8"))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the count of skipped rows: checked below
            corpus = load_dataset(path, min_df=1, on_bad_lines="skip" if skip else "error")
    except DatasetError as exc:
        message = str(exc)
        assert "\n" not in message and "fuzz.csv" in message
        assert not skip or any(m in message for m in ("never closed", "no data rows",
                                                      "in the header line"))
        return
    except ValueError as exc:  # a corpus of no word at all: said in one line too
        assert "vocabulary" in str(exc) and "\n" not in str(exc)
        return
    expected, bad = _reference_rows(content, delimiter)
    got = list(zip(corpus.texts, corpus.labels if corpus.labels is not None
                   else [""] * len(corpus.texts)))
    assert [t for t, _ in got] == [r[0] for r in expected]
    assert corpus.skipped_lines == (bad if skip else [])
    if damage is None:
        assert [t for t, _ in got] == [t for t, _ in rows]


def _reference_rows(content, delimiter):
    """The two-field rows of a CSV text after its header, and the lines on which the other
    rows start (a row the csv module refuses, or one of another length)."""
    rows, bad, at = [], [], 0
    reader = csv.reader(io.StringIO(content), delimiter=delimiter, strict=True)
    header = True
    while True:
        start = at + 1
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error:
            bad.append(start)
        else:
            if row and header:
                header = False
            elif row and len(row) == 2:
                rows.append(row)
            elif row:
                bad.append(start)
        at = reader.line_num
    return rows, bad


def test_bad_rows_are_skipped_counted_and_recorded(tmp_path):
    texts, labels = make_planted(30)
    lines = ["id,text,label,day"] + [f"d{i},{t},{y},2024-01-{i % 28 + 1:02d}"
                                     for i, (t, y) in enumerate(zip(texts, labels))]
    lines[4] += ",one field too many"         # line 5
    lines[8] = lines[8].replace(",", ',"x"y', 1)  # line 9: a quote that does not end a field
    path = tmp_path / "export.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=r"export.csv, line 5: 5 field\(s\) where the header "
                                           r"has 4 .*--on-bad-lines skip"):
        load_dataset(path)
    with pytest.warns(UserWarning, match=r"2 bad row\(s\) skipped .* line\(s\) 5, 9; 88 read"):
        corpus = load_dataset(path, on_bad_lines="skip")
    kept = [i for i in range(90) if i not in (3, 7)]
    assert corpus.ids.tolist() == [f"d{i}" for i in kept]
    assert corpus.texts == [texts[i] for i in kept] and corpus.skipped_lines == [5, 9]
    # the date column is read with the same rows left out, so each date stays with its text
    days = read_column(path, "day", on_bad_lines="skip")
    assert days == [f"2024-01-{i % 28 + 1:02d}" for i in kept]
    out = tmp_path / "run"
    assert main(["cluster", str(path), "-k", "3", "--on-bad-lines", "skip", "--time-column",
                 "day", "--out", str(out), "-q"]) == 0
    record = json.load(open(out / "run.json", encoding="utf-8"))
    assert record["data"]["skipped_lines"] == [5, 9] and record["data"]["n_documents"] == 88
    assert record["time"]["n_undated"] == 0
    rows = list(csv.DictReader(open(out / "assignments.csv", encoding="utf-8")))
    assert [r["doc"] for r in rows] == [f"d{i}" for i in kept]


def test_jsonl_lines_that_are_not_json_can_be_skipped(tmp_path):
    path = tmp_path / "posts.jsonl"
    path.write_text('{"text": "apple pie"}\n{"text": "oops\n{"text": "plum tart"}\n',
                    encoding="utf-8")
    with pytest.raises(DatasetError, match="posts.jsonl, line 2, column .*not valid JSON"):
        load_dataset(path)
    with pytest.warns(UserWarning, match=r"1 bad row\(s\) skipped .* line\(s\) 2; 2 read"):
        corpus = load_dataset(path, on_bad_lines="skip", min_df=1)
    assert corpus.texts == ["apple pie", "plum tart"]


def test_a_delimiter_given_overrules_the_header(tmp_path):
    """A header whose first column name holds a comma would be read as comma-separated."""
    texts, labels = make_planted(15)
    path = tmp_path / "export.csv"
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f, delimiter=";")
        writer.writerow(["body, cleaned", "label"])
        writer.writerows(zip(texts, labels))
    with pytest.raises(DatasetError, match="field"):
        load_dataset(path, text_column="body, cleaned")
    for delimiter in (";", "semicolon"):
        corpus = load_dataset(path, text_column="body, cleaned", delimiter=delimiter)
        assert corpus.texts == texts and list(corpus.labels) == labels


@pytest.mark.parametrize("source, options, message", [
    ("x.csv", {"delimiter": ";;"}, "delimiter must be one character"),
    ("x.csv", {"delimiter": '"'}, "not a quote"),
    ("x.csv", {"on_bad_lines": "warn"}, "on_bad_lines must be one of error, skip"),
    ("bbc", {"delimiter": ","}, "delimiter applies to a CSV or TSV file; bbc"),
    ("x.jsonl", {"delimiter": ","}, "delimiter applies to a CSV or TSV file"),
    ("bbc", {"on_bad_lines": "skip"}, "on_bad_lines applies to a CSV, TSV or JSONL file"),
])
def test_table_options_are_refused_before_reading(source, options, message):
    with pytest.raises(DatasetError, match=message):
        load_dataset(source, **options)  # x.csv does not exist: refused before looking


def test_table_options_on_the_command_line_are_refused_in_one_line(capsys):
    assert main(["cluster", "bbc", "-k", "3", "--delimiter", "tab", "-q"]) == 2
    assert "--delimiter applies to a CSV or TSV file" in capsys.readouterr().err
    assert main(["tree", "bbc", "--leaves", "3", "--on-bad-lines", "skip", "-q"]) == 2
    assert "--on-bad-lines applies to a CSV" in capsys.readouterr().err


def test_a_folder_of_mixed_encodings_is_read_file_by_file(tmp_path):
    """One encoding for every file stopped the run at the first file in another one."""
    folder = tmp_path / "letters"
    folder.mkdir()
    words = {"utf-8": "Der Fußball in der Küche, größer als üblich. Ärger über Öfen.",
             "latin-1": "Le garçon mangeait à côté de l'église, très énervé. Déjà été.",
             "cp1252": "Les “guillemets” coûtent cher — même à Noël, déjà l’hiver."}
    for encoding, text in words.items():
        for i in range(3):
            (folder / f"{encoding}-{i}.txt").write_bytes((text * 8).encode(encoding))
    (folder / "notes.md").write_text("not a document", encoding="utf-8")
    with pytest.warns(UserWarning) as caught:
        corpus = load_dataset(folder)
    messages = [str(w.message) for w in caught]
    assert any("6 of 9 files are not UTF-8" in m for m in messages)
    assert any("notes.md is not read" in m for m in messages)
    by_id = dict(zip(corpus.ids, corpus.texts))
    for encoding, text in words.items():
        assert all(by_id[f"{encoding}-{i}.txt"] == text * 8 for i in range(3)), encoding


def test_utf8_read_as_latin1_is_refused_not_garbled(tmp_path):
    path = tmp_path / "de.csv"
    path.write_text("text,label\nFußball in der Küche,a\nKüche und Fußball,b\n",
                    encoding="utf-8")
    with pytest.raises(DatasetError, match=r"is UTF-8 text, and read as latin-1 it would be "
                                           r"garbled \('Fußball' would read 'FuÃ"):
        load_dataset(path, encoding="latin-1")
    latin = tmp_path / "latin.csv"
    latin.write_bytes("text,label\nLe garçon à côté,a\nDéjà été,b\n".encode("latin-1"))
    assert load_dataset(latin, encoding="latin-1", min_df=1).texts[0] == "Le garçon à côté"
    with pytest.raises(DatasetError, match=r"latin.csv is not valid utf-8 .*it looks like"):
        load_dataset(latin, min_df=1)


@pytest.mark.parametrize("encoding, text", [
    ("latin-1", "Le garçon mangeait à côté de l'église, très énervé. Déjà été."),
    ("cp1252", "Les “guillemets” coûtent cher — même à Noël, déjà l’hiver."),
    ("latin-1", "Él comió una paella en España, qué rico. Año nuevo."),
    ("latin-1", "Der Fußball in der Küche, größer als üblich. Ärger über Öfen."),
    ("cp1250", "Příliš žluťoučký kůň úpěl ďábelské ódy. Zažil jsem."),
    ("cp1251", "Привет, как дела? Это тест русского текста в кодировке."),
    ("koi8-r", "Привет, как дела? Это тест русского текста в кодировке."),
    ("cp1253", "Καλημέρα, πώς είσαι; Αυτό είναι ελληνικό κείμενο."),
    ("cp1254", "Türkçe metin: çalışkan öğrenci, güzel şehir, ılık su."),
    ("shift_jis", "これは日本語のテキストです。東京の天気は晴れ。"),
])
def test_the_detected_encoding_gives_back_the_text(tmp_path, encoding, text):
    """Not necessarily the codec it was written in (latin-1 German reads the same as
    cp1250), but one that decodes every byte to the characters written."""
    from semnmf.datasets import detect_encoding

    path = tmp_path / "doc.txt"
    path.write_bytes((text * 8).encode(encoding))
    found = detect_encoding(path)
    assert path.read_bytes().decode(found) == text * 8, found


def test_a_polars_frame_and_series():
    pl = pytest.importorskip("polars")
    texts, labels = make_planted(15)
    df = pl.DataFrame({"body": texts, "topic": labels, "pid": [f"p{i}" for i in range(45)]})
    run = semnmf.cluster(df, 3, text_column="body", label_column="topic", id_column="pid")
    assert run.scores["nmi"] > 0.9 and run.corpus.ids.tolist()[:2] == ["p0", "p1"]
    np.testing.assert_array_equal(semnmf.cluster(df["body"], 3).labels,
                                  semnmf.cluster(texts, 3).labels)
