"""The experiments: emulated testbeds (switch processes and hosts in namespaces) and
what runs on them.

The demo (``demo``, its host programs ``demo_hosts``); the fabric program's testbed
(``fabric_testbed``, ``fabric_hosts``) and its experiments (``spray``, ``marks``,
``multicast``); congestion control (``cc_testbed``, and ``cc_studies`` in the
simulator); the all-reduce (``allreduce_testbed``) and the reliability schemes
(``reliability_testbed``) on hosts in namespaces. The commands and benches run them.
"""
