"""The control plane's client side: what each switch's program holds, as writes by name
(:mod:`.entries`), and their installation over P4Runtime (:mod:`.p4runtime_session`,
:mod:`.entity_encoder`) or in process; the fabric controller (:mod:`.fabric`) and the
aggregation controller (:mod:`.aggregation`) beneath."""
