"""In-network aggregation (docs/aggregation.md): a worker's sans-IO state machine
(``worker``), its block-wise fixed point (``quantization``), the header's codec
(``codec``) and scapy layer (``layer``), and two drivers: a UDP socket
(``udp``, :class:`~netweft.transport.collectives.aggregation.udp.SwitchGroup`)
and virtual time with switches modelled in Python (``sim``)."""
