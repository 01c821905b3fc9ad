"""P4 names that are Python keywords or look like generated members still run."""

from p4_switch import switch


def test_keyword_and_underscore_names_in_headers_unions_tables_and_actions():
    sw = switch("python_names")
    sw.table_add("while", {"hdr.yield.from": 2}, "try", {"except": 9})
    data = bytes([1, 2, 3, 4, 5, 6]) + bytes([10, 11, 12, 13, 14, 15])
    # class := except (9); None := _v + _copy (9); import.pass.lambda := lambda + 1 (7)
    expected = bytes([9, 2, 9, 4, 5, 6]) + bytes([10, 11, 12, 13, 14, 7])
    assert sw.process(0, data) == [(1, expected)]
