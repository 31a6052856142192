"""The server's /metrics text, read by the bench scripts: `as_capone_*`
samples by their full name (labels included), and the difference of two
readings (what one load added)."""


def read(path):
    m = {}
    for line in open(path):
        if line.startswith("as_capone_") and " " in line:
            k, v = line.rsplit(" ", 1)
            m[k] = float(v)
    return m


def delta(before, after):
    """What happened between two readings (files), sample by sample."""
    m0 = read(before)
    return {k: v - m0.get(k, 0) for k, v in read(after).items()}
