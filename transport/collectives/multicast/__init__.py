"""Broadcast over the fabric's multicast (docs/fabric-controller.md); it never
touches the C engine: the reliable-multicast header (``header``), the sans-IO
sender and receiver that repair losses (``reliable``), their UDP driver
(``udp``) and the collective's group over them (``broadcast``,
:class:`~netweft.transport.collectives.multicast.broadcast.MulticastGroup`)."""
