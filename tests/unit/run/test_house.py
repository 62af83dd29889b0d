"""The house rules (tb/run/house.py) hold on the project, and each measurement fails on a wrong value."""

from __future__ import annotations

from pathlib import Path

import pytest

from tb.run import house


def test_every_long_file_has_a_stated_reason_and_every_reason_a_long_file() -> None:
    long = house.long_files()
    unexplained = sorted(set(long) - set(house.LONG_FILES))
    assert not unexplained, (f"past {house.FILE_LINES} lines with no stated reason: {unexplained}; split the file "
                             "by concern, or state why it stays whole in tb/run/house.py LONG_FILES")
    stale = sorted(set(house.LONG_FILES) - set(long))
    assert not stale, f"LONG_FILES names files no longer past {house.FILE_LINES} lines: {stale}; drop them"


def test_no_clocked_process_is_past_the_limit() -> None:
    assert house.long_processes() == {}, f"clocked processes past {house.PROCESS_LINES} lines: split them by concern"


def test_no_import_circle() -> None:
    assert house.circles(house.import_graph()) == []


def test_a_long_file_is_measured(tmp_path: Path) -> None:
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "big.py").write_text("x = 1\n" * 501)
    (tmp_path / "models" / "small.py").write_text("x = 1\n" * 500)
    (tmp_path / "rtl").mkdir()
    assert house.long_files(tmp_path) == {"models/big.py": 501}


def test_a_clocked_process_is_measured_by_its_begin_and_end() -> None:
    body = "\n".join(["        x <= 1;"] * 10)
    text = f"""module m;
    always @(posedge clk) begin
        if (a) begin
{body}
        end   // "end" in a comment, and in a string: $display("begin end end");
        $display("begin begin");
    end
    always @(posedge clk) y <= x;
    always @* z = y;
endmodule
"""
    assert house.clocked_processes(text) == [(2, 15), (17, 1)]  # lines 2..16: always, if, 10, end, $display, end


def test_a_long_process_is_reported(tmp_path: Path) -> None:
    (tmp_path / "rtl").mkdir()
    body = "\n".join(["        x <= 1;"] * 150)
    (tmp_path / "rtl" / "long.v").write_text(f"module m;\n    always @(posedge clk) begin\n{body}\n    end\nendmodule\n")
    assert house.long_processes(tmp_path) == {"rtl/long.v:2": 152}


def test_an_import_circle_is_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pkg = tmp_path / "house_fixture"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from house_fixture import b\n")
    (pkg / "b.py").write_text("def f():\n    from house_fixture.c import g  # a lazy import still closes the loop\n")
    (pkg / "c.py").write_text("import house_fixture.a\n")
    (pkg / "d.py").write_text("from . import a\n")  # imports into the loop, is not in it
    monkeypatch.syspath_prepend(str(tmp_path))
    graph = house.import_graph(("house_fixture",))
    assert house.circles(graph) == [["house_fixture.a", "house_fixture.b", "house_fixture.c"]]
    (pkg / "b.py").write_text("def f():\n    pass\n")                  # the loop broken: no circle
    assert house.circles(house.import_graph(("house_fixture",))) == []
