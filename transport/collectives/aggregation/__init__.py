"""In-network aggregation (docs/aggregation.md): a worker's sans-IO state machine
(``worker``), its block-wise fixed point (``quantization``), the header's codec
(``codec``) and scapy layer (``layer``), the same worker in C (``native_worker``, over
``nic_offload``'s ``src/collectives/`` and ``src/io/aggregation_socket.c``), and two
drivers: a UDP socket (``udp``, :class:`~netweft.transport.collectives.aggregation.udp.
SwitchGroup`, on the C worker where the engine has it) and virtual time with switches
modelled in Python (``sim``)."""
