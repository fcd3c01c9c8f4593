"""bench.summary's report, printed and written where `--out` asks."""


def test_a_report_is_printed_and_written_where_asked(tmp_path, capsys):
    from bench.summary import print_report

    out = tmp_path / "deeper" / "report.md"
    print_report("# A report\n", out)
    print_report("# Only printed\n", None)
    assert out.read_text() == "# A report\n"
    assert capsys.readouterr().out == "# A report\n\n# Only printed\n\n"
