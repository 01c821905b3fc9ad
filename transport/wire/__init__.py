"""What netweft's packets look like to tools: scapy layers for its headers
(:mod:`netweft.transport.wire.layers`) and the Wireshark Lua dissector
(``wireshark/netweft_uet.lua``, installed beside this package)."""
