"""The transport's simulator: a seeded discrete-event loop with virtual time
(:mod:`netweft.transport.sim.event_loop`) that runs C engines over a modelled
network (:mod:`netweft.transport.sim.simulation`)."""
