"""The v1model runtime of the embedded P4 switch.

Match tables, BMv2's hash and checksum algorithms, the packet replication
engine, clone sessions, registers, counters, meters, action profiles and
selectors: the state a v1model program's externs and tables act on, each
kept sans-IO (time is always an argument) so that tests are deterministic.
"""
