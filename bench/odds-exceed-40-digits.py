# Independent check of P(block prizes > sales) for the example table on the
# lattice of the Rust code (w = 100 cents, N = 2^21 points, wrap-around
# included): the characteristic function at 40 digits, and the tail sum
# taken in closed form from the spectrum (geometric sums), no inverse FFT.
#
#   python3 bench/odds-exceed-40-digits.py [target/release/as-capone]   (needs mpmath; about 10 s)
#
# The binary only gives the exact final-outcome chances (odds --json).
# Prints 5.02255231071131e-8 (crates/math/tests/math/payout.rs pins it).
import json, subprocess, math, cmath
from fractions import Fraction
import mpmath as mp
mp.mp.dps = 40
import sys
binary = sys.argv[1] if len(sys.argv) > 1 else "target/release/as-capone"
out = subprocess.run([binary, "odds", "--json"], capture_output=True, text=True).stdout
fin = json.loads(out)["final"]
p = [Fraction(fin[str(t)]) for t in (5, 6, 7, 8)]
rows = [(228000, [300, 1000, 10000, 1000000]), (57000, [600, 2000, 20000, 2500000]),
        (13000, [1000, 5000, 50000, 5000000]), (1800, [3000, 15000, 200000, 10000000]),
        (200, [10000, 100000, 1000000, 25000000])]
w, N = 100, 1 << 21
K = 90_000_000 // w  # points k > K exceed the sales
# Survivors: where the largest row alone is not negligible (float estimate).
n0, pr0 = rows[0]
pf = [float(x) for x in p]
keep = []
for j in range(N // 2 + 1):
    z = 1 - sum(pf)
    for q, c in zip(pf, pr0):
        z += q * cmath.exp(-2j * math.pi * ((c // w) * j % N) / N)
    if n0 * math.log(max(abs(z), 1e-300)) > -120:
        keep.append(j)
print("frequencies kept:", len(keep), "from", keep[0], "to", keep[-1])
two_pi = 2 * mp.pi
total = mp.mpf(0)
for j in keep:
    logphi = mp.mpc(0)
    for n, prizes in rows:
        z = mp.mpf(1) - sum(mp.mpf(x.numerator) / x.denominator for x in p)
        for q, c in zip(p, prizes):
            z += mp.mpf(q.numerator) / q.denominator * mp.expj(-two_pi * ((c // w) * j % N) / N)
        logphi += n * mp.log(z)
    X = mp.exp(logphi)
    if j == 0:
        G = mp.mpf(N - 1 - K)
    else:
        r = mp.expj(two_pi * j / N)
        # sum_{k=K+1}^{N-1} r^k = (r^N - r^(K+1)) / (r - 1) = (1 - r^(K+1)) / (r - 1)
        G = (1 - mp.expj(two_pi * j * (K + 1) / N)) / (r - 1)
    weight = 1 if j in (0, N // 2) else 2
    total += weight * mp.re(X * G)
print("P(S > sales) =", mp.nstr(total / N, 15))
