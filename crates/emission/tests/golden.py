# Independent computation of the emission golden vectors of tests/emission.rs:
# HMAC key derivation, ChaCha20 keystream (written out here), Fisher-Yates with
# rejection, play codes, server seeds and their commitments, serials, leaves
# (ticket bytes v2) and Merkle roots, chunk roots and proofs, from the docs
# (docs/fairness.md and the emission crate's module docs).
# Usage: python3 golden.py [full]   (full adds the 300 000-ticket example block, ~20 s)
#        python3 golden.py json     (the small table's vectors as one JSON object: tests/emission.rs
#                                    runs this and compares every value with the Rust crate's)
import hmac, hashlib, json, struct, sys

def rotl(v, c): return ((v << c) & 0xffffffff) | (v >> (32 - c))
def qr(s, a, b, c, d):
    s[a] = (s[a] + s[b]) & 0xffffffff; s[d] ^= s[a]; s[d] = rotl(s[d], 16)
    s[c] = (s[c] + s[d]) & 0xffffffff; s[b] ^= s[c]; s[b] = rotl(s[b], 12)
    s[a] = (s[a] + s[b]) & 0xffffffff; s[d] ^= s[a]; s[d] = rotl(s[d], 8)
    s[c] = (s[c] + s[d]) & 0xffffffff; s[b] ^= s[c]; s[b] = rotl(s[b], 7)
def chacha_block(key, counter):
    k = struct.unpack('<8I', key)
    st = [0x61707865, 0x3320646e, 0x79622d32, 0x6b206574, *k, counter & 0xffffffff, counter >> 32, 0, 0]
    w = st[:]
    for _ in range(10):
        qr(w,0,4,8,12); qr(w,1,5,9,13); qr(w,2,6,10,14); qr(w,3,7,11,15)
        qr(w,0,5,10,15); qr(w,1,6,11,12); qr(w,2,7,8,13); qr(w,3,4,9,14)
    return [(w[i] + st[i]) & 0xffffffff for i in range(16)]
class Words:
    def __init__(self, key): self.key, self.ctr, self.buf = key, 0, []
    def next(self):
        if not self.buf:
            self.buf = chacha_block(self.key, self.ctr); self.ctr += 1
        return self.buf.pop(0)
def below(m, words):
    limit = 2**32 - (2**32 % m)
    while True:
        x = words.next()
        if x < limit: return x % m
def derive(seed, purpose, emission, block):
    return hmac.new(seed, b"as-capone emission v1 " + purpose + b"\x00" + struct.pack('>II', emission, block), hashlib.sha256).digest()
def shuffled(counts, key):
    rows = [r for r, c in enumerate(counts) for _ in range(c)]
    w = Words(key)
    for i in range(len(rows) - 1, 0, -1):
        j = below(i + 1, w); rows[i], rows[j] = rows[j], rows[i]
    return rows
ALPHA = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
def code(a, b, c):
    v = (a << 48) | (b << 16) | (c >> 16)
    return ''.join(ALPHA[(v >> (5 * (15 - i))) & 31] for i in range(16))
def serial(code_, em, bl, pos):
    n = ''.join('%02d' % (int(ch) if ch.isdigit() else ord(ch) - 55) for ch in code_) + '%03d%05d%06d' % (em, bl, pos)
    chk = 98 - int(n) * 100 % 97
    return '%s-%03d-%05d-%06d-%02d' % (code_, em, bl, pos, chk)
def server_seed(words):
    return struct.pack('<8I', *[words.next() for _ in range(8)])
def leaf_bytes(ser, pos, row, prizes, pc_sha, commitment):
    return bytes([len(ser)]) + ser.encode() + struct.pack('>II', pos, row) + b''.join(struct.pack('>Q', p) for p in prizes) + pc_sha + commitment
def leaf(ser, pos, row, prizes, pc, seed):
    return hashlib.sha256(b'\x00' + leaf_bytes(ser, pos, row, prizes, hashlib.sha256(pc.encode()).digest(), hashlib.sha256(seed).digest())).digest()
def root(leaves):
    lvl = leaves
    while len(lvl) > 1:
        nxt = [hashlib.sha256(b'\x01' + lvl[i] + lvl[i+1]).digest() for i in range(0, len(lvl) - 1, 2)]
        if len(lvl) % 2: nxt.append(lvl[-1])
        lvl = nxt
    return lvl[0]
def block(seed, em, bl, gcode, table):
    rows = shuffled([t for t, _ in table], derive(seed, b"shuffle", em, bl))
    w = Words(derive(seed, b"play-codes", em, bl))
    ws = Words(derive(seed, b"server-seeds", em, bl))
    out = []
    for i, r in enumerate(rows):
        pc = code(w.next(), w.next(), w.next())
        sd = server_seed(ws)
        s = serial(gcode, em, bl, i + 1)
        out.append((i + 1, s, pc, r, table[r][1], leaf(s, i + 1, r, table[r][1], pc, sd), sd))
    return out
def proof(leaves, index):
    # From the leaf up: (side of the sibling, sibling); a promoted node adds no step.
    steps, lvl, i = [], leaves, index
    while len(lvl) > 1:
        sib = i ^ 1
        if sib < len(lvl):
            steps.append(('L' if i % 2 else 'R') + lvl[sib].hex())
        nxt = [hashlib.sha256(b'\x01' + lvl[k] + lvl[k+1]).digest() for k in range(0, len(lvl) - 1, 2)]
        if len(lvl) % 2: nxt.append(lvl[-1])
        lvl, i = nxt, i // 2
    return steps
def climb(leaf_hash, steps):
    h = leaf_hash
    for st in steps:
        sib = bytes.fromhex(st[1:])
        h = hashlib.sha256(b'\x01' + (sib + h if st[0] == 'L' else h + sib)).digest()
    return h

seed = bytes(range(32))
small = [(7, [300, 1000, 10000, 1000000]), (3, [600, 600, 700, 2500000])]
b = block(seed, 1, 1, "ASC", small)
if sys.argv[1:] == ['json']:
    leaves = [t[5] for t in b]
    out = {
        "rows": [t[3] for t in b],
        "block2_rows": [t[3] for t in block(seed, 1, 2, "ASC", small)],
        "codes": [t[2] for t in b],
        "serials": [t[1] for t in b],
        "server_seeds": [t[6].hex() for t in b],
        "commitments": [hashlib.sha256(t[6]).hexdigest() for t in b],
        "leaf_bytes": [leaf_bytes(t[1], t[0], t[3], t[4], hashlib.sha256(t[2].encode()).digest(), hashlib.sha256(t[6]).digest()).hex() for t in b],
        "leaf_hashes": [h.hex() for h in leaves],
        "proofs": ['.'.join(proof(leaves, i)) for i in range(len(b))],
        "root": root(leaves).hex(),
        "chunk_roots_of_4": [root(leaves[k:k + 4]).hex() for k in range(0, len(leaves), 4)],
    }
    for i, t in enumerate(b):
        assert climb(t[5], proof(leaves, i)) == root(leaves)
    print(json.dumps(out))
    sys.exit(0)
print("small rows", [t[3] for t in b])
print("small first codes", [t[2] for t in b[:3]])
print("small serials", [t[1] for t in b[:2]])
print("small root", root([t[5] for t in b]).hex())
b2 = block(seed, 1, 2, "ASC", small)
print("small block2 rows", [t[3] for t in b2])
print("shuffle key", derive(seed, b"shuffle", 1, 1).hex())
print("small server seeds 1..2", [t[6].hex() for t in b[:2]])
print("small commitment 1", hashlib.sha256(b[0][6]).hexdigest())
t3 = b[2]
print("small leaf bytes 3", leaf_bytes(t3[1], t3[0], t3[3], t3[4], hashlib.sha256(t3[2].encode()).digest(), hashlib.sha256(t3[6]).digest()).hex())
print("small leaf hash 3", t3[5].hex())
pr = proof([t[5] for t in b], 2)
print("small proof 3", '.'.join(pr))
assert climb(t3[5], pr) == root([t[5] for t in b])
if len(sys.argv) > 1:
    example = [(228000, [300, 1000, 10000, 1000000]), (57000, [600, 2000, 20000, 2500000]), (13000, [1000, 5000, 50000, 5000000]), (1800, [3000, 15000, 200000, 10000000]), (200, [10000, 100000, 1000000, 25000000])]
    ex = block(seed, 1, 1, "ASC", example)
    print("example rows first 24", [t[3] for t in ex[:24]])
    print("example positions of row 4 (first 5)", [t[0] for t in ex if t[3] == 4][:5])
    print("example first code", ex[0][2], ex[0][1])
    print("example root", root([t[5] for t in ex]).hex())
    print("example server seed 300000", ex[-1][6].hex())
    lv = [t[5] for t in ex]
    chunks = [root(lv[k:k + 1024]) for k in range(0, len(lv), 1024)]
    print("example chunk roots", len(chunks), "first", chunks[0].hex(), "last", chunks[-1].hex())
    assert root(chunks) == root(lv)
    print("example proof of 299999 steps", len(proof(lv, 299998)), "first", proof(lv, 299998)[0][:9])
