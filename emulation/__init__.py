"""The embedded P4 switch, switch processes, the network builder and captures."""
