#!/usr/bin/env python3
"""Makes create_gcov's AutoFDO profile readable by GCC 12 and later.

Debian's create_gcov (autofdo 0.19) writes each string of the profile's name table as gcov did
before GCC 12: a length in 4-byte words, then the NUL-padded words. GCC 12 reads a length in bytes
followed by exactly that many bytes, and crashes (internal compiler error in strlen) on the old
layout. This rewrites the name table in the new layout and copies the rest unchanged. Give
create_gcov `--gcov_version=2` as well: GCC 12 checks the version (AUTO_PROFILE_VERSION 2).

Usage: afdo_gcc12.py IN.afdo OUT.afdo
    whatif export --autofdo profile.jsonl > prog.txt
    create_gcov --binary=prog --profile=prog.txt --profiler=text --gcov=prog.old.afdo --gcov_version=2
    afdo_gcc12.py prog.old.afdo prog.afdo
    gcc -O2 -gdwarf-4 -fauto-profile=prog.afdo ...
"""
import struct
import sys

MAGIC = b"adcg"
TAG_FILE_NAMES = 0xAA000000


def convert(data: bytes) -> bytes:
    def word(offset):
        if offset + 4 > len(data):
            raise ValueError("truncated AutoFDO profile")
        return struct.unpack_from("<I", data, offset)[0]

    if data[:4] != MAGIC:
        raise ValueError("not an AutoFDO gcov profile (no 'adcg' magic)")
    # magic, version, an unused word, then the name table's tag and length (in words)
    if word(12) != TAG_FILE_NAMES:
        raise ValueError("no name table after the header")
    section_end = 20 + 4 * word(16)
    count = word(20)
    offset = 24
    names = []
    for _ in range(count):
        words = word(offset)
        raw = data[offset + 4: offset + 4 + 4 * words]
        if len(raw) != 4 * words:
            raise ValueError("truncated name table")
        names.append(raw.split(b"\0")[0])
        offset += 4 + 4 * words
    if offset != section_end:
        # Already in the byte layout (or something else): the word lengths do not add up.
        raise ValueError("the name table is not in create_gcov's word layout (already converted?)")
    table = struct.pack("<I", count) + b"".join(struct.pack("<I", len(name) + 1) + name + b"\0" for name in names)
    return data[:12] + struct.pack("<II", TAG_FILE_NAMES, (len(table) + 3) // 4) + table + data[section_end:]


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with open(sys.argv[1], "rb") as f:
        data = f.read()
    try:
        out = convert(data)
    except ValueError as error:
        sys.exit(f"afdo_gcc12.py: {sys.argv[1]}: {error}")
    with open(sys.argv[2], "wb") as f:
        f.write(out)


if __name__ == "__main__":
    main()
