"""The transport's real-network driver: the C engine's I/O thread over UDP sockets
or AF_PACKET rings (:mod:`netweft.transport.udp.driver`) and the receive-side loss
injector for those sockets (:mod:`netweft.transport.udp.socket_loss`)."""
