"""The transport's Python API, collectives and scapy layers for netweft's headers."""
