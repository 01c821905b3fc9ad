"""The transport's simulator: a seeded discrete-event loop with virtual time
(:mod:`netweft.transport.sim.event_loop`) that runs C engines
(:mod:`netweft.transport.sim.simulation`) over a modelled network: the wire each
endpoint sends on (the one wire model plus the simulator's extra effects,
:mod:`netweft.transport.sim.wire`), the output ports that queue, mark and trim
(:mod:`netweft.transport.sim.port`), and the switched network of those ports
(:mod:`netweft.transport.sim.network`)."""
