"""Piecewise polynomial coefficients of erfcx for src/model/special.rs.

Shepherd and Laframboise (Math. Comp. 36, 1981) map u >= 0 to t = (u - K) / (u + K) in [-1, 1) and
expand the bounded, smooth function
    f(t) = (1 + 2u) erfcx(u),   erfcx(u) = exp(u^2) erfc(u),
in Chebyshev polynomials of t; f tends to 2 / sqrt(pi) as t -> 1 (u -> infinity), so one variable
covers all of u >= 0. One series needs 25 terms, and its recurrence is a 25-step chain of
dependent operations. Here [-1, 1] is cut into PIECES equal pieces instead; on each, f is expanded
in Chebyshev polynomials of the local s in [-1, 1] (at 40 significant digits, by the discrete
cosine transform at NODES Chebyshev nodes), truncated to DEGREE + 1 terms (every dropped
coefficient is below 1e-17 of the first), and rewritten as a polynomial in s, so Horner's rule
evaluates it in DEGREE steps. The rewrite is well conditioned: the sum of the monomial
coefficients' magnitudes is at most WORST_CONDITION times the value, printed below.

Run: python3 scripts/erfcx_chebyshev.py (needs mpmath); it prints the Rust constants.
"""

import mpmath as mp

mp.mp.dps = 40
K = mp.mpf("3.75")
PIECES = 16
DEGREE = 9
NODES = 30
DROPPED_BELOW = mp.mpf("1e-17")


def f(t):
    if t == 1:
        return 2 / mp.sqrt(mp.pi)
    u = K * (1 + t) / (1 - t)
    return (1 + 2 * u) * mp.exp(u * u) * mp.erfc(u)


def chebyshev_coefficients(a, b):
    angles = [mp.pi * (j + mp.mpf(1) / 2) / NODES for j in range(NODES)]
    values = [f((a + b) / 2 + (b - a) / 2 * mp.cos(x)) for x in angles]
    c = [2 * mp.fsum(v * mp.cos(n * x) for v, x in zip(values, angles)) / NODES for n in range(NODES)]
    c[0] /= 2
    return c


def chebyshev_to_monomial(c):
    polynomials = [[mp.mpf(1)], [mp.mpf(0), mp.mpf(1)]]
    for n in range(2, len(c)):
        twice = [mp.mpf(0)] + [2 * x for x in polynomials[n - 1]]
        previous = polynomials[n - 2] + [mp.mpf(0)] * (len(twice) - len(polynomials[n - 2]))
        polynomials.append([x - y for x, y in zip(twice, previous)])
    monomial = [mp.mpf(0)] * len(c)
    for cn, polynomial in zip(c, polynomials):
        for k, coefficient in enumerate(polynomial):
            monomial[k] += cn * coefficient
    return monomial


def main():
    rows, worst_condition = [], mp.mpf(0)
    for i in range(PIECES):
        a = -1 + mp.mpf(2) * i / PIECES
        c = chebyshev_coefficients(a, a + mp.mpf(2) / PIECES)
        dropped = max(abs(x) for x in c[DEGREE + 1 :]) / abs(c[0])
        assert dropped < DROPPED_BELOW, f"piece {i}: a dropped coefficient is {dropped} of the first"
        monomial = chebyshev_to_monomial(c[: DEGREE + 1])
        worst_condition = max(worst_condition, mp.fsum(abs(x) for x in monomial) / abs(monomial[0]))
        rows.append(monomial)
    print(f"// WORST_CONDITION = {mp.nstr(worst_condition, 4)}")
    print(f"const ERFCX_K: f64 = {float(K)!r};")
    print(f"const ERFCX_PIECES: [[f64; {DEGREE + 1}]; {PIECES}] = [")
    for monomial in rows:
        # repr of the nearest double: the shortest decimal that reads back as it.
        print("    [" + ", ".join(repr(float(x)) for x in monomial) + "],")
    print("];")


if __name__ == "__main__":
    main()
