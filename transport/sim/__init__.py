"""The deterministic simulator's network: the wire each endpoint sends on (the one wire
model plus the simulator's extra effects), the output ports that queue, mark and trim,
and the switched network of those ports."""
