"""Ethernet frames for the control-plane test program."""

from __future__ import annotations


def mac(text: str) -> bytes:
    return bytes.fromhex(text.replace(":", ""))


def frame(dst: str, src: str, ethertype: int = 0x0800, payload: bytes = b"x" * 46) -> bytes:
    return mac(dst) + mac(src) + ethertype.to_bytes(2, "big") + payload
