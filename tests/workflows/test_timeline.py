"""Topics over time (semnmf.workflows.timeline) and ``semnmf cluster --time-column``."""

import csv
import json

import numpy as np
import pytest

import semnmf
from semnmf.cli import main
from semnmf.workflows.timeline import choose_period, parse_dates, timeline

TOPICS = {"sport": "football match goal team player league cup coach season stadium",
          "money": "bank economy growth market interest rate inflation shares profit price"}


def test_iso_dates_and_what_is_not_one():
    assert parse_dates(["2024-03-05", "2024-03", "2024", "2024-03-05T10:00", "x", None,
                        "2024-13-01"]) == [(2024, 3, 5), (2024, 3, None), (2024, None, None),
                                           (2024, 3, 5), None, None, None]


def test_the_period_is_the_finest_that_stays_readable():
    days = [(2024, 1, 1 + i % 28) for i in range(600)]
    assert choose_period(days) == "day"                      # 28 days, 21 documents each
    assert choose_period(days[:100]) == "month"              # too few documents per day
    years = [(2000 + i % 30, 1 + i % 12, 1) for i in range(500)]
    assert choose_period(years) == "year"                    # too many months
    assert choose_period([(2024, None, None)] * 50) == "year"
    with pytest.raises(ValueError, match="time_period must be one of auto, year, month, day"):
        choose_period(days, "week")


def test_shares_add_up_per_period_and_per_class():
    values = ["2020", "2020", "2021", "2021", "2021", "bad"]
    clusters = np.array([0, 1, 0, 0, 1, 1])
    labels = ["a", "b", "a", "b", "b", "a"]
    out = timeline(values, clusters, labels)
    assert out["period"] == "year" and out["n_undated"] == 1
    assert out["rows"] == [("2020", 0, 1, 0.5), ("2020", 1, 1, 0.5),
                           ("2021", 0, 2, round(2 / 3, 6)), ("2021", 1, 1, round(1 / 3, 6))]
    assert ("2021", "b", 0, 1, 0.5) in out["by_class"]
    with pytest.raises(ValueError, match="no value is a date"):
        timeline(["x", "y"], np.array([0, 1]))


def _dated_csv(path, n_per_year=15):
    rng = np.random.default_rng(0)
    rows = []
    for year in (2019, 2020, 2021):
        for i in range(n_per_year):
            topic = "sport" if (i + year) % 3 else "money"
            rows.append((" ".join(rng.choice(TOPICS[topic].split(), size=10)), topic,
                         f"{year}-{1 + i % 12:02d}-10"))
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["text", "label", "date"])
        writer.writerows(rows)
    return path


def test_the_command_line_writes_the_tables_and_the_panel(tmp_path, capsys):
    source, out = _dated_csv(tmp_path / "docs.csv"), tmp_path / "run"
    assert main(["cluster", str(source), "-k", "2", "--time-column", "date", "--time-period",
                 "year", "--out", str(out), "--max-iter", "50", "-q", "--report"]) == 0
    assert "layout" not in capsys.readouterr().err  # no matplotlib notice leaks
    record = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert record["time"] == {"column": "date", "date_format": None, "period": "year",
                              "n_undated": 0, "n_unreadable": 0, "n_periods": 3}
    with open(out / "topics_over_time.csv", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    for year in ("2019", "2020", "2021"):
        assert sum(float(r["share"]) for r in rows if r["period"] == year) == pytest.approx(1)
    assert (out / "topics_over_time_by_class.csv").exists()
    page = (out / "report.html").read_text(encoding="utf-8")
    assert '<section id="time"><h2>Topics over time</h2>' in page


def test_a_time_column_is_checked_before_the_work(tmp_path):
    with pytest.raises(ValueError, match="time_column names a column of a CSV, TSV or JSONL"):
        semnmf.cluster(["a b", "c d", "e f"], 2, time_column="date")
    source = _dated_csv(tmp_path / "docs.csv")
    with pytest.raises(ValueError, match=r"has no column 'when'; its columns are"):
        semnmf.cluster(str(source), 2, time_column="when", max_iter=5)


def test_a_date_format_reads_day_first_dates_and_its_fields():
    values = ["05/03/2024", "31/12/2023", "2024-03-05", "", None]
    assert parse_dates(values, "%d/%m/%Y") == [(2024, 3, 5), (2023, 12, 31), None, None, None]
    assert parse_dates(["03/2024"], "%m/%Y") == [(2024, 3, None)]
    assert parse_dates(["2024"], "%Y") == [(2024, None, None)]


def test_no_date_names_a_value_and_the_format_to_give():
    from semnmf.workflows.timeline import check_dates

    with pytest.raises(ValueError, match=r"no value is a date \(e.g. '05/03/2024'\).*"
                                         r"--date-format %d/%m/%Y"):
        check_dates(["05/03/2024", "06/03/2024"], "date")
    with pytest.raises(ValueError, match=r"no value reads as date_format '%Y-%m' \(e.g. 'x'\)"):
        check_dates(["x"], "date", "%Y-%m")
    with pytest.raises(ValueError, match="every value is empty"):
        check_dates(["", None], "date")


def test_missing_and_unreadable_dates_are_counted_apart():
    out = timeline(["2020", "", None, "soon", "2021", "later"], np.array([0, 1, 0, 1, 0, 1]))
    assert out["n_undated"] == 4 and out["n_unreadable"] == 2 and out["unreadable"] == "soon"


def test_the_command_line_reads_a_date_format_and_says_what_it_left_out(tmp_path):
    source = _dated_csv(tmp_path / "iso.csv")
    with open(source, encoding="utf-8") as f:
        rows = list(csv.reader(f))
    for row in rows[1:]:  # 2019-03-10 -> 10/03/2019
        year, month, day = row[2].split("-")
        row[2] = f"{day}/{month}/{year}"
    rows[1][2], rows[2][2] = "", "not yet"
    dmy = tmp_path / "dmy.csv"
    with open(dmy, "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(rows)
    out = tmp_path / "run"
    with pytest.warns(UserWarning, match=r"2 document\(s\) have no date in 'date' \(1 have no "
                                         r"value, 1 have a value that is not a date \(e.g. "
                                         r"'not yet'\)\)"):
        result = semnmf.cluster(str(dmy), 2, time_column="date", date_format="%d/%m/%Y",
                                time_period="year", max_iter=20)
    result.save(out)
    record = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert record["time"]["n_periods"] == 3 and record["time"]["n_unreadable"] == 1
    assert record["time"]["date_format"] == "%d/%m/%Y"
    with pytest.raises(ValueError, match="--date-format %d/%m/%Y"):
        semnmf.cluster(str(dmy), 2, time_column="date", max_iter=5)
    assert main(["cluster", str(dmy), "-k", "2", "--date-format", "%d/%m", "--time-column",
                 "date", "--out", str(tmp_path / "x"), "-q"]) == 2
    assert main(["cluster", str(dmy), "-k", "2", "--date-format", "%d/%m/%Y",
                 "--out", str(tmp_path / "y"), "-q"]) == 2
