"""Runtime files (p4lang tutorials' sX-runtime.json) turned into switch control calls."""

import json

import pytest

from netweft.emulation.p4runtime.runtime_file import RuntimeFileError, apply_runtime_file


class Recorder:
    """Records the control calls a runtime file makes; rejects unknown tables like a switch."""

    def __init__(self):
        self.calls = []

    def table_add(self, table, match, action, params, priority=None):
        if not table.startswith("MyIngress."):
            raise KeyError(f"no table {table}")
        self.calls.append(("add", table, match, action, params, priority))

    def table_set_default(self, table, action, params):
        self.calls.append(("default", table, action, params))

    def mc_group_set(self, group, replicas):
        self.calls.append(("mc", group, replicas))

    def clone_session_set(self, session, port, truncate=None):
        self.calls.append(("clone", session, port, truncate))


def test_tutorial_style_file(tmp_path):
    path = tmp_path / "s1-runtime.json"
    path.write_text(json.dumps({
        "target": "bmv2",
        "table_entries": [
            {"table": "MyIngress.ipv4_lpm", "default_action": True,
             "action_name": "MyIngress.drop", "action_params": {}},
            {"table": "MyIngress.ipv4_lpm", "match": {"hdr.ipv4.dstAddr": ["10.0.1.1", 32]},
             "action_name": "MyIngress.ipv4_forward",
             "action_params": {"dstAddr": "08:00:00:00:01:11", "port": 1}},
            {"table": "MyIngress.acl", "match": {"hdr.ipv4.protocol": [17, 255]},
             "priority": 10, "action_name": "MyIngress.drop", "action_params": {}},
            {"table": "MyIngress.mac", "match": {"hdr.ethernet.dstAddr": ["08:00:00:00:01:11"]},
             "action_name": "MyIngress.drop", "action_params": {}},
        ],
        "multicast_group_entries": [{"multicast_group_id": 1, "replicas": [
            {"egress_port": 1, "instance": 1}, {"egress_port": 2, "instance": 1}]}],
        "clone_session_entries": [{"clone_session_id": 5, "replicas": [{"egress_port": 3}],
                                   "packet_length_bytes": 64}],
    }))
    sw = Recorder()
    assert apply_runtime_file(sw, path) == 6
    assert sw.calls == [
        ("default", "MyIngress.ipv4_lpm", "MyIngress.drop", {}),
        ("add", "MyIngress.ipv4_lpm", {"hdr.ipv4.dstAddr": ("10.0.1.1", 32)},
         "MyIngress.ipv4_forward", {"dstAddr": "08:00:00:00:01:11", "port": 1}, None),
        ("add", "MyIngress.acl", {"hdr.ipv4.protocol": (17, 255)}, "MyIngress.drop", {}, 10),
        ("add", "MyIngress.mac", {"hdr.ethernet.dstAddr": "08:00:00:00:01:11"},
         "MyIngress.drop", {}, None),
        ("mc", 1, [(1, 1), (2, 1)]),
        ("clone", 5, 3, 64),
    ]


@pytest.mark.parametrize("content, message", [
    ("not json", "Expecting value"),
    ("[1, 2]", "JSON object"),
    ('{"table_entries": [{"match": {}}]}', r"table_entries\[0\]"),
    ('{"table_entries": [{"table": "Other.t", "action_name": "a"}]}', "no table Other.t"),
    ('{"multicast_group_entries": [{"replicas": []}]}', r"multicast_group_entries\[0\]"),
])
def test_bad_files_name_the_entry(tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(RuntimeFileError, match=message):
        apply_runtime_file(Recorder(), path)
