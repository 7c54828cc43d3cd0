"""tcsolve.variants() and tcsolve.__version__ against the CLI (``tcsolve variants --json``,
``tcsolve --version``), and the package's layout: where it found its library."""

import os

import tcsolve


def test_variant_table_is_the_cli_table(cli):
    report = cli("variants")
    assert report["_exit"] == 0
    table = tcsolve.variants()
    assert [v.name for v in table] == [r["name"] for r in report["variants"]]
    for v, r in zip(table, report["variants"]):
        assert v.description == r["description"] and v.input_format == r["input_format"]
        assert v.unit_roundoff == r["unit_roundoff"]
        assert v.available_cpu == r["available_cpu"] and v.available_cuda == r["available_cuda"]


def test_version_is_the_library_version(cli):
    out = cli("--version", json_output=False).stdout
    assert out.startswith(f"tcsolve {tcsolve.__version__} ")
    assert tcsolve.__version__.count(".") == 2


def test_library_is_found_beside_the_package():
    # Build tree: a link to the built library inside the package's directory (_location.py).
    path = tcsolve.library_path()
    assert os.path.exists(path) and os.path.basename(path).startswith("libtcsolve.so.")
    assert tcsolve._lib._location.LIBRARY_DIR in (".",) or os.path.isabs(path)
