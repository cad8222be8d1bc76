package multimatch

// English letter frequencies (per cent of letters).
var letterFreq = [26]float64{
	8.2, 1.5, 2.8, 4.3, 12.7, 2.2, 2.0, 6.1, 7.0, 0.15, 0.8, 4.0, 2.4,
	6.7, 7.5, 1.9, 0.1, 6.0, 6.3, 9.1, 2.8, 1.0, 2.4, 0.15, 2.0, 0.07,
}

// byteProb estimates how likely a position of a typical answer holds c.
func byteProb(c byte, sensitive bool) float64 {
	switch {
	case isLower(c):
		p := letterFreq[c-'a'] / 100 * 0.78
		if sensitive {
			p *= 0.95
		}
		return p
	case isUpper(c):
		p := letterFreq[c-'A'] / 100 * 0.78
		if sensitive {
			p *= 0.1
		}
		return p
	case c == ' ':
		return 0.16
	case c == '\n':
		return 0.02
	case c == '.' || c == ',':
		return 0.012
	case '0' <= c && c <= '9':
		return 0.004
	case c < 0x80:
		return 0.003
	default:
		return 0.01
	}
}

func litCost(l lit) float64 {
	p := 1.0
	if l.m == "" {
		for i := 0; i < len(l.s); i++ {
			p *= probOf[0][l.s[i]]
		}
		return p
	}
	for i := 0; i < len(l.s); i++ {
		p *= probOf[l.m[i]][l.s[i]]
	}
	return p
}

// probOf[sensitive][c] is byteProb(c, sensitive == 1), looked up rather than computed:
// every group's cost multiplies it over every byte of every element.
var probOf = func() (t [2][256]float64) {
	for c := range 256 {
		t[0][c], t[1][c] = byteProb(byte(c), false), byteProb(byte(c), true)
	}
	return t
}()

// setCost estimates the probability that some element occurs at a position.
func setCost(set []lit) float64 {
	c := 0.0
	for _, l := range set {
		c += litCost(l) + 1e-9
	}
	return c
}
