"""The output of `chorus launch` as one line per rank: the launcher prints a line several ranks
wrote alike once, as "[0-3] text" (and a single rank's as "[2] text"); expand() gives each rank's
copy back ("text" four times), so a test can count how many ranks said something."""
import re

_MERGED = re.compile(r"^\[([0-9][0-9,\-]*)\] (.*)$")


def ranks(spec):
    out = []
    for part in spec.split(","):
        lo, _, hi = part.partition("-")
        out.extend(range(int(lo), int(hi or lo) + 1))
    return out


def expand(text):
    lines = []
    for line in text.splitlines():
        m = _MERGED.match(line)
        lines.extend([m.group(2)] * len(ranks(m.group(1))) if m else [line])
    return "\n".join(lines) + "\n"


if __name__ == "__main__":  # a check of its own
    assert ranks("0-2,5,7-8") == [0, 1, 2, 5, 7, 8]
    assert expand("[0-1] err\nplain\n[3] x\n") == "err\nerr\nplain\nx\n"
    print("ok")
