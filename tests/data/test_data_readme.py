"""data/README.md is generated from the schema definitions and must be up to date."""

from analysis import paths
from analysis.devtools.data_readme import render_data_readme
from analysis.tables import ALL


def test_data_readme_is_up_to_date():
    expected = render_data_readme()
    current = paths.DATA_README.read_text(encoding="utf-8") if paths.DATA_README.exists() else ""
    assert current == expected, "data/README.md is stale: run `make data-readme`"


def test_data_readme_documents_every_table_and_column():
    text = paths.DATA_README.read_text(encoding="utf-8")
    for table in ALL.values():
        assert f"`{table.path}`" in text
        for column in table.columns:
            assert f"`{column.name}`" in text


def test_data_readme_shows_price_coverage_of_every_part():
    text = paths.DATA_README.read_text(encoding="utf-8")
    assert "## Price coverage" in text
    for acc in ("H100-SXM", "B300", "GB300", "MI350X", "MI355X"):
        assert f"| {acc} |" in text
