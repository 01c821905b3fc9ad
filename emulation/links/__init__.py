"""What the emulation's links do to frames: the link model (one direction of a link,
running the one wire model in C), link parameters as users write them, and per-port
options of a switch."""
