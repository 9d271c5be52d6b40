"""Bytes a user gave (a corpus file, an upload) to text, or one message that says what is wrong and where."""
from __future__ import annotations

BINARY_PROBE = 65_536  # a NUL byte in this much of the start marks a binary file


class DecodeError(ValueError):
    """The bytes are not text we read; the message names the file (and line)."""


def decode(name: str, data: bytes) -> str:
    """UTF-8 (with or without BOM) or BOM-marked UTF-16; anything else is refused."""
    if not data.strip():
        raise DecodeError(f"{name}: file is empty")
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError:
            raise DecodeError(f"{name}: starts with a UTF-16 mark but is not valid UTF-16") from None
    if b"\x00" in data[:BINARY_PROBE]:
        raise DecodeError(f"{name}: looks binary (NUL bytes), not a text file of abstracts")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data[:e.start].count(b"\n") + 1
        raise DecodeError(f"{name}:{line}: not valid UTF-8 (byte 0x{data[e.start]:02x}); "
                          "save the file as UTF-8") from None
